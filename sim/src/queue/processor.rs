//! The packet-processor thread of a simulated queue: polls the ring,
//! consumes packets in order, executes them, and reports failures (queue
//! errors through the callback, VM faults through the device's
//! system-event path). Packet kinds are run in `packets.rs`.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use relaunch_hsa_sys::{
    Status, HSA_STATUS_ERROR, HSA_STATUS_ERROR_EXCEPTION, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
    HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
};

use super::{
    packets, Failure, QueueError, QueueErrorKind, Shared, CONSUMED, LINGER, LINGER_POLL,
    LISTED_VIOLATIONS, POLL,
};
use crate::aql::{self, Packet, Slot, POISON};
use crate::device::SimDevice;
use crate::fault::VmFaultEvent;
use crate::memory::VmFault;
use crate::ordering::{Footprint, IbEnd, IbLocation, Violation};
use crate::pm4;
use crate::trace::RangeSet;

use super::front::Front;

/// The packet-processor thread's state.
pub(crate) struct Processor {
    pub(super) device: Arc<SimDevice>,
    pub(super) shared: Arc<Shared>,
    /// Where this queue's doorbell, indices and signals live.
    pub(super) front: Arc<dyn Front>,
    pub(super) id: u64,
    pub(super) ring: u64,
    pub(super) mask: u64,
    /// Writes of earlier packets not yet released (see `execute`).
    pub(super) carry: RefCell<RangeSet>,
    /// Address and reason bits of the VM fault being reported (set where
    /// the fault is met, taken by `fail`).
    pub(super) vm: Cell<Option<(u64, u32)>>,
}

impl Processor {
    /// A processor for the ring of `size` packets at `ring`.
    pub(crate) fn new(
        device: Arc<SimDevice>,
        shared: Arc<Shared>,
        front: Arc<dyn Front>,
        id: u64,
        ring: u64,
        size: u32,
    ) -> Self {
        Processor {
            device,
            shared,
            front,
            id,
            ring,
            mask: u64::from(size) - 1,
            carry: RefCell::new(RangeSet::new()),
            vm: Cell::new(None),
        }
    }

    /// Destroyed, or inactivated: an inactivated queue never runs again
    /// (and `inactivate` wakes the processor, so idling would spin).
    pub(super) fn stopping(&self) -> bool {
        self.shared.stop.load(Ordering::Acquire) || self.shared.inactive.load(Ordering::Acquire)
    }

    pub(crate) fn run(self) {
        let agent = crate::ordering::clock::enter_queue();
        self.shared.agent.store(agent, Ordering::Release);
        crate::memory::bind_inactivation(Arc::clone(&self.shared.inactive));
        let front = Arc::clone(&self.front);
        crate::isa::bind_interrupts(Arc::new(move |data| front.shader_interrupt(data)));
        let mut rd = 0u64;
        // When the last packet finished (None: idle since long enough).
        let mut active: Option<Instant> = None;
        while !self.stopping() {
            // A VM fault anywhere on the device stops this queue too.
            if self.shared.dead.load(Ordering::Acquire)
                || self.device.is_lost()
                || !self.front.runnable()
            {
                self.front.idle(POLL);
                continue;
            }
            let seen = self.front.doorbell();
            let slot = self.ring + 64 * (rd & self.mask);
            let header = match self.device.memory.load_u16_acquire(slot) {
                Ok(h) => h,
                Err(f) => {
                    self.note_vm(&f);
                    self.fail(
                        rd,
                        QueueErrorKind::VmFault,
                        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                        f.to_string(),
                    );
                    continue;
                }
            };
            if aql::Header::is_invalid(header) {
                if !self.linger(slot, seen, &mut active) {
                    self.front.wait_doorbell(seen, POLL);
                }
                continue;
            }
            if self.step(rd, slot) {
                rd += 1;
            }
            active = Some(Instant::now());
        }
        *self.shared.retired.lock() = crate::ordering::clock::leave_queue();
    }

