//! What the demo prints: the model, the compiled plan (lanes, boundaries by
//! kind, dwords per dispatch), a progress line while tokens run (only when
//! stdout is a terminal), per-token mismatches, and the summary table.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use relaunch::GraphExec;
use relaunch::Plan;

use super::model::{CAPACITY, FFN, HEAD_DIM, HIDDEN, VOCAB};
use super::oracle::StepOut;

pub fn model(layers: usize, sequences: usize) {
    say!(
        "model: {layers} layers x {sequences} sequences; hidden {HIDDEN} ({} heads of {HEAD_DIM}), \
         ffn {FFN}, vocab {VOCAB}, kv capacity {CAPACITY}",
        HIDDEN / HEAD_DIM
    );
}

pub fn plan(plan: &Plan) {
    let counts = plan.boundary_counts();
    say!(
        "graph: {} dispatches in {} lane{}",
        plan.node_count(),
        plan.lane_count(),
        if plan.lane_count() == 1 { "" } else { "s" }
    );
    for (lane, c) in counts.iter().enumerate() {
        say!(
            "  lane {lane}: {} dispatches, {} boundaries for {} dependencies \
             (wait {}, rmw_vmem {}, rmw {})",
            c.dispatches,
            c.boundaries(),
            c.dependencies,
            c.wait,
            c.rmw_vmem,
            c.rmw
        );
    }
    boundaries_by_consumer(plan);
}

/// Which boundary kind each consumer kernel got: `rmw_vmem` before kernels
/// the certifier proved VMEM-only, `rmw` before the others.
fn boundaries_by_consumer(plan: &Plan) {
    use relaunch::BoundaryKind;
    use relaunch::KernelRef;
    let mut by: std::collections::BTreeMap<(&'static str, String), usize> = Default::default();
    for lane in plan.lanes() {
        for n in lane {
            let Some(b) = n.boundary_before else { continue };
            let kind = match b.kind {
                BoundaryKind::Wait => continue,
                BoundaryKind::RmwVmem => "rmw_vmem",
                BoundaryKind::Rmw => "rmw",
            };
            let name = match n.kernel {
                KernelRef::Module { symbol, .. } => symbol.clone(),
                other => format!("{other:?}"),
            };
            *by.entry((kind, name)).or_default() += 1;
        }
    }
    for kind in ["rmw_vmem", "rmw"] {
        let list: Vec<String> = by
            .iter()
            .filter(|((k, _), _)| *k == kind)
            .map(|((_, n), c)| format!("{n} {c}"))
            .collect();
        if !list.is_empty() {
            say!("  {kind} before: {}", list.join(", "));
        }
    }
}

pub fn per_token(position_sites: usize) {
    say!(
        "per token: position patched into {position_sites} kernargs (rope, kv_append, attention); \
         input = embedding of each sequence's last sampled token"
    );
}

/// After the first launch: queues and IB size.
pub fn installed(exec: &GraphExec) {
    let queues = exec.queues_used().unwrap_or(0);
    let dispatches: Vec<usize> =
        exec.with_plan(|p| p.boundary_counts().iter().map(|c| c.dispatches).collect());
    say!("queues: {queues}");
    if let Some(dwords) = exec.lane_dwords() {
        let kinds = exec.lane_submissions();
        for (lane, (d, n)) in dwords.iter().zip(&dispatches).enumerate() {
            match kinds.get(lane).map(|l| l.kind) {
                // One 64-byte packet per dispatch; no IB.
                Some(relaunch::LaneKind::Aql) => {
                    say!("  lane {lane}: {n} AQL kernel-dispatch packets (no IB)")
                }
                _ => say!(
                    "  lane {lane}: {d} IB dwords ({:.1} per dispatch)",
                    *d as f64 / (*n).max(1) as f64
                ),
            }
        }
    }
}

/// The comparison of one token against the oracle, over all sequences.
pub struct TokenCheck {
    pub pos: usize,
    pub max_error: f32,
    pub failures: Vec<String>,
}

impl TokenCheck {
    pub fn new(pos: usize) -> Self {
        TokenCheck {
            pos,
            max_error: 0.0,
            failures: Vec::new(),
        }
    }

    /// Token exactly; hidden state within `tolerance` relative to
    /// max(1, |expected|) (0.0: bit-exact).
    pub fn add(&mut self, seq: usize, token: u32, hidden: &[f32], want: &StepOut, tolerance: f32) {
        if token != want.token {
            self.failures.push(format!(
                "sequence {seq}: sampled token {token}, oracle {}",
                want.token
            ));
        }
        for (i, (&got, &exp)) in hidden.iter().zip(&want.hidden).enumerate() {
            let err = (got - exp).abs();
            let bad = if tolerance == 0.0 {
                got.to_bits() != exp.to_bits()
            } else {
                err.is_nan() || err > tolerance * exp.abs().max(1.0)
            };
            if bad {
                self.failures
                    .push(format!("sequence {seq}: hidden[{i}] = {got}, oracle {exp}"));
                break;
            }
            self.max_error = self.max_error.max(err);
        }
    }

    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }
}

