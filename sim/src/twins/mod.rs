//! Host twins: the Rust functions that stand in for GPU kernels.
//!
//! A twin is registered process-wide under its kernel symbol (without `.kd`)
//! and called once per workgroup with a [`Workgroup`] that offers what the
//! hardware gives a wave: the kernarg segment read through the pointer the
//! PM4 delivered in the user SGPRs, workgroup id and size, grid size, LDS,
//! and checked device-memory accessors that record every range touched (for
//! the ordering checks). A symbol without a twin runs on the instruction
//! interpreter (`isa::runner` decides).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;

use crate::memory::{DeviceMemory, VmFault};
use crate::trace::{AccessKind, AccessTrace};

/// Why a kernel (its twin) failed; reported like a GPU exception.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelFault {
    #[error(transparent)]
    Vm(#[from] VmFault),
    #[error(
        "kernel argument read of {len} bytes at offset {offset} is outside the \
         {size}-byte kernarg segment"
    )]
    KernargOutOfRange {
        offset: usize,
        len: usize,
        size: usize,
    },
    #[error(
        "hidden argument {what} at kernarg offset {offset} holds {found} but the dispatch \
         has {expected}: the kernarg block's hidden arguments do not match the launch"
    )]
    HiddenArgMismatch {
        what: &'static str,
        offset: usize,
        found: u64,
        expected: u64,
    },
    #[error(
        "LDS access of {len} bytes at offset {offset} is outside the {lds_bytes}-byte allocation"
    )]
    LdsOutOfRange {
        offset: usize,
        len: usize,
        lds_bytes: usize,
    },
    #[error("grid {grid:?} is not a whole number of {block:?} workgroups")]
    PartialWorkgroup { grid: [u32; 3], block: [u32; 3] },
    #[error("kernel reported failure: {0}")]
    Twin(String),
    /// The instruction interpreter stopped the kernel (`isa`).
    #[error(transparent)]
    Isa(Box<crate::isa::IsaError>),
    /// The instruction interpreter cannot set up or check this dispatch.
    #[error("{0}")]
    Interpreter(String),
}

impl KernelFault {
    /// The wave trapped (`s_trap`): with ROCr's trap handler installed the
    /// hardware reports a debug trap, not an illegal instruction.
    pub fn is_trap(&self) -> bool {
        matches!(self, KernelFault::Isa(e) if matches!(e.fault, crate::isa::IsaFault::Trap(_)))
    }
}