    /// For [`LINGER`] after the last packet, polls the ring on a short
    /// timer instead of sleeping on the doorbell, as a hardware CP keeps
    /// polling: a host that submits again soon then writes a doorbell
    /// nobody sleeps on, and its write is not followed by a thread wake-up
    /// (a futex call, and often this thread preempting the host) that a
    /// real doorbell write does not cost. Benchmarks time the host up to
    /// its last doorbell, so with several queues that cost would count.
    /// Sleeping between polls (not spinning) leaves the CPU to the host.
    /// True when something came (doorbell or a published header), false
    /// once idle.
    fn linger(&self, slot: u64, seen: i64, active: &mut Option<Instant>) -> bool {
        let Some(since) = *active else {
            return false;
        };
        while since.elapsed() < LINGER {
            std::thread::sleep(LINGER_POLL);
            if self.stopping() || self.front.doorbell() != seen {
                return true;
            }
            match self.device.memory.load_u16_acquire(slot) {
                Ok(h) if aql::Header::is_invalid(h) => {}
                _ => return true,
            }
        }
        *active = None;
        false
    }

    /// Process the packet in `slot`; true when it was consumed.
    fn step(&self, id: u64, slot: u64) -> bool {
        let plan = *self.shared.faults.lock();
        if plan.hang_at == Some(id) {
            tracing::debug!(queue = self.id, packet = id, "sim injected hang");
            self.shared.dead.store(true, Ordering::Release);
            return false;
        }
        if plan.vm_fault_at == Some(id) {
            let msg = format!("injected VM fault at address {slot:#x} (fault injection)");
            self.vm.set(Some((
                slot,
                relaunch_hsa_sys::HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT,
            )));
            self.fail(
                id,
                QueueErrorKind::VmFault,
                HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                msg,
            );
            return false;
        }
        if plan.error_at == Some(id) {
            self.fail(
                id,
                QueueErrorKind::Injected,
                HSA_STATUS_ERROR,
                "injected queue error".into(),
            );
            return false;
        }
        let mut bytes = [0u8; 64];
        if let Err(f) = self.device.memory.read(slot, &mut bytes) {
            self.note_vm(&f);
            self.fail(
                id,
                QueueErrorKind::VmFault,
                HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                f.to_string(),
            );
            return false;
        }
        let parsed = match aql::parse(&bytes) {
            Ok(s) => s,
            Err(msg) => {
                self.fail(
                    id,
                    QueueErrorKind::InvalidPacket,
                    HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                    msg,
                );
                return false;
            }
        };
        // The host learns of completion when the signal reaches zero: then
        // every result must be released (else unreleased writes carry over).
        let host_observes = parsed.completion_signal != 0
            && self
                .front
                .signal_value(parsed.completion_signal)
                .is_some_and(|v| v <= 1);
        let start = crate::pm4::timestamp::read();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.execute(id, &parsed, host_observes)
        }))
        .unwrap_or_else(|_| {
            Err((
                QueueErrorKind::KernelFault,
                HSA_STATUS_ERROR_EXCEPTION,
                "a host twin panicked while executing this packet".to_string(),
            ))
        });
        if let Err((kind, status, msg)) = outcome {
            self.fail(id, kind, status, msg);
            return false;
        }
        if self.shared.inactive.load(Ordering::Acquire) {
            // Inactivated while it ran: discarded, never signalled.
            return false;
        }
        // Consume: poison the body, then invalidate the header, then advance.
        let _ = self.device.memory.write(slot + 4, &[POISON; 60]);
        let _ = self.device.memory.store_u32_release(slot, CONSUMED);
        self.front.consumed(id + 1);
        if parsed.completion_signal != 0 {
            if let Err(msg) = self.front.complete(parsed.completion_signal, start) {
                self.fail(
                    id,
                    QueueErrorKind::InvalidPacket,
                    HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                    msg,
                );
            }
        }
        true
    }

    /// Remember the address and reason of VM fault `f` for `fail`.
    pub(super) fn note_vm(&self, f: &VmFault) {
        self.vm.set(Some((f.addr, crate::fault::reason_mask(f))));
    }

    fn fail(&self, packet: u64, kind: QueueErrorKind, status: Status, message: String) {
        if self.shared.inactive.load(Ordering::Acquire) {
            // Inactivated: the work was discarded, nobody is told.
            tracing::debug!(
                queue = self.id,
                packet,
                "sim: discarded work of an inactivated queue"
            );
            return;
        }
        let err = QueueError {
            kind,
            status,
            queue: self.id,
            packet,
            message,
        };
        tracing::warn!(error = %err, "sim queue error");
        self.shared.errors.lock().push(err.clone());
        self.report(kind, &err);
        // Dead only once reported: whoever sees `is_dead` can already read
        // the error through the callback's side effects. Only this thread
        // runs packets, so nothing is processed in between.
        self.shared.dead.store(true, Ordering::Release);
    }

    /// Tell the world about `err`: a VM fault goes to the system-event
    /// path, anything else to the queue's error callback.
    fn report(&self, kind: QueueErrorKind, err: &QueueError) {
        let vm = self.vm.take();
        if kind == QueueErrorKind::VmFault {
            // Not a queue error: the system-event path (see `crate::fault`).
            let (address, reason_mask) = vm.unwrap_or((0, 0));
            self.device.report_vm_fault(VmFaultEvent {
                target: self.device.config().target.clone(),
                address,
                reason_mask,
                queue: self.id,
                packet: err.packet,
                message: err.message.clone(),
            });
            return;
        }
        if catch_unwind(AssertUnwindSafe(|| self.front.report(err))).is_err() {
            tracing::error!(queue = self.id, "sim queue error callback panicked");
        }
    }

    fn execute(&self, id: u64, slot: &Slot, host_observes: bool) -> Result<(), Failure> {
        let at = IbLocation {
            queue: self.id,
            aql_packet: id,
        };
        use crate::counters::AqlKind;
        let kind = match &slot.packet {
            Packet::KernelDispatch { .. } => AqlKind::Dispatch,
            Packet::BarrierAnd { .. } => AqlKind::Barrier,
            Packet::Pm4Ib { .. } => AqlKind::Pm4Ib,
        };
        let h = &slot.header;
        self.device.cp.aql(kind, h.barrier, h.acquire, h.release);
        // What the host knew when it submitted this packet happened before it.
        let submitted = self.front.submitted(id);
        let mut violations = match &slot.packet {
            Packet::BarrierAnd { deps } => {
                crate::ordering::clock::acquire(&submitted);
                self.barrier(deps)?;
                Vec::new()
            }
            _ => {
                let flight = &self.device.in_flight;
                let start = flight.begin(&submitted);
                let carried = self.carry.borrow().clone();
                match self.run_work(at, slot, &carried, host_observes) {
                    Ok(end) => {
                        *self.carry.borrow_mut() = end.unreleased;
                        let mut found = end.violations;
                        found.extend(flight.end(self.id, id, start, end.footprint));
                        found
                    }
                    Err(e) => {
                        flight.end(self.id, id, start, Footprint::default());
                        return Err(e);
                    }
                }
            }
        };
        violations.sort_by_key(|v| (v.pm4_packet, v.dispatch));
        self.device.log_violations(&violations);
        if self.device.config().strict && !violations.is_empty() {
            let mut msg = format!("{} ordering violation(s): ", violations.len());
            let listed: Vec<String> = violations
                .iter()
                .take(LISTED_VIOLATIONS)
                .map(Violation::to_string)
                .collect();
            msg.push_str(&listed.join("; "));
            return Err((QueueErrorKind::Violation, HSA_STATUS_ERROR_EXCEPTION, msg));
        }
        Ok(())
    }

    /// Run a PM4-IB or kernel-dispatch packet.
    fn run_work(
        &self,
        at: IbLocation,
        slot: &Slot,
        carried: &RangeSet,
        host_observes: bool,
    ) -> Result<IbEnd, Failure> {
        match &slot.packet {
            Packet::Pm4Ib { ib_addr, ib_dwords } => {
                let dwords = self
                    .device
                    .memory
                    .fetch_ib(*ib_addr, *ib_dwords as usize)
                    .map_err(|f| {
                        self.note_vm(&f);
                        let m = format!("reading the IB: {f}");
                        (
                            QueueErrorKind::VmFault,
                            HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                            m,
                        )
                    })?;
                self.device.cp.ib(dwords.len());
                let execute = if slot.header.barrier {
                    pm4::execute_ib
                } else {
                    pm4::execute_overlapping_ib
                };
                execute(&self.device, at, &dwords, carried, host_observes).map_err(|e| {
                    if let Some(f) = e.vm_fault() {
                        self.note_vm(f);
                    }
                    packets::pm4_failure(e)
                })
            }
            Packet::KernelDispatch { .. } => self.kernel_dispatch(at, slot, carried, host_observes),
            Packet::BarrierAnd { .. } => Ok(IbEnd {
                unreleased: carried.clone(),
                ..IbEnd::default()
            }),
        }
    }
}
