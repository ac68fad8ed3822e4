//! The hostcall buffer in memory, as ockl's `hostcall_impl.cl` reads it
//! and ROCclr's `devhostcall.cpp` lays it out (facts only):
//!
//! ```text
//! 0   headers      u64  address of the packet headers
//! 8   payloads     u64  address of the packet payloads
//! 16  doorbell     u64  hsa_signal_t the device adds 1 to per ready packet
//! 24  free_stack   u64  tagged index of the first free packet (0: none)
//! 32  ready_stack  u64  tagged index of the first ready packet (0: none)
//! 40  index_mask   u64  packets - 1 (packets a power of two)
//! header (24 bytes): next u64 (tagged), activemask u64, service u32,
//!                    control u32 (bit 0: READY, cleared by the host)
//! payload (4096 bytes): 64 slots (one per lane) of 8 u64
//! ```
//!
//! A tagged index is `index | tag * packets`; a packet returned to the
//! free stack gets its tag advanced (ABA), and an index-0 packet never has
//! tag 0, so 0 means "empty". The device pops a free packet, fills the
//! active lanes' slots, sets READY, pushes it on the ready stack and adds
//! 1 to the doorbell; it spins until the host clears READY, then reads
//! its slot's first two words back. The host swaps the ready stack for 0,
//! serves every active lane of every packet on it, and clears READY.
//!
//! All raw-pointer access of the hostcall service is in this file.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const HEADER_BYTES: usize = 48;
const PACKET_HEADER_BYTES: usize = 24;
/// 64 lanes x 8 words.
pub(crate) const PAYLOAD_BYTES: usize = 64 * 8 * 8;
const PAYLOAD_ALIGN: usize = 64;
const READY: u32 = 1;

/// Bytes of a buffer of `packets` packets (a power of two).
pub(crate) fn size(packets: usize) -> usize {
    payloads_at(packets) + packets * PAYLOAD_BYTES
}

fn payloads_at(packets: usize) -> usize {
    (HEADER_BYTES + packets * PACKET_HEADER_BYTES).next_multiple_of(PAYLOAD_ALIGN)
}

/// One buffer at a host address the GPU sees at the same address
/// (fine-grained host memory).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Buffer {
    base: *mut u8,
    packets: usize,
}

// SAFETY: the buffer is plain host memory whose every shared word is
// accessed atomically (the stacks, headers' `next` and `control`) or, for
// headers and payloads, only by the side that owns the packet at that
// moment (the protocol above); the allocation outlives every `Buffer`
// (the service owns both and stops the listener first).
unsafe impl Send for Buffer {}

/// A packet's identity and what its header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ready {
    pub index: usize,
    pub service: u32,
    pub activemask: u64,
}

impl Buffer {
    /// Lays out and initialises a buffer of `packets` packets (a power of
    /// two, at least 2) at `base`, with `doorbell` as its signal.
    ///
    /// # Safety
    /// `base` must be `size(packets)` writable bytes, 64-byte aligned,
    /// that no one else uses yet and that outlive the returned value.
    pub(crate) unsafe fn init(base: *mut u8, packets: usize, doorbell: u64) -> Buffer {
        assert!(
            packets.is_power_of_two() && packets >= 2,
            "packets: {packets}"
        );
        let b = Buffer { base, packets };
        let addr = base as u64;
        b.word(0)
            .store(addr + HEADER_BYTES as u64, Ordering::Relaxed);
        b.word(8)
            .store(addr + payloads_at(packets) as u64, Ordering::Relaxed);
        b.word(16).store(doorbell, Ordering::Relaxed);
        b.word(40).store(packets as u64 - 1, Ordering::Relaxed);
        // The free stack holds every packet: packet i's `next` is i-1,
        // packet 1's points at packet 0 with tag 1 (index 0, tag 0 would
        // read as empty), packet 0 ends it.
        b.next(0).store(0, Ordering::Relaxed);
        let mut next = packets as u64;
        for i in 1..packets {
            b.next(i).store(next, Ordering::Relaxed);
            next = i as u64;
        }
        b.word(32).store(0, Ordering::Relaxed);
        // Release: a kernel that learns the buffer's address (through its
        // kernargs, published after this) sees it initialised.
        b.word(24).store(next, Ordering::Release);
        b
    }

    /// The 8-aligned word at byte `offset` of the buffer.
    fn word(&self, offset: usize) -> &AtomicU64 {
        debug_assert!(offset % 8 == 0 && offset + 8 <= size(self.packets));
        // SAFETY: in bounds of the live, 64-aligned buffer (debug-checked;
        // callers pass offsets of the layout above), and every concurrent
        // access to these words is atomic.
        unsafe { AtomicU64::from_ptr(self.base.add(offset).cast()) }
    }

