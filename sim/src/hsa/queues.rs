//! Signals and AQL queues of the simulated HSA table. A queue's doorbell is
//! an ordinary signal of the shared table: storing a packet id to it wakes
//! that queue's packet processor.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

use relaunch_hsa_sys::{self as sys, Agent, QueueErrorCallback, Signal, Status};

use super::{
    fail, guard, guard_value, initialized, system, with_system, write_out, CallbackData, QueueEntry,
};
use crate::queue::{ErrorCallback, QueueError, SimQueue};
use crate::signal::{Condition, SimSignal};

pub(super) extern "C" fn signal_create(
    initial: i64,
    _num_consumers: u32,
    _consumers: *const Agent,
    signal: *mut Signal,
) -> Status {
    with_system(|s| {
        if signal.is_null() {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                "hsa_signal_create: signal is null",
            );
        }
        let (handle, _) = s.signals.create(initial);
        // SAFETY: non-null out-pointer to an hsa_signal_t.
        unsafe { write_out(signal, Signal { handle }, "signal") }
    })
}

pub(super) extern "C" fn signal_destroy(signal: Signal) -> Status {
    with_system(|s| {
        if s.queues.values().any(|q| q.queue.doorbell == signal.handle) {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_SIGNAL,
                "hsa_signal_destroy: that is a queue's doorbell; destroy the queue instead",
            );
        }
        if s.signals.destroy(signal.handle) {
            sys::HSA_STATUS_SUCCESS
        } else {
            fail(
                sys::HSA_STATUS_ERROR_INVALID_SIGNAL,
                format!("hsa_signal_destroy: signal {} is not live", signal.handle),
            )
        }
    })
}

fn lookup(signal: Signal) -> Option<Arc<SimSignal>> {
    let found = system().read().signals.get(signal.handle);
    if found.is_none() {
        fail(
            sys::HSA_STATUS_ERROR_INVALID_SIGNAL,
            format!("signal {} is not live", signal.handle),
        );
    }
    found
}

pub(super) extern "C" fn signal_load(signal: Signal) -> i64 {
    guard_value(0, || lookup(signal).map_or(0, |s| s.load()))
}

pub(super) extern "C" fn signal_store(signal: Signal, value: i64) {
    guard_value((), || {
        if let Some(s) = lookup(signal) {
            s.store(value);
        }
    })
}

pub(super) extern "C" fn signal_silent_store(signal: Signal, value: i64) {
    guard_value((), || {
        if let Some(s) = lookup(signal) {
            s.silent_store(value);
        }
    })
}

