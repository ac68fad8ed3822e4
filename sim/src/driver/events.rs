//! The driver's events: what a runtime sleeps on instead of spinning.
//!
//! A signal event owns one 8-byte slot of the events page (its mailbox):
//! the command processor writes the event id there and raises an
//! interrupt, and the driver sets the event; that is how a runtime's
//! blocked signal wait wakes. The memory event is set with the fault
//! record when the GPU faults. Auto-reset events go back to unset when a
//! wait returns because of them; manual-reset ones stay set until reset.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// What an event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Woken through its mailbox (signals, queue errors).
    Signal,
    /// GPU memory faults.
    Memory,
    /// Anything else a runtime may ask for (set only by `set`).
    Other(u32),
}

/// A GPU memory fault as the driver hands it to a runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultRecord {
    /// The GPU node (topology numbering) that faulted.
    pub node: u32,
    pub address: u64,
    /// Page not present (as opposed to the permission bits below).
    pub not_present: bool,
    pub read_only: bool,
    pub no_execute: bool,
    /// Host-only memory reached by the GPU.
    pub gpu_access: bool,
}

#[derive(Debug)]
struct Event {
    kind: EventKind,
    manual_reset: bool,
    signaled: bool,
    /// Waits in progress on this event.
    waiters: u32,
    /// Times the event fired: every wait in progress when it fires is
    /// satisfied by it, however many there are.
    fired: u64,
    /// Mailbox slot address (signal events).
    mailbox: Option<u64>,
    fault: Option<FaultRecord>,
}

impl Event {
    /// The driver's rule (KFD `set_event`): every wait in progress is
    /// woken and satisfied; an auto-reset event with waiters stays
    /// unsignaled (they took it), one without waiters stays signaled for the
    /// next wait. Waking only one waiter would starve the other: ROCr's
    /// async-event thread and a thread in `hsa_signal_wait` may wait on the
    /// same event.
    fn fire(&mut self) {
        self.fired += 1;
        self.signaled = self.manual_reset || self.waiters == 0;
    }
}

#[derive(Debug, Default)]
struct Table {
    next: u32,
    events: HashMap<u32, Event>,
    /// Free mailbox slots (indices into the page).
    free_slots: Vec<u32>,
    used_slots: u32,
}

/// Why a wait returned without its events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("event {0} does not exist (destroyed, or never created by this driver)")]
    Unknown(u32),
    #[error("every one of the {0} mailbox slots of the events page is in use")]
    NoSlot(u32),
    #[error("timed out")]
    Timeout,
}

/// The event table of one process.
#[derive(Debug)]
pub struct Events {
    table: Mutex<Table>,
    changed: Condvar,
    /// The events page (device memory the CP writes mailboxes into).
    page: u64,
    slots: u32,
}

impl Events {
    /// Events whose mailboxes live in `slots` 8-byte slots at `page`.
    pub fn new(page: u64, slots: u32) -> Self {
        Events {
            table: Mutex::new(Table {
                // Event ids start at 1: ROCr treats 0 as "no event".
                next: 1,
                ..Table::default()
            }),
            changed: Condvar::new(),
            page,
            slots,
        }
    }

    /// Create an event; returns its id and, for a signal event, its mailbox.
    pub fn create(
        &self,
        kind: EventKind,
        manual_reset: bool,
        signaled: bool,
    ) -> Result<(u32, Option<u64>), EventError> {
        let mut t = self.table.lock();
        let mailbox = match kind {
            EventKind::Signal => {
                let slot = match t.free_slots.pop() {
                    Some(s) => s,
                    None if t.used_slots < self.slots => {
                        t.used_slots += 1;
                        t.used_slots - 1
                    }
                    None => return Err(EventError::NoSlot(self.slots)),
                };
                Some(self.page + 8 * u64::from(slot))
            }
            EventKind::Memory | EventKind::Other(_) => None,
        };
        let id = t.next;
        t.next += 1;
        t.events.insert(
            id,
            Event {
                kind,
                manual_reset,
                signaled,
                waiters: 0,
                fired: 0,
                mailbox,
                fault: None,
            },
        );
        Ok((id, mailbox))
    }

    pub fn destroy(&self, id: u32) -> Result<(), EventError> {
        let mut t = self.table.lock();
        let ev = t.events.remove(&id).ok_or(EventError::Unknown(id))?;
        if let Some(m) = ev.mailbox {
            let slot = ((m - self.page) / 8) as u32;
            t.free_slots.push(slot);
        }
        drop(t);
        // A waiter on a destroyed event must learn it.
        self.changed.notify_all();
        Ok(())
    }

