//! The copy engine through the driver, fed the packets ROCr's SDMA blit
//! writes (built here from the published packet layouts): copies, fills,
//! rectangles, the signal decrement, the mailbox fence and its interrupt,
//! memory polls, timestamps, ring wrap-around, and what halts the engine.

use std::sync::Arc;
use std::time::{Duration, Instant};

use relaunch_sim::device::SimConfig;
use relaunch_sim::driver::{CreatedQueue, Driver, EventKind, QueueKind};
use relaunch_sim::memory::{DeviceMemory, MemKind};

const TARGET: &str = "gfx1030";

struct Rig {
    driver: Arc<Driver>,
    mem: Arc<DeviceMemory>,
    queue: CreatedQueue,
    ring: u64,
    ring_bytes: u64,
    /// Bytes written so far (the monotonic write offset).
    written: u64,
}

fn rig(ring_bytes: u64) -> Rig {
    let driver = Driver::open(vec![SimConfig::new(TARGET)]).unwrap();
    let mem = Arc::clone(driver.device_memory());
    let ring = mem.allocate(ring_bytes as usize, MemKind::Driver).unwrap();
    let queue = driver
        .create_queue(1, QueueKind::Sdma, ring, ring_bytes, 0)
        .unwrap();
    assert!(queue.read_ptr.is_some() && queue.write_ptr.is_some());
    Rig {
        driver,
        mem,
        queue,
        ring,
        ring_bytes,
        written: 0,
    }
}

impl Rig {
    fn alloc(&self, len: usize) -> u64 {
        self.mem.allocate(len, MemKind::Driver).unwrap()
    }

    /// Append `dw` to the ring (wrapping), then ring the doorbell as ROCr
    /// does: write offset, then doorbell, both the new monotonic offset.
    fn submit(&mut self, dw: &[u32]) {
        for d in dw {
            let at = self.ring + (self.written & (self.ring_bytes - 1));
            self.mem.write_u32(at, *d).unwrap();
            self.written += 4;
        }
        let wptr = self.queue.write_ptr.unwrap();
        self.mem.store_u64_release(wptr, self.written).unwrap();
        self.mem
            .store_u64_release(self.queue.doorbell, self.written)
            .unwrap();
    }

    fn read_offset(&self) -> u64 {
        self.mem.read_u64(self.queue.read_ptr.unwrap()).unwrap()
    }

