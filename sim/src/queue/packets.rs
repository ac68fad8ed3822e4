//! What the packet processor does with each AQL packet type beyond PM4
//! IBs: barrier-AND waits and the CP's own programming of a kernel
//! dispatch (the header's fences stand in for the IB prologue/epilogue).

use relaunch_hsa_sys::{
    HSA_STATUS_ERROR_EXCEPTION, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
    HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
};

use super::{Failure, Processor, QueueErrorKind, POLL};
use std::time::Duration;

use crate::aql::{Packet, Scope, Slot};
use crate::isa::ScratchSetup;
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
        if private_segment_size < kd.private_segment_fixed_size {
            return Err(invalid(format!(
                "private_segment_size {private_segment_size} is below {}'s static {} bytes",
                kernel.symbol, kd.private_segment_fixed_size
            )));
        }
        let scratch = if kd.scratch_enabled() {
            let wave_bytes =
                crate::isa::scratch::per_wave_bytes(private_segment_size, !kd.wave32());
            self.acquire_scratch(wave_bytes, !kd.wave32())?
        } else {
            None
        };
        let mut ctx = DispatchContext::new(
            kernarg_address,
            kd.kernarg_size as usize,
            grid,
            workgroup,
            group_segment_size as usize,
        );
        ctx.scratch = scratch;
        ctx.private_segment_bytes = private_segment_size;
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
            scratch.as_ref(),
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

impl Processor {
    /// The queue's scratch for a dispatch whose waves need `wave_bytes`
    /// each: as the CP does, when the queue's slots are too small (or it
    /// has none) the queue stops with "scratch needed", waits for its
    /// owner to grow them and retries the same packet. `None` when the
    /// dispatch needs none and the queue has none.
    fn acquire_scratch(
        &self,
        wave_bytes: u64,
        wave64: bool,
    ) -> Result<Option<ScratchSetup>, Failure> {
        let fault = |m: String| (QueueErrorKind::KernelFault, HSA_STATUS_ERROR_EXCEPTION, m);
        let mut answered = false;
        loop {
            let current = self.front.scratch(&self.device).map_err(fault)?;
            match current {
                Some(s) if s.slots > 0 && s.wave_bytes >= wave_bytes => return Ok(Some(s)),
                None if wave_bytes == 0 => return Ok(None),
                _ if answered => {
                    return Err(fault(format!(
                        "the dispatch needs {wave_bytes} bytes of scratch per wave; the queue's \
                         owner answered \"scratch needed\" with {}",
                        current.map_or("no scratch".to_string(), |s| format!(
                            "{} slots of {} bytes",
                            s.slots, s.wave_bytes
                        ))
                    )))
                }
                _ => {}
            }
            let mut asked = false;
            let mut step = Duration::from_micros(20);
            while !self
                .front
                .grow_scratch(&self.device, wave_bytes, wave64, asked)
                .map_err(fault)?
            {
                asked = true;
                if self.stopping() {
                    return Err(fault("discarded while waiting for scratch".into()));
                }
                std::thread::sleep(step);
                step = (step * 2).min(Duration::from_millis(1));
            }
            answered = true;
        }
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
