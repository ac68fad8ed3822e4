//! The hostcall service: what a kernel's `hidden_hostcall_buffer` points
//! at, and the listener that serves it. HIP's device printf (ockl's
//! `__ockl_printf_begin` / `_append_args` / `_append_string_n`) sends its
//! text and arguments through it; relaunch serves printf (service 2) on
//! the public-AQL path, the one that runs such kernels (the PM4 verdict
//! refuses them: a direct PM4 dispatch is fine, but the point of that path
//! is that nothing on the host runs beside a replay).
//!
//! One service per GPU, made at the first install that needs it and kept
//! with the GPU: a buffer in fine-grained host memory and a doorbell
//! signal, both through the HSA table (`sim:` and ROCr alike), and one
//! listener thread. The listener waits on the doorbell in bounded slices
//! (so a missed wake-up costs at most one slice, and a stop is seen
//! promptly), serves every ready packet and answers it; it stops when the
//! service drops, with a bounded wait for the thread.
//!
//! Output goes to the process's stdout (stderr for `fprintf(stderr, ..)`)
//! as HIP's does, the one place relaunch prints, unless the GPU's
//! [`PrintfOutput`] captures it. A packet for a service relaunch does not
//! serve, or a malformed printf message, is answered with -1 so the wave
//! goes on, logged, counted and kept as a problem: the next
//! `GraphExec::launch` on that GPU fails naming it.
//!
//! Sources of the layout and protocol (facts only): ROCm-Device-Libs
//! `ockl/src/hostcall_impl.cl`, `services.cl`, `hsaqs.cl` and ROCclr
//! `device/devhostcall.cpp`, `devhcmessages.cpp`, `devhcprintf.cpp`
//! (ROCm 5.2).

mod buffer;
pub(crate) mod format;
pub(crate) mod printf;

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use relaunch_device::hsa::{AgentInfo, AllocFlags, Allocation, Runtime, Signal};

use crate::error::{Error, Result};
use crate::refusal::Refusal;
use buffer::Buffer;
pub use printf::Stream;

/// ockl's service ids (`services.cl`).
const SERVICE_PRINTF: u32 = 2;

/// Longest doorbell wait slice of the listener.
const SLICE: Duration = Duration::from_millis(10);
/// How long a dropping service waits for its listener to exit.
const STOP_WAIT: Duration = Duration::from_secs(2);
/// Packets when the agent does not report its compute units (the
/// simulator): more than the waves the simulator runs at once.
const DEFAULT_PACKETS: usize = 256;
/// Waves one compute unit holds at once on RDNA (2 SIMDs x 16).
const WAVES_PER_CU: usize = 32;

/// Where device printf output goes (per GPU; [`crate::Gpu::set_printf_output`]).
#[derive(Debug, Clone, Default)]
pub enum PrintfOutput {
    /// The process's stdout, or stderr for `fprintf(stderr, ...)`, as HIP.
    #[default]
    Stdio,
    /// Into a capture (both streams, in the order messages ended).
    Capture(PrintfCapture),
}

/// Captured printf output ([`PrintfOutput::Capture`]): cheap to clone,
/// every clone sees the same bytes.
#[derive(Debug, Clone, Default)]
pub struct PrintfCapture(Arc<Mutex<Vec<u8>>>);

impl PrintfCapture {
    /// Takes the bytes captured so far.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock())
    }

    /// Takes the text captured so far (invalid UTF-8 replaced).
    pub fn take_string(&self) -> String {
        String::from_utf8_lossy(&self.take()).into_owned()
    }
}

impl PrintfOutput {
    fn emit(&self, stream: Stream, text: &[u8]) {
        match self {
            PrintfOutput::Capture(c) => c.0.lock().extend_from_slice(text),
            // What a failed write to stdout could report goes nowhere
            // better: printf's own return value is already given.
            PrintfOutput::Stdio => {
                let _ = match stream {
                    Stream::Stdout => {
                        let mut out = std::io::stdout().lock();
                        out.write_all(text).and_then(|()| out.flush())
                    }
                    Stream::Stderr => std::io::stderr().lock().write_all(text),
                };
            }
        }
    }
}

