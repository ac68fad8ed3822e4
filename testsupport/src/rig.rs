//! The simulated GPU as code above the simulator sees it: a target opened
//! through relaunch-device's `hsa::Runtime` over the simulator's HSA table
//! (the code that runs on hardware), a fixture loaded, counter IBs built
//! with the encoders' `IbBuilder` and placed in executable memory behind a
//! vendor PM4-IB packet.
//!
//! Owns: [`HsaRig`] (one agent, one loaded kernel, memory of each kind) and
//! [`PlacedIb`] (segments in executable memory, the kernarg image written).
//! Used by the sched tests, the sim's HSA tests and the benchmarks; nothing
//! here panics, every step's failure is a [`RigError`] naming the step (the
//! benchmarks report them). Must not import lanes, sched or any front end.

use std::path::PathBuf;
use std::sync::Arc;

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::hsa::{
    pm4_ib_packet, AgentInfo, AllocFlags, Allocation, AqlPacket, Executable, HsaError,
    KernelSymbol, Runtime,
};
use relaunch_encoders::{
    AqlBuilder, BoundaryKind, EncodeError, EncodeOptions, IbBuilder, KernelCode, Launch,
};
use relaunch_hsa_sys as sys;

use relaunch_sim::device::{SimConfig, SimDevice, SimError};
use relaunch_sim::hsa;
use relaunch_sim::memory::VmFault;

/// Why a rig step failed; each message names the step.
#[derive(Debug, thiserror::Error)]
pub enum RigError {
    #[error("cannot read the fixture {path}: {source} (the committed fixtures are rebuilt by tests/kernels/build.sh)")]
    Fixture {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("sim:{target}: {source}")]
    Sim { target: String, source: SimError },
    #[error("{what}: {source}")]
    Hsa { what: String, source: HsaError },
    #[error("the simulated runtime lists no {0} agent")]
    NoAgent(String),
    #[error("no simulated device behind the {0} agent")]
    NoDevice(String),
    #[error("{what}: {source}")]
    Memory { what: String, source: VmFault },
    #[error("the {symbol} kernel descriptor: {reason}")]
    Descriptor { symbol: String, reason: String },
    #[error("{what}: {source}")]
    Encode { what: String, source: EncodeError },
    #[error(
        "the IB has {0} segments; one PM4-IB packet runs one, take them from PlacedIb::segments"
    )]
    Segments(usize),
}

fn hsa_err(what: impl Into<String>) -> impl FnOnce(HsaError) -> RigError {
    let what = what.into();
    move |source| RigError::Hsa { what, source }
}

/// The bytes of fixture `name` built for `target`, or an error naming the
/// file (see [`crate::fixture_path`]).
pub fn fixture(target: &str, name: &str) -> Result<Vec<u8>, RigError> {
    let path = crate::fixture_path(target, name);
    std::fs::read(&path).map_err(|source| RigError::Fixture { path, source })
}

/// One work-item: what every counter dispatch here launches.
pub const ONE_ITEM: Launch = Launch {
    grid: [1, 1, 1],
    block: [1, 1, 1],
    dynamic_group_bytes: 0,
};

/// An IB of `n` dispatches of `code` (the `counter` kernel: one atomic add
/// per work-item at its 8-byte kernarg `target`), each followed by an RMW
/// boundary, since they all write the same word.
pub fn counter_ib(
    code: &KernelCode<'_>,
    launch: &Launch,
    target: u64,
    n: usize,
    opts: EncodeOptions,
) -> Result<IbBuilder, RigError> {
    let mut b = IbBuilder::new(code.family, opts);
    b.reserve(n);
    let kernarg = target.to_le_bytes();
    for i in 0..n {
        b.dispatch(code, launch, &kernarg, 8)
            .map_err(|source| RigError::Encode {
                what: format!("recording counter dispatch {i}"),
                source,
            })?;
        b.boundary(BoundaryKind::Rmw);
    }
    Ok(b)
}

/// One placed segment: its executable memory and length.
#[derive(Debug)]
pub struct PlacedSegment {
    pub mem: Allocation,
    pub dwords: u32,
}

/// An encoded IB in memory the CP may fetch: every segment in executable
/// kernarg-pool memory and the kernarg image in a kernarg-pool block.
#[derive(Debug)]
pub struct PlacedIb {
    pub segments: Vec<PlacedSegment>,
    pub kernargs: Allocation,
}

