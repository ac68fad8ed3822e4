//! Scratch on the direct path, as the encoder writes it: a kernel with
//! RSRC2.SCRATCH_EN gets COMPUTE_TMPRING_SIZE (and on gfx11/gfx12 the
//! dispatch scratch base) and its scratch SGPRs, filled from the backing
//! at `finish_with_scratch`, written once per segment; kernels without
//! scratch in the same IB write none of it; an IB with scratch cannot be
//! finished without a backing, nor with one too small.

use crate::common;

use common::*;
use relaunch_device::Family;
use relaunch_encoders::scratch::wave_need;
use relaunch_encoders::{
    BoundaryKind, EncodeError, EncodeOptions, IbBuilder, Launch, ScratchNeed, ScratchPlan,
};
use relaunch_facts::regs::off;
use relaunch_facts::scratch::srd_for_wave;

const L: Launch = Launch {
    grid: [128, 1, 1],
    block: [64, 1, 1],
    dynamic_group_bytes: 0,
};
const BASE: u64 = 0x7F00_0020_0000;
const PRIVATE: u32 = 100;

fn with_scratch(
    mut kd: relaunch_device::codeobj::KernelDescriptor,
) -> relaunch_device::codeobj::KernelDescriptor {
    kd.private_segment_fixed_size = PRIVATE;
    kd.compute_pgm_rsrc2 |= 1;
    kd
}

/// counter, scratchy x2, counter, scratchy, RMW boundaries between.
fn record(family: Family, kd: relaunch_device::codeobj::KernelDescriptor) -> IbBuilder {
    let plain = code("plain", family, counter_kd(true), 0x10_0040);
    let scratchy = code("scratchy", family, with_scratch(kd), 0x10_0140);
    let mut b = IbBuilder::new(family, EncodeOptions::default());
    for (i, k) in [&plain, &scratchy, &scratchy, &plain, &scratchy]
        .iter()
        .enumerate()
    {
        b.boundary(BoundaryKind::Rmw);
        b.dispatch(k, &L, &(i as u64).to_le_bytes(), 8).unwrap();
    }
    b
}

fn writes_to(ib: &relaunch_encoders::EncodedIb, register: u16) -> usize {
    let d = &ib.segments[0].dwords;
    d.windows(2)
        .filter(|w| {
            w[0] >> 8 & 0xFF == 0x76 && w[1] <= u32::from(register) && {
                let n = (w[0] >> 16 & 0x3FFF) as u16;
                u32::from(register) < w[1] + u32::from(n)
            }
        })
        .count()
}

#[test]
fn gfx11_and_gfx12_program_tmpring_and_the_dispatch_scratch_base_once() {
    for family in [Family::Gfx11, Family::Gfx12] {
        let b = record(family, counter_kd(true));
        let need = b.scratch_need().unwrap();
        assert_eq!(
            need,
            ScratchNeed {
                wave_bytes: wave_need(PRIVATE, false),
                group_waves: 2
            }
        );
        assert!(matches!(
            b.finish(0x1000),
            Err(EncodeError::ScratchNotProvided)
        ));
        let b = record(family, counter_kd(true));
        let plan = ScratchPlan::new(family, need, 8, 2).unwrap();
        let ring = plan.at(BASE).unwrap();
        let ib = b.finish_with_scratch(0x1000, Some(&ring)).unwrap();
        let seen = replay(&ib);
        for i in [1, 2, 4] {
            assert_eq!(seen[i].reg(0x218), plan.tmpring_size, "{family} {i}");
            assert_eq!(seen[i].reg(0x210), (BASE >> 8) as u32, "{family} {i}");
            assert_eq!(seen[i].reg(0x211), (BASE >> 40) as u32, "{family} {i}");
        }
        // Before the first scratch dispatch the ring is not programmed.
        assert_eq!(seen[0].regs[0x18], None, "{family}");
        assert_eq!(writes_to(&ib, off::COMPUTE_TMPRING_SIZE), 1, "{family}");
        assert_eq!(
            writes_to(&ib, off::COMPUTE_DISPATCH_SCRATCH_BASE_LO),
            1,
            "{family}"
        );
    }
}

#[test]
fn gfx10_delivers_the_v_sharp_per_wave_size() {
    for wave32 in [true, false] {
        let mut kd = psb_kd();
        if !wave32 {
            kd.kernel_code_properties &= !relaunch_facts::descriptor::properties::WAVEFRONT_SIZE32;
        }
        let b = record(Family::Gfx10, kd);
        let need = b.scratch_need().unwrap();
        assert_eq!(need.wave_bytes, wave_need(PRIVATE, !wave32));
        let plan = ScratchPlan::new(Family::Gfx10, need, 4, 1).unwrap();
        let ring = plan.at(BASE).unwrap();
        let ib = b.finish_with_scratch(0x1000, Some(&ring)).unwrap();
        let seen = replay(&ib);
        let srd = srd_for_wave(ring.srd, !wave32);
        for i in [1, 2, 4] {
            let user: Vec<u32> = (0x240..0x244).map(|o| seen[i].reg(o)).collect();
            assert_eq!(user, srd, "wave32 {wave32} dispatch {i}");
            assert_eq!(seen[i].reg(0x218), plan.tmpring_size);
        }
        // gfx10 waves do not read the dispatch scratch base.
        assert_eq!(writes_to(&ib, off::COMPUTE_DISPATCH_SCRATCH_BASE_LO), 0);
    }
}

#[test]
fn a_backing_smaller_than_the_need_is_refused() {
    let b = record(Family::Gfx11, counter_kd(true));
    let small = ScratchNeed {
        wave_bytes: 256,
        group_waves: 1,
    };
    let ring = ScratchPlan::new(Family::Gfx11, small, 1, 1)
        .unwrap()
        .at(BASE)
        .unwrap();
    let e = b.finish_with_scratch(0x1000, Some(&ring)).unwrap_err();
    assert!(e.to_string().contains("does not cover"), "{e}");
}

#[test]
fn every_segment_programs_the_ring_again() {
    let family = Family::Gfx12;
    let scratchy = code(
        "scratchy",
        family,
        with_scratch(counter_kd(true)),
        0x10_0140,
    );
    let opts = EncodeOptions {
        max_segment_dwords: 256,
        ..EncodeOptions::default()
    };
    let mut b = IbBuilder::new(family, opts);
    for i in 0..40u64 {
        b.boundary(BoundaryKind::Rmw);
        b.dispatch(&scratchy, &L, &i.to_le_bytes(), 8).unwrap();
    }
    let plan = ScratchPlan::new(family, b.scratch_need().unwrap(), 8, 2).unwrap();
    let ring = plan.at(BASE).unwrap();
    let ib = b.finish_with_scratch(0x1000, Some(&ring)).unwrap();
    assert!(ib.segments.len() > 1, "{} segments", ib.segments.len());
    // `replay` starts every segment with no register known.
    for (i, s) in replay(&ib).iter().enumerate() {
        assert_eq!(s.reg(0x218), plan.tmpring_size, "dispatch {i}");
        assert_eq!(s.reg(0x210), (BASE >> 8) as u32, "dispatch {i}");
    }
}
