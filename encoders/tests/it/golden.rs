//! Golden words for whole dispatches, and RSRC3's offset on every family.

use crate::common;

use common::*;
use relaunch_device::Family;
use relaunch_encoders::{EncodeOptions, IbBuilder, Launch};

#[test]
fn gfx10_wave32_dispatch_golden_words() {
    let kd = counter_kd(true);
    let code = code("counter", Family::Gfx10, kd, 0x7F00_0000_1040);
    let mut b = IbBuilder::new(Family::Gfx10, EncodeOptions::default());
    let launch = Launch {
        grid: [256, 1, 1],
        block: [64, 1, 1],
        dynamic_group_bytes: 0,
    };
    b.dispatch(&code, &launch, &[1, 0, 0, 0, 0, 0, 0, 0], 8)
        .unwrap();
    let ib = b.finish(0x7F00_1000_0000).unwrap();
    assert_eq!(ib.segments.len(), 1);
    #[rustfmt::skip]
    let want: &[u32] = &[
        // prologue: ACQUIRE_MEM K$/V$/GL1 invalidate
        0xC0065800, 0, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0xA, 0x380,
        0xC0037602, 0x207, 64, 1, 1,            // NUM_THREAD_X/Y/Z
        0xC0027602, 0x20C, 0x10, 0x7F,          // PGM_LO/HI (entry 0x7F00_0000_1000)
        0xC0027602, 0x212, 0x60AF0000, 0xC4,    // RSRC1, RSRC2 (LDS 0, TRAP_PRESENT)
        0xC0017602, 0x215, 0,                   // RESOURCE_LIMITS
        0xC0017602, 0x228, 0,                   // RSRC3 at 0x228
        0xC0027602, 0x240, 0x10000000, 0x7F00,  // USER_DATA_0/1: kernarg pointer
        0xC0031502, 4, 1, 1, 0x8045,            // DISPATCH_DIRECT, CS_W32_EN set
        // epilogue: CS_PARTIAL_FLUSH, ACQUIRE_MEM GL2/GLM write-back
        0xC0004600, 0x407, 0xC0065800, 0, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0xA, 0x8030,
    ];
    assert_eq!(ib.segments[0].dwords, want);
    // The 8-byte block, padded to 16 so the next block needs no padding.
    assert_eq!(
        ib.kernarg_image,
        [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(ib.kernarg_range(0), Some(0..8));
    assert_eq!(ib.sites[0].kernarg_offset, 0);
    assert_eq!(ib.sites[0].dispatch_dword, 31);
}

#[test]
fn gfx12_wave64_dispatch_golden_words() {
    let mut kd = counter_kd(false);
    kd.group_segment_fixed_size = 1024;
    kd.compute_pgm_rsrc3 = 0x10;
    let code = code("stencil", Family::Gfx12, kd, 0x7F12_3400_2040);
    let mut b = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    let launch = Launch {
        grid: [64, 16, 4],
        block: [8, 8, 2],
        dynamic_group_bytes: 100,
    };
    b.dispatch(&code, &launch, &[0xAA; 8], 16).unwrap();
    let ib = b.finish(0x2_0000_0100).unwrap();
    #[rustfmt::skip]
    let want: &[u32] = &[
        0xC0065800, 0, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0xA, 0x380,
        0xC0037602, 0x207, 8, 8, 2,
        0xC0027602, 0x20C, 0x1234_0020, 0x7F,  // entry 0x7F12_3400_2000
        // 1024 + 100 LDS bytes = 3 granules of 512: LDS_SIZE = 3 << 15
        0xC0027602, 0x212, 0x60AF0000, 0x0001_8084,
        0xC0017602, 0x215, 0,
        0xC0017602, 0x228, 0x10,
        0xC0027602, 0x240, 0x0000_0100, 0x2,
        0xC0031502, 8, 2, 2, 0x45,              // wave64: no CS_W32_EN
        0xC0004600, 0x407, 0xC0065800, 0, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0xA, 0x8000,
    ];
    assert_eq!(ib.segments[0].dwords, want);
}

#[test]
fn rsrc3_lands_at_0x228_on_every_family() {
    for family in [Family::Gfx10, Family::Gfx11, Family::Gfx12] {
        let mut kd = counter_kd(true);
        kd.compute_pgm_rsrc3 = 0x5;
        let code = code("k", family, kd, 0x1040);
        let mut b = IbBuilder::new(family, EncodeOptions::default());
        let launch = Launch {
            grid: [32, 1, 1],
            block: [32, 1, 1],
            dynamic_group_bytes: 0,
        };
        b.dispatch(&code, &launch, &[0; 8], 8).unwrap();
        let ib = b.finish(0x10_0000).unwrap();
        let d = &ib.segments[0].dwords;
        let at = d.windows(3).position(|w| w == [0xC0017602, 0x228, 5]);
        assert!(at.is_some(), "{family}: RSRC3 not written at 0x228: {d:x?}");
        assert!(
            !d.windows(2)
                .any(|w| w[0] & 0xFFFF_FF00 == 0xC000_7600 && w[1] == 0x223)
                && !d
                    .windows(2)
                    .any(|w| (w[0] >> 8) & 0xFF == 0x76 && w[1] == 0x223),
            "{family}: something written at 0x223"
        );
        let seen = replay(&ib);
        assert_eq!(seen[0].reg(0x228), 5);
    }
}
