//! METRIC lines, the human table and the JSON file of one benchmark run.

use std::path::PathBuf;

/// A target: the bound and whether the value must be at most (true) or at
/// least (false) that bound.
pub type Target = Option<(f64, bool)>;

struct Metric {
    name: String,
    value: f64,
    unit: String,
    target: Target,
}

/// One benchmark's figures, printed as they are recorded.
pub struct Report {
    name: &'static str,
    metrics: Vec<Metric>,
}

impl Report {
    pub fn new(name: &'static str) -> Self {
        Report {
            name,
            metrics: Vec::new(),
        }
    }

    /// Record a figure with its target (`at_most = true`: value <= target).
    #[allow(dead_code)]
    pub fn metric(&mut self, name: &str, value: f64, unit: &str, target: Target) {
        println!("METRIC {name} {} {unit}", format_value(value));
        self.metrics.push(Metric {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
            target,
        });
    }

    /// Print the human table and write `target/bench/<name>.json`.
    pub fn finish(self) -> std::io::Result<()> {
        println!();
        println!(
            "{:<32} {:>14} {:<8} {:>12}  verdict",
            "metric", "value", "unit", "target"
        );
        let mut rows = Vec::new();
        for Metric {
            name,
            value,
            unit,
            target,
        } in &self.metrics
        {
            let (target_text, verdict) = match target {
                Some((t, true)) => (
                    format!("<= {}", format_value(*t)),
                    if value <= t { "ok" } else { "MISS" },
                ),
                Some((t, false)) => (
                    format!(">= {}", format_value(*t)),
                    if value >= t { "ok" } else { "MISS" },
                ),
                None => (String::from("-"), ""),
            };
            println!(
                "{name:<32} {:>14} {unit:<8} {target_text:>12}  {verdict}",
                format_value(*value)
            );
            rows.push(serde_json::json!({
                "name": name, "value": value, "unit": unit,
                "target": target.map(|t| t.0), "at_most": target.map(|t| t.1),
            }));
        }
        let dir = PathBuf::from(env_target_dir()).join("bench");
        std::fs::create_dir_all(&dir)?;
        let body = serde_json::json!({ "bench": self.name, "metrics": rows });
        std::fs::write(
            dir.join(format!("{}.json", self.name)),
            serde_json::to_string_pretty(&body)?,
        )
    }
}

fn env_target_dir() -> String {
    std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_string())
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}
