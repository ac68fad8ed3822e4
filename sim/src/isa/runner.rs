//! Which runner executes a kernel: its registered host twin, the
//! interpreter, or both with every written byte compared
//! (`RELAUNCH_SIM_KERNELS=isa|twin|both`; unset: the twin when one is
//! registered for the symbol, else the interpreter).

use std::sync::Arc;

use super::dispatch::{self, Launch};
use crate::device::KernelEntry;
use crate::memory::DeviceMemory;
use crate::trace::RangeSet;
use crate::twins::{registry, DispatchContext, KernelFault, TwinFn};

/// How kernels are run (`SimConfig::kernels`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelMode {
    /// A registered twin, else the interpreter.
    Auto,
    /// Always the interpreter, twin or not.
    Isa,
    /// Always a twin; a kernel without one is an error.
    Twin,
    /// Both, on copies of device memory, comparing every byte; needs a twin.
    Both,
    /// An `RELAUNCH_SIM_KERNELS` value that is none of the above (every
    /// dispatch fails saying so, rather than picking one).
    Invalid(String),
}

impl KernelMode {
    /// From `RELAUNCH_SIM_KERNELS` (unset or empty: `Auto`).
    pub fn from_env() -> KernelMode {
        match std::env::var("RELAUNCH_SIM_KERNELS") {
            Err(_) => KernelMode::Auto,
            Ok(v) => KernelMode::parse(&v),
        }
    }

    pub fn parse(v: &str) -> KernelMode {
        match v.trim() {
            "" | "auto" => KernelMode::Auto,
            "isa" => KernelMode::Isa,
            "twin" => KernelMode::Twin,
            "both" => KernelMode::Both,
            other => KernelMode::Invalid(other.to_string()),
        }
    }
}

/// A dispatch's chosen runner.
pub enum Runner {
    Twin(TwinFn),
    Isa(Launch),
    Both(TwinFn, Launch),
}

/// Why no runner could be chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoRunner {
    /// The mode needs a twin and none is registered for the symbol.
    NoTwin(String),
    Invalid(String),
}

impl std::fmt::Display for NoRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoRunner::NoTwin(s) => write!(
                f,
                "no host twin is registered for kernel {s} and RELAUNCH_SIM_KERNELS asks for one: \
                 register one (twins::register_twin) or use the interpreter (isa)"
            ),
            NoRunner::Invalid(v) => write!(
                f,
                "RELAUNCH_SIM_KERNELS={v:?} is not one of isa, twin, both (or unset for auto)"
            ),
        }
    }
}

/// Choose the runner for `symbol` under `mode`.
pub fn select(mode: &KernelMode, symbol: &str, launch: Launch) -> Result<Runner, NoRunner> {
    let twin = registry().lookup(symbol);
    match (mode, twin) {
        (KernelMode::Invalid(v), _) => Err(NoRunner::Invalid(v.clone())),
        (KernelMode::Auto, Some(t)) | (KernelMode::Twin, Some(t)) => Ok(Runner::Twin(t)),
        (KernelMode::Auto, None) | (KernelMode::Isa, _) => Ok(Runner::Isa(launch)),
        (KernelMode::Both, Some(t)) => Ok(Runner::Both(t, launch)),
        (KernelMode::Twin | KernelMode::Both, None) => Err(NoRunner::NoTwin(symbol.to_string())),
    }
}

impl Runner {
    /// Run the dispatch.
    pub fn run(
        &self,
        ctx: &mut DispatchContext,
        mem: &DeviceMemory,
        kernel: &Arc<KernelEntry>,
    ) -> Result<(), KernelFault> {
        match self {
            Runner::Twin(t) => ctx.run(mem, t),
            Runner::Isa(l) => dispatch::run(ctx, mem, kernel, l).map(drop),
            Runner::Both(t, l) => both(ctx, mem, kernel, t, l),
        }
    }
}

/// Relative tolerance of the cross-check for kernels that use approximate
/// instructions (v_exp_f32, v_rcp_f32, v_sqrt_f32, ...): the interpreter
/// gives them the hardware's documented precision, the twins host math.
/// The same rule as the demo's oracle check on hardware: |a - b| <=
/// 2e-3 * max(|b|, 1), per f32 dword.
pub const APPROX_TOLERANCE: f32 = 2e-3;

/// The written ranges of a trace (stores and atomics).
fn written(t: &crate::trace::AccessTrace) -> RangeSet {
    let mut w = t.writes.clone();
    w.extend(&t.atomics);
    w
}