pub(super) extern "C" fn signal_wait(
    signal: Signal,
    condition: u32,
    compare: i64,
    timeout_hint: u64,
    _wait_state: u32,
) -> i64 {
    guard_value(0, || {
        let Some(s) = lookup(signal) else {
            return 0;
        };
        let Some(cond) = Condition::from_raw(condition) else {
            fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!("hsa_signal_wait: condition {condition} is not an hsa_signal_condition_t"),
            );
            return s.load();
        };
        // Timestamp ticks are nanoseconds (TIMESTAMP_FREQUENCY = 1 GHz).
        s.wait(cond, compare, Duration::from_nanos(timeout_hint))
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) extern "C" fn queue_create(
    agent: Agent,
    size: u32,
    queue_type: u32,
    callback: Option<QueueErrorCallback>,
    data: *mut c_void,
    _private_segment_size: u32,
    _group_segment_size: u32,
    queue: *mut *mut sys::Queue,
) -> Status {
    guard(|| {
        let device = {
            let s = system().read();
            if let Err(st) = initialized(&s) {
                return st;
            }
            match s.gpu_index(agent) {
                Some(i) => Arc::clone(&s.gpus[i]),
                None => {
                    return fail(
                        sys::HSA_STATUS_ERROR_INVALID_AGENT,
                        format!(
                            "hsa_queue_create: agent {:#x} is not a simulated GPU",
                            agent.handle
                        ),
                    )
                }
            }
        };
        if queue.is_null() {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                "hsa_queue_create: queue is null",
            );
        }
        if queue_type != sys::HSA_QUEUE_TYPE_MULTI && queue_type != sys::HSA_QUEUE_TYPE_SINGLE {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!("hsa_queue_create: queue type {queue_type} is not supported"),
            );
        }
        // The hsa_queue_t first, so the error callback can name it.
        let raw = Box::into_raw(Box::new(sys::Queue {
            queue_type,
            features: sys::HSA_QUEUE_FEATURE_KERNEL_DISPATCH,
            base_address: std::ptr::null_mut(),
            doorbell_signal: Signal { handle: 0 },
            size,
            reserved1: 0,
            id: 0,
        }));
        let cb: Option<ErrorCallback> = callback.map(|f| {
            let data = CallbackData(data);
            let source = raw as usize;
            Arc::new(move |e: &QueueError| {
                let data = data;
                super::record_queue_error(e.status, &e.to_string());
                // SAFETY: the caller's callback with its data and the queue it
                // created; the queue outlives its processor thread.
                unsafe { f(e.status, source as *mut sys::Queue, data.0) }
            }) as ErrorCallback
        });
        let sim = match SimQueue::create(&device, size, cb) {
            Ok(q) => q,
            Err(e) => {
                // SAFETY: `raw` came from Box::into_raw above and was not shared.
                drop(unsafe { Box::from_raw(raw) });
                return fail(sys::HSA_STATUS_ERROR_INVALID_QUEUE_CREATION, e.to_string());
            }
        };
        // SAFETY: `raw` is our live, unshared allocation.
        unsafe {
            (*raw).base_address = sim.ring as *mut c_void;
            (*raw).doorbell_signal = Signal {
                handle: sim.doorbell,
            };
            (*raw).id = sim.id;
            *queue = raw;
        }
        system().write().queues.insert(
            raw as usize,
            QueueEntry {
                queue: sim,
                raw: raw as usize,
            },
        );
        sys::HSA_STATUS_SUCCESS
    })
}

/// Stop a queue's processor and free its `hsa_queue_t`.
pub(super) fn release(entry: QueueEntry) {
    entry.queue.destroy();
    // SAFETY: `raw` came from Box::into_raw in queue_create and was removed
    // from the table, so no other call can reach it.
    drop(unsafe { Box::from_raw(entry.raw as *mut sys::Queue) });
}

pub(super) extern "C" fn queue_destroy(queue: *mut sys::Queue) -> Status {
    guard(|| {
        let entry = {
            let mut s = system().write();
            if let Err(st) = initialized(&s) {
                return st;
            }
            s.queues.remove(&(queue as usize))
        };
        match entry {
            Some(e) => {
                release(e);
                sys::HSA_STATUS_SUCCESS
            }
            None => fail(
                sys::HSA_STATUS_ERROR_INVALID_QUEUE,
                format!("hsa_queue_destroy: {queue:p} is not a live simulated queue"),
            ),
        }
    })
}

pub(super) extern "C" fn queue_inactivate(queue: *mut sys::Queue) -> Status {
    guard(|| {
        let s = system().read();
        if let Err(st) = initialized(&s) {
            return st;
        }
        match s.queues.get(&(queue as usize)) {
            Some(e) => {
                e.queue.inactivate();
                sys::HSA_STATUS_SUCCESS
            }
            None => fail(
                sys::HSA_STATUS_ERROR_INVALID_QUEUE,
                format!("hsa_queue_inactivate: {queue:p} is not a live simulated queue"),
            ),
        }
    })
}

/// Run `f` on the queue behind `queue`; 0 (and a last-error message) when
/// it is not a live simulated queue.
fn with_queue(queue: *const sys::Queue, f: impl FnOnce(&SimQueue) -> u64) -> u64 {
    guard_value(0, || match super::queue_of(queue) {
        Some(q) => f(&q),
        None => {
            fail(
                sys::HSA_STATUS_ERROR_INVALID_QUEUE,
                format!("{queue:p} is not a live simulated queue"),
            );
            0
        }
    })
}

pub(super) extern "C" fn load_read_index(queue: *const sys::Queue) -> u64 {
    with_queue(queue, |q| q.load_read_index())
}

pub(super) extern "C" fn load_write_index(queue: *const sys::Queue) -> u64 {
    with_queue(queue, |q| q.load_write_index())
}

pub(super) extern "C" fn add_write_index(queue: *const sys::Queue, value: u64) -> u64 {
    with_queue(queue, |q| q.add_write_index(value))
}