impl PlacedIb {
    /// Finish `b` against a fresh kernarg block and copy everything in. No
    /// agent is given access yet (see [`PlacedIb::allow_access`]): host
    /// memory a GPU was not granted faults, which tests check.
    pub fn place(rt: &Runtime, b: IbBuilder) -> Result<PlacedIb, RigError> {
        let pool = rt.kernarg_pool().map_err(hsa_err("the kernarg pool"))?;
        let bytes = b.kernarg_layout().bytes.max(1) as usize;
        let mut kernargs = rt
            .allocate(&pool, bytes, AllocFlags::default())
            .map_err(hsa_err(format!("allocating a {bytes}-byte kernarg block")))?;
        let ib = b
            .finish(kernargs.addr())
            .map_err(|source| RigError::Encode {
                what: "finishing the IB".to_string(),
                source,
            })?;
        kernargs
            .write(0, &ib.kernarg_image)
            .map_err(hsa_err("writing the kernarg image"))?;
        let segments = ib
            .segments
            .iter()
            .map(|s| {
                let bytes: Vec<u8> = s.dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
                let mut mem = rt
                    .allocate(&pool, bytes.len(), AllocFlags { executable: true })
                    .map_err(hsa_err(format!("allocating {} bytes of IB", bytes.len())))?;
                mem.write(0, &bytes).map_err(hsa_err("writing the IB"))?;
                Ok(PlacedSegment {
                    mem,
                    dwords: s.dwords.len() as u32,
                })
            })
            .collect::<Result<_, RigError>>()?;
        Ok(PlacedIb { segments, kernargs })
    }

    /// Let `agents` read the kernarg block and every segment.
    pub fn allow_access(&self, agents: &[&AgentInfo]) -> Result<(), RigError> {
        self.kernargs
            .allow_access(agents)
            .map_err(hsa_err("allow_access on the kernarg block"))?;
        for s in &self.segments {
            s.mem
                .allow_access(agents)
                .map_err(hsa_err("allow_access on the IB"))?;
        }
        Ok(())
    }

    /// The one segment's address and dwords; an error for several.
    pub fn single(&self) -> Result<(u64, u32), RigError> {
        match self.segments.as_slice() {
            [s] => Ok((s.mem.addr(), s.dwords)),
            more => Err(RigError::Segments(more.len())),
        }
    }

    /// The vendor PM4-IB packet running the one segment, completing
    /// `completion` (a zero handle for none).
    pub fn packet(&self, completion: sys::Signal) -> Result<AqlPacket, RigError> {
        let (addr, dwords) = self.single()?;
        pm4_ib_packet(addr, dwords, completion)
            .map(AqlPacket::Pm4Ib)
            .map_err(hsa_err("the PM4-IB packet"))
    }
}

/// One simulated GPU opened through relaunch-device's runtime with one
/// kernel of one fixture loaded.
pub struct HsaRig {
    pub rt: Runtime,
    pub gpu: AgentInfo,
    pub device: Arc<SimDevice>,
    /// Kept loaded for as long as IBs may dispatch the kernel.
    pub exe: Executable,
    pub sym: KernelSymbol,
    /// Read back from device memory at `sym.kernel_object`.
    pub descriptor: KernelDescriptor,
    symbol: String,
}

impl HsaRig {
    /// Adds (or reuses) `sim:<target>`, opens the runtime over the table,
    /// picks the agent by name (other tests may have added other targets)
    /// and loads kernel `symbol` of fixture `object`.
    pub fn open(target: &str, object: &str, symbol: &str) -> Result<HsaRig, RigError> {
        HsaRig::open_board(SimConfig::new(target), object, symbol)
    }

