//! The dispatch streams the encoding benchmarks time, shared with the
//! tests that check their bytes (`bench/tests/shapes.rs`): one period of
//! steps (kernel, launch, kernarg, boundary before it), cycled for as many
//! dispatches as a run needs.
//!
//! Kernels are synthetic descriptors shaped like the counter kernel
//! (kernarg pointer only, wave32, 2 user SGPRs), each at its own code
//! address, so a kernel switch costs what it would on hardware.

use std::collections::HashMap;
use std::hint::black_box;

use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;
use relaunch_encoders::{
    BoundaryKind, EncodeError, EncodeOptions, EncodedIb, IbBuilder, IbStorage, KernelCode, Launch,
};
use relaunch_lanes::reference::{decode_step, DecodeShape, OpKind};
use relaunch_lanes::{
    BoundaryReason, GraphOptions, KernelRef, LaneSink, Mode, PlannedNode, ResolvedKernel,
};

/// The family every shape is encoded for.
pub const FAMILY: Family = Family::Gfx12;
/// Kernarg base every shape is finished at.
pub const KERNARG_BASE: u64 = 0x7F00_4000_0000;
/// Longest kernarg block a step carries.
pub const MAX_KERNARG: usize = 32;

/// The launch of the counter-shaped kernels.
pub const COUNTER_LAUNCH: Launch = Launch {
    grid: [64, 1, 1],
    block: [64, 1, 1],
    dynamic_group_bytes: 0,
};

/// A counter-shaped descriptor; `rsrc1` tells kernels apart.
pub fn counter_like(rsrc1: u32, entry: i64) -> KernelDescriptor {
    KernelDescriptor {
        kernel_code_entry_byte_offset: entry,
        compute_pgm_rsrc1: rsrc1,
        ..relaunch_testsupport::counter_descriptor()
    }
}

/// A distinct synthetic kernel per name (counter-shaped, each at its own
/// code address, RSRC1 varying), as the decode step's resolver.
pub fn synthetic_kernels() -> impl FnMut(&KernelRef) -> Result<ResolvedKernel, String> {
    let mut seen: HashMap<String, ResolvedKernel> = HashMap::new();
    move |kernel| {
        let name = match kernel {
            KernelRef::Named(name) => name.clone(),
            KernelRef::Module { symbol, .. } => symbol.clone(),
            KernelRef::Transfer(_) => return Err("transfers run no kernel".to_string()),
        };
        let next = seen.len() as u64;
        Ok(*seen.entry(name).or_insert_with(|| ResolvedKernel {
            descriptor: counter_like(0x6000_0000 | (next as u32 & 0xF), 0x100),
            kd_address: 0x7F00_0000_0000 + next * 0x1000,
            kernarg_align: 8,
            unread: Default::default(),
        }))
    }
}

/// One dispatch of a period.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// Index into `Workload::kernels`.
    pub kernel: usize,
    pub launch: Launch,
    /// Kernarg bytes (the first `kernarg_len`); with `fresh`, bytes 0..8
    /// are replaced by the dispatch's index.
    pub kernarg: [u8; MAX_KERNARG],
    pub kernarg_len: usize,
    pub align: u32,
    /// Boundary required before this dispatch.
    pub boundary: Option<BoundaryKind>,
}

/// A benchmark shape: options, kernels and one period of steps.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: &'static str,
    pub options: EncodeOptions,
    pub kernels: Vec<KernelCode<'static>>,
    pub steps: Vec<Step>,
    /// New kernarg bytes each dispatch (else every dispatch of a step
    /// passes the same bytes).
    pub fresh: bool,
}

fn counter_step(kernel: usize, boundary: Option<BoundaryKind>) -> Step {
    let mut kernarg = [0u8; MAX_KERNARG];
    kernarg[0] = 7;
    Step {
        kernel,
        launch: COUNTER_LAUNCH,
        kernarg,
        kernarg_len: 8,
        align: 8,
        boundary,
    }
}

fn counter_kernels() -> Vec<KernelCode<'static>> {
    vec![
        KernelCode {
            symbol: "counter",
            family: FAMILY,
            descriptor: counter_like(0x60AF_0000, -0x40),
            kd_address: 0x7F00_0000_1040,
            unread: Default::default(),
        },
        KernelCode {
            symbol: "counter_b",
            family: FAMILY,
            descriptor: counter_like(0x60AF_0041, -0x40),
            kd_address: 0x7F00_0000_2040,
            unread: Default::default(),
        },
    ]
}

