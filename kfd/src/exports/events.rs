//! Events: create, destroy, set, wait on one or many.

use super::*;

#[no_mangle]
pub unsafe extern "C" fn hsaKmtCreateEvent(
    desc: *const HsaEventDescriptor,
    manual_reset: bool,
    signaled: bool,
    out: *mut *mut HsaEvent,
) -> Status {
    guard("CreateEvent", || {
        if desc.is_null() {
            return Err((INVALID_PARAMETER, "null descriptor".into()));
        }
        // SAFETY: non-null caller descriptor, read unaligned (packed).
        let desc = unsafe { desc.read_unaligned() };
        let driver = process::driver().ok_or_else(not_open)?;
        let kind = match desc.EventType {
            event_type::SIGNAL => EventKind::Signal,
            event_type::MEMORY => EventKind::Memory,
            other => EventKind::Other(other),
        };
        let (id, mailbox) = driver
            .events
            .create(kind, manual_reset, signaled)
            .map_err(|e| (OUT_OF_RESOURCES, e.to_string()))?;
        let mut event = Box::new(HsaEvent::default());
        event.EventId = id;
        event.EventData.EventType = desc.EventType;
        event.EventData.HWData2 = mailbox.unwrap_or(0);
        event.EventData.HWData3 = id;
        let ptr: *mut HsaEvent = &mut *event;
        with(|p| p.events.insert(id, event)).ok_or_else(not_open)?;
        // SAFETY: caller's out pointer.
        unsafe { put(out, ptr) }
    })
}

/// The id of the caller's event struct.
///
/// # Safety
/// `event` is null or points to an `HsaEvent`.
unsafe fn event_id(event: *const HsaEvent) -> Result<u32, (Status, String)> {
    if event.is_null() {
        return Err((INVALID_HANDLE, "null event".into()));
    }
    // SAFETY: non-null, an event struct by the caller's contract.
    Ok(unsafe { std::ptr::addr_of!((*event).EventId).read_unaligned() })
}

fn event_status(e: EventError) -> (Status, String) {
    match e {
        EventError::Timeout => (WAIT_TIMEOUT, "timed out".into()),
        other => (INVALID_HANDLE, other.to_string()),
    }
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtDestroyEvent(event: *mut HsaEvent) -> Status {
    guard("DestroyEvent", || {
        // SAFETY: caller's event.
        let id = unsafe { event_id(event)? };
        let driver = process::driver().ok_or_else(not_open)?;
        driver.events.destroy(id).map_err(event_status)?;
        with(|p| p.events.remove(&id));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtSetEvent(event: *mut HsaEvent) -> Status {
    guard("SetEvent", || {
        // SAFETY: caller's event.
        let id = unsafe { event_id(event)? };
        let driver = process::driver().ok_or_else(not_open)?;
        driver.events.set(id).map_err(event_status)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtWaitOnEvent(event: *mut HsaEvent, ms: u32) -> Status {
    let mut one = [event];
    // SAFETY: a one-element array of the caller's event.
    unsafe { hsaKmtWaitOnMultipleEvents(one.as_mut_ptr(), 1, true, ms) }
}

#[no_mangle]
pub unsafe extern "C" fn hsaKmtWaitOnMultipleEvents(
    events: *mut *mut HsaEvent,
    n: u32,
    all: bool,
    ms: u32,
) -> Status {
    guard("WaitOnMultipleEvents", || {
        if events.is_null() || n == 0 || n > 4096 {
            return Err((INVALID_PARAMETER, format!("{n} events")));
        }
        // SAFETY: the caller passes `n` event pointers.
        let list = unsafe { std::slice::from_raw_parts(events, n as usize) };
        let mut ids = Vec::with_capacity(list.len());
        for &e in list {
            // SAFETY: each is the caller's event.
            ids.push(unsafe { event_id(e)? });
        }
        let driver = process::driver().ok_or_else(not_open)?;
        let timeout = (ms != u32::MAX).then(|| Duration::from_millis(u64::from(ms)));
        driver
            .events
            .wait(&ids, all, timeout)
            .map_err(event_status)?;
        // Memory events report their fault in the caller's struct.
        for (&e, &id) in list.iter().zip(&ids) {
            if let Some(f) = driver.events.fault_of(id) {
                let record = HsaMemoryAccessFault {
                    NodeId: f.node,
                    VirtualAddress: f.address,
                    Failure: u32::from(f.not_present)
                        | u32::from(f.read_only) << 1
                        | u32::from(f.no_execute) << 2
                        | u32::from(f.gpu_access) << 3,
                    // HSA_EVENTID_MEMORY_FATAL_PROCESS
                    Flags: 1,
                };
                // SAFETY: the caller's event struct; the union starts 4
                // bytes into HsaEventData and holds 20 bytes.
                unsafe {
                    let data = std::ptr::addr_of_mut!((*e).EventData.EventData)
                        as *mut HsaMemoryAccessFault;
                    data.write_unaligned(record);
                }
            }
        }
        Ok(())
    })
}
