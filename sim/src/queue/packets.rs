//! What the packet processor does with each AQL packet type beyond PM4
//! IBs: barrier-AND waits and the CP's own programming of a kernel
//! dispatch (the header's fences stand in for the IB prologue/epilogue).

use relaunch_hsa_sys::{
    HSA_STATUS_ERROR_EXCEPTION, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
    HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
};

use super::{Failure, Processor, QueueErrorKind, POLL};
use crate::aql::{Packet, Scope, Slot};
use crate::ordering::{CacheOps, DispatchRef, IbEnd, IbLocation, OrderingModel};
use crate::pm4::Pm4Error;
use crate::signal::Condition;
use crate::trace::RangeSet;
use crate::twins::DispatchContext;

impl Processor {
    pub(super) fn barrier(&self, deps: &[u64]) -> Result<(), Failure> {
        for &h in deps {
            let s = self.device.signals.get(h).ok_or_else(|| {
                let m = format!("barrier-AND dependency signal {h} is not a live signal");
                (
                    QueueErrorKind::InvalidPacket,
                    HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                    m,
                )
            })?;
            while s.wait(Condition::Eq, 0, POLL) != 0 {
                if self.stopping() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The CP's own programming of an AQL kernel dispatch.
    pub(super) fn kernel_dispatch(
        &self,
        at: IbLocation,
        slot: &Slot,
        carried: &RangeSet,
        host_observes: bool,
    ) -> Result<IbEnd, Failure> {
        let Packet::KernelDispatch {
            workgroup,
            grid,
            group_segment_size,
            kernel_object,
            kernarg_address,
            ..
        } = slot.packet
        else {
            return Ok(IbEnd::default());
        };
        let invalid = |m: String| {
            (
                QueueErrorKind::InvalidPacket,
                HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                m,
            )
        };
        let kernel = self
            .device
            .kernel_at_descriptor(kernel_object)
            .ok_or_else(|| {
                invalid(format!(
                    "kernel_object {kernel_object:#x} is not a loaded kernel descriptor"
                ))
            })?;
        let kd = kernel.descriptor;
        if group_segment_size < kd.group_segment_fixed_size {
            return Err(invalid(format!(
                "group_segment_size {group_segment_size} is below {}'s static {} bytes",
                kernel.symbol, kd.group_segment_fixed_size
            )));
        }
        self.device
            .check_dispatch_size(grid, workgroup)
            .map_err(|m| invalid(format!("kernel {}: {m}", kernel.symbol)))?;
        let mut ctx = DispatchContext::new(
            kernarg_address,
            kd.kernarg_size as usize,
            grid,
            workgroup,
            group_segment_size as usize,
        );
        ctx.user_sgprs =
            aql_user_sgprs(&kd, self.device.family(), kernarg_address).map_err(|m| {
                (
                    QueueErrorKind::KernelFault,
                    HSA_STATUS_ERROR_EXCEPTION,
                    format!("kernel {}: {m}", kernel.symbol),
                )
            })?;
        let runner = crate::pm4::select_runner(&self.device, &kernel, &ctx).map_err(|e| {
            (
                QueueErrorKind::KernelFault,
                HSA_STATUS_ERROR_EXCEPTION,
                e.to_string(),
            )
        })?;
        runner
            .run(&mut ctx, &self.device.memory, &kernel)
            .map_err(|fault| {
                let kind = match &fault {
                    crate::twins::KernelFault::Vm(f) => {
                        self.note_vm(f);
                        QueueErrorKind::VmFault
                    }
                    _ => QueueErrorKind::KernelFault,
                };
                let status = if kind == QueueErrorKind::VmFault {
                    HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION
                } else {
                    HSA_STATUS_ERROR_EXCEPTION
                };
                (
                    kind,
                    status,
                    format!("kernel {} faulted: {fault}", kernel.symbol),
                )
            })?;
        // The header's fences stand in for the prologue and epilogue.
        let mut model = OrderingModel::new(at);
        model.carry_in(carried);
        if slot.header.acquire != Scope::None {
            model.acquire(CacheOps::all());
        }
        model.dispatch(DispatchRef {
            pm4_packet: 0,
            dispatch: 0,
            kernel: &kernel.symbol,
            trace: &ctx.trace,
        });
        model.wait();
        if slot.header.release != Scope::None {
            model.acquire(CacheOps::all());
        }
        Ok(model.finish_parts(host_observes))
    }
}

pub(super) fn pm4_failure(e: Pm4Error) -> Failure {
    use crate::pm4::Pm4ErrorKind as K;
    let (kind, status) = if e.is_vm_fault() {
        (
            QueueErrorKind::VmFault,
            HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
        )
    } else if matches!(*e.kind, K::Kernel { .. } | K::NoTwin(_)) {
        (QueueErrorKind::KernelFault, HSA_STATUS_ERROR_EXCEPTION)
    } else {
        (
            QueueErrorKind::InvalidPacket,
            HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
        )
    };
    (kind, status, e.to_string())
}

/// The user SGPRs the packet processor loads for an AQL dispatch, in the
/// order the descriptor's enables give (AMDGPUUsage, "Initial Kernel
/// Execution State"): the private segment buffer (zero: no scratch is
/// modelled) and the kernarg pointer; RSRC2's count beyond them (LLVM's
/// gfx1100 padding) reads as zero. The dispatch and queue pointers, the
/// dispatch id and flat-scratch init are not delivered by the simulator's
/// AQL path: asking for them is an error, not a made-up value.
fn aql_user_sgprs(
    kd: &relaunch_device::codeobj::KernelDescriptor,
    family: relaunch_device::target::Family,
    kernarg: u64,
) -> Result<Vec<u32>, String> {
    use relaunch_device::target::Family;
    let count = kd.user_sgpr_count() as usize;
    let mut out = Vec::with_capacity(count);
    let psb = kd.wants_private_segment_buffer()
        && match family {
            Family::Gfx12 => false,
            _ => true,
        };
    if psb {
        out.extend([0; 4]);
    }
    for (on, what) in [
        (kd.wants_dispatch_ptr(), "the dispatch pointer"),
        (kd.wants_queue_ptr(), "the queue pointer"),
    ] {
        if on {
            return Err(format!(
                "the descriptor asks for {what}, which the simulator's AQL path does not deliver                  to the instruction interpreter (register a host twin)"
            ));
        }
    }
    if kd.wants_kernarg_segment_ptr() {
        out.extend([kernarg as u32, (kernarg >> 32) as u32]);
    }
    for (on, what) in [
        (kd.wants_dispatch_id(), "the dispatch id"),
        (kd.wants_flat_scratch_init(), "flat scratch init"),
        (kd.wants_private_segment_size(), "the private segment size"),
    ] {
        if on {
            return Err(format!(
                "the descriptor asks for {what}, which the simulator's AQL path does not deliver                  to the instruction interpreter (register a host twin)"
            ));
        }
    }
    out.resize(count.max(out.len()), 0);
    Ok(out)
}
