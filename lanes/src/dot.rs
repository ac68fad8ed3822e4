//! Graphviz DOT of a plan: one cluster per lane, nodes in replay order
//! joined by edges; an edge that carries a boundary is bold and labelled
//! with its kind and the hazard that needed it.

use std::fmt::Write as _;

use crate::plan::Plan;

/// Quote a string for a DOT label.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl Plan {
    /// The plan as a Graphviz digraph.
    pub fn to_dot(&self) -> String {
        let mut out = String::from("digraph relaunch_plan {\n  rankdir=TB;\n  node [shape=box];\n");
        for (l, lane) in self.lanes().enumerate() {
            let _ = writeln!(out, "  subgraph cluster_lane{l} {{");
            let _ = writeln!(out, "    label={};", quote(&format!("lane {l}")));
            for node in &lane {
                let label = format!(
                    "{}\n#{} grid {}x{}x{} block {}x{}x{}",
                    node.kernel.display_name(),
                    node.node.raw(),
                    node.grid[0],
                    node.grid[1],
                    node.grid[2],
                    node.block[0],
                    node.block[1],
                    node.block[2]
                );
                let _ = writeln!(out, "    n{} [label={}];", node.node.raw(), quote(&label));
            }
            for pair in lane.windows(2) {
                let (a, b) = (pair[0].node.raw(), pair[1].node.raw());
                match &pair[1].boundary_before {
                    Some(boundary) => {
                        let r = &boundary.reason;
                        let buffer = r
                            .buffer
                            .and_then(|b| self.buffer_info(b))
                            .map_or("?", |info| info.label.as_str());
                        let label = format!(
                            "{} ({} {} [{}, {}) from #{})",
                            boundary.kind,
                            r.hazard,
                            buffer,
                            r.range.0,
                            r.range.1,
                            r.producer.raw()
                        );
                        let _ = writeln!(
                            out,
                            "    n{a} -> n{b} [label={}, style=bold];",
                            quote(&label)
                        );
                    }
                    None => {
                        let _ = writeln!(out, "    n{a} -> n{b} [style=dashed];");
                    }
                }
            }
            out.push_str("  }\n");
        }
        out.push_str("}\n");
        out
    }
}
