//! `Runtime`: one `hsa_init`/`hsa_shut_down` pair over a function table, and
//! the agents it found. Every object created through it keeps it alive.

use std::ffi::{c_char, c_void, CStr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use relaunch_hsa_sys as sys;

use super::agent::{query_agent, AgentInfo, DeviceKind};
use super::fault::{FaultBook, GpuFault};
use super::ib_memory::ExecFlag;
use super::HsaError;

/// The state every HSA object shares: the table and the init it holds.
#[derive(Debug)]
pub(crate) struct RuntimeInner {
    pub(crate) hsa: Arc<sys::LoadedHsa>,
    /// Ticks per second of `hsa_signal_wait_*` timeout hints.
    pub(crate) timestamp_hz: u64,
    /// GPU memory faults reported through this table (see `fault`).
    pub(crate) faults: &'static FaultBook,
    /// `HSA_AMD_SYSTEM_INFO_BUILD_VERSION` (e.g. "1.14.0-..."), when the
    /// runtime answers it.
    pub(crate) build_version: Option<String>,
    /// Whether this runtime takes the executable pool flag (`ib_memory`).
    pub(crate) exec_flag: ExecFlag,
}

impl RuntimeInner {
    pub(crate) fn api(&self) -> &sys::HsaApi {
        &self.hsa.api
    }

    /// The runtime's description of `status`, falling back to its C name.
    pub(crate) fn describe(&self, status: sys::Status) -> String {
        describe_status(&self.hsa.api, status)
    }

    /// `Ok` for success, else an `HsaError::Call` naming `call`.
    pub(crate) fn check(&self, call: &'static str, status: sys::Status) -> Result<(), HsaError> {
        if status == sys::HSA_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(HsaError::Call {
                call,
                status,
                message: self.describe(status),
            })
        }
    }
}

impl RuntimeInner {
    /// `Err(DeviceLost)` when a memory fault was recorded on `agent`.
    #[inline]
    pub(crate) fn check_lost(
        &self,
        agent: sys::Agent,
        gpu: &str,
        during: &str,
    ) -> Result<(), HsaError> {
        if !self.faults.any() {
            return Ok(());
        }
        match self.faults.lost(agent.handle) {
            None => Ok(()),
            Some(fault) => Err(HsaError::lost(gpu, &fault, during)),
        }
    }
}

impl Drop for RuntimeInner {
    fn drop(&mut self) {
        self.faults.closed();
        // SAFETY: this struct owns exactly one successful hsa_init, and every
        // object created under it holds an Arc to it, so all are gone now.
        let status = unsafe { (self.hsa.api.shut_down)() };
        if status != sys::HSA_STATUS_SUCCESS {
            tracing::warn!(status, "hsa_shut_down failed: {}", self.describe(status));
        }
    }
}

pub(crate) fn describe_status(api: &sys::HsaApi, status: sys::Status) -> String {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: hsa_status_string is callable in any state; `text` is a valid
    // out-pointer.
    let rc = unsafe { (api.status_string)(status, &mut text) };
    if rc == sys::HSA_STATUS_SUCCESS && !text.is_null() {
        // SAFETY: on success the runtime points `text` at a static
        // NUL-terminated string that lives as long as the library.
        let described = unsafe { CStr::from_ptr(text) }.to_string_lossy();
        // ROCr's strings are "NAME: sentence."; keep them whole but trimmed.
        return described.trim().to_string();
    }
    match sys::status_name(status) {
        Some(name) => name.to_string(),
        None => format!("unknown HSA status {status:#x}"),
    }
}

/// An initialised HSA runtime and its agents. Cheap to clone; the runtime
/// is shut down when the last clone and the last object made through it
/// (signal, queue, allocation, executable) are dropped.
#[derive(Debug, Clone)]
pub struct Runtime {
    pub(crate) inner: Arc<RuntimeInner>,
    agents: Arc<[AgentInfo]>,
}

impl Runtime {
    /// Loads the system HSA runtime (`path`, else `RELAUNCH_HSA_LIB`, else the
    /// usual sonames) and opens it. Every failure to reach a GPU, including a
    /// library that does not load, is `HsaError::NoGpu`. The library is
    /// loaded once per process and never unloaded
    /// ([`sys::LoadedHsa::load_shared`]); each `Runtime` holds one
    /// `hsa_init`.
    pub fn open_system(path: Option<&Path>) -> Result<Runtime, HsaError> {
        let loaded = sys::LoadedHsa::load_shared(path).map_err(|err| HsaError::NoGpu {
            reason: err.to_string(),
        })?;
        Runtime::open(loaded)
    }

    /// Initialises HSA through `hsa` (the real library or the simulated
    /// device's table) and lists its agents. Fails with `HsaError::NoGpu`
    /// when `hsa_init` fails or no GPU agent exists.
    pub fn open(hsa: Arc<sys::LoadedHsa>) -> Result<Runtime, HsaError> {
        Runtime::open_with_init_timeout(hsa, INIT_TIMEOUT)
    }