/// A one-line progress display, only on a terminal.
pub struct Progress {
    total: usize,
    live: bool,
}

impl Progress {
    pub fn new(total: usize) -> Self {
        Progress {
            total,
            live: std::io::stdout().is_terminal(),
        }
    }

    pub fn update(&mut self, done: usize, check: &TokenCheck) {
        let mut out = std::io::stdout().lock();
        if !check.ok() {
            if self.live {
                let _ = write!(out, "\r\x1b[K");
            }
            for f in &check.failures {
                let _ = writeln!(
                    out,
                    "token {} (position {}): MISMATCH {f}",
                    check.pos + 1,
                    check.pos
                );
            }
        }
        if self.live {
            let _ = write!(out, "\r\x1b[Kdecoding: token {done}/{}", self.total);
            let _ = out.flush();
        }
    }

    pub fn finish(&mut self) {
        if self.live {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "\r\x1b[K");
            let _ = out.flush();
        }
    }
}

/// Prints the sampled tokens and the summary table; returns the number of
/// verified tokens.
pub fn summary(
    checks: &[TokenCheck],
    sampled: &[Vec<u32>],
    times: &[Duration],
    dispatches_per_replay: usize,
    tolerance: f32,
) -> usize {
    for (s, tokens) in sampled.iter().enumerate() {
        let list: Vec<String> = tokens.iter().map(u32::to_string).collect();
        say!("sequence {s} tokens: {}", list.join(" "));
    }
    let tokens = checks.len();
    let verified = checks.iter().filter(|c| c.ok()).count();
    let max_error = checks.iter().map(|c| c.max_error).fold(0.0f32, f32::max);
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let first = times.first().copied().unwrap_or_default();
    let mut rest: Vec<f64> = times.iter().skip(1).map(|&d| micros(d)).collect();
    rest.sort_by(f64::total_cmp);
    let median = if rest.is_empty() {
        micros(first)
    } else {
        rest[rest.len() / 2]
    };
    let check = if tolerance == 0.0 {
        "bit-exact".to_string()
    } else {
        format!("relative tolerance {tolerance}")
    };
    say!();
    say!("  {:<22} {tokens}", "tokens");
    say!(
        "  {:<22} {} ({dispatches_per_replay} per replay)",
        "dispatches",
        dispatches_per_replay * tokens
    );
    say!("  {:<22} {tokens}", "replays");
    say!(
        "  {:<22} {median:.0} us median (first token {:.1} ms, includes encode + install)",
        "host time per token",
        micros(first) / 1e3
    );
    say!("  {:<22} {max_error:e} ({check})", "max hidden error");
    say!("verified: {verified}/{tokens}");
    verified
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(token: u32, hidden: &[f32]) -> StepOut {
        StepOut {
            token,
            hidden: hidden.to_vec(),
        }
    }

    #[test]
    fn token_check_compares_tokens_exactly_and_hidden_by_tolerance() {
        let mut c = TokenCheck::new(0);
        c.add(0, 5, &[1.0, 2.0], &want(5, &[1.0, 2.0]), 0.0);
        assert!(c.ok() && c.max_error == 0.0);
        c.add(1, 6, &[1.0, 2.0], &want(5, &[1.0, 2.0]), 0.0);
        assert_eq!(c.failures, vec!["sequence 1: sampled token 6, oracle 5"]);

        // Bit-exact mode: one ulp is a mismatch.
        let mut c = TokenCheck::new(3);
        let next = f32::from_bits(2.0f32.to_bits() + 1);
        c.add(0, 1, &[1.0, next], &want(1, &[1.0, 2.0]), 0.0);
        assert_eq!(c.failures.len(), 1);
        assert!(
            c.failures[0].starts_with("sequence 0: hidden[1] = "),
            "{:?}",
            c.failures
        );

        // Tolerance mode: small relative error passes, NaN never does.
        let mut c = TokenCheck::new(0);
        c.add(0, 1, &[100.1], &want(1, &[100.0]), 2e-3);
        assert!(c.ok() && c.max_error > 0.0);
        c.add(0, 1, &[f32::NAN], &want(1, &[100.0]), 2e-3);
        assert!(!c.ok());
    }
}
