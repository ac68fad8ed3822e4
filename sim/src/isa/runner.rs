//! Which runner executes a kernel: its registered host twin, the
//! interpreter, or both with every written byte compared
//! (`RELAUNCH_SIM_KERNELS=isa|twin|both`; unset: the twin when one is
//! registered for the symbol, else the interpreter).

use std::sync::Arc;

use super::dispatch::{self, Launch};
use crate::device::KernelEntry;
use crate::memory::DeviceMemory;
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

/// The cross-check: the twin runs first from a snapshot of device memory,
/// then memory is put back and the interpreter runs; every byte of every
/// allocation must then match what the twin left. The interpreter's
/// results (and access trace) are what stays.
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
    let after_twin = mem.snapshot();
    mem.restore(&before);
    dispatch::run(ctx, mem, kernel, launch)?;
    let after_isa = mem.snapshot();
    for ((base, t), (b2, i)) in after_twin.iter().zip(after_isa.iter()) {
        if base != b2 || t.len() != i.len() {
            return Err(KernelFault::Interpreter(format!(
                "kernel {}: the allocations changed between the twin and the interpreter run \
                 (another queue is using this device): the cross-check needs it alone",
                kernel.symbol
            )));
        }
        if let Some(at) = t.iter().zip(i.iter()).position(|(a, b)| a != b) {
            let word = |v: &[u8]| {
                let s = at & !3;
                let mut w = [0u8; 4];
                let e = (s + 4).min(v.len());
                w[..e - s].copy_from_slice(&v[s..e]);
                u32::from_le_bytes(w)
            };
            return Err(KernelFault::Interpreter(format!(
                "kernel {}: the interpreter and the twin disagree at {:#x} (byte {at} of the \
                 allocation at {base:#x}): twin wrote {:#04x} (dword {:#010x}), interpreter \
                 {:#04x} (dword {:#010x})",
                kernel.symbol,
                base + at as u64,
                t[at],
                word(t),
                i[at],
                word(i)
            )));
        }
    }
    Ok(())
}
