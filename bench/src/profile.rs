//! `profile`: what profiled IBs cost in IB dwords (TARGETS.md
//! `profile_dwords_per_dispatch`: extra dwords per dispatch when
//! per-dispatch GPU timestamps are on). Measured, not computed: the same
//! recordings finished with and without a `Profile`, over the serial and
//! alternating shapes (the timestamps do not depend on the shape, which
//! the equal figures show).

use relaunch_bench::shapes::{Workload, KERNARG_BASE};
use relaunch_encoders::{EncodedIb, Profile};

use crate::report::Report;

/// A slot address the encoder accepts (nothing is replayed here).
const SLOTS: u64 = 0x7F20_0000_0000;

fn finish(s: &Workload, n: u64, profile: Option<Profile>) -> Result<EncodedIb, String> {
    let mut b = s.builder(s.options, n).map_err(|e| e.to_string())?;
    b.set_profile(profile);
    b.finish(KERNARG_BASE).map_err(|e| e.to_string())
}

/// (extra dwords per IB with span timestamps, extra per dispatch with
/// per-dispatch timestamps on top).
fn extra(s: &Workload, n: u64) -> Result<(f64, f64), String> {
    let plain = finish(s, n, None)?.total_dwords() as f64;
    let span = |per_dispatch| Profile {
        slots: SLOTS,
        per_dispatch,
    };
    let spanned = finish(s, n, Some(span(false)))?.total_dwords() as f64;
    let timed = finish(s, n, Some(span(true)))?.total_dwords() as f64;
    Ok((spanned - plain, (timed - spanned) / n as f64))
}

pub fn run(report: &mut Report) -> Result<(), String> {
    let n = 10_000;
    let (per_ib, per_dispatch) = extra(&Workload::serial(), n)?;
    let (_, alternating) = extra(&Workload::alternating(), n)?;
    report.metric("profile_dwords_per_dispatch", per_dispatch, "dwords", None);
    report.metric("profile_dwords_alternating", alternating, "dwords", None);
    report.metric("profile_dwords_per_ib", per_ib, "dwords", None);
    Ok(())
}
