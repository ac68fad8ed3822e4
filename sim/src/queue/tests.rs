//! The doorbell timestamp and the processor's lingering poll.

use std::time::{Duration, Instant};

use super::SimQueue;
use crate::device::{SimConfig, SimDevice};

#[test]
fn doorbell_writes_are_timestamped_at_the_write() {
    let dev = SimDevice::new(SimConfig::new("gfx1100")).unwrap();
    let q = SimQueue::create(&dev, 64, None).unwrap();
    assert_eq!(q.last_doorbell(), None, "no write yet");
    let before = Instant::now();
    q.ring_doorbell(0);
    let after = Instant::now();
    let (at, writes) = q.last_doorbell().unwrap();
    assert_eq!(writes, 1);
    assert!(
        before <= at && at <= after,
        "{before:?} <= {at:?} <= {after:?}"
    );
    // Through the HSA-style store on the doorbell handle as well.
    dev.signals.get(q.doorbell).unwrap().store(1);
    let (later, writes) = q.last_doorbell().unwrap();
    assert_eq!(writes, 2);
    assert!(later >= at);
    // Other signals are not stamped and do not count.
    let (_, other) = dev.signals.create(0);
    other.store(5);
    assert_eq!(q.last_doorbell().unwrap().1, 2);
    q.destroy();
}

#[test]
fn ringing_an_empty_queue_consumes_nothing_and_destroy_is_prompt() {
    let dev = SimDevice::new(SimConfig::new("gfx1100")).unwrap();
    let q = SimQueue::create(&dev, 64, None).unwrap();
    // Nothing published: ringing must not make the processor consume or
    // fail, lingering or parked.
    q.ring_doorbell(0);
    std::thread::sleep(super::LINGER + Duration::from_millis(5));
    q.ring_doorbell(0);
    assert_eq!(q.load_read_index(), 0);
    assert!(!q.is_dead(), "{:?}", q.errors());
    let start = Instant::now();
    q.destroy();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "destroy must not wait for a poll"
    );
}
