//! v_swap_b32, the M0-relative moves (v_movrels/movreld/movrelsd_b32),
//! v_mov_b16, v_cndmask_b16, v_minmax/v_maxmin_f32 and their u32/i32 forms,
//! on llvm-mc-19's encodings (the same bytes on gfx10.3, gfx11 and gfx12).

use super::super::program;
use super::super::wave::Wave;
use super::tests::{isa, run, set, wave};

const SWAP_V1_V2: [u8; 4] = [0x02, 0xcb, 0x02, 0x7e];
const MOVRELS_V1_V2: [u8; 4] = [0x02, 0x87, 0x02, 0x7e];
const MOVRELD_V1_V2: [u8; 4] = [0x02, 0x85, 0x02, 0x7e];
const MOVRELD_V1_S2: [u8; 4] = [0x02, 0x84, 0x02, 0x7e];
const MOVRELSD_V1_V2: [u8; 4] = [0x02, 0x89, 0x02, 0x7e];
const MOVRELS_E64_V1_V2: [u8; 8] = [0x01, 0x00, 0xc3, 0xd5, 0x02, 0x01, 0x00, 0x00];

fn filled(target: &str, wave64: bool) -> super::super::wave::Wave {
    let mut w = wave(isa(target, wave64));
    for r in 0..16 {
        set(&mut w, r, |l| (r as u32) << 16 | l as u32);
    }
    w
}

#[test]
fn swap_exchanges_active_lanes_only() {
    for (target, wave64) in [("gfx1030", true), ("gfx1100", false), ("gfx1201", true)] {
        let mut w = filled(target, wave64);
        w.set_exec(0b1011);
        run(w.isa, &SWAP_V1_V2, &mut w);
        for l in [0, 1, 3] {
            assert_eq!(w.vgpr[1][l], 2 << 16 | l as u32, "{target}");
            assert_eq!(w.vgpr[2][l], 1 << 16 | l as u32, "{target}");
        }
        assert_eq!(w.vgpr[1][2], 1 << 16 | 2);
        assert_eq!(w.vgpr[2][2], 2 << 16 | 2);
        let last = w.lanes - 1;
        assert_eq!(w.vgpr[1][last], 1 << 16 | last as u32);
    }
}

#[test]
fn movrel_source_destination_and_both() {
    for (target, wave64) in [("gfx1030", false), ("gfx1100", true), ("gfx1201", false)] {
        // movrels: v1 = v[2 + M0].
        let mut w = filled(target, wave64);
        w.m0 = 3;
        run(w.isa, &MOVRELS_V1_V2, &mut w);
        assert_eq!(w.vgpr[1][7], 5 << 16 | 7, "{target}");
        // The VOP3 form is the same operation.
        let mut w = filled(target, wave64);
        w.m0 = 4;
        run(w.isa, &MOVRELS_E64_V1_V2, &mut w);
        assert_eq!(w.vgpr[1][0], 6 << 16, "{target}");
        // movreld: v[1 + M0] = v2, or an SGPR; v1 itself untouched.
        let mut w = filled(target, wave64);
        w.m0 = 2;
        w.set_exec(0b1);
        run(w.isa, &MOVRELD_V1_V2, &mut w);
        assert_eq!(w.vgpr[3][0], 2 << 16);
        assert_eq!(w.vgpr[3][1], 3 << 16 | 1, "inactive lane kept");
        assert_eq!(w.vgpr[1][0], 1 << 16);
        let mut w = filled(target, wave64);
        w.m0 = 0;
        w.sgpr[2] = 0xdead_beef;
        run(w.isa, &MOVRELD_V1_S2, &mut w);
        assert!(w.vgpr[1][..w.lanes].iter().all(|&x| x == 0xdead_beef));
        // movrelsd: v[1 + M0] = v[2 + M0].
        let mut w = filled(target, wave64);
        w.m0 = 5;
        run(w.isa, &MOVRELSD_V1_V2, &mut w);
        assert_eq!(w.vgpr[6][9], 7 << 16 | 9, "{target}");
    }
}

#[test]
fn movrel_past_the_allocated_vgprs_faults() {
    let i = isa("gfx1100", false);
    let mut bytes = MOVRELS_V1_V2.to_vec();
    bytes.extend_from_slice(&0xBFB0_0000u32.to_le_bytes());
    let prog = program::build(i, 0, &bytes);
    for m0 in [14, 0xffff_fff0] {
        let mut w = wave(i);
        w.m0 = m0;
        let err = super::run(&mut w, &prog.insts[0]).unwrap_err();
        assert!(err.to_string().contains('v'), "{err}");
    }
}