/// The hidden arguments of `info` an AQL dispatch fills at run time and
/// their values, as (offset, bytes): the hostcall buffer's address
/// (`hostcall`; skipped while there is none) and HIP's null objects.
pub(crate) fn aql_fills(
    info: &relaunch_device::codeobj::KernelInfo,
    hostcall: Option<u64>,
) -> Vec<(usize, Vec<u8>)> {
    use relaunch_device::codeobj::AqlFill;
    info.args
        .iter()
        .filter_map(|a| {
            let value = match a.value_kind.aql_fill()? {
                AqlFill::HostcallBuffer => hostcall?,
                AqlFill::Null => 0,
            };
            let size = (a.size as usize).min(8);
            Some((a.offset as usize, value.to_le_bytes()[..size].to_vec()))
        })
        .collect()
}

/// What the listener shares with the service.
struct Shared {
    doorbell: Signal,
    output: Arc<Mutex<PrintfOutput>>,
    problems: Mutex<Vec<String>>,
    unknown_services: AtomicU64,
    stop: AtomicBool,
    exited: Mutex<bool>,
    exited_cv: Condvar,
    /// The buffer's memory; outlives the listener, which holds `Shared`.
    _memory: Allocation,
}

impl Shared {
    fn problem(&self, message: String) {
        tracing::error!(target: "relaunch::hostcall", "{message}");
        self.problems.lock().push(message);
    }
}

/// A GPU's hostcall buffer and its listener.
pub struct Hostcall {
    shared: Arc<Shared>,
    address: u64,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Hostcall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hostcall")
            .field("address", &format_args!("{:#x}", self.address))
            .finish()
    }
}

impl Hostcall {
    /// A buffer for `agent` (sized for the waves it runs at once) in
    /// fine-grained host memory, its doorbell and its listener.
    pub(crate) fn start(
        runtime: &Runtime,
        agent: &AgentInfo,
        output: Arc<Mutex<PrintfOutput>>,
    ) -> Result<Hostcall> {
        let packets = agent
            .compute_units
            .map_or(DEFAULT_PACKETS, |cu| cu as usize * WAVES_PER_CU)
            .clamp(64, 1 << 16)
            .next_power_of_two();
        let bytes = buffer::size(packets);
        let context = |e: relaunch_device::hsa::HsaError| {
            Error::from(e).context(format!("creating the hostcall buffer ({bytes} bytes)"))
        };
        let pool = runtime.host_fine_grained_pool().map_err(context)?;
        let mut memory = runtime
            .allocate(&pool, bytes, AllocFlags { executable: false })
            .map_err(context)?;
        memory.allow_access(&[agent]).map_err(context)?;
        memory.write(0, &vec![0; bytes]).map_err(context)?;
        let doorbell = runtime.create_signal(0).map_err(context)?;
        let base = memory.host_ptr(0, bytes).map_err(context)?;
        if base as usize % 64 != 0 {
            return Err(Refusal::HostcallBufferMisaligned {
                address: base as usize,
            }
            .into());
        }
        // SAFETY: `bytes` writable, 64-aligned bytes just allocated and not
        // shared yet; `Shared` keeps them alive for the listener.
        let buf = unsafe { Buffer::init(base, packets, doorbell.handle().handle) };
        let shared = Arc::new(Shared {
            doorbell,
            output,
            problems: Mutex::new(Vec::new()),
            unknown_services: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            exited: Mutex::new(false),
            exited_cv: Condvar::new(),
            _memory: memory,
        });
        let listener = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("relaunch-hostcall".into())
            .spawn(move || listen(&listener, buf))
            .map_err(Refusal::HostcallThread)?;
        tracing::debug!(address = base as u64, packets, "hostcall service started");
        Ok(Hostcall {
            shared,
            address: base as u64,
            thread: Some(thread),
        })
    }