    fn next(&self, index: usize) -> &AtomicU64 {
        self.word(HEADER_BYTES + index * PACKET_HEADER_BYTES)
    }

    fn control(&self, index: usize) -> &AtomicU32 {
        let offset = HEADER_BYTES + index * PACKET_HEADER_BYTES + 20;
        // SAFETY: the header's 4-aligned control word, inside the buffer;
        // the device accesses it atomically too.
        unsafe { AtomicU32::from_ptr(self.base.add(offset).cast()) }
    }

    /// Takes every ready packet (newest first: each wave has at most one
    /// packet in flight, so the order across waves is free).
    pub(crate) fn take_ready(&self) -> Vec<Ready> {
        let mut at = self.word(32).swap(0, Ordering::Acquire);
        let mask = self.packets as u64 - 1;
        let mut out = Vec::new();
        while at != 0 && out.len() < self.packets {
            let index = (at & mask) as usize;
            let header = HEADER_BYTES + index * PACKET_HEADER_BYTES;
            let activemask = self.word(header + 8).load(Ordering::Relaxed);
            // SAFETY: the header's service word, inside the buffer; the
            // packet is ours until READY is cleared.
            let service = unsafe { self.base.add(header + 16).cast::<u32>().read_volatile() };
            out.push(Ready {
                index,
                service,
                activemask,
            });
            at = self.next(index).load(Ordering::Relaxed);
        }
        out
    }

    /// Lane `lane`'s eight payload words of packet `index`.
    pub(crate) fn read_slot(&self, index: usize, lane: usize) -> [u64; 8] {
        let base = payloads_at(self.packets) + index * PAYLOAD_BYTES + lane * 64;
        std::array::from_fn(|i| self.word(base + 8 * i).load(Ordering::Relaxed))
    }

    pub(crate) fn write_slot(&self, index: usize, lane: usize, slot: &[u64; 8]) {
        let base = payloads_at(self.packets) + index * PAYLOAD_BYTES + lane * 64;
        for (i, w) in slot.iter().enumerate() {
            self.word(base + 8 * i).store(*w, Ordering::Relaxed);
        }
    }

    /// Hands packet `index` back to its wave (after its slots were
    /// answered: the release orders them before the wave sees READY clear).
    pub(crate) fn answer(&self, index: usize) {
        self.control(index).fetch_and(!READY, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device-side push of packet `ptr` onto the ready stack, as ockl does.
    fn push_ready(b: &Buffer, ptr: u64, service: u32, mask: u64) {
        let index = (ptr & (b.packets as u64 - 1)) as usize;
        let header = HEADER_BYTES + index * PACKET_HEADER_BYTES;
        b.word(header + 8).store(mask, Ordering::Relaxed);
        // SAFETY: the header's service word of a test buffer.
        unsafe {
            b.base
                .add(header + 16)
                .cast::<u32>()
                .write_volatile(service)
        };
        b.control(index).store(READY, Ordering::Relaxed);
        let top = b.word(32).load(Ordering::Relaxed);
        b.next(index).store(top, Ordering::Relaxed);
        b.word(32).store(ptr, Ordering::Release);
    }

    #[test]
    fn init_builds_the_free_stack_and_take_ready_walks_the_ready_one() {
        let packets = 4;
        let layout = std::alloc::Layout::from_size_align(size(packets), 64).unwrap();
        // SAFETY: non-zero size.
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        // SAFETY: a fresh, aligned, zeroed block of the buffer's size.
        let b = unsafe { Buffer::init(base, packets, 0x1234) };
        assert_eq!(b.word(16).load(Ordering::Relaxed), 0x1234);
        assert_eq!(b.word(40).load(Ordering::Relaxed), 3);
        // Free stack: 3 -> 2 -> 1 -> (0, tag 1) -> end.
        let mut at = b.word(24).load(Ordering::Relaxed);
        let mut seen = Vec::new();
        while at != 0 {
            seen.push(at);
            at = b.next((at & 3) as usize).load(Ordering::Relaxed);
        }
        assert_eq!(seen, vec![3, 2, 1, 4]);
        push_ready(&b, 2, 2, 0b101);
        push_ready(&b, 4, 9, 1);
        let ready = b.take_ready();
        assert_eq!(
            ready,
            vec![
                Ready {
                    index: 0,
                    service: 9,
                    activemask: 1
                },
                Ready {
                    index: 2,
                    service: 2,
                    activemask: 0b101
                },
            ]
        );
        assert!(b.take_ready().is_empty());
        b.write_slot(2, 2, &[7; 8]);
        assert_eq!(b.read_slot(2, 2), [7; 8]);
        b.answer(2);
        assert_eq!(b.control(2).load(Ordering::Relaxed), 0);
        // SAFETY: allocated above with this layout; `b` is not used after.
        unsafe { std::alloc::dealloc(base, layout) };
    }
}