#[test]
fn mov_b16_names_halves_with_vgpr_bit_7() {
    // llvm-mc-19 (gfx1100 and gfx1200): v_mov_b16_e32 v1.l, v2.l / v1.h,
    // v2.l / v1.l, v2.h / v1.l, 0x1234.
    let cases: [(&[u8], u32); 4] = [
        (&[0x02, 0x39, 0x02, 0x7e], 0x0001_0002),
        (&[0x02, 0x39, 0x02, 0x7f], 0x0002_0000),
        (&[0x82, 0x39, 0x02, 0x7e], 0x0001_0002),
        (
            &[0xff, 0x38, 0x02, 0x7e, 0x34, 0x12, 0x00, 0x00],
            0x0001_1234,
        ),
    ];
    for target in ["gfx1100", "gfx1201"] {
        for (i, (code, want)) in cases.iter().enumerate() {
            let mut w = wave(isa(target, false));
            set(&mut w, 1, |_| 0x0001_0000);
            set(&mut w, 2, |_| 0x0002_0002);
            w.set_exec(0b1);
            run(w.isa, code, &mut w);
            // Only the named half changes, only in active lanes.
            let want = if i == 2 { 0x0001_0002 } else { *want };
            assert_eq!(w.vgpr[1][0], want, "{target} case {i}");
            assert_eq!(w.vgpr[1][1], 0x0001_0000, "{target} inactive lane");
        }
    }
}

#[test]
fn mov_b16_e64_names_halves_with_op_sel() {
    // llvm-mc-19 -mattr=+real-true16 (gfx1100 and gfx1200; LLVM 19 knows
    // the VOP3 form only in true16 syntax): v_mov_b16_e64 v1.l, v2.l /
    // v1.h, v2.l / v1.l, v2.h / v1.h, v2.h / v1.l, s2 / v1.l, 0x1234.
    // OPSEL[0] reads S0's high half, OPSEL[3] writes D's.
    let cases: [(&[u8], u32); 6] = [
        (
            &[0x01, 0x00, 0x9c, 0xd5, 0x02, 0x01, 0x00, 0x00],
            0x0001_0003,
        ),
        (
            &[0x01, 0x40, 0x9c, 0xd5, 0x02, 0x01, 0x00, 0x00],
            0x0003_0000,
        ),
        (
            &[0x01, 0x08, 0x9c, 0xd5, 0x02, 0x01, 0x00, 0x00],
            0x0001_0002,
        ),
        (
            &[0x01, 0x48, 0x9c, 0xd5, 0x02, 0x01, 0x00, 0x00],
            0x0002_0000,
        ),
        (
            &[0x01, 0x00, 0x9c, 0xd5, 0x02, 0x00, 0x00, 0x00],
            0x0001_beef,
        ),
        (
            &[
                0x01, 0x00, 0x9c, 0xd5, 0xff, 0x00, 0x00, 0x00, 0x34, 0x12, 0x00, 0x00,
            ],
            0x0001_1234,
        ),
    ];
    for target in ["gfx1100", "gfx1201"] {
        for (i, (code, want)) in cases.iter().enumerate() {
            let mut w = wave(isa(target, false));
            set(&mut w, 1, |_| 0x0001_0000);
            set(&mut w, 2, |_| 0x0002_0003);
            w.sgpr[2] = 0x5555_beef;
            w.set_exec(0b1);
            run(w.isa, code, &mut w);
            // Only the named half changes, only in active lanes.
            assert_eq!(w.vgpr[1][0], *want, "{target} case {i}");
            assert_eq!(w.vgpr[1][1], 0x0001_0000, "{target} inactive lane");
        }
    }
    // rocRAND 6.4's gfx1100 kernels (Debian sid): D59C0869 00000181,
    // `v_mov_b16_e64 v105.l, v129.h` (llvm-objdump-19 --mattr=+real-true16
    // prints `v105.l, v129.l op_sel:[1,0]`).
    let mut w = Wave::new(isa("gfx1100", false), 136);
    w.vgpr[105][0] = 0xaaaa_bbbb;
    w.vgpr[129][0] = 0x1234_5678;
    w.set_exec(0b1);
    run(
        w.isa,
        &[0x69, 0x08, 0x9c, 0xd5, 0x81, 0x01, 0x00, 0x00],
        &mut w,
    );
    assert_eq!(w.vgpr[105][0], 0xaaaa_1234);
}