    /// The buffer's address (what `hidden_hostcall_buffer` receives).
    pub fn address(&self) -> u64 {
        self.address
    }

    /// Packets answered with -1 because they asked for a service relaunch
    /// does not serve, since the service started.
    pub fn unknown_services(&self) -> u64 {
        self.shared.unknown_services.load(Ordering::Relaxed)
    }

    /// Takes the problems seen since the last call (unknown services,
    /// malformed printf messages), each a sentence.
    pub(crate) fn take_problems(&self) -> Vec<String> {
        std::mem::take(&mut *self.shared.problems.lock())
    }

    /// Fails naming every problem seen since the last check.
    pub(crate) fn check(&self) -> Result<()> {
        let problems = self.take_problems();
        if problems.is_empty() {
            return Ok(());
        }
        Err(Refusal::HostcallUnserved { problems }.into())
    }
}

impl Drop for Hostcall {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        // Wake the listener now rather than at the end of its slice.
        let seen = self.shared.doorbell.load();
        self.shared.doorbell.store_release(seen.wrapping_add(1));
        let deadline = Instant::now() + STOP_WAIT;
        let mut exited = self.shared.exited.lock();
        while !*exited {
            if self
                .shared
                .exited_cv
                .wait_until(&mut exited, deadline)
                .timed_out()
            {
                break;
            }
        }
        let done = *exited;
        drop(exited);
        if let Some(t) = self.thread.take() {
            if done {
                let _ = t.join();
            } else {
                // It holds what it uses (`Shared`); it exits at its next slice.
                tracing::warn!(
                    "the hostcall listener did not stop within {STOP_WAIT:?}; left to exit"
                );
            }
        }
    }
}

/// The listener: serve ready packets whenever the doorbell moves, and at
/// least once per slice.
fn listen(shared: &Shared, buf: Buffer) {
    let mut messages = printf::Messages::default();
    let mut seen = shared.doorbell.load();
    while !shared.stop.load(Ordering::Acquire) {
        seen = shared.doorbell.wait_changed(seen, SLICE);
        serve(shared, &buf, &mut messages);
    }
    *shared.exited.lock() = true;
    shared.exited_cv.notify_all();
}

fn serve(shared: &Shared, buf: &Buffer, messages: &mut printf::Messages) {
    for packet in buf.take_ready() {
        let mut lanes = packet.activemask;
        if packet.service != SERVICE_PRINTF {
            shared.unknown_services.fetch_add(1, Ordering::Relaxed);
            shared.problem(format!(
                "a kernel asked for hostcall service {} ({}), which relaunch does not serve \
                 (it serves printf, service 2); its work-items got -1",
                packet.service,
                service_name(packet.service)
            ));
        }
        while lanes != 0 {
            let lane = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let mut slot = buf.read_slot(packet.index, lane);
            if packet.service == SERVICE_PRINTF {
                match messages.serve(&mut slot) {
                    Ok(Some(p)) => shared.output.lock().emit(p.stream, &p.text),
                    Ok(None) => {}
                    Err(e) => {
                        shared.problem(format!("device printf (lane {lane}): {e}"));
                        slot[0] = u64::MAX;
                    }
                }
            } else {
                slot[0] = u64::MAX;
                slot[1] = 0;
            }
            buf.write_slot(packet.index, lane, &slot);
        }
        buf.answer(packet.index);
    }
}

/// ockl's names for its service ids (ROCclr's `devhcmessages.hpp`).
fn service_name(id: u32) -> &'static str {
    match id {
        0 => "reserved",
        1 => "host function call",
        3 => "device memory",
        4 => "sanitizer report",
        _ => "unknown to ockl",
    }
}
