//! One SDMA queue's engine thread: reads the ring up to the doorbell's
//! offset and executes each packet (see the module docs for the rules).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::packets::{self, Rect, SdmaPacket};
use crate::device::SimDevice;
use crate::fault::VmFaultEvent;
use crate::memory::VmFault;
use crate::ordering::clock;
use crate::ordering::{Footprint, Violation};

/// Where a queue's ring and its indices live (all in device memory).
#[derive(Debug, Clone, Copy)]
pub struct SdmaRing {
    /// The ring's base and size in bytes (a power of two).
    pub base: u64,
    pub bytes: u64,
    /// The 64-bit slot the runtime stores its write offset to.
    pub doorbell: u64,
    /// Where the engine publishes its read offset (`Queue_read_ptr`).
    pub read_ptr: u64,
}

/// The interrupt a TRAP packet raises, with its context (the event id).
pub type InterruptSink = Arc<dyn Fn(u32) + Send + Sync>;

/// How long the engine keeps polling quickly after work (see
/// `queue::LINGER` for why a hardware engine's polling matters here).
const LINGER: Duration = Duration::from_millis(20);
const LINGER_POLL: Duration = Duration::from_micros(50);
const IDLE_POLL_MAX: Duration = Duration::from_millis(1);
/// Bytes moved per memory call of a copy (bounds the staging buffer).
const CHUNK: u64 = 1 << 20;

struct Shared {
    stop: AtomicBool,
    suspended: AtomicBool,
    /// Why the engine halted, if it did.
    halted: Mutex<Option<String>>,
}

/// A running SDMA queue; dropping it does not stop it, [`SdmaQueue::destroy`] does.
pub struct SdmaQueue {
    id: u64,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl SdmaQueue {
    /// Start the engine for `ring` on `device`, as queue `id`.
    pub fn start(
        device: Arc<SimDevice>,
        id: u64,
        ring: SdmaRing,
        interrupt: InterruptSink,
    ) -> Result<SdmaQueue, String> {
        if ring.bytes < 256 || !ring.bytes.is_power_of_two() {
            return Err(format!(
                "SDMA ring of {} bytes: must be a power of two of at least 256",
                ring.bytes
            ));
        }
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            suspended: AtomicBool::new(false),
            halted: Mutex::new(None),
        });
        let engine = Engine {
            device,
            id,
            ring,
            interrupt,
            shared: Arc::clone(&shared),
        };
        let thread = std::thread::Builder::new()
            .name(format!("relaunch-sdma-q{id}"))
            .spawn(move || engine.run())
            .map_err(|e| format!("could not start the SDMA engine thread: {e}"))?;
        Ok(SdmaQueue {
            id,
            shared,
            thread: Some(thread),
        })
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// Suspend (`false`) or resume the queue between packets.
    pub fn set_running(&self, running: bool) {
        self.shared.suspended.store(!running, Ordering::Release);
    }

    /// Why the engine halted, if it did.
    pub fn halted(&self) -> Option<String> {
        self.shared.halted.lock().clone()
    }

    /// Stop the engine (work not yet read is discarded) and wait for it.
    pub fn destroy(mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            if !crate::queue::join_bounded(thread, crate::queue::DESTROY_JOIN_LIMIT) {
                tracing::error!(queue = self.id, "SDMA engine still running at destroy");
            }
        }
    }
}

/// Why executing a packet failed.
enum Stop {
    /// A refused memory access: the driver's VM-fault path.
    Fault(VmFault),
    /// Anything else: the engine halts with this message.
    Halt(String),
    /// The queue is being destroyed.
    Destroyed,
}

impl From<VmFault> for Stop {
    fn from(f: VmFault) -> Self {
        Stop::Fault(f)
    }
}

struct Engine {
    device: Arc<SimDevice>,
    id: u64,
    ring: SdmaRing,
    interrupt: InterruptSink,
    shared: Arc<Shared>,
}

impl Engine {
    fn stopping(&self) -> bool {
        self.shared.stop.load(Ordering::Acquire)
    }

