//! Dispatch encoding: dword densities, elision, refusals, kernarg sites.

use crate::common;

use common::*;
use relaunch_device::Family;
use relaunch_encoders::Refusal;
use relaunch_encoders::{BoundaryKind, EncodeError, EncodeOptions, IbBuilder, Launch, PatchError};
use relaunch_facts::descriptor::properties as p;

const L: Launch = Launch {
    grid: [64, 1, 1],
    block: [64, 1, 1],
    dynamic_group_bytes: 0,
};

/// Dwords per dispatch over `n` dispatches after a warm-up dispatch.
fn density(
    opts: EncodeOptions,
    n: u32,
    boundary: Option<BoundaryKind>,
    kernels: usize,
    same: bool,
) -> f64 {
    let k1 = code("a", Family::Gfx12, counter_kd(true), 0x10_0040);
    let mut kd2 = counter_kd(true);
    kd2.compute_pgm_rsrc1 = 0x60AF_0001;
    let k2 = code("b", Family::Gfx12, kd2, 0x10_0140);
    let ks = [k1, k2];
    let mut b = IbBuilder::new(Family::Gfx12, opts);
    let go = |b: &mut IbBuilder, i: u32| {
        if let Some(kind) = boundary {
            b.boundary(kind);
        }
        let arg = if same { 7u64 } else { i as u64 };
        b.dispatch(&ks[i as usize % kernels], &L, &arg.to_le_bytes(), 8)
            .unwrap();
    };
    go(&mut b, 0);
    go(&mut b, 1);
    let before = b.dwords();
    for i in 2..n + 2 {
        go(&mut b, i);
    }
    (b.dwords() - before) as f64 / n as f64
}

#[test]
fn stateful_densities_meet_the_targets() {
    let d = EncodeOptions::default();
    let imm = EncodeOptions {
        kernargs_immutable: true,
        ..d
    };
    assert_eq!(density(d, 1000, Some(BoundaryKind::Rmw), 1, false), 18.0);
    assert_eq!(density(imm, 1000, Some(BoundaryKind::Rmw), 1, true), 15.0);
    assert_eq!(density(d, 1000, None, 1, false), 8.0);
    let alt = density(d, 1000, Some(BoundaryKind::Rmw), 2, false);
    assert!(alt <= 27.0, "alternating {alt}");
    assert_eq!(density(d, 1000, Some(BoundaryKind::Wait), 1, false), 10.0);
}

#[test]
fn full_state_writes_everything_every_dispatch() {
    let full = EncodeOptions {
        full_state: true,
        ..EncodeOptions::default()
    };
    // 5 + 4 + 4 + 3 + 3 + 4 + 5 = 28 per dispatch without a boundary.
    assert_eq!(density(full, 100, None, 1, true), 28.0);
}

#[test]
fn private_segment_buffer_gets_four_zero_dwords_first() {
    let k = code("psb", Family::Gfx11, psb_kd(), 0x2040);
    let mut b = IbBuilder::new(Family::Gfx11, EncodeOptions::default());
    b.dispatch(&k, &L, &[0; 8], 8).unwrap();
    b.dispatch(&k, &L, &[0; 8], 8).unwrap();
    let ib = b.finish(0x5000_0000).unwrap();
    let seen = replay(&ib);
    for (i, s) in seen.iter().enumerate() {
        let user: Vec<u32> = (0x240..0x246).map(|o| s.reg(o)).collect();
        let ka = 0x5000_0000 + ib.sites[i].kernarg_offset;
        assert_eq!(user, [0, 0, 0, 0, ka, 0]);
    }
    assert_eq!(ib.sites[1].kernarg_offset, 16);
}

