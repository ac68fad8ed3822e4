//! A simulated device driven directly, without the HSA layer: what the
//! simulator's own tests (and its fuzz target) run kernels on.
//!
//! Owns: loading a fixture onto a fresh device ([`Rig`]), kernarg segments
//! packed from the kernel's metadata and the launch geometry
//! ([`Rig::kernargs`], built on `relaunch_encoders::kernarg_pack::pack`),
//! encoding and placing IBs, running them directly ([`Rig::run`]) or
//! through an AQL queue ([`Lane`]), and the two workloads most tests use
//! (counter, produce/consume). Refuses nothing quietly: every helper panics
//! with what went wrong, since its callers are tests. Must not import
//! lanes, sched or any front end.

mod lane;

use std::sync::{Arc, OnceLock};

use relaunch_device::codeobj::{CodeObject, KernelInfo};
use relaunch_encoders::kernarg_pack::{pack, Geometry};
use relaunch_encoders::{BoundaryKind, EncodeOptions, EncodedIb, IbBuilder, KernelCode, Launch};
use relaunch_hsa_sys::{
    packet_header, KernelDispatchPacket, Signal, HSA_FENCE_SCOPE_SYSTEM,
    HSA_PACKET_TYPE_KERNEL_DISPATCH,
};

pub use lane::Lane;

use relaunch_sim::device::{LoadedImage, SimConfig, SimDevice};
use relaunch_sim::memory::MemKind;
use relaunch_sim::ordering::{IbLocation, Violation};
use relaunch_sim::pm4::{execute_ib, Pm4Error};
use relaunch_sim::trace::RangeSet;

/// Every target the fixtures are built for.
pub const TARGETS: [&str; 5] = ["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"];

/// An AQL dispatch of one 32-lane workgroup of the kernel at `kd` (barrier
/// bit, system-scope fences, no private or group segment), for tests that
/// write packets to a queue themselves: vary fields with `..` and take its
/// bytes with [`packet_bytes`].
pub fn one_group_dispatch(kd: u64, kernarg: u64, signal: u64) -> KernelDispatchPacket {
    let fences = HSA_FENCE_SCOPE_SYSTEM;
    KernelDispatchPacket {
        header: packet_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, true, fences, fences),
        setup: 1,
        workgroup_size_x: 32,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        reserved0: 0,
        grid_size_x: 32,
        grid_size_y: 1,
        grid_size_z: 1,
        private_segment_size: 0,
        group_segment_size: 0,
        kernel_object: kd,
        kernarg_address: kernarg,
        reserved2: 0,
        completion_signal: Signal { handle: signal },
    }
}

/// The 64 bytes of a dispatch packet as a queue's ring holds them.
pub fn packet_bytes(p: KernelDispatchPacket) -> [u8; 64] {
    // SAFETY: KernelDispatchPacket is a 64-byte repr(C) struct of integers.
    unsafe { std::mem::transmute::<KernelDispatchPacket, [u8; 64]>(p) }
}

/// The bytes of [`one_group_dispatch`].
pub fn one_group_packet(kd: u64, kernarg: u64, signal: u64) -> [u8; 64] {
    packet_bytes(one_group_dispatch(kd, kernarg, signal))
}

/// A one-dimensional launch without dynamic LDS.
pub fn linear(grid: u32, block: u32) -> Launch {
    Launch {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_group_bytes: 0,
    }
}

/// One device with one fixture loaded; an AQL queue only when asked for.
pub struct Rig {
    pub dev: Arc<SimDevice>,
    pub image: LoadedImage,
    /// The fixture's parsed code object: kernel metadata for kernargs.
    pub object: CodeObject,
    /// Created on first use, so direct-execution tests start no thread.
    lane: OnceLock<Lane>,
}

/// An IB placed in device memory with its kernarg block.
pub struct PlacedIb {
    pub ib: u64,
    pub dwords: Vec<u32>,
    pub kernargs: u64,
}

impl Rig {
    /// `object` built for `target` on a device seeded with `seed`.
    pub fn new(target: &str, object: &str, seed: u64) -> Rig {
        let mut cfg = SimConfig::new(target);
        cfg.seed = seed;
        Rig::with_config(cfg, object)
    }

