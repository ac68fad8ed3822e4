//! The scripted table's packet processor (on with `State::execute`): when a
//! queue's doorbell rings, the PM4-IB packets published on it run, in the
//! ringing thread, as `counter` dispatches. Of the PM4 it follows only
//! type-3 packets: SET_SH_REG writes of COMPUTE_USER_DATA_0/1 (the kernarg
//! segment address of a kernel whose only user SGPRs are that pointer, as
//! `counter`'s are; kept per queue, as the CP keeps SH registers) and
//! DISPATCH_DIRECT, which adds 1 to the u32 the segment's first argument
//! points at (one work-item). Opcodes, header fields and register offsets
//! are relaunch-facts'. Everything else in the IB is skipped.
//!
//! An argument outside every allocation of the table is a GPU memory fault,
//! reported as ROCr reports one (`Runtime::VMFaultHandler`): to the system
//! event handlers only, never to a queue callback, and with no handler
//! returning success it is recorded in `State::aborted` (where ROCr would
//! `abort()`). The kernel driver then stops every queue of the process on
//! that GPU: nothing more runs on them, and the faulting packet and those
//! behind it never complete. Other GPUs' queues keep running.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use relaunch_facts::packet::{header as pm4, ib_control, op};
use relaunch_facts::regs::off::COMPUTE_USER_DATA_0;
use relaunch_hsa_sys as sys;

use super::{with, State};

/// AQL packet type in the low byte of dword 0.
const TYPE_MASK: u32 = 0xff;

/// What one packet did.
enum Ran {
    /// Nothing published at the read index (or the GPU is stopped).
    Idle,
    /// Completed: decrement this completion signal (0: none).
    Done(u64),
    /// A dispatch accessed `address` on `agent`: a memory fault.
    Fault(sys::Agent, u64),
}

/// Reports a GPU memory fault the way ROCr does (VMFaultHandler): every
/// registered system event handler is called, none of the queue callbacks;
/// with no handler returning success ROCr would `abort()` the process,
/// which this fixture turns into a test failure (a panic naming it).
pub fn fire_memory_fault(agent: sys::Agent, address: u64) {
    assert!(
        deliver_memory_fault(agent, address),
        "Memory access fault by GPU at {address:#x}: no system event handler returned \
         success, so ROCr would abort() the process here"
    );
}

/// Calls every system event handler with a memory fault (not under the
/// fixture's lock: a handler may call back into the table); true when one
/// returned success, i.e. ROCr would not abort.
pub fn deliver_memory_fault(agent: sys::Agent, address: u64) -> bool {
    let handlers = with(|s| s.event_handlers.clone());
    let event = sys::AmdEvent {
        event_type: sys::HSA_AMD_GPU_MEMORY_FAULT_EVENT,
        memory_fault: sys::GpuMemoryFaultInfo {
            agent,
            virtual_address: address,
            fault_reason_mask: sys::HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT,
        },
    };
    let mut handled = false;
    for (cb, data) in handlers {
        handled |= unsafe { cb(&event, data as *mut c_void) } == sys::HSA_STATUS_SUCCESS;
    }
    handled
}

/// Called after every signal store: a doorbell of an executing table
/// runs its queue.
pub fn rung(signal: sys::Signal) {
    let queue = with(|s| {
        if !s.execute {
            return None;
        }
        s.queues
            .iter()
            .find(|q| q.doorbell == signal.handle)
            .map(|q| q.queue as usize)
    });
    if let Some(queue) = queue {
        run(queue as *mut sys::Queue);
    }
}

fn run(queue: *mut sys::Queue) {
    loop {
        match with(|s| step(s, queue)) {
            Ran::Idle => return,
            Ran::Done(0) => {}
            Ran::Done(signal) => {
                let sig = super::signal(sys::Signal { handle: signal });
                sig.fetch_sub(1, Ordering::AcqRel);
            }
            Ran::Fault(agent, address) => {
                // Outside the fixture's lock: the handlers call back in.
                if !deliver_memory_fault(agent, address) {
                    with(|s| {
                        s.aborted.push(format!(
                            "Memory access fault by GPU node-{} on address {address:#x}: \
                             no system event handler took it, ROCr would abort()",
                            agent.handle
                        ))
                    });
                }
                return;
            }
        }
    }
}

