//! `RlGpu`: opening a device, describing it, its queue-count policy, and
//! device memory for engines that have none of their own (`rl_gpu_alloc`
//! and friends, addressed by GPU virtual address).

use std::collections::BTreeMap;
use std::ffi::c_char;
use std::sync::Arc;

use facade::{DeviceBuffer, Error, ErrorClass, Gpu, QueuePolicy};
use parking_lot::Mutex;

use crate::enums::RlQueuePolicyArg;
use crate::handles::{self, Handled};
use crate::status::{guard, last_error_line, run, status};
use crate::util::{bounded, non_null, null, put, record, slice, slice_mut, text, MAX_SLICE_BYTES};

/// An opened GPU (real or simulated). Opaque; free with `rl_gpu_free`.
pub struct RlGpu {
    _opaque: [u8; 0],
}

/// The object behind an `RlGpu`. Modules, builders, IBs and graph
/// launches hold it, so its memory lives until the last of them is freed.
pub(crate) struct GpuObj {
    pub(crate) gpu: Gpu,
    /// Memory from `rl_gpu_alloc`, by start address.
    memory: Mutex<BTreeMap<u64, DeviceBuffer>>,
}

impl Handled for GpuObj {
    type C = RlGpu;
    const KIND: u8 = 1;
}

impl Drop for GpuObj {
    /// The last handle of the device is gone (every module, builder, IB
    /// and buffer holds this object): replays of freed IBs still running
    /// can never be waited for, so they are abandoned now rather than at
    /// the replay timeout, and what they kept (code, memory, the queue and
    /// its threads) goes with them. Runs inside the freeing call's panic
    /// guard.
    fn drop(&mut self) {
        let abandoned = self.gpu.abandon_unwaited();
        if abandoned > 0 {
            tracing::debug!(
                abandoned,
                "device freed with unwaited replays running; abandoned"
            );
        }
    }
}

impl GpuObj {
    /// The allocation holding `[addr, addr + len)`, or an error naming it.
    fn with_range<T>(
        &self,
        addr: u64,
        len: usize,
        f: impl FnOnce(&DeviceBuffer, usize) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let memory = self.memory.lock();
        let found = memory.range(..=addr).next_back().filter(|(start, buf)| {
            let offset = addr - **start;
            offset
                .checked_add(len as u64)
                .is_some_and(|end| end <= buf.len() as u64)
        });
        match found {
            Some((start, buf)) => f(buf, (addr - start) as usize),
            None => Err(Error::new(
                ErrorClass::Handle,
                format!(
                    "{addr:#x} (+{len} bytes) is not inside memory allocated with rl_gpu_alloc on \
                     this GPU (freed, never allocated, or running past its end)"
                ),
            )),
        }
    }
}

fn open(func: &str, f: impl FnOnce() -> Result<Gpu, Error>) -> *mut RlGpu {
    let opened = run(func, || {
        let gpu = f()?;
        handles::insert(GpuObj {
            gpu,
            memory: Mutex::new(BTreeMap::new()),
        })
    });
    opened.unwrap_or_else(|_| {
        // The seed's promise: an engine's `if (!gpu) return 1;` must not
        // fail silently, so opening (alone) says why on stderr, one line.
        eprintln!("relaunch: {}", last_error_line());
        std::ptr::null_mut()
    })
}

/// Opens the GPU a selector names: `uuid:GPU-…`, `bdf:0000:66:00.0`,
/// `slot:3`, `name:gfx1100` (refused when ambiguous), `index:1`
/// (volatile), `@alias` (host manifest) or `sim:gfx1201` (the simulated
/// device). The host deny list applies to every form. Returns NULL on
/// failure; `rl_last_error()` says why.
///
/// # Safety
/// `selector` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rl_gpu_open(selector: *const c_char) -> *mut RlGpu {
    open("rl_gpu_open", || {
        // SAFETY: forwarded caller contract.
        let selector = unsafe { text(selector, "selector") }?;
        Gpu::open(selector)
    })
}