#[test]
fn refusals_are_typed_and_explained() {
    let fam = Family::Gfx12;
    let mut b = IbBuilder::new(fam, EncodeOptions::default());
    let k = code("k", fam, counter_kd(true), 0x1040);
    let err = |b: &mut IbBuilder, l: Launch| b.dispatch(&k, &l, &[0; 8], 8).unwrap_err();

    let e = err(
        &mut b,
        Launch {
            grid: [100, 1, 1],
            ..L
        },
    );
    assert!(
        matches!(
            e,
            EncodeError::NonIntegralGrid {
                axis: 'x',
                grid: 100,
                block: 64,
                ..
            }
        ),
        "{e}"
    );
    let e = err(
        &mut b,
        Launch {
            grid: [0, 1, 1],
            ..L
        },
    );
    assert!(matches!(e, EncodeError::ZeroDimension { .. }), "{e}");
    // 2^31 x 2^31 x 4 work-items: each dimension is a valid u32, their
    // product is 2^64 (it wrapped the simulator's workgroup count to 0).
    let e = err(
        &mut b,
        Launch {
            grid: [1 << 31, 1 << 31, 4],
            block: [1, 1, 1],
            ..L
        },
    );
    assert!(matches!(e, EncodeError::GridTooLarge { .. }), "{e}");
    assert!(e.to_string().contains("[2147483648, 2147483648, 4]"), "{e}");
    let e = err(
        &mut b,
        Launch {
            grid: [2048, 1, 1],
            block: [2048, 1, 1],
            ..L
        },
    );
    assert!(
        matches!(
            e,
            EncodeError::BlockTooLarge {
                work_items: 2048,
                ..
            }
        ),
        "{e}"
    );
    let e = err(
        &mut b,
        Launch {
            dynamic_group_bytes: 65 * 1024,
            ..L
        },
    );
    assert!(e.to_string().contains("66560 bytes of LDS"), "{e}");

    let other = code("k", Family::Gfx11, counter_kd(true), 0x1040);
    let e = b.dispatch(&other, &L, &[0; 8], 8).unwrap_err();
    assert!(
        e.to_string()
            .contains("built for gfx11 but this IB encodes for gfx12"),
        "{e}"
    );

    let mut kd = counter_kd(true);
    kd.private_segment_fixed_size = 70_000;
    kd.kernel_code_properties |= p::QUEUE_PTR;
    let bad = code("scratchy", fam, kd, 0x1040);
    match b.dispatch(&bad, &L, &[0; 8], 8).unwrap_err() {
        EncodeError::Refused { symbol, reasons } => {
            assert_eq!(symbol, "scratchy");
            assert!(reasons.contains(&Refusal::QueuePtr));
            assert!(reasons.iter().any(|r| matches!(r, Refusal::Scratch { .. })));
        }
        e => panic!("unexpected {e}"),
    }
    let misaligned = code("m", fam, counter_kd(true), 0x1080);
    let e = b.dispatch(&misaligned, &L, &[0; 8], 8).unwrap_err();
    assert!(
        matches!(e, EncodeError::MisalignedCodeEntry { entry: 0x1040, .. }),
        "{e}"
    );

    let e = b.dispatch(&k, &L, &[0; 4], 8).unwrap_err();
    assert!(
        matches!(
            e,
            EncodeError::KernargTooShort {
                need: 8,
                got: 4,
                ..
            }
        ),
        "{e}"
    );
    let e = b.dispatch(&k, &L, &[0; 8], 3).unwrap_err();
    assert!(
        matches!(e, EncodeError::BadKernargAlign { align: 3, .. }),
        "{e}"
    );
    // Nothing was recorded by the refused calls.
    assert_eq!(b.dispatch_count(), 0);
    assert!(matches!(b.finish(0), Err(EncodeError::Empty)));
}

#[test]
fn kernarg_sites_patch_in_place() {
    let k = code("k", Family::Gfx11, counter_kd(true), 0x1040);
    let mut b = IbBuilder::new(Family::Gfx11, EncodeOptions::default());
    for i in 0..3u64 {
        b.dispatch(&k, &L, &i.to_le_bytes(), 64).unwrap();
    }
    let layout = b.kernarg_layout();
    assert_eq!(
        (layout.bytes, layout.align, layout.within_4gib),
        (144, 64, true)
    );
    assert!(matches!(
        IbBuilder::new(Family::Gfx11, EncodeOptions::default()).finish(0),
        Err(EncodeError::Empty)
    ));
    let mut ib = b.finish(0x1_0000_0040).unwrap();
    assert_eq!(ib.symbol(2), Some("k"));
    assert_eq!(ib.kernarg_range(1), Some(64..72));
    let seen = replay(&ib);
    for (i, s) in seen.iter().enumerate() {
        assert_eq!(s.reg(0x240), 0x40 + 64 * i as u32);
        assert_eq!(s.reg(0x241), 1);
    }
    let r = ib.patch_kernargs(1, 4, &[9, 9, 9, 9]).unwrap();
    assert_eq!(r, 68..72);
    assert_eq!(&ib.kernarg_image[64..72], &[1, 0, 0, 0, 9, 9, 9, 9]);
    assert!(matches!(
        ib.patch_kernargs(1, 6, &[0; 4]),
        Err(PatchError::OutOfRange { .. })
    ));
    assert!(matches!(
        ib.patch_kernargs(3, 0, &[0]),
        Err(PatchError::NoSuchDispatch { .. })
    ));
}