    /// [`Runtime::open`] giving up on `hsa_init` after `init_timeout`
    /// (default 20 s) with `HsaError::NoGpu`.
    pub fn open_with_init_timeout(
        hsa: Arc<sys::LoadedHsa>,
        init_timeout: Duration,
    ) -> Result<Runtime, HsaError> {
        let started = std::time::Instant::now();
        let status = init_with_watchdog(&hsa, init_timeout)?;
        if status != sys::HSA_STATUS_SUCCESS {
            let mut reason = format!(
                "hsa_init from {} failed with {}",
                hsa.origin,
                describe_status(&hsa.api, status)
            );
            if !Path::new("/dev/kfd").exists() {
                reason.push_str(
                    " (/dev/kfd does not exist: the amdgpu kernel driver is not loaded, \
                     or this container was started without the device)",
                );
            }
            return Err(HsaError::NoGpu { reason });
        }
        let faults = FaultBook::of(&hsa.api);
        faults.opened(&hsa.api, &hsa.origin);
        let mut inner = RuntimeInner {
            hsa,
            timestamp_hz: 0,
            faults,
            build_version: None,
            exec_flag: ExecFlag::default(),
        };
        inner.timestamp_hz = query_timestamp_hz(&inner)?;
        inner.build_version = query_build_version(&inner);
        let handles = iterate_agents(&inner)?;
        let agents = handles
            .into_iter()
            .map(|handle| query_agent(&inner, handle))
            .collect::<Result<Vec<_>, _>>()?;
        let gpus = agents.iter().filter(|a| a.kind == DeviceKind::Gpu).count();
        if gpus == 0 {
            let listed: Vec<String> = agents
                .iter()
                .map(|a| format!("{} ({:?})", a.name, a.kind))
                .collect();
            return Err(HsaError::NoGpu {
                reason: format!(
                    "{} lists no agent of type GPU (agents: {}); check that the GPU is \
                     supported by this ROCm and visible (HSA_VISIBLE_DEVICES, permissions on /dev/kfd)",
                    inner.hsa.origin,
                    if listed.is_empty() { "none".to_string() } else { listed.join(", ") }
                ),
            });
        }
        tracing::debug!(
            origin = %inner.hsa.origin,
            agents = agents.len(),
            gpus,
            elapsed_us = started.elapsed().as_micros() as u64,
            "HSA runtime opened"
        );
        Ok(Runtime {
            inner: Arc::new(inner),
            agents: agents.into(),
        })
    }

    /// Ticks per second of the GPU clock counter
    /// (`HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY`, never 0): what converts the
    /// timestamps a profiled IB writes to time.
    pub fn timestamp_frequency(&self) -> u64 {
        self.inner.timestamp_hz
    }

    /// The runtime's build identifier (`HSA_AMD_SYSTEM_INFO_BUILD_VERSION`,
    /// ROCr's library version, e.g. "1.14.0-..."), if it reports one: for
    /// reports only (it does not tell which ROCm release this is).
    pub fn build_version(&self) -> Option<&str> {
        self.inner.build_version.as_deref()
    }

    /// Where the function table came from.
    pub fn origin(&self) -> &str {
        &self.inner.hsa.origin
    }

    /// Whether this runtime installed a trap handler for `gpu` (a GPU of
    /// `family`), so that the CP sets RSRC2.TRAP_PRESENT for its AQL
    /// dispatches (see `hsa::trap` for ROCr's rule and where it is read).
    pub fn trap_handler(&self, gpu: &AgentInfo, family: relaunch_facts::Family) -> bool {
        super::trap::installed(&self.inner, gpu, family)
    }

    /// True when the table is relaunch's simulated device.
    pub fn is_simulated(&self) -> bool {
        self.inner.hsa.simulated
    }

    /// The memory fault that made `gpu` lost to this process, if one was
    /// reported (see `hsa::fault`). Once lost, a GPU stays lost.
    pub fn device_lost(&self, gpu: &AgentInfo) -> Option<GpuFault> {
        self.inner.faults.lost(gpu.handle.handle)
    }

    /// `Err(HsaError::DeviceLost)` naming the fault when `gpu` is lost.
    pub fn check_device(&self, gpu: &AgentInfo, during: &str) -> Result<(), HsaError> {
        // The label is made only for the error (this runs on every call).
        if !self.inner.faults.any() {
            return Ok(());
        }
        self.inner.check_lost(gpu.handle, &gpu.label(), during)
    }

    /// Every agent, in the runtime's order.
    pub fn agents(&self) -> &[AgentInfo] {
        &self.agents
    }

