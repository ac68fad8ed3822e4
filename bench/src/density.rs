//! `density`: PM4 dwords per dispatch for the shapes in TARGETS.md, and the
//! cost of record + finish relative to copying the finished IB.
//!
//! Kernels are synthetic descriptors shaped like the counter kernel
//! (kernarg pointer only, wave32, 2 user SGPRs). Dword densities are the
//! steady state: dwords added per dispatch over a long chain after a warm-up
//! dispatch; the fixed per-IB cost (prologue, epilogue, first full state) is
//! reported separately as `dwords_fixed_per_ib`.

use std::hint::black_box;
use std::time::Instant;

use relaunch_device::codeobj::descriptor::{properties, rsrc2};
use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;
use relaunch_encoders::{BoundaryKind, EncodeOptions, IbBuilder, KernelCode, Launch};

use crate::report::Report;

const FAMILY: Family = Family::Gfx12;
const LAUNCH: Launch = Launch {
    grid: [64, 1, 1],
    block: [64, 1, 1],
    dynamic_group_bytes: 0,
};
const KERNARG_BASE: u64 = 0x7F00_4000_0000;

fn counter_like(rsrc1: u32) -> KernelDescriptor {
    KernelDescriptor {
        group_segment_fixed_size: 0,
        private_segment_fixed_size: 0,
        kernarg_size: 8,
        kernel_code_entry_byte_offset: -0x40,
        compute_pgm_rsrc3: 0,
        compute_pgm_rsrc1: rsrc1,
        compute_pgm_rsrc2: 0x80 | (2 << rsrc2::USER_SGPR_SHIFT),
        kernel_code_properties: properties::KERNARG_SEGMENT_PTR | properties::WAVEFRONT_SIZE32,
        kernarg_preload: 0,
    }
}

/// The kernels, opaque to the optimizer as a caller's run-time values are.
fn kernels() -> [KernelCode<'static>; 2] {
    black_box([
        KernelCode {
            symbol: "counter",
            family: FAMILY,
            descriptor: counter_like(0x60AF_0000),
            kd_address: 0x7F00_0000_1040,
        },
        KernelCode {
            symbol: "counter_b",
            family: FAMILY,
            descriptor: counter_like(0x60AF_0041),
            kd_address: 0x7F00_0000_2040,
        },
    ])
}

struct Shape {
    opts: EncodeOptions,
    boundary: Option<BoundaryKind>,
    kernels: usize,
    same_kernargs: bool,
}