    pub fn with_config(cfg: SimConfig, object: &str) -> Rig {
        let bytes = crate::fixture(&cfg.target, object);
        Rig::from_bytes(cfg, &bytes)
    }

    /// A code object given as bytes (one a test assembled) on a device
    /// configured by `cfg`.
    pub fn from_bytes(cfg: SimConfig, bytes: &[u8]) -> Rig {
        let bytes = bytes.to_vec();
        let dev = SimDevice::new(cfg).unwrap();
        // The rig stands for a process that handles VM faults (as relaunch
        // does): the fault is kept in the queue's errors, the process lives.
        dev.add_fault_handler(std::sync::Arc::new(|_| true));
        let image = dev.load_code_object(&bytes).unwrap();
        let object = CodeObject::parse(&bytes).unwrap();
        Rig {
            dev,
            image,
            object,
            lane: OnceLock::new(),
        }
    }

    /// Kernel `symbol` of `bytes` (a code object a test assembled for
    /// `cpu`) on the interpreter, dispatched once as one 32-lane workgroup
    /// whose one argument points at `out_bytes` of fresh device memory:
    /// the rig, the output's address and the IB's result.
    pub fn run_isa_once(
        cpu: &str,
        bytes: &[u8],
        symbol: &str,
        out_bytes: usize,
    ) -> (Rig, u64, Result<Vec<Violation>, Pm4Error>) {
        Rig::run_isa(
            SimConfig::new(cpu),
            bytes,
            symbol,
            out_bytes,
            &linear(32, 32),
        )
    }

    /// [`Rig::run_isa_once`] on a device configured by `cfg` (its kernel
    /// mode set to the interpreter), dispatched as `launch`.
    pub fn run_isa(
        mut cfg: SimConfig,
        bytes: &[u8],
        symbol: &str,
        out_bytes: usize,
        launch: &Launch,
    ) -> (Rig, u64, Result<Vec<Violation>, Pm4Error>) {
        cfg.kernels = relaunch_sim::isa::KernelMode::Isa;
        let rig = Rig::from_bytes(cfg, bytes);
        let out = rig.alloc(out_bytes);
        let mut b = rig.builder();
        rig.dispatch(&mut b, symbol, launch, &out.to_le_bytes());
        let (ib, _) = rig.finish(b);
        let result = rig.run(&ib.segments[0].dwords);
        (rig, out, result)
    }

    /// The rig's own queue and completion signal (created on first use).
    pub fn lane(&self) -> &Lane {
        self.lane.get_or_init(|| Lane::new(&self.dev))
    }

    /// Another queue with its own completion signal on the same device.
    pub fn new_lane(&self) -> Lane {
        Lane::new(&self.dev)
    }