#[test]
fn finish_checks_the_kernarg_base() {
    let k = code("k", Family::Gfx10, counter_kd(true), 0x1040);
    let mk = || {
        let mut b = IbBuilder::new(Family::Gfx10, EncodeOptions::default());
        b.dispatch(&k, &L, &[0; 8], 8).unwrap();
        b.dispatch(&k, &L, &[0; 8], 8).unwrap();
        b
    };
    assert!(matches!(
        mk().finish(0x1008),
        Err(EncodeError::MisalignedKernargBase { align: 16, .. })
    ));
    let e = mk().finish(0xFFFF_FFF0).unwrap_err();
    assert!(e.to_string().contains("crosses a 4 GiB boundary"), "{e}");
    assert!(mk().finish(0xFFFF_FFE0).is_ok());
}

#[test]
fn immutable_kernargs_share_identical_blocks() {
    let k = code("k", Family::Gfx12, counter_kd(true), 0x1040);
    let mut b = IbBuilder::new(
        Family::Gfx12,
        EncodeOptions {
            kernargs_immutable: true,
            ..EncodeOptions::default()
        },
    );
    for arg in [1u64, 2, 1, 1, 2] {
        b.dispatch(&k, &L, &arg.to_le_bytes(), 8).unwrap();
    }
    let mut ib = b.finish(0x8000).unwrap();
    let offs: Vec<u32> = ib.sites.iter().map(|s| s.kernarg_offset).collect();
    assert_eq!(offs, [0, 16, 0, 0, 16]);
    assert_eq!(ib.kernarg_image.len(), 32);
    assert_eq!(ib.patch_kernargs(0, 0, &[0]), Err(PatchError::Shared));
    let seen = replay(&ib);
    let ptrs: Vec<u32> = seen.iter().map(|s| s.reg(0x240)).collect();
    assert_eq!(ptrs, [0x8000, 0x8010, 0x8000, 0x8000, 0x8010]);
}

#[test]
fn boundaries_merge_and_edges_are_dropped() {
    let k = code("k", Family::Gfx12, counter_kd(true), 0x1040);
    let mut b = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    b.boundary(BoundaryKind::Rmw); // before the first dispatch: dropped
    b.dispatch(&k, &L, &[0; 8], 8).unwrap();
    b.boundary(BoundaryKind::Wait);
    b.boundary(BoundaryKind::RmwVmem);
    b.boundary(BoundaryKind::Wait);
    b.dispatch(&k, &L, &[0; 8], 8).unwrap();
    b.boundary(BoundaryKind::Rmw); // after the last: the epilogue covers it
    let ib = b.finish(0).unwrap();
    let acquires: Vec<u32> = relaunch_encoders::decode(&ib.segments[0].dwords, ib.family)
        .unwrap()
        .iter()
        .filter_map(|p| match p {
            relaunch_encoders::Packet::AcquireMem { gcr_cntl, .. } => Some(*gcr_cntl),
            _ => None,
        })
        .collect();
    assert_eq!(
        acquires,
        [0x380, 0x300, 0x8000],
        "gfx12 epilogue: GL2 write-back"
    );
}

#[test]
fn repeated_dispatches_keep_their_boundaries_and_pointers() {
    use relaunch_encoders::Packet;
    let k = code("k", Family::Gfx11, counter_kd(true), 0x1040);
    let mut b = IbBuilder::new(Family::Gfx11, EncodeOptions::default());
    // The fast path's runs break wherever the boundary before a repeat
    // changes; every dispatch must still get its own boundary and block.
    let kinds = [
        None,
        Some(BoundaryKind::Rmw),
        Some(BoundaryKind::Rmw),
        Some(BoundaryKind::Wait),
        None,
        None,
        Some(BoundaryKind::RmwVmem),
        Some(BoundaryKind::Rmw),
        Some(BoundaryKind::Rmw),
    ];
    for (i, kind) in kinds.iter().enumerate() {
        if let Some(kind) = kind {
            b.boundary(*kind);
        }
        b.dispatch(&k, &L, &(i as u64).to_le_bytes(), 8).unwrap();
        assert_eq!(b.dispatch_count(), i + 1);
    }
    let recorded = b.dwords();
    let ib = b.finish(0x2_0000_0000).unwrap();
    assert_eq!(ib.total_dwords(), recorded + 10);
    // Boundaries in order, as packets between the DISPATCH_DIRECTs.
    let mut got = Vec::new();
    let mut since_dispatch = Vec::new();
    for p in relaunch_encoders::decode(&ib.segments[0].dwords, ib.family).unwrap() {
        match p {
            Packet::DispatchDirect { .. } => got.push(std::mem::take(&mut since_dispatch)),
            Packet::EventWrite { .. } => since_dispatch.push(0),
            Packet::AcquireMem { gcr_cntl, .. } => since_dispatch.push(gcr_cntl),
            _ => {}
        }
    }
    let want: Vec<Vec<u32>> = vec![
        vec![0x380], // the prologue
        vec![0, 0x380],
        vec![0, 0x380],
        vec![0],
        vec![],
        vec![],
        vec![0, 0x300],
        vec![0, 0x380],
        vec![0, 0x380],
    ];
    assert_eq!(got, want);
    let seen = replay(&ib);
    for (i, s) in seen.iter().enumerate() {
        let site = ib.sites[i];
        assert_eq!(s.reg(0x240), 0x2_0000_0000u64 as u32 + 16 * i as u32);
        assert_eq!(s.reg(0x241), 2);
        assert_eq!(site.kernarg_offset, 16 * i as u32);
        assert_eq!(
            ib.segments[0].dwords[site.dispatch_dword as usize],
            0xC003_1502
        );
    }
}