    /// Wait until the engine read everything submitted.
    fn drained(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.read_offset() != self.written {
            assert!(
                Instant::now() < deadline,
                "engine stuck at {:#x} of {:#x}: {:?}",
                self.read_offset(),
                self.written,
                self.driver.sdma_halts()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn halt(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some((_, why)) = self.driver.sdma_halts().pop() {
                return why;
            }
            assert!(Instant::now() < deadline, "the engine did not halt");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn lo(a: u64) -> u32 {
    a as u32
}
fn hi(a: u64) -> u32 {
    (a >> 32) as u32
}

fn copy(src: u64, dst: u64, bytes: u32) -> [u32; 7] {
    [1, bytes - 1, 0, lo(src), hi(src), lo(dst), hi(dst)]
}

fn fill_dwords(dst: u64, value: u32, dwords: u32) -> [u32; 5] {
    [11 | (2 << 30), lo(dst), hi(dst), value, (dwords - 1) * 4]
}

fn fence(addr: u64, data: u32) -> [u32; 4] {
    [5 | (3 << 16), lo(addr), hi(addr), data]
}

fn decrement(addr: u64) -> [u32; 8] {
    [
        10 | (47 << 25),
        lo(addr),
        hi(addr),
        u32::MAX,
        u32::MAX,
        0,
        0,
        0,
    ]
}

fn poll_equal(addr: u64, value: u32) -> [u32; 6] {
    [
        8 | (3 << 28) | (1 << 31),
        lo(addr),
        hi(addr),
        value,
        u32::MAX,
        4 | (0xfff << 16),
    ]
}

fn timestamp(addr: u64) -> [u32; 3] {
    [13 | (2 << 8), lo(addr), hi(addr)]
}

fn trap(event: u32) -> [u32; 2] {
    [6, event]
}

#[test]
fn copies_fills_and_the_completion_protocol() {
    let mut r = rig(4096);
    let n = 3 * 4096 + 12;
    let (src, dst, filled) = (r.alloc(n), r.alloc(n), r.alloc(64));
    let data: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
    r.mem.write(src, &data).unwrap();
    let signal = r.alloc(8);
    r.mem.write_u64(signal, 1).unwrap();
    let (event, mailbox) = r
        .driver
        .events
        .create(EventKind::Signal, false, false)
        .unwrap();
    let mailbox = mailbox.unwrap();
    let stamps = r.alloc(16);
    let mut dw = Vec::new();
    dw.extend(timestamp(stamps));
    dw.extend(copy(src, dst, n as u32));
    dw.extend(fill_dwords(filled, 0xCAFE_F00D, 16));
    dw.extend(timestamp(stamps + 8));
    dw.extend(decrement(signal));
    dw.extend(fence(mailbox, event));
    dw.extend(trap(event));
    r.submit(&dw);
    r.driver
        .events
        .wait(&[event], true, Some(Duration::from_secs(20)))
        .expect("the trap sets the event");
    r.drained();
    assert_eq!(r.mem.read_vec(dst, n).unwrap(), data);
    let words = r.mem.read_dwords(filled, 16).unwrap();
    assert!(words.iter().all(|&w| w == 0xCAFE_F00D), "{words:x?}");
    assert_eq!(r.mem.read_u64(signal).unwrap(), 0);
    assert_eq!(r.mem.read_u64(mailbox).unwrap(), u64::from(event));
    let (t0, t1) = (
        r.mem.read_u64(stamps).unwrap(),
        r.mem.read_u64(stamps + 8).unwrap(),
    );
    assert!(t1 > t0, "timestamps {t0} then {t1}");
    let counts = r.driver.gpus()[0].cp_counts();
    assert_eq!(counts.sdma_bytes, n as u64 + 64);
    r.driver.close();
}

#[test]
fn a_rectangle_copies_the_window_with_each_sides_pitch() {
    let mut r = rig(4096);
    // 5 x 3 x 2 elements of 4 bytes; source rows of 8 elements, slices of
    // 32; destination rows of 6, slices of 24; offsets on both sides.
    let (src, dst) = (r.alloc(4096), r.alloc(4096));
    let words: Vec<u32> = (0..1024).collect();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    r.mem.write(src, &bytes).unwrap();
    let header = 1 | (4 << 8) | (2 << 29);
    let side = |base: u64, off: [u32; 3], pitch: u32, slice: u32| {
        [
            lo(base),
            hi(base),
            off[0] | (off[1] << 16),
            off[2] | ((pitch - 1) << 13),
            slice - 1,
        ]
    };
    let mut dw = vec![header];
    dw.extend(side(src, [1, 2, 1], 8, 32));
    dw.extend(side(dst, [0, 1, 0], 6, 24));
    dw.extend([(5 - 1) | ((3 - 1) << 16), 2 - 1]);
    assert_eq!(dw.len(), 13);
    r.submit(&dw);
    r.drained();
    let out = r.mem.read_dwords(dst, 1024).unwrap();
    for z in 0..2u32 {
        for y in 0..3u32 {
            for x in 0..5u32 {
                let want = (1 + x) + (2 + y) * 8 + (1 + z) * 32;
                let at = (x + (1 + y) * 6 + z * 24) as usize;
                assert_eq!(out[at], want, "element ({x}, {y}, {z})");
            }
        }
    }
    r.driver.close();
}

#[test]
fn a_poll_waits_for_the_host_and_the_ring_wraps() {
    // A small ring, written past its end several times.
    let mut r = rig(256);
    let gate = r.alloc(8);
    let out = r.alloc(4);
    r.submit(&poll_equal(gate, 7));
    r.submit(&fence(out, 1));
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(r.mem.read_u32(out).unwrap(), 0, "ran before the poll held");
    r.mem.store_u32_release(gate, 7).unwrap();
    r.drained();
    assert_eq!(r.mem.read_u32(out).unwrap(), 1);
    for i in 2..80u32 {
        r.submit(&fence(out, i));
        r.drained();
        assert_eq!(r.mem.read_u32(out).unwrap(), i);
    }
    assert!(r.written > 3 * r.ring_bytes);
    r.driver.close();
}

#[test]
fn an_unknown_packet_halts_the_engine_naming_it() {
    let mut r = rig(4096);
    let out = r.alloc(4);
    r.submit(&[3, 0, 0]);
    r.submit(&fence(out, 1));
    let why = r.halt();
    assert!(why.contains("opcode 3 is not modelled"), "{why}");
    assert!(why.contains("ring offset 0x0"), "{why}");
    // Nothing after it ran.
    assert_eq!(r.mem.read_u32(out).unwrap(), 0);
    r.driver.close();
}

#[test]
fn a_copy_from_unmapped_memory_is_a_vm_fault_through_the_driver() {
    let mut r = rig(4096);
    let (memory_event, _) = r
        .driver
        .events
        .create(EventKind::Memory, true, false)
        .unwrap();
    let dst = r.alloc(64);
    r.submit(&copy(0x10_0000_0000, dst, 64));
    r.driver
        .events
        .wait(&[memory_event], true, Some(Duration::from_secs(20)))
        .expect("the fault sets the memory event");
    let record = r
        .driver
        .events
        .fault_of(memory_event)
        .expect("a fault record");
    assert_eq!(record.address, 0x10_0000_0000);
    assert!(record.not_present);
    assert!(r.driver.gpus()[0].is_lost());
    let why = r.halt();
    assert!(why.contains("SDMA queue"), "{why}");
    r.driver.close();
}