// Inlined so the timed loop measures the encoder, not this helper's call.
#[inline(always)]
fn record(b: &mut IbBuilder, ks: &[KernelCode<'_>], s: &Shape, i: u64) -> Result<(), String> {
    if let Some(kind) = s.boundary {
        b.boundary(kind);
    }
    let arg: u64 = if s.same_kernargs { 7 } else { i };
    // Alternate through one or two kernels without a division.
    let k = if s.kernels == 1 { 0 } else { (i & 1) as usize };
    // Opaque launch (and kernels, see `kernels`): the encoder compares them
    // with the previous dispatch's as it would a caller's run-time values.
    b.dispatch(&ks[k], black_box(&LAUNCH), &arg.to_le_bytes(), 8)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Steady-state dwords per dispatch over `n` dispatches, and the fixed cost.
fn density(s: &Shape, n: u64) -> Result<(f64, f64), String> {
    let ks = kernels();
    let mut b = IbBuilder::new(FAMILY, s.opts);
    for i in 0..2 {
        record(&mut b, &ks, s, i)?;
    }
    let before = b.dwords();
    for i in 2..n + 2 {
        record(&mut b, &ks, s, i)?;
    }
    let per = (b.dwords() - before) as f64 / n as f64;
    let ib = b.finish(KERNARG_BASE).map_err(|e| e.to_string())?;
    let fixed = ib.total_dwords() as f64 - per * ib.dispatch_count() as f64;
    Ok((per, fixed))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

pub fn run(report: &mut Report) -> Result<(), String> {
    let d = EncodeOptions::default();
    let rmw = Some(BoundaryKind::Rmw);
    let shapes = [
        (
            "dwords_serial_fresh",
            Shape {
                opts: d,
                boundary: rmw,
                kernels: 1,
                same_kernargs: false,
            },
            18.0,
        ),
        (
            "dwords_serial_same",
            Shape {
                opts: EncodeOptions {
                    kernargs_immutable: true,
                    ..d
                },
                boundary: rmw,
                kernels: 1,
                same_kernargs: true,
            },
            15.0,
        ),
        (
            "dwords_independent",
            Shape {
                opts: d,
                boundary: None,
                kernels: 1,
                same_kernargs: false,
            },
            8.0,
        ),
        (
            "dwords_alternating",
            Shape {
                opts: d,
                boundary: rmw,
                kernels: 2,
                same_kernargs: false,
            },
            27.0,
        ),
    ];
    let mut fixed_cost = 0.0;
    for (name, shape, target) in &shapes {
        let (per, fixed) = density(shape, 10_000)?;
        fixed_cost = fixed;
        report.metric(name, per, "dwords", Some((*target, true)));
    }
    report.metric("dwords_fixed_per_ib", fixed_cost.round(), "dwords", None);

    // Full state, for reference (no target).
    let full = Shape {
        opts: EncodeOptions {
            full_state: true,
            ..d
        },
        boundary: rmw,
        kernels: 1,
        same_kernargs: false,
    };
    report.metric(
        "dwords_serial_full_state",
        density(&full, 10_000)?.0,
        "dwords",
        None,
    );

    // Dispatches per segment for the counter shape (serial chain, RMW each).
    let n = 60_000u64;
    let shape = &shapes[0].1;
    let ks = kernels();
    let mut b = IbBuilder::new(FAMILY, shape.opts);
    for i in 0..n {
        record(&mut b, &ks, shape, i)?;
    }
    let ib = b.finish(KERNARG_BASE).map_err(|e| e.to_string())?;
    report.metric(
        "dispatches_per_segment",
        ib.segments[0].dispatch_count as f64,
        "dispatches",
        None,
    );

    // encode_vs_memcpy: 50,000-dispatch serial chain, record + finish, vs a
    // copy of the finished IB's bytes; medians of repeated runs.
    let n = 50_000u64;
    let mut encode = Vec::new();
    let mut copy = Vec::new();
    // The copy's destination stands for the IB memory the finished dwords go
    // to: allocated and touched once, outside the timed region.
    let mut dst: Vec<u32> = Vec::new();
    for _ in 0..21 {
        let t = Instant::now();
        let mut b = IbBuilder::new(FAMILY, shape.opts);
        b.reserve(n as usize);
        for i in 0..n {
            record(&mut b, &ks, shape, i)?;
        }
        let ib = b.finish(KERNARG_BASE).map_err(|e| e.to_string())?;
        let ib = black_box(ib);
        encode.push(t.elapsed().as_nanos() as f64 / n as f64);

        let total: usize = ib.total_dwords();
        if dst.len() < total {
            dst = vec![1u32; total];
        }
        let t = Instant::now();
        for _ in 0..8 {
            let mut at = 0;
            for seg in &ib.segments {
                dst[at..at + seg.dwords.len()].copy_from_slice(&seg.dwords);
                at += seg.dwords.len();
            }
            black_box(&mut dst);
        }
        copy.push(t.elapsed().as_nanos() as f64 / 8.0 / n as f64);
    }
    let (e, c) = (median(encode), median(copy));
    report.metric("encode_ns_per_dispatch", e, "ns", None);
    report.metric("memcpy_ns_per_dispatch", c, "ns", None);
    report.metric("encode_vs_memcpy", e / c, "ratio", Some((6.0, true)));
    Ok(())
}