    /// The GPU agents, in the runtime's order (at least one).
    pub fn gpus(&self) -> impl Iterator<Item = &AgentInfo> {
        self.agents.iter().filter(|a| a.kind == DeviceKind::Gpu)
    }

    /// The first CPU agent: owner of the host pools (kernarg, fine-grained).
    pub fn cpu(&self) -> Result<&AgentInfo, HsaError> {
        self.agents
            .iter()
            .find(|a| a.kind == DeviceKind::Cpu)
            .ok_or_else(|| HsaError::Invalid {
                what: "runtime answer",
                problem: format!(
                    "{} lists no CPU agent; the host pools (kernarg, fine-grained) belong to one",
                    self.inner.hsa.origin
                ),
            })
    }
}

/// How long `hsa_init` may take before we give up on it. A runtime without
/// a device fails in well under a millisecond; large multi-GPU hosts take a
/// few seconds. Past this, something is wedged (driver, firmware).
pub const INIT_TIMEOUT: Duration = Duration::from_secs(20);

/// Calls `hsa_init` on a helper thread and waits at most `timeout`, so a
/// wedged driver cannot hang the caller. If the call returns after we gave
/// up, the thread balances a late success with `hsa_shut_down`.
fn init_with_watchdog(
    hsa: &Arc<sys::LoadedHsa>,
    timeout: Duration,
) -> Result<sys::Status, HsaError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let table = Arc::clone(hsa);
    std::thread::Builder::new()
        .name("relaunch-hsa-init".to_string())
        .spawn(move || {
            // SAFETY: hsa_init may be called at any time; a success is paired
            // with hsa_shut_down by RuntimeInner's Drop, or below if nobody
            // is waiting any more. `table` keeps the library loaded.
            let status = unsafe { (table.api.init)() };
            if tx.send(status).is_err() && status == sys::HSA_STATUS_SUCCESS {
                // SAFETY: balances the successful init above; nothing was
                // created under it.
                unsafe { (table.api.shut_down)() };
            }
        })
        .map_err(|err| HsaError::NoGpu {
            reason: format!("could not start a thread to call hsa_init: {err}"),
        })?;
    rx.recv_timeout(timeout).map_err(|_| HsaError::NoGpu {
        reason: format!(
            "hsa_init from {} did not return within {} ms; the GPU driver may be wedged \
             (check dmesg for amdgpu errors)",
            hsa.origin,
            timeout.as_millis()
        ),
    })
}

fn query_build_version(inner: &RuntimeInner) -> Option<String> {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: initialised runtime; the attribute writes one `const char*`
    // to a static string (or fails on runtimes without it).
    let status = unsafe {
        (inner.api().system_get_info)(
            sys::HSA_AMD_SYSTEM_INFO_BUILD_VERSION,
            (&mut text as *mut *const c_char).cast::<c_void>(),
        )
    };
    if status != sys::HSA_STATUS_SUCCESS || text.is_null() {
        return None;
    }
    // SAFETY: on success the runtime points at a NUL-terminated static string.
    let version = unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .trim()
        .to_string();
    tracing::debug!(%version, "HSA runtime build");
    Some(version)
}

fn query_timestamp_hz(inner: &RuntimeInner) -> Result<u64, HsaError> {
    let mut hz: u64 = 0;
    // SAFETY: initialised runtime; the attribute writes one u64.
    let status = unsafe {
        (inner.api().system_get_info)(
            sys::HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY,
            (&mut hz as *mut u64).cast::<c_void>(),
        )
    };
    inner.check("hsa_system_get_info(TIMESTAMP_FREQUENCY)", status)?;
    if hz == 0 {
        return Err(HsaError::Invalid {
            what: "runtime answer",
            problem: "HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY is 0".to_string(),
        });
    }
    Ok(hz)
}

/// Upper bound on agents we accept from one walk, so a broken table cannot
/// make us allocate without bound.
const MAX_AGENTS: usize = 1024;

unsafe extern "C" fn collect_agent(agent: sys::Agent, data: *mut c_void) -> sys::Status {
    // SAFETY: `data` is the `&mut Vec<Agent>` passed by `iterate_agents`,
    // live for the whole walk and touched by no one else meanwhile.
    let list = unsafe { &mut *data.cast::<Vec<sys::Agent>>() };
    if list.len() >= MAX_AGENTS {
        return sys::HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    list.push(agent);
    sys::HSA_STATUS_SUCCESS
}

fn iterate_agents(inner: &RuntimeInner) -> Result<Vec<sys::Agent>, HsaError> {
    let mut list: Vec<sys::Agent> = Vec::new();
    // SAFETY: initialised runtime; the callback does not unwind and `list`
    // outlives the call.
    let status = unsafe {
        (inner.api().iterate_agents)(collect_agent, (&mut list as *mut Vec<sys::Agent>).cast())
    };
    inner.check("hsa_iterate_agents", status)?;
    Ok(list)
}