    fn run(self) {
        let _agent = clock::enter_queue();
        let mem = &self.device.memory;
        let mut rd = mem.load_u64_acquire(self.ring.read_ptr).unwrap_or(0);
        let mut active: Option<Instant> = None;
        let mut idle_step = LINGER_POLL;
        while !self.stopping() {
            let blocked = self.shared.suspended.load(Ordering::Acquire)
                || self.shared.halted.lock().is_some()
                || self.device.is_lost();
            let wr = if blocked {
                rd
            } else {
                mem.load_u64_acquire(self.ring.doorbell).unwrap_or(rd)
            };
            if wr == rd {
                let lingering = active.is_some_and(|t| t.elapsed() < LINGER);
                if lingering {
                    std::thread::sleep(LINGER_POLL);
                } else {
                    active = None;
                    std::thread::sleep(idle_step);
                    idle_step = (idle_step * 2).min(IDLE_POLL_MAX);
                }
                continue;
            }
            idle_step = LINGER_POLL;
            // What the host knew when it rang the doorbell.
            let submitted = clock::memory_and_host();
            match self.drain(&mut rd, wr, &submitted) {
                Ok(()) => {}
                Err(Stop::Destroyed) => break,
                Err(Stop::Fault(f)) => self.fault(rd, &f),
                Err(Stop::Halt(msg)) => self.halt(rd, msg),
            }
            active = Some(Instant::now());
        }
        let _ = clock::leave_queue();
    }

    /// Execute every packet from `rd` up to the write offset `wr`.
    fn drain(&self, rd: &mut u64, wr: u64, submitted: &clock::VectorClock) -> Result<(), Stop> {
        if wr < *rd || wr - *rd > self.ring.bytes {
            return Err(Stop::Halt(format!(
                "the doorbell's write offset {wr:#x} is not within one ring ({:#x} bytes) \
                 after the read offset {:#x}",
                self.ring.bytes, *rd
            )));
        }
        if wr % 4 != 0 {
            return Err(Stop::Halt(format!(
                "the doorbell's write offset {wr:#x} is not dword aligned"
            )));
        }
        while *rd < wr {
            if self.stopping() {
                return Err(Stop::Destroyed);
            }
            let header = self.ring_dwords(*rd, 1)?[0];
            let len = packets::length(header).map_err(|m| self.refused(*rd, m))?;
            if *rd + 4 * len as u64 > wr {
                return Err(Stop::Halt(format!(
                    "packet at ring offset {:#x} ({len} dwords) runs past the write offset {wr:#x}",
                    *rd
                )));
            }
            let dw = self.ring_dwords(*rd, len)?;
            let packet =
                packets::parse(&dw, self.device.family()).map_err(|m| self.refused(*rd, m))?;
            self.execute(*rd, &packet, submitted)?;
            *rd += 4 * len as u64;
            self.device
                .memory
                .store_u64_release(self.ring.read_ptr, *rd)
                .map_err(Stop::Fault)?;
        }
        Ok(())
    }

    fn refused(&self, at: u64, why: String) -> Stop {
        Stop::Halt(format!("packet at ring offset {at:#x}: {why}"))
    }

    /// `count` dwords of the ring from byte offset `at`, wrapping.
    fn ring_dwords(&self, at: u64, count: usize) -> Result<Vec<u32>, Stop> {
        let mut out = Vec::with_capacity(count);
        let mut pos = at;
        while out.len() < count {
            let off = pos & (self.ring.bytes - 1);
            let here = ((self.ring.bytes - off) / 4).min((count - out.len()) as u64) as usize;
            out.extend(self.device.memory.read_dwords(self.ring.base + off, here)?);
            pos += 4 * here as u64;
        }
        Ok(out)
    }

    fn execute(
        &self,
        at: u64,
        packet: &SdmaPacket,
        submitted: &clock::VectorClock,
    ) -> Result<(), Stop> {
        let mem = &self.device.memory;
        let mut footprint = Footprint::default();
        let flight = &self.device.in_flight;
        let start = flight.begin(submitted);
        let moved = match *packet {
            SdmaPacket::Nop => return Ok(()),
            SdmaPacket::CopyLinear { src, dst, bytes } => {
                self.copy(src, dst, bytes)?;
                footprint.reads.insert(src, bytes);
                footprint.writes.insert(dst, bytes);
                bytes
            }
            SdmaPacket::CopyRect(rect) => self.copy_rect(&rect, &mut footprint)?,
            SdmaPacket::Fill {
                dst,
                value,
                log2_size,
                count,
            } => {
                let bytes = count << log2_size;
                self.fill(dst, value, log2_size, bytes)?;
                footprint.writes.insert(dst, bytes);
                bytes
            }
            SdmaPacket::Fence { addr, data } => {
                clock::release_to_memory();
                mem.store_u32_release(addr, data)?;
                footprint.writes.insert(addr, 4);
                0
            }
            SdmaPacket::AtomicAdd64 { addr, value } => {
                clock::release_to_memory();
                mem.atomic_add_i64(addr, value)?;
                footprint.atomics.insert(addr, 8);
                0
            }
            SdmaPacket::Timestamp { addr } => {
                clock::release_to_memory();
                mem.store_u64_release(addr, crate::pm4::timestamp::read())?;
                footprint.writes.insert(addr, 8);
                0
            }
            SdmaPacket::Trap { context } => {
                (self.interrupt)(context);
                0
            }
            SdmaPacket::Poll {
                addr,
                value,
                mask,
                func,
            } => {
                self.poll(addr, value, mask, func)?;
                0
            }
            SdmaPacket::Gcr { .. } => 0,
        };
        self.device.cp.sdma(moved);
        let found = flight.end(self.id, at, start, footprint);
        self.check(&found)
    }