#[test]
fn cndmask_b16_picks_by_the_lane_mask_and_keeps_the_high_half() {
    // llvm-mc-19 (gfx1100 and gfx1200): v_cndmask_b16 v0, v1, v2, s4.
    let code = [0x00, 0x00, 0x5d, 0xd6, 0x01, 0x05, 0x12, 0x00];
    for target in ["gfx1100", "gfx1201"] {
        let mut w = wave(isa(target, false));
        set(&mut w, 0, |_| 0xAAAA_0000);
        set(&mut w, 1, |_| 0x1111_0001);
        set(&mut w, 2, |_| 0x2222_0002);
        w.sgpr[4] = 0b0110;
        w.set_exec(0b0111);
        run(w.isa, &code, &mut w);
        assert_eq!(
            &w.vgpr[0][..4],
            &[0xAAAA_0001, 0xAAAA_0002, 0xAAAA_0002, 0xAAAA_0000],
            "{target}"
        );
    }
}

/// v_minmax_f32 / v_maxmin_f32 (gfx11) and the _num_f32 forms (gfx12):
/// min(max(S0, S1), S2) and max(min(S0, S1), S2), a NaN operand giving way
/// to the other as in v_min/v_max, denormals kept (MODE keeps them here).
#[test]
fn minmax_and_maxmin_f32() {
    // llvm-mc-19: gfx1100 v_minmax_f32 / v_maxmin_f32 v0, v1, v2, v3;
    // gfx1200 v_minmax_num_f32 / v_maxmin_num_f32 v0, v1, v2, v3.
    let forms: [(&str, [u8; 8], [u8; 8]); 2] = [
        (
            "gfx1100",
            [0x00, 0x00, 0x5f, 0xd6, 0x01, 0x05, 0x0e, 0x04],
            [0x00, 0x00, 0x5e, 0xd6, 0x01, 0x05, 0x0e, 0x04],
        ),
        (
            "gfx1201",
            [0x00, 0x00, 0x68, 0xd6, 0x01, 0x05, 0x0e, 0x04],
            [0x00, 0x00, 0x69, 0xd6, 0x01, 0x05, 0x0e, 0x04],
        ),
    ];
    let den = f32::from_bits(1);
    // (S0, S1, S2, minmax, maxmin)
    let cases: [(f32, f32, f32, f32, f32); 7] = [
        (1.0, 5.0, 3.0, 3.0, 3.0),
        (1.0, 5.0, 7.0, 5.0, 7.0),
        (5.0, 1.0, -3.0, -3.0, 1.0),
        (f32::NAN, 2.0, 3.0, 2.0, 3.0),
        (1.0, 2.0, f32::NAN, 2.0, 1.0),
        (f32::NEG_INFINITY, f32::INFINITY, 4.0, 4.0, 4.0),
        (den, 0.5, 1.0, 0.5, 1.0),
    ];
    for (target, minmax, maxmin) in forms {
        for (i, &(a, b, c, want_mm, want_xm)) in cases.iter().enumerate() {
            for (code, want) in [(minmax, want_mm), (maxmin, want_xm)] {
                let mut w = wave(isa(target, false));
                set(&mut w, 1, |_| a.to_bits());
                set(&mut w, 2, |_| b.to_bits());
                set(&mut w, 3, |_| c.to_bits());
                run(w.isa, &code, &mut w);
                assert_eq!(
                    f32::from_bits(w.vgpr[0][0]),
                    want,
                    "{target} case {i} {code:02x?}"
                );
            }
        }
        // A denormal result stays.
        let mut w = wave(isa(target, false));
        set(&mut w, 1, |_| den.to_bits());
        set(&mut w, 2, |_| 0);
        set(&mut w, 3, |_| 1f32.to_bits());
        run(w.isa, &minmax, &mut w);
        assert_eq!(w.vgpr[0][0], 1, "{target}");
    }
}

#[test]
fn integer_minmax_and_maxmin() {
    // llvm-mc-19, the same bytes on gfx1100 and gfx1201:
    // v_minmax_u32, v_maxmin_u32, v_minmax_i32, v_maxmin_i32 v0, v1, v2, v3.
    let mm_u = [0x00, 0x00, 0x63, 0xd6, 0x01, 0x05, 0x0e, 0x04];
    let xm_u = [0x00, 0x00, 0x62, 0xd6, 0x01, 0x05, 0x0e, 0x04];
    let mm_i = [0x00, 0x00, 0x65, 0xd6, 0x01, 0x05, 0x0e, 0x04];
    let xm_i = [0x00, 0x00, 0x64, 0xd6, 0x01, 0x05, 0x0e, 0x04];
    // (S0, S1, S2, minmax_u, maxmin_u, minmax_i, maxmin_i): -1 is the
    // largest unsigned and the smallest here signed.
    let cases: [(u32, u32, u32, [u32; 4]); 4] = [
        (1, 5, 3, [3, 3, 3, 3]),
        (1, 5, 7, [5, 7, 5, 7]),
        (u32::MAX, 2, 3, [3, 3, 2, 3]),
        (0x8000_0000, 0x7FFF_FFFF, 0, [0, 0x7FFF_FFFF, 0, 0]),
    ];
    for target in ["gfx1100", "gfx1201"] {
        for (a, b, c, want) in cases {
            for (code, want) in [mm_u, xm_u, mm_i, xm_i].iter().zip(want) {
                let mut w = wave(isa(target, true));
                set(&mut w, 1, |_| a);
                set(&mut w, 2, |_| b);
                set(&mut w, 3, |l| if l == 63 { 0 } else { c });
                run(w.isa, code, &mut w);
                assert_eq!(
                    w.vgpr[0][0], want,
                    "{target} {a:#x} {b:#x} {c:#x} {code:02x?}"
                );
            }
        }
    }
}

