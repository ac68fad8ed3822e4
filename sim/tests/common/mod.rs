//! Shared helpers of the sim integration tests: load a fixture, encode an
//! IB with the encoders' `IbBuilder`, place it in device memory and submit
//! it through an AQL queue exactly as a producer on real hardware would
//! (body first, header with release ordering, then the doorbell).

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use relaunch_encoders::aql::{FenceScope, Pm4IbPacket};
use relaunch_encoders::{BoundaryKind, EncodeOptions, IbBuilder, KernelCode, Launch};
use relaunch_sim::memory::MemKind;
use relaunch_sim::signal::{Condition, SimSignal};
use relaunch_sim::{LoadedImage, QueueError, SimConfig, SimDevice, SimQueue};

pub const TARGETS: [&str; 5] = ["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"];

pub fn fixture(target: &str, name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../tests/kernels/build/{target}/{name}.co",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub struct Rig {
    pub dev: Arc<SimDevice>,
    pub image: LoadedImage,
    pub queue: Arc<SimQueue>,
    pub signal: (u64, Arc<SimSignal>),
}

/// An IB placed in device memory with its kernarg block.
pub struct PlacedIb {
    pub ib: u64,
    pub dwords: Vec<u32>,
    pub kernargs: u64,
}

impl Rig {
    pub fn new(target: &str, object: &str, seed: u64) -> Rig {
        let mut cfg = SimConfig::new(target);
        cfg.seed = seed;
        Rig::with_config(cfg, object)
    }

    pub fn with_config(cfg: SimConfig, object: &str) -> Rig {
        let target = cfg.target.clone();
        let dev = SimDevice::new(cfg).unwrap();
        let image = dev.load_code_object(&fixture(&target, object)).unwrap();
        let queue = SimQueue::create(&dev, 64, None).unwrap();
        let signal = dev.signals.create(0);
        Rig {
            dev,
            image,
            queue,
            signal,
        }
    }

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
        }
    }

    pub fn builder(&self) -> IbBuilder {
        IbBuilder::new(self.dev.family(), EncodeOptions::default())
    }

    pub fn alloc(&self, bytes: usize) -> u64 {
        self.dev.memory.allocate(bytes, MemKind::Device).unwrap()
    }

    /// Finish the builder, copy kernargs and the (single) segment to memory.
    pub fn place(&self, b: IbBuilder) -> PlacedIb {
        let layout = b.kernarg_layout();
        let kernargs = self
            .dev
            .memory
            .allocate(layout.bytes.max(1) as usize, MemKind::HostFineGrained)
            .unwrap();
        let ib = b.finish(kernargs).unwrap();
        self.dev.memory.write(kernargs, &ib.kernarg_image).unwrap();
        assert_eq!(ib.segments.len(), 1);
        let dwords = ib.segments[0].dwords.clone();
        self.place_dwords(dwords, kernargs)
    }

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

    /// Publish a PM4-IB packet (body, then header with release, then doorbell).
    pub fn publish(&self, ib: &PlacedIb) -> u64 {
        self.signal.1.store(1);
        let p = Pm4IbPacket::new(
            ib.ib,
            ib.dwords.len(),
            self.signal.0,
            FenceScope::System,
            FenceScope::System,
        )
        .unwrap();
        let id = self.queue.add_write_index(1);
        let slot = self.queue.ring + 64 * (id % u64::from(self.queue.size));
        self.dev.memory.write(slot + 4, &p.body).unwrap();
        self.dev
            .memory
            .store_u32_release(slot, p.header_word)
            .unwrap();
        self.queue.ring_doorbell(id);
        id
    }

    /// Submit and wait; Err with the queue's error when it did not complete.
    pub fn replay(&self, ib: &PlacedIb) -> Result<(), String> {
        self.publish(ib);
        self.wait(Duration::from_secs(20))
    }

    pub fn wait(&self, timeout: Duration) -> Result<(), String> {
        let step = Duration::from_millis(10);
        let mut waited = Duration::ZERO;
        while waited < timeout {
            if self.signal.1.wait(Condition::Eq, 0, step) == 0 {
                return Ok(());
            }
            if let Some(e) = self.queue.errors().first() {
                return Err(e.to_string());
            }
            waited += step;
        }
        Err(format!(
            "timed out after {timeout:?} waiting for the completion signal"
        ))
    }

    pub fn first_error(&self) -> Option<QueueError> {
        self.queue.errors().into_iter().next()
    }

    pub fn free(&self, ib: PlacedIb) {
        self.dev.memory.free(ib.ib).unwrap();
        self.dev.memory.free(ib.kernargs).unwrap();
    }
}

pub fn counter_ib(rig: &Rig, counter: u64, n: usize, boundary: Option<BoundaryKind>) -> PlacedIb {
    let mut b = rig.builder();
    let code = rig.code("counter");
    let launch = Launch {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_group_bytes: 0,
    };
    for _ in 0..n {
        b.dispatch(&code, &launch, &counter.to_le_bytes(), 8)
            .unwrap();
        if let Some(k) = boundary {
            b.boundary(k);
        }
    }
    rig.place(b)
}

/// Kernarg bytes for produce (`second_is_u32`) or consume: explicit args,
/// then hidden block counts at 16 and group sizes at 28.
pub fn pc_kernarg(first: u64, second: u64, second_is_u32: bool, n: u32, block: u32) -> Vec<u8> {
    let mut k = vec![0u8; 272];
    k[0..8].copy_from_slice(&first.to_le_bytes());
    if second_is_u32 {
        k[8..12].copy_from_slice(&(second as u32).to_le_bytes());
    } else {
        k[8..16].copy_from_slice(&second.to_le_bytes());
    }
    k[16..20].copy_from_slice(&(n / block).to_le_bytes());
    k[20..24].copy_from_slice(&1u32.to_le_bytes());
    k[24..28].copy_from_slice(&1u32.to_le_bytes());
    k[28..30].copy_from_slice(&(block as u16).to_le_bytes());
    k[30..32].copy_from_slice(&1u16.to_le_bytes());
    k[32..34].copy_from_slice(&1u16.to_le_bytes());
    k
}

/// produce(buf, 3) then consume(out, buf) over 64 items.
pub fn producer_consumer(rig: &Rig, boundary: Option<BoundaryKind>) -> (PlacedIb, u64, u64) {
    let buf = rig.alloc(256);
    let out = rig.alloc(256);
    let launch = Launch {
        grid: [64, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    let mut b = rig.builder();
    b.dispatch(
        &rig.code("produce"),
        &launch,
        &pc_kernarg(buf, 3, true, 64, 32),
        8,
    )
    .unwrap();
    if let Some(k) = boundary {
        b.boundary(k);
    }
    b.dispatch(
        &rig.code("consume"),
        &launch,
        &pc_kernarg(out, buf, false, 64, 32),
        8,
    )
    .unwrap();
    (rig.place(b), buf, out)
}
