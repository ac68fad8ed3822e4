//! One AQL queue with a completion signal, submitting placed IBs exactly as
//! a producer on real hardware would: body first, header with release
//! ordering, then the doorbell.

use std::sync::Arc;
use std::time::Duration;

use relaunch_facts::aql::{FenceScope, Pm4IbPacket};

use super::PlacedIb;
use relaunch_sim::device::SimDevice;
use relaunch_sim::queue::{QueueError, SimQueue};
use relaunch_sim::signal::{Condition, SimSignal};

/// How long `replay`/`submit` wait for the completion signal.
const REPLAY_TIMEOUT: Duration = Duration::from_secs(20);

pub struct Lane {
    pub dev: Arc<SimDevice>,
    pub queue: Arc<SimQueue>,
    /// (handle, signal): the completion signal of every packet published.
    pub signal: (u64, Arc<SimSignal>),
}

impl Lane {
    /// A 64-slot queue and a fresh signal on `dev`.
    pub fn new(dev: &Arc<SimDevice>) -> Lane {
        Lane {
            dev: Arc::clone(dev),
            queue: SimQueue::create(dev, 64, None).unwrap(),
            signal: dev.signals.create(0),
        }
    }

    /// Write one slot (body, then header with release) and ring; the id.
    pub fn push(&self, header: u32, body: &[u8]) -> u64 {
        let id = self.queue.add_write_index(1);
        let slot = self.queue.ring + 64 * (id % u64::from(self.queue.size));
        self.dev.memory.write(slot + 4, body).unwrap();
        self.dev.memory.store_u32_release(slot, header).unwrap();
        self.queue.ring_doorbell(id);
        id
    }

    /// Publish a raw 64-byte AQL packet; the signal is the caller's to arm.
    pub fn publish_raw(&self, packet: [u8; 64]) -> u64 {
        let header = u32::from_le_bytes([packet[0], packet[1], packet[2], packet[3]]);
        self.push(header, &packet[4..])
    }

    /// Publish a PM4-IB packet for `ib` completing on the lane's signal.
    pub fn push_ib(&self, ib: &PlacedIb) -> u64 {
        let p = Pm4IbPacket::new(
            ib.ib,
            ib.dwords.len(),
            self.signal.0,
            FenceScope::System,
            FenceScope::System,
        )
        .unwrap();
        self.push(p.header_word, &p.body)
    }

    /// Arm the signal at 1 and publish `ib`.
    pub fn publish(&self, ib: &PlacedIb) -> u64 {
        self.signal.1.store(1);
        self.push_ib(ib)
    }

    /// Submit every IB with the signal armed at their count and wait; Err
    /// with the queue's error when they did not all complete.
    pub fn submit(&self, ibs: &[PlacedIb]) -> Result<(), String> {
        self.signal.1.store(ibs.len() as i64);
        for ib in ibs {
            self.push_ib(ib);
        }
        self.wait(REPLAY_TIMEOUT)
    }

    /// Submit one IB and wait.
    pub fn replay(&self, ib: &PlacedIb) -> Result<(), String> {
        self.submit(std::slice::from_ref(ib))
    }

    /// Wait for the signal to reach zero; Err with the queue's first error,
    /// or a timeout naming what was waited for.
    pub fn wait(&self, timeout: Duration) -> Result<(), String> {
        let step = Duration::from_millis(10);
        let mut waited = Duration::ZERO;
        while waited < timeout {
            if self.signal.1.wait(Condition::Eq, 0, step) == 0 {
                return Ok(());
            }
            // Only once dead (failed and reported), so a caller seeing the
            // error also sees the queue stopped. A hang is dead without an
            // error and, as on hardware, looks like a timeout.
            if self.queue.is_dead() {
                if let Some(e) = self.queue.errors().first() {
                    return Err(e.to_string());
                }
            }
            waited += step;
        }
        Err(format!(
            "timed out after {timeout:?} waiting for the completion signal"
        ))
    }

    pub fn first_error(&self) -> Option<QueueError> {
        self.queue.errors().into_iter().next()
    }
}