impl Workload {
    /// One counter kernel, fresh kernargs, an RMW boundary before each
    /// dispatch (`encode_vs_memcpy`, `dwords_serial_fresh`).
    pub fn serial() -> Self {
        Workload {
            name: "serial",
            options: EncodeOptions::default(),
            kernels: counter_kernels(),
            steps: vec![counter_step(0, Some(BoundaryKind::Rmw))],
            fresh: true,
        }
    }

    /// The serial chain with identical kernarg bytes, shared
    /// (`kernargs_immutable`; `dwords_serial_same`).
    pub fn serial_same() -> Self {
        Workload {
            name: "serial_same",
            options: EncodeOptions {
                kernargs_immutable: true,
                ..EncodeOptions::default()
            },
            fresh: false,
            ..Workload::serial()
        }
    }

    /// One kernel, fresh kernargs, no boundaries (`dwords_independent`).
    pub fn independent() -> Self {
        Workload {
            name: "independent",
            steps: vec![counter_step(0, None)],
            ..Workload::serial()
        }
    }

    /// Two kernels alternating, fresh kernargs, an RMW boundary before each
    /// (`encode_alternating_vs_memcpy`, `dwords_alternating`).
    pub fn alternating() -> Self {
        let rmw = Some(BoundaryKind::Rmw);
        Workload {
            name: "alternating",
            steps: vec![counter_step(0, rmw), counter_step(1, rmw)],
            ..Workload::serial()
        }
    }

    /// The serial chain with every register written each dispatch.
    pub fn serial_full_state() -> Self {
        Workload {
            name: "serial_full_state",
            options: EncodeOptions {
                full_state: true,
                ..EncodeOptions::default()
            },
            ..Workload::serial()
        }
    }

    /// The reference decode step's 12 layer kernels in layer order (one
    /// middle layer of lane 0 as the graph lowers it: its kernels,
    /// launches, kernarg sizes and the boundaries the plan puts before
    /// each), fresh kernargs (`encode_cycle12_vs_memcpy`).
    pub fn cycle12() -> Result<Self, String> {
        let options = GraphOptions {
            mode: Mode::Latency,
            lanes: 2,
            max_in_flight: 1,
        };
        let decode = decode_step(&DecodeShape::default(), options).map_err(|e| e.to_string())?;
        let plan = decode.graph.instantiate().map_err(|e| e.to_string())?;
        let mut sink = Capture {
            resolver: synthetic_kernels(),
            resolved: HashMap::new(),
            kernels: Vec::new(),
            pending: None,
            steps: Vec::new(),
        };
        plan.lower_lane(0, &mut sink).map_err(|e| e.to_string())?;
        let per_layer = OpKind::LAYER_OPS.len();
        // Layer 1: its first op has the boundary after the previous layer.
        let steps = sink
            .steps
            .get(per_layer..2 * per_layer)
            .ok_or("decode step lane 0 has fewer than two layers")?
            .to_vec();
        Ok(Workload {
            name: "cycle12",
            options: EncodeOptions::default(),
            kernels: sink.kernels,
            steps,
            fresh: true,
        })
    }

    /// Record `n` dispatches (cycling the period) into `b`: each step's
    /// template interned once, then dispatched by its id, as a caller
    /// lowering a graph does.
    // Inlined so a timed loop measures the encoder, not this helper's call.
    #[inline(always)]
    pub fn record(&self, b: &mut IbBuilder, n: u64) -> Result<(), EncodeError> {
        // The kernels and steps are opaque to the optimizer, as a caller's
        // run-time values are.
        let kernels = black_box(&self.kernels[..]);
        let steps = black_box(&self.steps[..]);
        // Only the steps dispatched (interning a kernel lists it in the
        // IB's kernels).
        let ids = steps
            .iter()
            .take(n.min(steps.len() as u64) as usize)
            .map(|s| b.intern(&kernels[s.kernel], &s.launch, s.kernarg_len, s.align))
            .collect::<Result<Vec<_>, _>>()?;
        let ids = black_box(&ids[..]);
        let mut j = 0;
        for i in 0..n {
            let s = &steps[j];
            let id = ids[j];
            j += 1;
            if j == steps.len() {
                j = 0;
            }
            if let Some(kind) = s.boundary {
                b.boundary(kind);
            }
            let mut kernarg = s.kernarg;
            if self.fresh {
                kernarg[..8].copy_from_slice(&i.to_le_bytes());
            }
            b.dispatch_template(id, &kernarg[..s.kernarg_len])?;
        }
        Ok(())
    }