    /// Log ordering violations; under strict checking they halt the engine.
    fn check(&self, found: &[Violation]) -> Result<(), Stop> {
        if found.is_empty() {
            return Ok(());
        }
        self.device.log_violations(found);
        if self.device.config().strict {
            let listed: Vec<String> = found.iter().map(Violation::to_string).collect();
            return Err(Stop::Halt(format!(
                "{} ordering violation(s): {}",
                found.len(),
                listed.join("; ")
            )));
        }
        Ok(())
    }

    fn copy(&self, src: u64, dst: u64, bytes: u64) -> Result<(), Stop> {
        let mem = &self.device.memory;
        let mut done = 0;
        while done < bytes {
            if self.stopping() {
                return Err(Stop::Destroyed);
            }
            let n = (bytes - done).min(CHUNK);
            let data = mem.read_vec(src + done, n as usize)?;
            mem.write(dst + done, &data)?;
            done += n;
        }
        Ok(())
    }

    fn copy_rect(&self, r: &Rect, footprint: &mut Footprint) -> Result<u64, Stop> {
        let row = (u64::from(r.extent[0]) + 1) << r.element;
        let mut moved = 0;
        for z in 0..=u64::from(r.extent[2]) {
            for y in 0..=u64::from(r.extent[1]) {
                let src = r.address(&r.src, 0, y, z);
                let dst = r.address(&r.dst, 0, y, z);
                self.copy(src, dst, row)?;
                footprint.reads.insert(src, row);
                footprint.writes.insert(dst, row);
                moved += row;
            }
        }
        Ok(moved)
    }

    fn fill(&self, dst: u64, value: u32, log2_size: u32, bytes: u64) -> Result<(), Stop> {
        let element: Vec<u8> = match log2_size {
            0 => vec![value as u8],
            1 => (value as u16).to_le_bytes().to_vec(),
            2 => value.to_le_bytes().to_vec(),
            // An 8-byte element repeats the 32-bit source twice.
            _ => [value.to_le_bytes(), value.to_le_bytes()].concat(),
        };
        let chunk: Vec<u8> = element
            .iter()
            .copied()
            .cycle()
            .take(bytes.min(CHUNK) as usize)
            .collect();
        let mut done = 0;
        while done < bytes {
            if self.stopping() {
                return Err(Stop::Destroyed);
            }
            let n = (bytes - done).min(CHUNK) as usize;
            self.device.memory.write(dst + done, &chunk[..n])?;
            done += n as u64;
        }
        Ok(())
    }

    /// Wait until the poll's condition holds (ROCr's polls retry forever).
    fn poll(&self, addr: u64, value: u32, mask: u32, func: u32) -> Result<(), Stop> {
        let mut step = Duration::from_micros(20);
        loop {
            let seen = self.device.memory.load_u32_acquire(addr)?;
            if packets::poll_holds(func, seen, mask, value) {
                clock::acquire_from_memory();
                return Ok(());
            }
            if self.stopping() {
                return Err(Stop::Destroyed);
            }
            std::thread::sleep(step);
            step = (step * 2).min(IDLE_POLL_MAX);
        }
    }

    /// A VM fault: the engine stops and the driver reports it as the
    /// hardware's fault interrupt does.
    fn fault(&self, at: u64, f: &VmFault) {
        let message = format!("SDMA queue {} at ring offset {at:#x}: {f}", self.id);
        *self.shared.halted.lock() = Some(message.clone());
        self.device.report_vm_fault(VmFaultEvent {
            target: self.device.config().target.clone(),
            address: f.addr,
            reason_mask: crate::fault::reason_mask(f),
            queue: self.id,
            packet: at,
            message,
        });
    }

    /// The engine stops on something it cannot execute: said loudly, since
    /// the runtime waiting on the copy's signal learns nothing else.
    fn halt(&self, at: u64, msg: String) {
        let message = format!(
            "SDMA queue {} halted at ring offset {at:#x}: {msg}",
            self.id
        );
        tracing::error!("{message}");
        eprintln!("relaunch-kfd: {message}");
        *self.shared.halted.lock() = Some(message);
    }
}