    /// The encoder's view of loaded kernel `symbol`.
    pub fn code(&self, symbol: &str) -> KernelCode<'_> {
        let k = self
            .image
            .kernels
            .iter()
            .find(|k| k.symbol == symbol)
            .unwrap_or_else(|| panic!("no kernel {symbol}"));
        KernelCode {
            symbol: &k.symbol,
            family: k.family,
            descriptor: k.descriptor,
            kd_address: k.kd_addr,
            unread: Default::default(),
        }
    }

    /// The metadata of kernel `symbol`.
    pub fn kernel(&self, symbol: &str) -> &KernelInfo {
        self.object
            .kernel(symbol)
            .unwrap_or_else(|| panic!("no kernel {symbol} in the fixture's metadata"))
    }

    /// The full kernarg segment of `symbol`: `explicit` at the front, every
    /// hidden argument filled from `launch` as the metadata places it.
    pub fn kernargs(&self, symbol: &str, explicit: &[u8], launch: &Launch) -> Vec<u8> {
        let geometry = Geometry {
            grid: launch.grid,
            block: launch.block,
            dynamic_group_bytes: launch.dynamic_group_bytes,
        };
        pack(self.kernel(symbol), explicit, &geometry).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Record one dispatch of `symbol` with its packed kernarg segment.
    pub fn dispatch(&self, b: &mut IbBuilder, symbol: &str, launch: &Launch, explicit: &[u8]) {
        let kernargs = self.kernargs(symbol, explicit, launch);
        let align = self.kernel(symbol).kernarg_align;
        b.dispatch(&self.code(symbol), launch, &kernargs, align)
            .unwrap_or_else(|e| panic!("{symbol}: {e}"));
    }

    /// An IB builder with the default options (TRAP_PRESENT as for a
    /// runtime with a trap handler, whatever the device says: tests of the
    /// check rely on that).
    pub fn builder(&self) -> IbBuilder {
        IbBuilder::for_target(self.dev.facts(), EncodeOptions::default())
    }

    /// An IB builder that sets TRAP_PRESENT as relaunch would on this
    /// device: by whether its runtime has a trap handler
    /// (`SimConfig::trap_handler`).
    pub fn runtime_builder(&self) -> IbBuilder {
        let opts = EncodeOptions {
            trap_handler: self.dev.config().trap_handler,
            ..EncodeOptions::default()
        };
        IbBuilder::for_target(self.dev.facts(), opts)
    }

    /// A scratch backing in device memory for `need`, planned as relaunch's
    /// installer plans it for a GPU of the device's compute units and the
    /// simulator's one shader engine.
    pub fn scratch_ring(
        &self,
        need: relaunch_encoders::ScratchNeed,
    ) -> relaunch_encoders::ScratchRing {
        let plan = relaunch_encoders::ScratchPlan::new(
            self.dev.family(),
            need,
            self.dev.config().compute_units,
            1,
        )
        .unwrap();
        let mem = self.alloc(plan.bytes as usize + 256);
        plan.at(mem.next_multiple_of(256)).unwrap()
    }

    /// Device memory for kernel data.
    pub fn alloc(&self, bytes: usize) -> u64 {
        self.dev.memory.allocate(bytes, MemKind::Device).unwrap()
    }

    /// Finish into a fresh kernarg block holding the image; returns (ib, base).
    /// An IB with scratch kernels gets a fresh backing ([`Rig::scratch_ring`]).
    pub fn finish(&self, b: IbBuilder) -> (EncodedIb, u64) {
        let layout = b.kernarg_layout();
        let base = self
            .dev
            .memory
            .allocate(layout.bytes.max(1) as usize, MemKind::HostFineGrained)
            .unwrap();
        let ring = b.scratch_need().map(|need| self.scratch_ring(need));
        let ib = b.finish_with_scratch(base, ring.as_ref()).unwrap();
        self.dev.memory.write(base, &ib.kernarg_image).unwrap();
        (ib, base)
    }

    /// Finish and return the dwords of the one segment (kernargs placed).
    pub fn dwords(&self, b: IbBuilder) -> Vec<u32> {
        let (ib, _) = self.finish(b);
        assert_eq!(ib.segments.len(), 1);
        ib.segments[0].dwords.clone()
    }

    /// Finish and place every segment in memory, in submission order.
    pub fn place_all(&self, b: IbBuilder) -> Vec<PlacedIb> {
        let (ib, kernargs) = self.finish(b);
        ib.segments
            .iter()
            .map(|s| self.place_dwords(s.dwords.clone(), kernargs))
            .collect()
    }

    /// Finish and place the (single) segment in memory.
    pub fn place(&self, b: IbBuilder) -> PlacedIb {
        let mut placed = self.place_all(b);
        assert_eq!(placed.len(), 1);
        placed.remove(0)
    }

    /// Copy `dwords` into fresh host memory the CP may fetch.
    pub fn place_dwords(&self, dwords: Vec<u32>, kernargs: u64) -> PlacedIb {
        let bytes: Vec<u8> = dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
        let ib = self
            .dev
            .memory
            .allocate(bytes.len(), MemKind::HostFineGrained)
            .unwrap();
        self.dev.memory.write(ib, &bytes).unwrap();
        PlacedIb {
            ib,
            dwords,
            kernargs,
        }
    }

    pub fn free(&self, ib: PlacedIb) {
        self.dev.memory.free(ib.ib).unwrap();
        self.dev.memory.free(ib.kernargs).unwrap();
    }

    /// Execute `dwords` as one IB without a queue; the violations found.
    pub fn run(&self, dwords: &[u32]) -> Result<Vec<Violation>, Pm4Error> {
        let at = IbLocation {
            queue: 0,
            aql_packet: 5,
        };
        execute_ib(&self.dev, at, dwords, &RangeSet::new(), true).map(|end| end.violations)
    }

    /// `n` dispatches of `counter` (one atomic add per work-item at
    /// `counter`), each followed by `boundary`.
    pub fn counter(
        &self,
        counter: u64,
        n: usize,
        boundary: Option<BoundaryKind>,
        launch: &Launch,
    ) -> IbBuilder {
        let mut b = self.builder();
        for _ in 0..n {
            self.dispatch(&mut b, "counter", launch, &counter.to_le_bytes());
            if let Some(k) = boundary {
                b.boundary(k);
            }
        }
        b
    }

    /// produce(buf, 3) then consume(out, buf) over 64 items in groups of
    /// 32, `boundary` between; returns the builder, `buf` and `out`.
    pub fn producer_consumer(&self, boundary: Option<BoundaryKind>) -> (IbBuilder, u64, u64) {
        let buf = self.alloc(256);
        let out = self.alloc(256);
        let launch = linear(64, 32);
        let mut b = self.builder();
        let mut produce = buf.to_le_bytes().to_vec();
        produce.extend(3u32.to_le_bytes());
        self.dispatch(&mut b, "produce", &launch, &produce);
        if let Some(k) = boundary {
            b.boundary(k);
        }
        let mut consume = out.to_le_bytes().to_vec();
        consume.extend(buf.to_le_bytes());
        self.dispatch(&mut b, "consume", &launch, &consume);
        (b, buf, out)
    }

    /// axpy(y, x, 2.0, w) over a `w` x `h` grid in 8x2 groups, x[i] = i and
    /// y[i] = 1.0 written first; returns the builder and `y` (afterwards
    /// y[i] = 1 + 2i).
    pub fn axpy(&self, w: u32, h: u32) -> (IbBuilder, u64) {
        let n = (w * h) as u64;
        let (y, x) = (self.alloc(4 * n as usize), self.alloc(4 * n as usize));
        for i in 0..n {
            let mem = &self.dev.memory;
            mem.write(x + 4 * i, &(i as f32).to_le_bytes()).unwrap();
            mem.write(y + 4 * i, &1.0f32.to_le_bytes()).unwrap();
        }
        let mut explicit = y.to_le_bytes().to_vec();
        explicit.extend(x.to_le_bytes());
        explicit.extend(2.0f32.to_le_bytes());
        explicit.extend(w.to_le_bytes());
        let launch = Launch {
            grid: [w, h, 1],
            block: [8, 2, 1],
            dynamic_group_bytes: 0,
        };
        let mut b = self.builder();
        self.dispatch(&mut b, "axpy", &launch, &explicit);
        (b, y)
    }

    /// lds_reverse(data) over 128 items in groups of 64 with 256 bytes of
    /// dynamic LDS, data[i] = i written first; returns the builder and
    /// `data` (afterwards each group of 64 is reversed).
    pub fn lds_reverse(&self) -> (IbBuilder, u64) {
        let data = self.alloc(4 * 128);
        for i in 0..128u64 {
            self.dev.memory.write_u32(data + 4 * i, i as u32).unwrap();
        }
        let launch = Launch {
            grid: [128, 1, 1],
            block: [64, 1, 1],
            dynamic_group_bytes: 64 * 4,
        };
        let mut b = self.builder();
        self.dispatch(&mut b, "lds_reverse", &launch, &data.to_le_bytes());
        (b, data)
    }

    /// Finish `b` and run its first segment; panics naming the target on
    /// an error or any violation.
    pub fn run_clean(&self, b: IbBuilder) {
        let (ib, _) = self.finish(b);
        let target = &self.dev.config().target;
        let v = self
            .run(&ib.segments[0].dwords)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(v, vec![], "{target}");
    }
}