/// A twin: called once per workgroup.
pub type TwinFn = Arc<dyn Fn(&mut Workgroup<'_>) -> Result<(), KernelFault> + Send + Sync>;

/// Per-dispatch state shared by all of its workgroups.
pub struct DispatchContext {
    /// Kernarg address as delivered in the user SGPRs.
    pub kernarg_ptr: u64,
    /// Kernarg segment size from the kernel descriptor.
    pub kernarg_size: usize,
    /// Dispatch packet address as delivered in the user SGPRs (0 when the
    /// kernel does not ask for it).
    pub dispatch_ptr: u64,
    /// Grid size in work-items.
    pub grid: [u32; 3],
    /// Workgroup size in work-items.
    pub block: [u32; 3],
    /// LDS bytes allocated per workgroup (RSRC2 LDS_SIZE in bytes).
    pub lds_bytes: usize,
    /// Every range the dispatch touched.
    pub trace: AccessTrace,
    /// The user SGPRs as delivered (what the interpreter starts `s0..` with).
    pub user_sgprs: Vec<u32>,
    /// The queue's scratch for this dispatch (`isa::scratch`): `None`
    /// unless the queue owner gave one; the interpreter refuses a
    /// SCRATCH_EN kernel without it.
    pub scratch: Option<crate::isa::ScratchSetup>,
    /// Private segment bytes per work-item the dispatch asked for beyond
    /// the descriptor's (an AQL packet's `private_segment_size`; 0 for PM4).
    pub private_segment_bytes: u32,
    kernarg: Option<Vec<u8>>,
}

impl DispatchContext {
    pub fn new(
        kernarg_ptr: u64,
        kernarg_size: usize,
        grid: [u32; 3],
        block: [u32; 3],
        lds_bytes: usize,
    ) -> Self {
        DispatchContext {
            kernarg_ptr,
            kernarg_size,
            dispatch_ptr: 0,
            grid,
            block,
            lds_bytes,
            trace: AccessTrace::default(),
            user_sgprs: Vec::new(),
            scratch: None,
            private_segment_bytes: 0,
            kernarg: None,
        }
    }

    /// The same dispatch with an empty trace and no cached kernargs (the
    /// interpreter/twin cross-check runs the twin on it).
    pub fn fresh_copy(&self) -> DispatchContext {
        let mut c = DispatchContext::new(
            self.kernarg_ptr,
            self.kernarg_size,
            self.grid,
            self.block,
            self.lds_bytes,
        );
        c.dispatch_ptr = self.dispatch_ptr;
        c.user_sgprs = self.user_sgprs.clone();
        c.scratch = self.scratch;
        c.private_segment_bytes = self.private_segment_bytes;
        c
    }

    /// Workgroup counts per dimension (grid must be a whole multiple of block).
    pub fn workgroup_counts(&self) -> Result<[u32; 3], KernelFault> {
        let mut out = [0u32; 3];
        for (d, count) in out.iter_mut().enumerate() {
            if self.block[d] == 0 || self.grid[d] % self.block[d] != 0 {
                return Err(KernelFault::PartialWorkgroup {
                    grid: self.grid,
                    block: self.block,
                });
            }
            *count = self.grid[d] / self.block[d];
        }
        Ok(out)
    }

    /// Run `twin` once per workgroup, in id order.
    pub fn run(&mut self, mem: &DeviceMemory, twin: &TwinFn) -> Result<(), KernelFault> {
        let counts = self.workgroup_counts()?;
        let _inside = TwinGuard::enter();
        let mut lds = vec![0u8; self.lds_bytes];
        for z in 0..counts[2] {
            for y in 0..counts[1] {
                for x in 0..counts[0] {
                    lds.fill(0);
                    let mut wg = Workgroup {
                        mem,
                        ctx: self,
                        id: [x, y, z],
                        lds: &mut lds,
                    };
                    twin(&mut wg)?;
                }
            }
        }
        Ok(())
    }
}

thread_local! {
    /// Twin calls running on this thread (a queue thread of the simulator).
    static TWIN_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Marks the current thread as running a twin while it lives.
struct TwinGuard;

impl TwinGuard {
    fn enter() -> Self {
        TWIN_DEPTH.with(|d| d.set(d.get() + 1));
        TwinGuard
    }
}

impl Drop for TwinGuard {
    fn drop(&mut self) {
        TWIN_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// True while the current thread runs a kernel twin. A twin runs on the
/// queue thread that must finish its dispatch before anything queued
/// after it: a replay (or a patch, which waits for replays in flight)
/// started from here would wait for itself. Front ends refuse those calls
/// at once instead of timing out.
pub fn inside_twin() -> bool {
    TWIN_DEPTH.with(|d| d.get() > 0)
}

/// What one workgroup of a twin sees. Valid only inside the twin call.
pub struct Workgroup<'a> {
    mem: &'a DeviceMemory,
    ctx: &'a mut DispatchContext,
    id: [u32; 3],
    lds: &'a mut [u8],
}

impl Workgroup<'_> {
    /// The kernarg segment, read (once per dispatch, as a scalar load)
    /// through the kernarg pointer the PM4 delivered.
    pub fn kernarg(&mut self) -> Result<&[u8], KernelFault> {
        if self.ctx.kernarg.is_none() {
            let bytes = self
                .mem
                .read_vec(self.ctx.kernarg_ptr, self.ctx.kernarg_size)?;
            self.ctx.trace.record(
                AccessKind::ScalarRead,
                self.ctx.kernarg_ptr,
                self.ctx.kernarg_size as u64,
            );
            self.ctx.kernarg = Some(bytes);
        }
        Ok(self.ctx.kernarg.as_deref().unwrap_or_default())
    }

    /// The AQL dispatch packet (64 bytes), read as a scalar load through
    /// the pointer the PM4 delivered, as a code object v4 kernel reads
    /// blockDim and gridDim. A kernel whose descriptor does not enable the
    /// dispatch pointer has none: reading it is a fault.
    pub fn dispatch_packet(&mut self) -> Result<[u8; 64], KernelFault> {
        if self.ctx.dispatch_ptr == 0 {
            return Err(KernelFault::Twin(
                "the kernel read the dispatch packet, but its descriptor does not enable \
                 the dispatch pointer"
                    .into(),
            ));
        }
        let mut b = [0u8; 64];
        self.mem.read(self.ctx.dispatch_ptr, &mut b)?;
        self.ctx
            .trace
            .record(AccessKind::ScalarRead, self.ctx.dispatch_ptr, 64);
        Ok(b)
    }

    /// True when the dispatch delivered a dispatch packet pointer.
    pub fn has_dispatch_packet(&self) -> bool {
        self.ctx.dispatch_ptr != 0
    }

    /// The workgroup size as a code object v4 kernel reads it: from the
    /// dispatch packet's `workgroup_size_x/y/z`.
    pub fn packet_workgroup_size(&mut self) -> Result<[u32; 3], KernelFault> {
        let p = self.dispatch_packet()?;
        Ok([4, 6, 8].map(|o| u32::from(u16::from_le_bytes([p[o], p[o + 1]]))))
    }

    fn arg_bytes<const N: usize>(&mut self, offset: usize) -> Result<[u8; N], KernelFault> {
        let args = self.kernarg()?;
        let size = args.len();
        args.get(offset..offset.saturating_add(N))
            .and_then(|s| s.try_into().ok())
            .ok_or(KernelFault::KernargOutOfRange {
                offset,
                len: N,
                size,
            })
    }

    pub fn arg_u16(&mut self, offset: usize) -> Result<u16, KernelFault> {
        self.arg_bytes::<2>(offset).map(u16::from_le_bytes)
    }
    pub fn arg_u32(&mut self, offset: usize) -> Result<u32, KernelFault> {
        self.arg_bytes::<4>(offset).map(u32::from_le_bytes)
    }
    pub fn arg_f32(&mut self, offset: usize) -> Result<f32, KernelFault> {
        self.arg_bytes::<4>(offset).map(f32::from_le_bytes)
    }
    pub fn arg_u64(&mut self, offset: usize) -> Result<u64, KernelFault> {
        self.arg_bytes::<8>(offset).map(u64::from_le_bytes)
    }

    /// The workgroup size as a code object V5 kernel reads it: from
    /// `hidden_group_size_x/y/z` at `offset` in the kernarg segment. It must
    /// equal the dispatched block, or the kernel would index wrongly.
    pub fn hidden_group_size(&mut self, offset: usize) -> Result<[u32; 3], KernelFault> {
        const NAMES: [&str; 3] = [
            "hidden_group_size_x",
            "hidden_group_size_y",
            "hidden_group_size_z",
        ];
        let mut out = [0u32; 3];
        for (d, name) in NAMES.iter().enumerate() {
            let at = offset + 2 * d;
            let found = u32::from(self.arg_u16(at)?);
            if found != self.ctx.block[d] {
                return Err(KernelFault::HiddenArgMismatch {
                    what: name,
                    offset: at,
                    found: u64::from(found),
                    expected: u64::from(self.ctx.block[d]),
                });
            }
            out[d] = found;
        }
        Ok(out)
    }

    pub fn workgroup_id(&self) -> [u32; 3] {
        self.id
    }
    pub fn workgroup_size(&self) -> [u32; 3] {
        self.ctx.block
    }
    /// Grid size in work-items.
    pub fn grid_size(&self) -> [u32; 3] {
        self.ctx.grid
    }
    pub fn lds_size(&self) -> usize {
        self.lds.len()
    }

    /// Vector load from device memory.
    pub fn load(&mut self, addr: u64, dst: &mut [u8]) -> Result<(), KernelFault> {
        self.mem.read(addr, dst)?;
        self.ctx
            .trace
            .record(AccessKind::VectorRead, addr, dst.len() as u64);
        Ok(())
    }

    /// Scalar load (through K$, like `s_load`) from device memory: data an
    /// earlier dispatch wrote is stale here unless a boundary since then
    /// invalidated the scalar cache (GLK_INV: `rmw`, not `rmw_vmem`).
    pub fn scalar_load(&mut self, addr: u64, dst: &mut [u8]) -> Result<(), KernelFault> {
        self.mem.read(addr, dst)?;
        self.ctx
            .trace
            .record(AccessKind::ScalarRead, addr, dst.len() as u64);
        Ok(())
    }

    /// `scalar_load` of one little-endian u32.
    pub fn scalar_load_u32(&mut self, addr: u64) -> Result<u32, KernelFault> {
        let mut b = [0u8; 4];
        self.scalar_load(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Store to device memory.
    pub fn store(&mut self, addr: u64, src: &[u8]) -> Result<(), KernelFault> {
        self.mem.write(addr, src)?;
        self.ctx
            .trace
            .record(AccessKind::Write, addr, src.len() as u64);
        Ok(())
    }

    pub fn load_u32(&mut self, addr: u64) -> Result<u32, KernelFault> {
        let mut b = [0u8; 4];
        self.load(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    pub fn store_u32(&mut self, addr: u64, value: u32) -> Result<(), KernelFault> {
        self.store(addr, &value.to_le_bytes())
    }
    pub fn load_f32(&mut self, addr: u64) -> Result<f32, KernelFault> {
        self.load_u32(addr).map(f32::from_bits)
    }
    pub fn store_f32(&mut self, addr: u64, value: f32) -> Result<(), KernelFault> {
        self.store_u32(addr, value.to_bits())
    }

    /// Device-scope atomic add; returns the old value.
    pub fn atomic_add_u32(&mut self, addr: u64, value: u32) -> Result<u32, KernelFault> {
        let old = self.mem.atomic_add_u32(addr, value)?;
        self.ctx.trace.record(AccessKind::Atomic, addr, 4);
        Ok(old)
    }

    /// LDS (group memory) of this workgroup, bounds-checked.
    pub fn lds_u32(&self, offset: usize) -> Result<u32, KernelFault> {
        let b = self.lds_slice(offset, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn set_lds_u32(&mut self, offset: usize, value: u32) -> Result<(), KernelFault> {
        self.lds_slice(offset, 4)?;
        self.lds[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
        Ok(())
    }
    fn lds_slice(&self, offset: usize, len: usize) -> Result<&[u8], KernelFault> {
        self.lds
            .get(offset..offset.saturating_add(len))
            .ok_or(KernelFault::LdsOutOfRange {
                offset,
                len,
                lds_bytes: self.lds.len(),
            })
    }
}

/// The process-wide symbol -> twin registry.
#[derive(Default)]
pub struct TwinRegistry {
    twins: RwLock<HashMap<String, TwinFn>>,
}

impl TwinRegistry {
    /// Register (or replace) the twin for `symbol` (a trailing `.kd` is dropped).
    pub fn register(&self, symbol: &str, twin: TwinFn) {
        let name = symbol.strip_suffix(".kd").unwrap_or(symbol);
        self.twins.write().insert(name.to_string(), twin);
    }

    /// Register only when `symbol` has no twin yet.
    pub fn register_if_absent(&self, symbol: &str, twin: TwinFn) {
        let name = symbol.strip_suffix(".kd").unwrap_or(symbol);
        self.twins.write().entry(name.to_string()).or_insert(twin);
    }

    /// The twin for `symbol` (with or without `.kd`).
    pub fn lookup(&self, symbol: &str) -> Option<TwinFn> {
        let name = symbol.strip_suffix(".kd").unwrap_or(symbol);
        self.twins.read().get(name).cloned()
    }
}

/// The process-wide registry (C and Python front ends register here too).
pub fn registry() -> &'static TwinRegistry {
    static REGISTRY: OnceLock<TwinRegistry> = OnceLock::new();
    REGISTRY.get_or_init(TwinRegistry::default)
}

/// Register a Rust closure as the twin of `symbol`.
pub fn register_twin<F>(symbol: &str, twin: F)
where
    F: Fn(&mut Workgroup<'_>) -> Result<(), KernelFault> + Send + Sync + 'static,
{
    registry().register(symbol, Arc::new(twin));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{FaultCause, MemKind};

    #[test]
    fn workgroups_run_in_order_and_record_accesses() {
        let mem = DeviceMemory::new(1 << 20);
        let out = mem.allocate(64, MemKind::Device).unwrap();
        let ka = mem.allocate(8, MemKind::HostFineGrained).unwrap();
        mem.write_u64(ka, out).unwrap();
        let twin: TwinFn = Arc::new(|wg: &mut Workgroup<'_>| {
            let base = wg.arg_u64(0)?;
            let [x, y, _] = wg.workgroup_id();
            let slot = base + 4 * u64::from(y * 4 + x);
            wg.store_u32(slot, 10 * y + x)?;
            wg.atomic_add_u32(base + 60, 1)?;
            Ok(())
        });
        let mut ctx = DispatchContext::new(ka, 8, [4, 2, 1], [1, 1, 1], 0);
        ctx.run(&mem, &twin).unwrap();
        assert_eq!(mem.read_u32(out + 4 * 5).unwrap(), 11);
        assert_eq!(mem.read_u32(out + 60).unwrap(), 8);
        assert_eq!(
            ctx.trace.scalar_reads.iter().collect::<Vec<_>>(),
            vec![(ka, ka + 8)]
        );
        assert_eq!(
            ctx.trace.writes.iter().collect::<Vec<_>>(),
            vec![(out, out + 32)]
        );
        assert_eq!(ctx.trace.atomics.iter().count(), 1);
    }

    #[test]
    fn kernarg_pointer_to_freed_memory_is_a_vm_fault() {
        let mem = DeviceMemory::new(1 << 20);
        let ka = mem.allocate(8, MemKind::HostFineGrained).unwrap();
        mem.free(ka).unwrap();
        let twin: TwinFn = Arc::new(|wg: &mut Workgroup<'_>| wg.arg_u64(0).map(drop));
        let mut ctx = DispatchContext::new(ka, 8, [1, 1, 1], [1, 1, 1], 0);
        match ctx.run(&mem, &twin).unwrap_err() {
            KernelFault::Vm(f) => assert!(matches!(f.cause, FaultCause::Freed { .. })),
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn argument_and_lds_bounds_are_checked() {
        let mem = DeviceMemory::new(1 << 20);
        let ka = mem.allocate(8, MemKind::HostFineGrained).unwrap();
        let twin: TwinFn = Arc::new(|wg: &mut Workgroup<'_>| wg.arg_u32(6).map(drop));
        let mut ctx = DispatchContext::new(ka, 8, [1, 1, 1], [1, 1, 1], 0);
        let err = ctx.run(&mem, &twin).unwrap_err();
        assert_eq!(
            err,
            KernelFault::KernargOutOfRange {
                offset: 6,
                len: 4,
                size: 8
            }
        );
        let twin: TwinFn = Arc::new(|wg: &mut Workgroup<'_>| wg.set_lds_u32(512, 1));
        let mut ctx = DispatchContext::new(ka, 8, [1, 1, 1], [1, 1, 1], 512);
        assert!(matches!(
            ctx.run(&mem, &twin),
            Err(KernelFault::LdsOutOfRange { offset: 512, .. })
        ));
        let mut ctx = DispatchContext::new(ka, 8, [3, 1, 1], [2, 1, 1], 0);
        assert!(matches!(
            ctx.run(&mem, &twin),
            Err(KernelFault::PartialWorkgroup { .. })
        ));
    }

    #[test]
    fn registry_strips_kd_and_keeps_first_with_if_absent() {
        let reg = TwinRegistry::default();
        reg.register("k.kd", Arc::new(|_wg: &mut Workgroup<'_>| Ok(())));
        assert!(reg.lookup("k").is_some() && reg.lookup("k.kd").is_some());
        assert!(reg.lookup("missing").is_none());
        reg.register_if_absent(
            "k",
            Arc::new(|_wg: &mut Workgroup<'_>| Err(KernelFault::Twin("x".into()))),
        );
        let mem = DeviceMemory::new(1 << 20);
        let mut ctx = DispatchContext::new(0, 0, [1, 1, 1], [1, 1, 1], 0);
        assert!(ctx.run(&mem, &reg.lookup("k").unwrap()).is_ok());
    }
}
