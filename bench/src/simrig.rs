//! The simulated gfx1201 as the submission and memory benchmarks see it:
//! the test-support rig (`relaunch_testsupport::rig::HsaRig`: its HSA table opened
//! through relaunch-device's `Runtime`, the real `counter` code object
//! loaded, counter IBs built with the encoders' `IbBuilder`), with errors
//! as the benchmarks' strings.

use std::ops::Deref;

use relaunch_device::hsa::Allocation;
use relaunch_encoders::IbBuilder;
use relaunch_sched::hsa::{HsaBackend, HsaQueueOptions};
use relaunch_sched::scheduler::Scheduler;
use relaunch_sched::ActorOptions;
use relaunch_testsupport::rig::{self, HsaRig, PlacedIb};

/// The target every submission benchmark runs on.
pub const TARGET: &str = "gfx1201";

/// One simulated GPU with the counter kernel loaded.
pub struct SimRig(HsaRig);

impl Deref for SimRig {
    type Target = HsaRig;
    fn deref(&self) -> &HsaRig {
        &self.0
    }
}

impl SimRig {
    /// Adds (or reuses) the simulated `sim:gfx1201` and loads `counter`.
    pub fn open() -> Result<SimRig, String> {
        HsaRig::counter(TARGET)
            .map(SimRig)
            .map_err(|e| e.to_string())
    }

    /// Device memory of `bytes` (zeroed by the simulator).
    pub fn device_memory(&self, bytes: usize) -> Result<Allocation, String> {
        self.0.device_memory(bytes).map_err(|e| e.to_string())
    }

    /// An IB of `n` counter dispatches adding 1 at `target` (8-byte
    /// kernarg), each followed by an RMW boundary (they all write it).
    pub fn counter_ib(&self, target: u64, n: usize) -> Result<IbBuilder, String> {
        self.0.counter_ib(target, n).map_err(|e| e.to_string())
    }

    /// A scheduler of `queues` HSA queues on the rig's GPU, default options.
    pub fn scheduler(&self, queues: usize) -> Result<Scheduler<HsaBackend>, String> {
        Scheduler::open_hsa(
            &self.rt,
            &self.gpu,
            queues,
            HsaQueueOptions::default(),
            ActorOptions::default(),
        )
        .map_err(|e| format!("opening a scheduler: {e}"))
    }

    /// `b` in executable memory, kernargs written, the GPU given access.
    pub fn place(&self, b: IbBuilder) -> Result<PlacedIb, String> {
        self.0.place(b).map_err(|e| e.to_string())
    }
}

/// The value of the 32-bit counter at `addr`.
pub fn read_u32(addr: u64) -> Result<u32, String> {
    rig::read_u32(addr).map_err(|e| format!("the counter: {e}"))
}

/// The median of `samples` (sorted in place); 0 for none.
pub fn median(samples: &mut [u64]) -> u64 {
    if samples.is_empty() {
        return 0;
    }
    samples.sort_unstable();
    samples[samples.len() / 2]
}
