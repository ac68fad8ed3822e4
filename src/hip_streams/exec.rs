//! Replaying a plan on HIP streams: one non-blocking stream and one
//! completion event per lane, nodes launched in lane order (HIP orders
//! the work of one stream, which covers every boundary inside a lane;
//! lanes share nothing, so they need no ordering between them).

use std::ffi::c_void;
use std::time::{Duration, Instant};

use relaunch_encoders::DmaOp;
use relaunch_lanes::{KernelRef, Plan, PlannedNode};

use super::library::{
    Handle, HipLibrary, HIP_ERROR_NOT_READY, HIP_EVENT_DISABLE_TIMING, HIP_MEMCPY_DEFAULT,
    HIP_STREAM_NON_BLOCKING, LAUNCH_PARAM_BUFFER_POINTER, LAUNCH_PARAM_BUFFER_SIZE,
    LAUNCH_PARAM_END,
};
use super::{HipDevice, HipError};
use crate::error::{Error, Result};
use crate::graph::GraphExec;
use crate::module::Module;
use crate::refusal::Refusal;
use crate::submission::LaneKind;

/// The streams and events of one graph exec on one HIP device.
pub(crate) struct HipLanes {
    device: HipDevice,
    streams: Vec<Handle>,
    events: Vec<Handle>,
    /// Set when a replay did not finish: the streams and the modules they
    /// run are then never released (freeing code under a running kernel
    /// is worse than the leak).
    unfinished: Option<Vec<Module>>,
}

// SAFETY: HIP streams and events may be used from any thread; the exec
// serialises every use behind its mutex.
unsafe impl Send for HipLanes {}

impl HipLanes {
    fn create(device: &HipDevice, lanes: usize) -> Result<HipLanes> {
        let lib = device.make_current()?;
        let mut out = HipLanes {
            device: device.clone(),
            streams: Vec::with_capacity(lanes),
            events: Vec::with_capacity(lanes),
            unfinished: None,
        };
        for _ in 0..lanes {
            let mut stream: Handle = std::ptr::null_mut();
            // SAFETY: a valid out pointer; destroyed in Drop.
            let status =
                unsafe { (lib.fns.hipStreamCreateWithFlags)(&mut stream, HIP_STREAM_NON_BLOCKING) };
            lib.check("hipStreamCreateWithFlags", status)
                .map_err(Error::Hip)?;
            out.streams.push(stream);
            let mut event: Handle = std::ptr::null_mut();
            // SAFETY: as above.
            let status =
                unsafe { (lib.fns.hipEventCreateWithFlags)(&mut event, HIP_EVENT_DISABLE_TIMING) };
            lib.check("hipEventCreateWithFlags", status)
                .map_err(Error::Hip)?;
            out.events.push(event);
        }
        Ok(out)
    }

    /// Submits every lane of `plan`, then records each lane's event.
    fn submit(&self, plan: &Plan, function: &dyn Fn(&KernelRef) -> Result<Handle>) -> Result<()> {
        let lib = self.device.make_current()?;
        for (lane, nodes) in plan.lanes().enumerate() {
            let stream = self.streams[lane];
            for node in &nodes {
                match node.kernel {
                    KernelRef::Transfer(ops) => transfer(lib, ops, stream)?,
                    kernel => launch(lib, function(kernel)?, node, stream)
                        .map_err(|e| e.context(format!("lane {lane}, node {}", node.node.raw())))?,
                }
            }
            // SAFETY: live event and stream of this device.
            let status = unsafe { (lib.fns.hipEventRecord)(self.events[lane], stream) };
            lib.check("hipEventRecord", status).map_err(Error::Hip)?;
        }
        Ok(())
    }

    /// Waits until every lane's event completed, up to `timeout`.
    fn wait(&self, timeout: Duration) -> Result<()> {
        let lib = self.device.make_current()?;
        let start = Instant::now();
        let mut pause = Duration::from_micros(20);
        loop {
            let mut running = Vec::new();
            for (lane, &event) in self.events.iter().enumerate() {
                // SAFETY: a live, recorded event.
                match unsafe { (lib.fns.hipEventQuery)(event) } {
                    HIP_ERROR_NOT_READY => running.push(lane),
                    status => lib
                        .check("hipEventQuery", status)
                        .map_err(|e| Error::Hip(e).context(format!("lane {lane}")))?,
                }
            }
            if running.is_empty() {
                return Ok(());
            }
            if start.elapsed() >= timeout {
                return Err(Error::Hip(HipError::Timeout {
                    waited_ms: start.elapsed().as_millis(),
                    lanes: running,
                }));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(2));
        }
    }
}

impl Drop for HipLanes {
    fn drop(&mut self) {
        if let Some(modules) = self.unfinished.take() {
            tracing::error!(
                "a HIP stream replay never finished: its streams and modules are left alive"
            );
            std::mem::forget(modules);
            return;
        }
        let Ok(lib) = self.device.make_current() else {
            return;
        };
        for (&stream, &event) in self.streams.iter().zip(&self.events) {
            // SAFETY: live handles, destroyed once; every replay was waited for.
            let statuses = unsafe {
                [
                    (lib.fns.hipEventDestroy)(event),
                    (lib.fns.hipStreamDestroy)(stream),
                ]
            };
            for (what, status) in ["hipEventDestroy", "hipStreamDestroy"]
                .into_iter()
                .zip(statuses)
            {
                if let Err(e) = lib.check(what, status) {
                    tracing::warn!("{e}");
                }
            }
        }
    }
}