/// The bytes `[addr, addr + len)` of a snapshot (sorted by base).
fn snap_bytes(snap: &[(u64, Vec<u8>)], addr: u64, len: usize) -> Option<&[u8]> {
    let i = snap.partition_point(|(b, _)| *b <= addr).checked_sub(1)?;
    let (base, bytes) = &snap[i];
    let off = (addr - base) as usize;
    bytes.get(off..off.checked_add(len)?)
}

/// The cross-check: the twin runs first, from the current memory; the
/// ranges it wrote are then put back as they were and the interpreter runs;
/// over everything either wrote, memory must hold what the twin left
/// (where the twin wrote) or what was there before. Only those ranges are
/// touched, so other queues of the device may go on meanwhile. The twin's
/// results and the interpreter's access trace (the real access pattern,
/// which the ordering checks see) are what stays.
fn both(
    ctx: &mut DispatchContext,
    mem: &DeviceMemory,
    kernel: &Arc<KernelEntry>,
    twin: &TwinFn,
    launch: &Launch,
) -> Result<(), KernelFault> {
    let before = mem.snapshot();
    let mut tctx = ctx.fresh_copy();
    tctx.run(mem, twin)?;
    let twin_w = written(&tctx.trace);
    let mut twin_out = Vec::new();
    for (a, e) in twin_w.iter() {
        twin_out.push((a, mem.read_vec(a, (e - a) as usize)?));
        if let Some(b) = snap_bytes(&before, a, (e - a) as usize) {
            mem.write(a, b)?;
        }
    }
    dispatch::run(ctx, mem, kernel, launch)?;
    let approximate = dispatch::uses_approximate_ops(kernel, launch, mem)?;
    let mut all = twin_w.clone();
    all.extend(&written(&ctx.trace));
    for (a, e) in all.iter() {
        let len = (e - a) as usize;
        let now = mem.read_vec(a, len)?;
        let mut want = match snap_bytes(&before, a, len) {
            Some(b) => b.to_vec(),
            None => vec![0; len],
        };
        for (ta, tb) in &twin_out {
            let (lo, hi) = ((*ta).max(a), (ta + tb.len() as u64).min(e));
            if lo < hi {
                want[(lo - a) as usize..(hi - a) as usize]
                    .copy_from_slice(&tb[(lo - ta) as usize..(hi - ta) as usize]);
            }
        }
        if let Some(at) = first_difference(&want, &now, a, approximate) {
            let word = |v: &[u8]| {
                let s = at & !3;
                let mut w = [0u8; 4];
                let e = (s + 4).min(v.len());
                w[..e - s].copy_from_slice(&v[s..e]);
                u32::from_le_bytes(w)
            };
            return Err(KernelFault::Interpreter(format!(
                "kernel {}: the interpreter and the twin disagree at {:#x} (byte {at} of the \
                 written range at {a:#x}): twin {:#04x} (dword {:#010x}), interpreter {:#04x} \
                 (dword {:#010x}){}",
                kernel.symbol,
                a + at as u64,
                want[at],
                word(&want),
                now[at],
                word(&now),
                if approximate {
                    format!(" beyond the relative tolerance {APPROX_TOLERANCE} of approximate ops")
                } else {
                    String::new()
                }
            )));
        }
    }
    // The twin's bytes stay (equal to the interpreter's, or within the
    // tolerance of approximate ops), so `both` computes what `twin` does.
    for (ta, tb) in &twin_out {
        mem.write(*ta, tb)?;
    }
    Ok(())
}

/// The first byte where `now` differs from `want`; with `approximate`,
/// aligned dwords are compared as f32 within [`APPROX_TOLERANCE`].
fn first_difference(want: &[u8], now: &[u8], addr: u64, approximate: bool) -> Option<usize> {
    let exact = want.iter().zip(now).position(|(a, b)| a != b)?;
    if !approximate {
        return Some(exact);
    }
    // Dword-aligned comparison from the first dword boundary.
    let skew = ((4 - (addr % 4)) % 4) as usize;
    for i in 0..want.len() {
        if want[i] == now[i] {
            continue;
        }
        if i < skew || i + (4 - (i - skew) % 4) > want.len() {
            return Some(i);
        }
        let s = i - (i - skew) % 4;
        if s + 4 > want.len() {
            return Some(i);
        }
        let f = |v: &[u8]| f32::from_le_bytes([v[s], v[s + 1], v[s + 2], v[s + 3]]);
        let (w, n) = (f(want), f(now));
        let ok = (w.is_nan() && n.is_nan()) || (w - n).abs() <= APPROX_TOLERANCE * w.abs().max(1.0);
        if !ok {
            return Some(i);
        }
    }
    None
}
