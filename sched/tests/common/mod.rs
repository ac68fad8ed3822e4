//! Shared setup of the simulated-device tests: a gfx1100 agent through
//! relaunch-device's HSA runtime, the `counter` fixture loaded, and IBs of
//! counter dispatches built with the encoders' `IbBuilder`.

#![allow(dead_code)]

use std::sync::Arc;

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::hsa::{AgentInfo, Executable, KernelSymbol, Runtime};
use relaunch_encoders::{BoundaryKind, EncodeError, EncodeOptions, IbBuilder, KernelCode, Launch};
use relaunch_sim::{hsa, SimConfig, SimDevice};

pub fn fixture(target: &str, name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../tests/kernels/build/{target}/{name}.co",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub struct SimGpu {
    pub rt: Runtime,
    pub gpu: AgentInfo,
    pub device: Arc<SimDevice>,
    pub exe: Executable,
    pub sym: KernelSymbol,
    pub descriptor: KernelDescriptor,
}

impl SimGpu {
    pub fn gfx1100() -> SimGpu {
        hsa::add_gpu(SimConfig::new("gfx1100")).unwrap();
        let rt = Runtime::open(Arc::new(hsa::loaded())).unwrap();
        let gpu = rt.gpus().find(|g| g.name == "gfx1100").unwrap().clone();
        let device = hsa::device_of_agent(gpu.handle).unwrap();
        let exe = rt
            .load_executable(&gpu, &fixture("gfx1100", "counter"))
            .unwrap();
        let sym = exe.kernel("counter").unwrap();
        let descriptor =
            KernelDescriptor::parse(&hsa::memory().read_vec(sym.kernel_object, 64).unwrap())
                .unwrap();
        SimGpu {
            rt,
            gpu,
            device,
            exe,
            sym,
            descriptor,
        }
    }

    /// An IB of `n` counter dispatches adding 1 at `target`, each ordered
    /// after the previous one (they read-modify-write the same word).
    pub fn counter_ib(&self, target: u64, n: usize) -> Result<IbBuilder, EncodeError> {
        let family = self.device.family();
        let code = KernelCode {
            symbol: "counter",
            family,
            descriptor: self.descriptor,
            kd_address: self.sym.kernel_object,
        };
        let launch = Launch {
            grid: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_group_bytes: 0,
        };
        let mut b = IbBuilder::new(family, EncodeOptions::default());
        for _ in 0..n {
            b.dispatch(&code, &launch, &target.to_le_bytes(), 8)?;
            b.boundary(BoundaryKind::Rmw);
        }
        Ok(b)
    }
}

pub fn read_u32(addr: u64) -> u32 {
    hsa::memory().read_u32(addr).unwrap()
}