    pub fn set(&self, id: u32) -> Result<(), EventError> {
        let mut t = self.table.lock();
        t.events.get_mut(&id).ok_or(EventError::Unknown(id))?.fire();
        drop(t);
        self.changed.notify_all();
        Ok(())
    }

    pub fn reset(&self, id: u32) -> Result<(), EventError> {
        let mut t = self.table.lock();
        t.events
            .get_mut(&id)
            .ok_or(EventError::Unknown(id))?
            .signaled = false;
        Ok(())
    }

    /// The interrupt a mailbox write raises: sets the signal event whose
    /// mailbox is `mailbox` (an event id written to an unknown mailbox is
    /// dropped, as an interrupt for a destroyed event is).
    pub fn interrupt(&self, mailbox: u64) {
        let mut t = self.table.lock();
        let hit = t
            .events
            .values_mut()
            .find(|e| e.mailbox == Some(mailbox) && e.kind == EventKind::Signal);
        if let Some(ev) = hit {
            ev.fire();
            drop(t);
            self.changed.notify_all();
        }
    }

    /// The interrupt an engine raises with an event id as its context (the
    /// copy engine's TRAP): sets that signal event; an unknown id is
    /// dropped, as for a destroyed event.
    pub fn interrupt_id(&self, id: u32) {
        let mut t = self.table.lock();
        let hit = t
            .events
            .get_mut(&id)
            .filter(|e| e.kind == EventKind::Signal);
        if let Some(ev) = hit {
            ev.fire();
            drop(t);
            self.changed.notify_all();
        }
    }

    /// A shader's interrupt (`s_sendmsg` MSG_INTERRUPT) with M0 `data`:
    /// the kernel driver reads it as a partial event id (ockl sends the
    /// low 8 bits of the signal's event id) and sets the signal events it
    /// may name; a waiter woken for another re-checks its signal's value
    /// and sleeps again, so matching on too many is harmless, too few not.
    pub fn interrupt_partial(&self, data: u32) {
        let mut t = self.table.lock();
        let mut any = false;
        for (&id, ev) in t.events.iter_mut() {
            if ev.kind == EventKind::Signal && id & 0xFF == data & 0xFF {
                ev.fire();
                any = true;
            }
        }
        drop(t);
        if any {
            self.changed.notify_all();
        }
    }

    /// A GPU fault: every memory event is set with its record.
    pub fn memory_fault(&self, record: FaultRecord) {
        let mut t = self.table.lock();
        for ev in t.events.values_mut() {
            if ev.kind == EventKind::Memory {
                ev.fire();
                ev.fault = Some(record);
            }
        }
        drop(t);
        self.changed.notify_all();
    }

    /// The fault record of memory event `id`, if it was set by a fault.
    pub fn fault_of(&self, id: u32) -> Option<FaultRecord> {
        self.table.lock().events.get(&id).and_then(|e| e.fault)
    }

