//! The simulated gfx1201 as the submission and memory benchmarks see it:
//! the simulator's HSA table opened through relaunch-device's `Runtime`
//! (the code that runs on hardware), the real `counter` code object
//! loaded, and counter IBs built with the encoders' `IbBuilder`.

use std::sync::Arc;

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::hsa::{AgentInfo, AllocFlags, Allocation, Executable, Runtime};
use relaunch_encoders::{BoundaryKind, EncodeOptions, IbBuilder, KernelCode, Launch};
use relaunch_sim::{hsa, SimConfig, SimDevice};

/// The target every submission benchmark runs on.
pub const TARGET: &str = "gfx1201";

/// One simulated GPU with the counter kernel loaded.
pub struct SimRig {
    pub rt: Runtime,
    pub gpu: AgentInfo,
    pub device: Arc<SimDevice>,
    // Kept loaded for as long as IBs may dispatch the kernel.
    _exe: Executable,
    kd_address: u64,
    descriptor: KernelDescriptor,
}

/// The counter fixture built for `target`.
pub fn counter_code_object(target: &str) -> Result<Vec<u8>, String> {
    let path = format!(
        "{}/../tests/kernels/build/{target}/counter.co",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).map_err(|e| format!("cannot read the counter fixture {path}: {e}"))
}

impl SimRig {
    /// Adds (or reuses) the simulated `sim:gfx1201` and loads `counter`.
    pub fn open() -> Result<SimRig, String> {
        hsa::add_gpu(SimConfig::new(TARGET)).map_err(|e| format!("sim:{TARGET}: {e}"))?;
        let rt = Runtime::open(Arc::new(hsa::loaded()))
            .map_err(|e| format!("opening the simulated HSA runtime: {e}"))?;
        let gpu = rt
            .gpus()
            .find(|g| g.name == TARGET)
            .cloned()
            .ok_or_else(|| format!("the simulated runtime lists no {TARGET} agent"))?;
        let device = hsa::device_of_agent(gpu.handle)
            .ok_or_else(|| format!("no simulated device behind the {TARGET} agent"))?;
        let exe = rt
            .load_executable(&gpu, &counter_code_object(TARGET)?)
            .map_err(|e| format!("loading counter.co: {e}"))?;
        let sym = exe
            .kernel("counter")
            .map_err(|e| format!("counter.co: {e}"))?;
        let bytes = hsa::memory()
            .read_vec(sym.kernel_object, 64)
            .map_err(|e| format!("reading the counter kernel descriptor: {e}"))?;
        let descriptor = KernelDescriptor::parse(&bytes)
            .map_err(|e| format!("the counter kernel descriptor: {e}"))?;
        Ok(SimRig {
            rt,
            gpu,
            device,
            _exe: exe,
            kd_address: sym.kernel_object,
            descriptor,
        })
    }

    /// Device memory of `bytes` (zeroed by the simulator).
    pub fn device_memory(&self, bytes: usize) -> Result<Allocation, String> {
        let pool = self
            .rt
            .device_pool(&self.gpu)
            .map_err(|e| format!("device pool: {e}"))?;
        self.rt
            .allocate(&pool, bytes, AllocFlags::default())
            .map_err(|e| format!("allocating {bytes} bytes: {e}"))
    }

    /// The counter kernel as the encoders take it.
    pub fn counter_code(&self) -> KernelCode<'static> {
        KernelCode {
            symbol: "counter",
            family: self.device.family(),
            descriptor: self.descriptor,
            kd_address: self.kd_address,
        }
    }

    /// An IB of `n` counter dispatches adding 1 at `target` (8-byte
    /// kernarg), each followed by an RMW boundary (they all write it).
    pub fn counter_ib(&self, target: u64, n: usize) -> Result<IbBuilder, String> {
        let code = self.counter_code();
        let launch = Launch {
            grid: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_group_bytes: 0,
        };
        let mut b = IbBuilder::new(self.device.family(), EncodeOptions::default());
        b.reserve(n);
        let kernarg = target.to_le_bytes();
        for i in 0..n {
            b.dispatch(&code, &launch, &kernarg, 8)
                .map_err(|e| format!("recording counter dispatch {i}: {e}"))?;
            b.boundary(BoundaryKind::Rmw);
        }
        Ok(b)
    }
}

/// The value of the 32-bit counter at `addr`.
pub fn read_u32(addr: u64) -> Result<u32, String> {
    hsa::memory()
        .read_u32(addr)
        .map_err(|e| format!("reading the counter at {addr:#x}: {e}"))
}

/// The median of `samples` (sorted in place); 0 for none.
pub fn median(samples: &mut [u64]) -> u64 {
    if samples.is_empty() {
        return 0;
    }
    samples.sort_unstable();
    samples[samples.len() / 2]
}