/// One kernel node: its grid in workgroups (HIP counts blocks) and its
/// whole kernarg block, which HIP copies before returning.
fn launch(
    lib: &HipLibrary,
    function: Handle,
    node: &PlannedNode<'_>,
    stream: Handle,
) -> Result<()> {
    let blocks = blocks(node.grid, node.block)?;
    let mut size = node.kernarg.len();
    let mut extra: [*mut c_void; 5] = [
        LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
        node.kernarg.as_ptr() as *mut c_void,
        LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
        (&mut size as *mut usize).cast(),
        LAUNCH_PARAM_END as *mut c_void,
    ];
    let [bx, by, bz] = node.block;
    // SAFETY: a live function of this device; `extra` follows HIP's
    // buffer-pointer protocol and points at the node's kernarg bytes and
    // size, alive for the call (HIP copies them before returning).
    let status = unsafe {
        (lib.fns.hipModuleLaunchKernel)(
            function,
            blocks[0],
            blocks[1],
            blocks[2],
            bx,
            by,
            bz,
            node.dynamic_group_bytes,
            stream,
            std::ptr::null_mut(),
            extra.as_mut_ptr(),
        )
    };
    lib.check("hipModuleLaunchKernel", status)
        .map_err(Error::Hip)
}

/// A transfer node's ops as HIP copies and fills on the lane's stream.
fn transfer(lib: &HipLibrary, ops: &[DmaOp], stream: Handle) -> Result<()> {
    for op in ops {
        // SAFETY: addresses the graph's author declared as device memory
        // HIP can reach (as the DMA path requires); the stream is live.
        let status = match *op {
            DmaOp::Copy { dst, src, bytes } => unsafe {
                (lib.fns.hipMemcpyAsync)(
                    dst as *mut c_void,
                    src as *const c_void,
                    bytes as usize,
                    HIP_MEMCPY_DEFAULT,
                    stream,
                )
            },
            DmaOp::Fill {
                dst,
                pattern,
                bytes,
            } => unsafe {
                (lib.fns.hipMemsetD32Async)(
                    dst as *mut c_void,
                    pattern as i32,
                    (bytes / 4) as usize,
                    stream,
                )
            },
        };
        let what = match op {
            DmaOp::Copy { .. } => "hipMemcpyAsync",
            DmaOp::Fill { .. } => "hipMemsetD32Async",
        };
        lib.check(what, status).map_err(Error::Hip)?;
    }
    Ok(())
}

/// The grid in workgroups; HIP cannot launch a partial last workgroup.
pub(crate) fn blocks(grid: [u32; 3], block: [u32; 3]) -> Result<[u32; 3]> {
    let mut out = [0; 3];
    for d in 0..3 {
        if block[d] == 0 || grid[d] % block[d] != 0 {
            return Err(Refusal::PartialWorkgroups { grid, block }.into());
        }
        out[d] = grid[d] / block[d];
    }
    Ok(out)
}

impl GraphExec {
    /// Replays the graph on HIP streams and waits (up to
    /// [`crate::REPLAY_TIMEOUT`]). Only for a graph whose lanes are
    /// [`LaneKind::Hip`] (its modules loaded through
    /// [`HipDevice::load_module`]); the streams are created at the first
    /// launch and stay bound to that device.
    pub fn launch_hip(&self, device: &HipDevice) -> Result<()> {
        crate::pm4::refuse_inside_twin("graph launch_hip")?;
        if let Some((lane, l)) = self
            .lanes
            .iter()
            .enumerate()
            .find(|(_, l)| l.kind != LaneKind::Hip)
        {
            return Err(Refusal::NotHipLane { lane, kind: l.kind }.into());
        }
        let mut hip = self.hip.lock();
        if hip.is_none() {
            for module in self.modules.values() {
                let on = module.hip_device().is_some_and(|d| d.same_as(device));
                if !on {
                    return Err(Refusal::ModuleNotOnHipDevice {
                        device: device.describe(),
                    }
                    .into());
                }
            }
            *hip = Some(HipLanes::create(device, self.lanes.len())?);
        }
        let lanes = hip.as_mut().expect("created above");
        if !lanes.device.same_as(device) {
            return Err(Refusal::StreamsElsewhere {
                device: lanes.device.describe(),
            }
            .into());
        }
        {
            let plan = self.plan.lock();
            lanes.submit(&plan, &|kernel| self.hip_function(kernel))?;
        }
        let waited = lanes.wait(crate::REPLAY_TIMEOUT);
        if waited.is_err() {
            lanes.unfinished = Some(self.modules.values().cloned().collect());
        }
        waited
    }

    fn hip_function(&self, kernel: &KernelRef) -> Result<Handle> {
        match kernel {
            KernelRef::Module { module, symbol } => self
                .modules
                .get(module)
                .ok_or_else(|| Refusal::UnknownModule {
                    module: *module,
                    symbol: symbol.clone(),
                })?
                .hip_function(symbol),
            KernelRef::Named(name) => Err(Refusal::NamedOnly { name: name.clone() }.into()),
            KernelRef::Transfer(_) => Err(Refusal::TransferRunsNoKernel.into()),
        }
    }
}