/// Interned templates: a bad kernel is refused at `intern`, a block of
/// another length or another builder's id at `dispatch_template` (nothing
/// recorded), and what is recorded is what passing the values gives.
#[test]
fn interned_templates_check_their_shape_and_builder() {
    let a = code("a", Family::Gfx12, counter_kd(true), 0x10_0040);
    let mut b = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    let zero = Launch {
        grid: [0, 1, 1],
        ..L
    };
    assert!(matches!(
        b.intern(&a, &zero, 8, 8),
        Err(EncodeError::ZeroDimension { .. })
    ));
    let t = b.intern(&a, &L, 8, 8).unwrap();
    assert_eq!(b.intern(&a, &L, 8, 8).unwrap(), t, "interned once");
    assert_eq!(b.dispatch_template(t, &1u64.to_le_bytes()).unwrap(), 0);
    let e = b.dispatch_template(t, &[0u8; 12]).unwrap_err();
    assert!(
        matches!(
            e,
            EncodeError::KernargLengthMismatch {
                template: 8,
                got: 12,
                ..
            }
        ),
        "{e}"
    );
    let mut other = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    let foreign = other.intern(&a, &L, 8, 8).unwrap();
    assert_eq!(
        b.dispatch_template(foreign, &2u64.to_le_bytes()),
        Err(EncodeError::ForeignTemplate)
    );
    assert_eq!(b.dispatch_count(), 1, "refusals record nothing");
    for i in 2..6u64 {
        b.boundary(BoundaryKind::Rmw);
        b.dispatch_template(t, &i.to_le_bytes()).unwrap();
    }
    let interned = b.finish(0x7F00_0000_0000).unwrap();

    let mut v = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    for i in [1u64, 2, 3, 4, 5] {
        if i > 1 {
            v.boundary(BoundaryKind::Rmw);
        }
        v.dispatch(&a, &L, &i.to_le_bytes(), 8).unwrap();
    }
    let by_value = v.finish(0x7F00_0000_0000).unwrap();
    assert_eq!(interned.segments, by_value.segments);
    assert_eq!(interned.sites, by_value.sites);
    assert_eq!(interned.kernarg_image, by_value.kernarg_image);
}

/// A finished IB's storage is taken only before the first dispatch, and
/// a builder recording into it writes what a new one writes.
#[test]
fn recycling_storage_is_refused_once_recording_started_and_changes_no_byte() {
    let k = code("a", Family::Gfx12, counter_kd(true), 0x10_0040);
    let record = |b: &mut IbBuilder| {
        for i in 0..40u64 {
            b.boundary(BoundaryKind::Rmw);
            b.dispatch(&k, &L, &i.to_le_bytes(), 8).unwrap();
        }
    };
    let mut fresh = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    record(&mut fresh);
    let fresh = fresh.finish(0x1_0000).unwrap();

    let mut late = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    late.dispatch(&k, &L, &[0; 8], 8).unwrap();
    let err = late.recycle(fresh.clone().into_storage()).unwrap_err();
    assert!(
        matches!(err, EncodeError::RecycleAfterRecording { dispatches: 1 }),
        "{err}"
    );
    assert!(
        err.to_string().contains("before its first dispatch"),
        "{err}"
    );
    // The refusal changed nothing: the builder still finishes.
    assert_eq!(late.finish(0x1_0000).unwrap().sites.len(), 1);

    let mut again = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    again.recycle(fresh.clone().into_storage()).unwrap();
    record(&mut again);
    let again = again.finish(0x1_0000).unwrap();
    assert_eq!(again.segments, fresh.segments);
    assert_eq!(again.kernarg_image, fresh.kernarg_image);
    assert_eq!(again.sites, fresh.sites);
}