/// Opens GPU number `ordinal` in the runtime's discovery order (volatile:
/// it changes with `ROCR_VISIBLE_DEVICES` and across tools; prefer
/// `rl_gpu_open` with a `uuid:`/`bdf:` anchor). Returns NULL on failure.
#[no_mangle]
pub extern "C" fn rl_gpu_new(ordinal: i32) -> *mut RlGpu {
    open("rl_gpu_new", || Gpu::open_index(ordinal))
}

/// Extension: opens `$RELAUNCH_DEVICE` if set, else the first real GPU,
/// else the simulated `sim:gfx1201`. Returns NULL on failure.
#[no_mangle]
pub extern "C" fn rl_gpu_open_default() -> *mut RlGpu {
    open("rl_gpu_open_default", Gpu::open_default)
}

/// Writes one line naming the device by its stable anchors into `buf`
/// (always NUL-terminated when `len > 0`). When the line does not fit it
/// is cut at `len - 1` bytes and `RL_ERR_RECORD` says how many were needed.
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn rl_gpu_describe(gpu: *const RlGpu, buf: *mut c_char, len: usize) -> i32 {
    status("rl_gpu_describe", || {
        let obj = handles::get::<GpuObj>(gpu)?;
        if buf.is_null() || len == 0 {
            return Err(null("buf (or len 0)"));
        }
        bounded(len, 1, "buf", MAX_SLICE_BYTES)?;
        let line = obj.gpu.describe().as_bytes();
        // Only the bytes written are borrowed: the line and its NUL at most.
        let want = len.min(line.len() + 1);
        // SAFETY: forwarded caller contract (want <= len).
        let out = unsafe { slice_mut(buf.cast::<u8>(), want, "buf", MAX_SLICE_BYTES) }?;
        let mut n = line.len().min(len - 1);
        while n > 0 && n < line.len() && !obj.gpu.describe().is_char_boundary(n) {
            n -= 1;
        }
        out[..n].copy_from_slice(&line[..n]);
        out[n] = 0;
        if n < line.len() {
            return Err(record(format!(
                "the description needs {} bytes with its NUL, the buffer has {len}; it was cut",
                line.len() + 1
            )));
        }
        Ok(())
    })
}

/// Drops this handle. Anything made from the GPU (modules, IBs, graph
/// launches) keeps the device and its `rl_gpu_alloc` memory alive until
/// it is freed too. When the last of them goes, replays of freed IBs that
/// were never waited for and still run are abandoned (their queues
/// stopped), so nothing of the device keeps running. NULL is a no-op.
#[no_mangle]
pub extern "C" fn rl_gpu_free(gpu: *mut RlGpu) {
    handles::free::<GpuObj>("rl_gpu_free", gpu);
}

/// Extension: true when `gpu` is the simulated device (`sim:<target>`, or
/// the fallback of `rl_gpu_open_default` on a machine without ROCm), so a
/// program can say it runs on the simulator. False for a real GPU and for
/// a NULL or invalid handle (then `rl_last_error()` says why).
#[no_mangle]
pub extern "C" fn rl_gpu_simulated(gpu: *const RlGpu) -> bool {
    guard("rl_gpu_simulated", false, || {
        Ok(handles::get::<GpuObj>(gpu)?.gpu.is_simulated())
    })
}

/// Queues to use for `independent_width` independent lanes under
/// `policy` (`RlQueueAuto` = 0, `RlQueueOne`..`RlQueueFour` = 1..4).
/// Returns 0 on failure (bad handle or policy).
#[no_mangle]
pub extern "C" fn rl_gpu_pm4_queue_count(
    gpu: *const RlGpu,
    policy: RlQueuePolicyArg,
    independent_width: usize,
) -> usize {
    guard("rl_gpu_pm4_queue_count", 0, || {
        let obj = handles::get::<GpuObj>(gpu)?;
        let policy = queue_policy(policy.0)?;
        Ok(obj.gpu.pm4_queue_count(policy, independent_width))
    })
}

pub(crate) fn queue_policy(value: u32) -> Result<QueuePolicy, Error> {
    QueuePolicy::from_u32(value).map_err(|e| {
        record(format!(
            "{e} (use RlQueueAuto = 0 or RlQueueOne..RlQueueFour = 1..4)"
        ))
    })
}