#[test]
fn signed_add_and_sub_wrap_or_saturate_with_clamp() {
    // llvm-mc-19: v_add_nc_i32 / v_sub_nc_i32 v0, v1, v2 [clamp] per family.
    let forms: [(&str, u8, u8); 3] = [
        ("gfx1030", 0x7f, 0x76),
        ("gfx1100", 0x26, 0x25),
        ("gfx1201", 0x26, 0x25),
    ];
    let enc = |op: u8, clamp: bool| {
        [
            0x00,
            if clamp { 0x80 } else { 0 },
            op,
            0xd7,
            0x01,
            0x05,
            0x02,
            0x00,
        ]
    };
    let max = i32::MAX as u32;
    let min = i32::MIN as u32;
    // (S0, S1, add, add clamp, sub, sub clamp)
    let cases: [(u32, u32, [u32; 4]); 4] = [
        (5, (-7i32) as u32, [(-2i32) as u32, (-2i32) as u32, 12, 12]),
        (max, 1, [min, max, max - 1, max - 1]),
        (min, 1, [min + 1, min + 1, max, min]),
        (min, max, [u32::MAX, u32::MAX, 1, min]),
    ];
    for (target, add, sub) in forms {
        for (a, b, want) in cases {
            let codes = [
                enc(add, false),
                enc(add, true),
                enc(sub, false),
                enc(sub, true),
            ];
            for (code, want) in codes.iter().zip(want) {
                let mut w = wave(isa(target, false));
                set(&mut w, 1, |_| a);
                set(&mut w, 2, |_| b);
                run(w.isa, code, &mut w);
                assert_eq!(w.vgpr[0][0], want, "{target} {a:#x} {b:#x} {code:02x?}");
            }
        }
    }
}

#[test]
fn minmax_and_maxmin_f16_keep_the_high_half() {
    // llvm-mc-19: gfx1100 v_minmax_f16 / v_maxmin_f16 v0, v1, v2, v3;
    // gfx1201 v_minmax_num_f16 / v_maxmin_num_f16 v0, v1, v2, v3.
    let forms: [(&str, [u8; 8], [u8; 8]); 2] = [
        (
            "gfx1100",
            [0x00, 0x00, 0x61, 0xd6, 0x01, 0x05, 0x0e, 0x04],
            [0x00, 0x00, 0x60, 0xd6, 0x01, 0x05, 0x0e, 0x04],
        ),
        (
            "gfx1201",
            [0x00, 0x00, 0x6a, 0xd6, 0x01, 0x05, 0x0e, 0x04],
            [0x00, 0x00, 0x6b, 0xd6, 0x01, 0x05, 0x0e, 0x04],
        ),
    ];
    let h = |x: f32| u32::from(super::float::f32_to_f16(x));
    let nan = 0x7E00;
    // (S0, S1, S2, minmax, maxmin) as f16 bits; a NaN gives way.
    let cases = [
        (h(1.0), h(5.0), h(3.0), h(3.0), h(3.0)),
        (h(5.0), h(1.0), h(-3.0), h(-3.0), h(1.0)),
        (nan, h(2.0), h(3.0), h(2.0), h(3.0)),
        (h(1.0), h(2.0), nan, h(2.0), h(1.0)),
    ];
    for (target, minmax, maxmin) in forms {
        for (a, b, c, want_mm, want_xm) in cases {
            for (code, want) in [(minmax, want_mm), (maxmin, want_xm)] {
                let mut w = wave(isa(target, false));
                set(&mut w, 0, |_| 0xABCD_0000);
                // High halves hold other values the operation must not read.
                set(&mut w, 1, |_| 0x4000_0000 | a);
                set(&mut w, 2, |_| 0x4000_0000 | b);
                set(&mut w, 3, |_| 0x4000_0000 | c);
                run(w.isa, &code, &mut w);
                assert_eq!(w.vgpr[0][0], 0xABCD_0000 | want, "{target} {code:02x?}");
            }
        }
    }
}