    /// `record` passing each dispatch by value (`IbBuilder::dispatch`).
    pub fn record_by_value(&self, b: &mut IbBuilder, n: u64) -> Result<(), EncodeError> {
        let kernels = black_box(&self.kernels[..]);
        let steps = black_box(&self.steps[..]);
        for i in 0..n {
            let s = &steps[i as usize % steps.len()];
            if let Some(kind) = s.boundary {
                b.boundary(kind);
            }
            let mut kernarg = s.kernarg;
            if self.fresh {
                kernarg[..8].copy_from_slice(&i.to_le_bytes());
            }
            b.dispatch(
                &kernels[s.kernel],
                black_box(&s.launch),
                &kernarg[..s.kernarg_len],
                s.align,
            )?;
        }
        Ok(())
    }

    /// A builder for this shape with `n` dispatches recorded and reserved.
    pub fn builder(&self, options: EncodeOptions, n: u64) -> Result<IbBuilder, EncodeError> {
        self.builder_in(options, n, None)
    }

    /// `builder` recording into `storage` (a finished IB's buffers), as
    /// re-encoding does.
    pub fn builder_in(
        &self,
        options: EncodeOptions,
        n: u64,
        storage: Option<IbStorage>,
    ) -> Result<IbBuilder, EncodeError> {
        let mut b = IbBuilder::new(FAMILY, options);
        if let Some(storage) = storage {
            b.recycle(storage)?;
        }
        b.reserve(n as usize);
        self.record(&mut b, n)?;
        Ok(b)
    }

    /// `n` dispatches encoded with the shape's options and finished.
    pub fn encode(&self, n: u64) -> Result<EncodedIb, EncodeError> {
        self.encode_in(n, None)
    }

    /// `encode` recording into `storage` (a finished IB's buffers), as
    /// re-encoding does.
    pub fn encode_in(&self, n: u64, storage: Option<IbStorage>) -> Result<EncodedIb, EncodeError> {
        self.builder_in(self.options, n, storage)?
            .finish(KERNARG_BASE)
    }
}

/// Records a lowered lane as steps.
struct Capture<R> {
    resolver: R,
    resolved: HashMap<String, usize>,
    kernels: Vec<KernelCode<'static>>,
    pending: Option<BoundaryKind>,
    steps: Vec<Step>,
}

impl<R: FnMut(&KernelRef) -> Result<ResolvedKernel, String>> LaneSink for Capture<R> {
    type Error = String;

    fn dispatch(&mut self, node: &PlannedNode<'_>) -> Result<(), String> {
        let KernelRef::Named(name) = node.kernel else {
            return Err(format!("node {}: not a named kernel", node.node.raw()));
        };
        let kernel = match self.resolved.get(name) {
            Some(&k) => k,
            None => {
                let r = (self.resolver)(node.kernel)?;
                // The reference graph's kernel names are its op kinds' names.
                let symbol = OpKind::LAYER_OPS
                    .iter()
                    .chain([&OpKind::Sampler])
                    .map(|k| k.kernel_name())
                    .find(|s| s == name)
                    .ok_or_else(|| format!("unknown decode kernel {name:?}"))?;
                self.kernels.push(KernelCode {
                    symbol,
                    family: FAMILY,
                    descriptor: r.descriptor,
                    kd_address: r.kd_address,
                    unread: Default::default(),
                });
                self.resolved.insert(name.clone(), self.kernels.len() - 1);
                self.kernels.len() - 1
            }
        };
        if node.kernarg.len() > MAX_KERNARG || node.kernarg.len() < 8 {
            return Err(format!(
                "node {}: kernarg of {} bytes (shapes take 8..={MAX_KERNARG})",
                node.node.raw(),
                node.kernarg.len()
            ));
        }
        let mut kernarg = [0u8; MAX_KERNARG];
        kernarg[..node.kernarg.len()].copy_from_slice(node.kernarg);
        self.steps.push(Step {
            kernel,
            launch: Launch {
                grid: node.grid,
                block: node.block,
                dynamic_group_bytes: node.dynamic_group_bytes,
            },
            kernarg,
            kernarg_len: node.kernarg.len(),
            align: 8,
            boundary: self.pending.take(),
        });
        Ok(())
    }

    fn boundary(&mut self, kind: BoundaryKind, _: &BoundaryReason) -> Result<(), String> {
        self.pending = Some(kind);
        Ok(())
    }
}