    /// Wait until one (`all` false) or every one of `ids` fired, at most
    /// `timeout` (`None`: for ever). As the driver does: an auto-reset
    /// event found signaled is taken at entry; one that fires during the
    /// wait satisfies every wait in progress (`Event::fire`).
    pub fn wait(
        &self,
        ids: &[u32],
        all: bool,
        timeout: Option<Duration>,
    ) -> Result<(), EventError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut t = self.table.lock();
        let mut seen = Vec::with_capacity(ids.len());
        let mut hit = vec![false; ids.len()];
        for (i, id) in ids.iter().enumerate() {
            let Some(ev) = t.events.get_mut(id) else {
                // Nothing registered yet: nothing to undo.
                Self::leave(&mut t, &ids[..i]);
                return Err(EventError::Unknown(*id));
            };
            hit[i] = ev.signaled;
            if !ev.manual_reset {
                ev.signaled = false;
            }
            ev.waiters += 1;
            seen.push(ev.fired);
        }
        let result = loop {
            let mut gone = None;
            for (i, id) in ids.iter().enumerate() {
                match t.events.get(id) {
                    Some(ev) => hit[i] |= ev.signaled || ev.fired != seen[i],
                    None => gone = Some(*id),
                }
            }
            if let Some(id) = gone {
                break Err(EventError::Unknown(id));
            }
            let done = if all {
                hit.iter().all(|h| *h)
            } else {
                hit.iter().any(|h| *h)
            };
            if done {
                break Ok(());
            }
            match deadline {
                Some(d) => {
                    if self.changed.wait_until(&mut t, d).timed_out() && Instant::now() >= d {
                        break Err(EventError::Timeout);
                    }
                }
                None => self.changed.wait(&mut t),
            }
        };
        Self::leave(&mut t, ids);
        result
    }

    /// A wait on `ids` ended: it no longer takes their firings.
    fn leave(t: &mut Table, ids: &[u32]) {
        for id in ids {
            if let Some(ev) = t.events.get_mut(id) {
                ev.waiters -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_reset_events_reset_when_a_wait_takes_them() {
        let ev = Events::new(0x1000, 4);
        let (a, mb) = ev.create(EventKind::Signal, false, false).unwrap();
        assert_eq!(mb, Some(0x1000));
        assert_eq!(
            ev.wait(&[a], false, Some(Duration::ZERO)),
            Err(EventError::Timeout)
        );
        ev.interrupt(0x1000);
        ev.wait(&[a], false, Some(Duration::ZERO)).unwrap();
        assert_eq!(
            ev.wait(&[a], false, Some(Duration::ZERO)),
            Err(EventError::Timeout)
        );
    }

    #[test]
    fn manual_reset_and_wait_all() {
        let ev = Events::new(0x1000, 4);
        let (a, _) = ev.create(EventKind::Memory, true, false).unwrap();
        let (b, _) = ev.create(EventKind::Signal, true, true).unwrap();
        assert!(ev.wait(&[a, b], true, Some(Duration::ZERO)).is_err());
        ev.wait(&[a, b], false, Some(Duration::ZERO)).unwrap();
        ev.memory_fault(FaultRecord {
            node: 1,
            address: 0x42,
            not_present: true,
            read_only: false,
            no_execute: false,
            gpu_access: false,
        });
        ev.wait(&[a, b], true, Some(Duration::ZERO)).unwrap();
        ev.wait(&[a, b], true, Some(Duration::ZERO)).unwrap();
        assert_eq!(ev.fault_of(a).unwrap().address, 0x42);
        ev.reset(a).unwrap();
        assert!(ev.wait(&[a], true, Some(Duration::ZERO)).is_err());
    }

    #[test]
    fn mailbox_slots_are_reused_and_bounded() {
        let ev = Events::new(0x1000, 2);
        let (a, _) = ev.create(EventKind::Signal, false, false).unwrap();
        ev.create(EventKind::Signal, false, false).unwrap();
        assert!(ev.create(EventKind::Signal, false, false).is_err());
        ev.destroy(a).unwrap();
        let (_, mb) = ev.create(EventKind::Signal, false, false).unwrap();
        assert_eq!(mb, Some(0x1000));
        assert_eq!(ev.destroy(999), Err(EventError::Unknown(999)));
    }

    /// ROCr's async-event thread and a thread in `hsa_signal_wait` can wait
    /// on the same auto-reset event; one firing wakes both (the first to
    /// wake must not take it from the other: that hung a HIP program).
    #[test]
    fn one_firing_satisfies_every_wait_in_progress() {
        let ev = std::sync::Arc::new(Events::new(0x1000, 4));
        let (a, mb) = ev.create(EventKind::Signal, false, false).unwrap();
        let (other, _) = ev.create(EventKind::Signal, false, false).unwrap();
        let waiters: Vec<_> = [vec![a], vec![other, a]]
            .into_iter()
            .map(|ids| {
                let ev = std::sync::Arc::clone(&ev);
                std::thread::spawn(move || ev.wait(&ids, false, Some(Duration::from_secs(60))))
            })
            .collect();
        // Both are waiting before the interrupt (or the firing latches and
        // only one could take it, as on the driver).
        let deadline = Instant::now() + Duration::from_secs(60);
        while ev.table.lock().events[&a].waiters < 2 {
            assert!(Instant::now() < deadline, "the waiters never started");
            std::thread::sleep(Duration::from_millis(1));
        }
        ev.interrupt(mb.unwrap());
        for w in waiters {
            assert_eq!(w.join().unwrap(), Ok(()));
        }
        // Taken by the waits: a new wait does not see it.
        assert_eq!(
            ev.wait(&[a], false, Some(Duration::ZERO)),
            Err(EventError::Timeout)
        );
        assert_eq!(ev.table.lock().events[&a].waiters, 0);
    }
}
