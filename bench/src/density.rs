//! `density`: PM4 dwords per dispatch for the shapes in TARGETS.md (the
//! shapes are in `shapes.rs`; their encoding cost is the `encode` bench).
//!
//! Dword densities are the steady state: dwords added per dispatch over a
//! long chain after two warm-up dispatches; the fixed per-IB cost (prologue,
//! epilogue, first full state) is reported separately as
//! `dwords_fixed_per_ib`.

use relaunch_bench::shapes::{Workload, FAMILY, KERNARG_BASE};
use relaunch_encoders::IbBuilder;

use crate::report::Report;

/// Steady-state dwords per dispatch over `n` dispatches, and the fixed cost.
fn density(s: &Workload, n: u64) -> Result<(f64, f64), String> {
    let mut b = IbBuilder::new(FAMILY, s.options);
    s.record(&mut b, 2).map_err(|e| e.to_string())?;
    let before = b.dwords();
    s.record(&mut b, n).map_err(|e| e.to_string())?;
    let per = (b.dwords() - before) as f64 / n as f64;
    let ib = b.finish(KERNARG_BASE).map_err(|e| e.to_string())?;
    let fixed = ib.total_dwords() as f64 - per * ib.dispatch_count() as f64;
    Ok((per, fixed))
}

pub fn run(report: &mut Report) -> Result<(), String> {
    let shapes = [
        ("dwords_serial_fresh", Workload::serial(), 18.0),
        ("dwords_serial_same", Workload::serial_same(), 15.0),
        ("dwords_independent", Workload::independent(), 8.0),
        ("dwords_alternating", Workload::alternating(), 27.0),
    ];
    let mut fixed_cost = 0.0;
    for (name, shape, target) in &shapes {
        let (per, fixed) = density(shape, 10_000)?;
        fixed_cost = fixed;
        report.metric(name, per, "dwords", Some((*target, true)));
    }
    report.metric("dwords_fixed_per_ib", fixed_cost.round(), "dwords", None);
    // Full state, for reference (no target), and the decode step's layer.
    let full = Workload::serial_full_state();
    report.metric(
        "dwords_serial_full_state",
        density(&full, 10_000)?.0,
        "dwords",
        None,
    );
    report.metric(
        "dwords_cycle12",
        density(&Workload::cycle12()?, 12_000)?.0,
        "dwords",
        None,
    );

    // Dispatches per segment for the counter shape (serial chain, RMW each).
    let ib = Workload::serial()
        .encode(60_000)
        .map_err(|e| e.to_string())?;
    report.metric(
        "dispatches_per_segment",
        ib.segments[0].dispatch_count as f64,
        "dispatches",
        None,
    );
    Ok(())
}