/// Allocates `bytes` of zero-filled memory the GPU can use and stores its
/// GPU virtual address in `*out_addr`. `kind`: `RlMemDevice` (0) or
/// `RlMemHostVisible` (1, fine-grained, host readable and writable).
///
/// # Safety
/// `out_addr` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rl_gpu_alloc(
    gpu: *mut RlGpu,
    bytes: usize,
    kind: u32,
    out_addr: *mut u64,
) -> i32 {
    status("rl_gpu_alloc", || {
        let obj = handles::get::<GpuObj>(gpu)?;
        non_null(out_addr, "out_addr")?;
        let host_visible = match kind {
            0 => false,
            1 => true,
            other => {
                return Err(record(format!(
                    "memory kind {other} is unknown; use RlMemDevice = 0 or RlMemHostVisible = 1"
                )))
            }
        };
        let buffer = obj.gpu.alloc(bytes, host_visible)?;
        let addr = buffer.address();
        obj.memory.lock().insert(addr, buffer);
        // SAFETY: checked non-NULL above; caller contract for validity.
        unsafe { put(out_addr, addr, "out_addr") }
    })
}

/// Frees memory from `rl_gpu_alloc` by its start address. Do not free
/// memory a replay in flight (or a later one) uses.
#[no_mangle]
pub extern "C" fn rl_gpu_free_mem(gpu: *mut RlGpu, addr: u64) -> i32 {
    status("rl_gpu_free_mem", || {
        let obj = handles::get::<GpuObj>(gpu)?;
        let removed = obj.memory.lock().remove(&addr);
        match removed {
            Some(buffer) => {
                drop(buffer);
                Ok(())
            }
            None => Err(Error::new(
                ErrorClass::Handle,
                format!(
                    "{addr:#x} is not the start of memory allocated with rl_gpu_alloc on this \
                     GPU (already freed, or an address inside an allocation)"
                ),
            )),
        }
    })
}

/// Copies `len` bytes at GPU address `addr` (inside one `rl_gpu_alloc`
/// allocation) to `dst`. Wait for replays that write it first.
///
/// # Safety
/// `dst` is NULL or valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn rl_gpu_read(
    gpu: *mut RlGpu,
    addr: u64,
    dst: *mut std::ffi::c_void,
    len: usize,
) -> i32 {
    status("rl_gpu_read", || {
        let obj = handles::get::<GpuObj>(gpu)?;
        bounded(len, 1, "dst", MAX_SLICE_BYTES)?;
        if dst.is_null() && len > 0 {
            return Err(null("dst"));
        }
        obj.with_range(addr, len, |buf, offset| {
            // SAFETY: forwarded caller contract; len is inside an allocation.
            let out = unsafe { slice_mut(dst.cast::<u8>(), len, "dst", MAX_SLICE_BYTES) }?;
            buf.read(offset, out)
        })
    })
}

/// Copies `len` bytes from `src` to GPU address `addr` (inside one
/// `rl_gpu_alloc` allocation).
///
/// # Safety
/// `src` is NULL or valid for `len` bytes of reads.
#[no_mangle]
pub unsafe extern "C" fn rl_gpu_write(
    gpu: *mut RlGpu,
    addr: u64,
    src: *const std::ffi::c_void,
    len: usize,
) -> i32 {
    status("rl_gpu_write", || {
        let obj = handles::get::<GpuObj>(gpu)?;
        bounded(len, 1, "src", MAX_SLICE_BYTES)?;
        if src.is_null() && len > 0 {
            return Err(null("src"));
        }
        obj.with_range(addr, len, |buf, offset| {
            // SAFETY: forwarded caller contract; len is inside an allocation.
            let bytes = unsafe { slice(src.cast::<u8>(), len, "src", MAX_SLICE_BYTES) }?;
            buf.write(offset, bytes)
        })
    })
}

/// The GPU object behind a handle, for the other modules.
pub(crate) fn gpu_obj(gpu: *const RlGpu) -> Result<Arc<GpuObj>, Error> {
    handles::get::<GpuObj>(gpu)
}