/// Runs the packet at `queue`'s read index, if one is published.
fn step(s: &mut State, queue: *mut sys::Queue) -> Ran {
    let Some(at) = s.queues.iter().position(|f| std::ptr::eq(f.queue, queue)) else {
        return Ran::Idle;
    };
    let q = &s.queues[at];
    if s.faulted.contains(&q.agent.handle) {
        return Ran::Idle;
    }
    let read = q.read.load(Ordering::Acquire);
    if read >= q.write.load(Ordering::Acquire) {
        return Ran::Idle;
    }
    // SAFETY: the queue's live ring; `size` slots of 64 bytes.
    let slot = unsafe { (*queue).base_address.cast::<u32>() }
        .wrapping_add((read % u64::from(unsafe { (*queue).size })) as usize * 16);
    // SAFETY: inside the ring; the header is published last with release.
    let header = unsafe { std::ptr::read_volatile(slot) };
    if header & TYPE_MASK == sys::HSA_PACKET_TYPE_INVALID as u32 {
        return Ran::Idle;
    }
    std::sync::atomic::fence(Ordering::Acquire);
    // SAFETY: the 16 dwords of the published packet.
    let words: [u32; 16] = unsafe { std::ptr::read_volatile(slot.cast()) };
    let agent = q.agent;
    let ib = u64::from(words[2]) | u64::from(words[3]) << 32;
    let dwords = ib_control::IB_SIZE.get(words[4]) as usize;
    let signal = u64::from(words[14]) | u64::from(words[15]) << 32;
    let Some(ib_words) = read_ib(s, ib, dwords) else {
        s.faulted.push(agent.handle);
        return Ran::Fault(agent, ib);
    };
    let mut user_data = q.user_data;
    let mut at_word = 0;
    while at_word < ib_words.len() {
        let header = ib_words[at_word];
        if pm4::TYPE.get(header) != 3 {
            at_word += 1; // type-2 filler (or anything else): one dword
            continue;
        }
        let len = pm4::COUNT.get(header) as usize + 2;
        let body =
            &ib_words[(at_word + 1).min(ib_words.len())..(at_word + len).min(ib_words.len())];
        at_word += len;
        match pm4::OPCODE.get(header) as u8 {
            op::SET_SH_REG if !body.is_empty() => {
                for (i, &value) in body[1..].iter().enumerate() {
                    let reg = (body[0] as usize + i).checked_sub(usize::from(COMPUTE_USER_DATA_0));
                    if let Some(reg @ (0 | 1)) = reg {
                        user_data[reg] = value;
                    }
                }
            }
            op::DISPATCH_DIRECT => {
                let kernarg = u64::from(user_data[0]) | u64::from(user_data[1]) << 32;
                // SAFETY: 8 bytes inside a live allocation of the table.
                let arg = inside(s, kernarg, 8)
                    .then(|| unsafe { (kernarg as *const u64).read_unaligned() });
                match arg {
                    Some(target) if inside(s, target, 4) => {
                        // SAFETY: 4 bytes inside a live allocation of the table.
                        let counter = unsafe { &*(target as *const std::sync::atomic::AtomicU32) };
                        counter.fetch_add(1, Ordering::AcqRel);
                    }
                    wild => {
                        s.faulted.push(agent.handle);
                        return Ran::Fault(agent, wild.unwrap_or(kernarg));
                    }
                }
            }
            _ => {}
        }
    }
    let q = &mut s.queues[at];
    q.user_data = user_data;
    // SAFETY: the packet's slot: consumed, back to INVALID.
    unsafe { std::ptr::write_volatile(slot, sys::HSA_PACKET_TYPE_INVALID as u32) };
    q.read.store(read + 1, Ordering::Release);
    Ran::Done(signal)
}

/// The IB's dwords when they lie inside one allocation of the table.
fn read_ib(s: &State, ib: u64, dwords: usize) -> Option<Vec<u32>> {
    if dwords == 0 || !inside(s, ib, dwords * 4) {
        return None;
    }
    // SAFETY: `dwords` dwords inside a live allocation (checked above).
    Some(unsafe { std::slice::from_raw_parts(ib as *const u32, dwords) }.to_vec())
}

/// True when `len` bytes at `addr` lie inside one allocation of the table.
fn inside(s: &State, addr: u64, len: usize) -> bool {
    s.allocations.iter().any(|(&base, (layout, _))| {
        let (base, end) = (base as u64, base as u64 + layout.size() as u64);
        addr >= base && addr < end && addr + len as u64 <= end
    })
}