    /// [`HsaRig::open`] on the board `config` describes (a second board of
    /// the same target needs its own `uuid`/`pci`): the agent is the one
    /// whose simulated device is that board.
    pub fn open_board(config: SimConfig, object: &str, symbol: &str) -> Result<HsaRig, RigError> {
        let target = config.target.clone();
        let target = target.as_str();
        let board = hsa::add_gpu(config).map_err(|source| RigError::Sim {
            target: target.to_string(),
            source,
        })?;
        let rt = Runtime::open(Arc::new(hsa::loaded()))
            .map_err(hsa_err("opening the simulated HSA runtime"))?;
        let gpu = rt
            .gpus()
            .find(|g| hsa::device_of_agent(g.handle).is_some_and(|d| Arc::ptr_eq(&d, &board)))
            .cloned()
            .ok_or_else(|| RigError::NoAgent(target.to_string()))?;
        let device = hsa::device_of_agent(gpu.handle)
            .ok_or_else(|| RigError::NoDevice(target.to_string()))?;
        let exe = rt
            .load_executable(&gpu, &fixture(target, object)?)
            .map_err(hsa_err(format!("loading {object}.co")))?;
        let sym = exe
            .kernel(symbol)
            .map_err(hsa_err(format!("{object}.co")))?;
        let bytes = hsa::memory()
            .read_vec(sym.kernel_object, 64)
            .map_err(|source| RigError::Memory {
                what: format!("reading the {symbol} kernel descriptor"),
                source,
            })?;
        let descriptor = KernelDescriptor::parse(&bytes).map_err(|e| RigError::Descriptor {
            symbol: symbol.to_string(),
            reason: e.to_string(),
        })?;
        Ok(HsaRig {
            rt,
            gpu,
            device,
            exe,
            sym,
            descriptor,
            symbol: symbol.to_string(),
        })
    }

    /// `sim:<target>` with the `counter` kernel loaded.
    pub fn counter(target: &str) -> Result<HsaRig, RigError> {
        HsaRig::open(target, "counter", "counter")
    }

    /// The loaded kernel as the encoders take it.
    pub fn code(&self) -> KernelCode<'_> {
        KernelCode {
            symbol: &self.symbol,
            family: self.device.family(),
            descriptor: self.descriptor,
            kd_address: self.sym.kernel_object,
            unread: Default::default(),
        }
    }

    /// [`counter_ib`] of one-item dispatches of the loaded kernel.
    pub fn counter_ib(&self, target: u64, n: usize) -> Result<IbBuilder, RigError> {
        self.counter_ib_with(target, n, EncodeOptions::default())
    }

    /// The same with other encoder options (e.g. small segments).
    pub fn counter_ib_with(
        &self,
        target: u64,
        n: usize,
        opts: EncodeOptions,
    ) -> Result<IbBuilder, RigError> {
        counter_ib(&self.code(), &ONE_ITEM, target, n, opts)
    }

    /// The public-AQL twin of [`HsaRig::counter_ib`]: `n` one-item counter
    /// dispatches, an RMW boundary after each, as kernel-dispatch packets.
    pub fn counter_aql(&self, target: u64, n: usize) -> Result<AqlBuilder, RigError> {
        let mut b = AqlBuilder::for_target(self.device.facts());
        let kernarg = target.to_le_bytes();
        for i in 0..n {
            b.dispatch(&self.code(), &ONE_ITEM, &kernarg, 8)
                .map_err(|source| RigError::Encode {
                    what: format!("recording counter dispatch {i}"),
                    source,
                })?;
            b.boundary(BoundaryKind::Rmw);
        }
        Ok(b)
    }

    /// Device memory of `bytes` (zeroed by the simulator).
    pub fn device_memory(&self, bytes: usize) -> Result<Allocation, RigError> {
        let pool = self
            .rt
            .device_pool(&self.gpu)
            .map_err(hsa_err("the device pool"))?;
        self.rt
            .allocate(&pool, bytes, AllocFlags::default())
            .map_err(hsa_err(format!(
                "allocating {bytes} bytes of device memory"
            )))
    }

    /// `b` placed ([`PlacedIb::place`]) with this GPU given access.
    pub fn place(&self, b: IbBuilder) -> Result<PlacedIb, RigError> {
        let placed = PlacedIb::place(&self.rt, b)?;
        placed.allow_access(&[&self.gpu])?;
        Ok(placed)
    }
}

/// The 32-bit word at `addr` in the simulated system's memory.
pub fn read_u32(addr: u64) -> Result<u32, RigError> {
    hsa::memory()
        .read_u32(addr)
        .map_err(|source| RigError::Memory {
            what: format!("reading the word at {addr:#x}"),
            source,
        })
}
