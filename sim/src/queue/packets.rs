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
use crate::trace::RangeSet;
use crate::twins::DispatchContext;

impl Processor {
    pub(super) fn barrier(&self, deps: &[u64]) -> Result<(), Failure> {
        for &h in deps {
            loop {
                let reached = self.front.wait_zero(h, POLL).map_err(|m| {
                    (
                        QueueErrorKind::InvalidPacket,
                        HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                        m,
                    )
                })?;
                if reached {
                    break;
                }
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
            private_segment_size,
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
            .front
            .kernel(&self.device, kernel_object)
            .map_err(invalid)?;
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
        ctx.user_sgprs = crate::isa::dispatch::aql_user_sgprs(
            &kd,
            self.device.family(),
            kernarg_address,
            crate::isa::dispatch::AqlSource {
                packet: self.ring + 64 * (at.aql_packet & self.mask),
                queue: self.front.queue_address(),
                id: at.aql_packet,
                private_segment_size,
            },
            None,
        )
        .map_err(|m| {
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
                    f if f.is_trap() => QueueErrorKind::Trap,
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
    } else if matches!(&*e.kind, K::Kernel { fault, .. } if fault.is_trap()) {
        (QueueErrorKind::Trap, HSA_STATUS_ERROR_EXCEPTION)
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
