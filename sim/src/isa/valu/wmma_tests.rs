//! WMMA tests: random matrices against the reference of `wmma_ref`, special
//! values and rounding, integer signedness and clamp, refusals.

use super::super::program::{self, Kind};
use super::super::wave::Wave;
use super::tests::isa;
use super::wmma::{Acc, WmmaOp};
use super::wmma_ref::{check, encode, opcode, Case, A, B, C, D};

const GFX11: [WmmaOp; 6] = [
    WmmaOp::F32F16,
    WmmaOp::F32Bf16,
    WmmaOp::F16F16,
    WmmaOp::Bf16Bf16,
    WmmaOp::I32Iu8,
    WmmaOp::I32Iu4,
];

const GFX12: [WmmaOp; 11] = [
    WmmaOp::F32F16,
    WmmaOp::F32Bf16,
    WmmaOp::F16F16,
    WmmaOp::Bf16Bf16,
    WmmaOp::I32Iu8,
    WmmaOp::I32Iu4,
    WmmaOp::I32Iu4K32,
    WmmaOp::F32Fp8Fp8,
    WmmaOp::F32Fp8Bf8,
    WmmaOp::F32Bf8Fp8,
    WmmaOp::F32Bf8Bf8,
];

#[test]
fn random_matrices_match_the_reference_on_gfx11() {
    for wave64 in [false, true] {
        for op in GFX11 {
            let (_, _, acc, _) = op.shape();
            let opsels: &[bool] = match acc {
                Acc::F16 | Acc::Bf16 => &[false, true],
                Acc::F32 | Acc::I32 => &[false],
            };
            let negs: &[u32] = if acc == Acc::I32 { &[0, 1, 2, 3] } else { &[0] };
            for &opsel_hi in opsels {
                for &neg in negs {
                    for seed in 0..3 {
                        let case = Case {
                            op,
                            target: "gfx1100",
                            wave64,
                            neg,
                            clamp: false,
                            opsel_hi,
                        };
                        check(&case, 1000 * seed + u64::from(neg) * 7 + 11);
                    }
                }
            }
        }
    }
}

#[test]
fn random_matrices_match_the_reference_on_gfx12() {
    for wave64 in [false, true] {
        for op in GFX12 {
            let (_, _, acc, _) = op.shape();
            let negs: &[u32] = if acc == Acc::I32 { &[0, 1, 2, 3] } else { &[0] };
            for &neg in negs {
                for seed in 0..3 {
                    let case = Case {
                        op,
                        target: "gfx1201",
                        wave64,
                        neg,
                        clamp: false,
                        opsel_hi: false,
                    };
                    check(&case, 977 * seed + u64::from(neg) * 5 + 3);
                }
            }
        }
    }
}

/// Run one instruction on a wave whose A/B/C registers are filled with the
/// same value per register and lane pattern; returns D's lane 0, VGPR 0.
fn d00(target: &str, op: WmmaOp, a: u32, b: u32, c: u32, mods: (u32, u32, bool)) -> u32 {
    let (neg, neg_hi, clamp) = mods;
    let i = isa(target, false);
    let mut w = Wave::new(i, 48);
    for reg in 0..8 {
        for l in 0..32 {
            w.vgpr[A as usize + reg][l] = a;
            w.vgpr[B as usize + reg][l] = b;
            w.vgpr[C as usize + reg][l] = c;
        }
    }
    super::tests::run(i, &encode(opcode(op), neg, neg_hi, 0, clamp), &mut w);
    w.vgpr[D as usize][0]
}

#[test]
fn special_values_and_rounding() {
    let one = 0x3c00_3c00; // f16 pairs of 1.0
                           // 16 x (1 x 1) + 1 = 17.
    assert_eq!(
        f32::from_bits(d00(
            "gfx1100",
            WmmaOp::F32F16,
            one,
            one,
            1f32.to_bits(),
            (0, 0, false)
        )),
        17.0
    );
    // NEG: -A (both halves) gives -16 + 1; NEG_HI[2] |C| then NEG[2] -|C|.
    assert_eq!(
        f32::from_bits(d00(
            "gfx1100",
            WmmaOp::F32F16,
            one,
            one,
            1f32.to_bits(),
            (1, 1, false)
        )),
        -15.0
    );
    assert_eq!(
        f32::from_bits(d00(
            "gfx1100",
            WmmaOp::F32F16,
            one,
            one,
            (-1f32).to_bits(),
            (4, 4, false)
        )),
        15.0
    );
    // NaN in A: canonical quiet NaN. inf x 0: NaN. inf + finite: inf.
    let nan = 0x7e01_7e01;
    assert_eq!(
        d00("gfx1100", WmmaOp::F32F16, nan, one, 0, (0, 0, false)),
        0x7fc0_0000
    );
    assert_eq!(
        d00("gfx1201", WmmaOp::F32F16, 0x7c00_7c00, 0, 0, (0, 0, false)),
        0x7fc0_0000
    );
    assert_eq!(
        d00(
            "gfx1201",
            WmmaOp::F32F16,
            0x7c00_7c00,
            one,
            0,
            (0, 0, false)
        ),
        0x7f80_0000
    );
    // inf - inf (B's halves +inf and -inf): NaN.
    assert_eq!(
        d00(
            "gfx1100",
            WmmaOp::F16F16,
            0x7c00_7c00,
            0xfc00_7c00,
            0,
            (0, 0, false)
        ) & 0xffff,
        0x7e00
    );
    // f16 result overflow: 16 x (255 x 255) > 65504 gives infinity.
    let h255 = 0x5bf8_5bf8;
    assert_eq!(
        d00("gfx1100", WmmaOp::F16F16, h255, h255, 0, (0, 0, false)) & 0xffff,
        0x7c00
    );
    // One rounding of the exact sum: 16 x 2^-28 (A = 2^-14, B = 2^-14)
    // added to 1.0 is 1 + 2^-24, a tie below 1 + 2^-23: to even, 1.0; a
    // separate rounding per product would also give 1.0, but C = 1 + 2^-23
    // (odd) goes up to 1 + 2^-22.
    let tiny = 0x0400_0400; // 2^-14
    assert_eq!(
        f32::from_bits(d00(
            "gfx1100",
            WmmaOp::F32F16,
            tiny,
            tiny,
            1f32.to_bits(),
            (0, 0, false)
        )),
        1.0
    );
    let odd = 1f32.to_bits() + 1;
    assert_eq!(
        d00("gfx1100", WmmaOp::F32F16, tiny, tiny, odd, (0, 0, false)),
        1f32.to_bits() + 2
    );
    // Denormal f16 inputs count: 2^-24 x 1 x 16 = 2^-20.
    assert_eq!(
        f32::from_bits(d00(
            "gfx1100",
            WmmaOp::F32F16,
            0x0001_0001,
            one,
            0,
            (0, 0, false)
        )),
        2f32.powi(-20)
    );
    // bf16 result, one rounding to nearest even: 16 x 2^-12 = 2^-8 is half
    // an ulp of 1.0: a tie, to even (1.0); from 1 + 2^-7 (odd) up to
    // 1 + 2^-6.
    let bf_one = 0x3f80_3f80;
    let bf_2m12 = 0x3980_3980;
    assert_eq!(
        d00(
            "gfx1100",
            WmmaOp::Bf16Bf16,
            bf_2m12,
            bf_one,
            0x3f80,
            (0, 0, false)
        ) & 0xffff,
        0x3f80
    );
    assert_eq!(
        d00(
            "gfx1100",
            WmmaOp::Bf16Bf16,
            bf_2m12,
            bf_one,
            0x3f81,
            (0, 0, false)
        ) & 0xffff,
        0x3f82
    );
    // fp8: 16 x (448 x 448) + 0 (E4M3 max is 448 = 0x7e).
    let f448 = 0x7e7e_7e7e;
    assert_eq!(
        f32::from_bits(d00(
            "gfx1201",
            WmmaOp::F32Fp8Fp8,
            f448,
            f448,
            0,
            (0, 0, false)
        )),
        16.0 * 448.0 * 448.0
    );
    // E4M3 NaN (0x7f) gives NaN; E5M2 infinity (0x7c) gives infinity.
    assert_eq!(
        d00(
            "gfx1201",
            WmmaOp::F32Fp8Fp8,
            0x7f7f_7f7f,
            0x3838_3838,
            0,
            (0, 0, false)
        ),
        0x7fc0_0000
    );
    assert_eq!(
        d00(
            "gfx1201",
            WmmaOp::F32Bf8Bf8,
            0x7c7c_7c7c,
            0x3c3c_3c3c,
            0,
            (0, 0, false)
        ),
        0x7f80_0000
    );
}

#[test]
fn integer_signedness_wrap_and_clamp() {
    // iu8 all 0xff: unsigned 255 x 255 x 16 + C; signed (-1)(-1) x 16.
    let ff = 0xffff_ffff;
    assert_eq!(
        d00("gfx1100", WmmaOp::I32Iu8, ff, ff, 5, (0, 0, false)),
        255 * 255 * 16 + 5
    );
    assert_eq!(
        d00("gfx1100", WmmaOp::I32Iu8, ff, ff, 5, (3, 0, false)),
        16 + 5
    );
    assert_eq!(
        d00("gfx1100", WmmaOp::I32Iu8, ff, ff, 5, (1, 0, false)),
        (-255i32 * 16 + 5) as u32
    );
    // iu4: 15 x 15 x 16 unsigned, (-1)(15) x 16 with A signed.
    assert_eq!(
        d00("gfx1201", WmmaOp::I32Iu4, ff, ff, 0, (0, 0, false)),
        15 * 15 * 16
    );
    assert_eq!(
        d00("gfx1201", WmmaOp::I32Iu4, ff, ff, 0, (1, 0, false)),
        (-15i32 * 16) as u32
    );
    assert_eq!(
        d00("gfx1201", WmmaOp::I32Iu4K32, ff, ff, 0, (0, 0, false)),
        15 * 15 * 32
    );
    // Past i32: wraps, or saturates with clamp.
    let big = i32::MAX as u32 - 10;
    assert_eq!(
        d00("gfx1100", WmmaOp::I32Iu8, ff, ff, big, (0, 0, false)),
        big.wrapping_add(255 * 255 * 16)
    );
    assert_eq!(
        d00("gfx1100", WmmaOp::I32Iu8, ff, ff, big, (0, 0, true)),
        i32::MAX as u32
    );
    let low = (i32::MIN + 10) as u32;
    assert_eq!(
        d00("gfx1201", WmmaOp::I32Iu8, ff, ff, low, (1, 0, true)),
        i32::MIN as u32
    );
}

#[test]
fn integer_neg_c_without_clamp() {
    // llvm-mc-19 gfx1100: `v_wmma_i32_16x16x16_iu8 v[16:23], v[0:3],
    // v[4:7], v[16:23] neg_lo:[1,1,1]` (Tensile's int8 form) and the iu4
    // one with v[0:1], v[2:3]: prepared, decoded with LLVM's mnemonic.
    for (code, name) in [
        (
            [0x10, 0x40, 0x44, 0xcc, 0x00, 0x09, 0x42, 0xfc],
            "v_wmma_i32_16x16x16_iu8",
        ),
        (
            [0x10, 0x40, 0x45, 0xcc, 0x00, 0x05, 0x42, 0xfc],
            "v_wmma_i32_16x16x16_iu4",
        ),
    ] {
        let mut bytes = code.to_vec();
        bytes.extend_from_slice(&0xBFB0_0000u32.to_le_bytes());
        let prog = program::build(isa("gfx1100", false), 0, &bytes);
        assert_eq!(prog.insts[0].decoded.mnemonic(), name);
        assert!(matches!(prog.insts[0].kind, Kind::Valu(_)), "{name}");
    }
    // The same wrapping sum as without NEG[2]: random matrices against the
    // reference (which reads C as the i32 it is), signed and unsigned A/B.
    for wave64 in [false, true] {
        for op in [WmmaOp::I32Iu8, WmmaOp::I32Iu4] {
            for neg in 4..8 {
                let case = Case {
                    op,
                    target: "gfx1100",
                    wave64,
                    neg,
                    clamp: false,
                    opsel_hi: false,
                };
                check(&case, 31 * u64::from(neg) + 5);
            }
        }
    }
    // C near the i32 limits: wraps exactly as with NEG[2] clear; a
    // negative C stays negative (not negated).
    let ff = 0xffff_ffff;
    let big = i32::MAX as u32 - 10;
    for neg in [4, 7] {
        assert_eq!(
            d00("gfx1100", WmmaOp::I32Iu8, ff, ff, big, (neg, 0, false)),
            d00("gfx1100", WmmaOp::I32Iu8, ff, ff, big, (neg & 3, 0, false)),
        );
    }
    assert_eq!(
        d00(
            "gfx1100",
            WmmaOp::I32Iu8,
            ff,
            ff,
            (-100i32) as u32,
            (7, 0, false)
        ),
        (16 - 100i32) as u32
    );
    assert_eq!(
        d00("gfx1100", WmmaOp::I32Iu8, ff, ff, big, (4, 0, false)),
        big.wrapping_add(255 * 255 * 16)
    );
}

#[test]
fn refusals_and_exec() {
    let prep = |target: &str, code: &[u8]| -> bool {
        let i = isa(target, false);
        let mut bytes = code.to_vec();
        bytes.extend_from_slice(&0xBFB0_0000u32.to_le_bytes());
        matches!(program::build(i, 0, &bytes).insts[0].kind, Kind::Valu(_))
    };
    assert!(prep("gfx1100", &encode(64, 0, 0, 0, false)));
    // Clamp on a float form, OPSEL on an f32 result, NEG on fp8: refused.
    assert!(!prep("gfx1100", &encode(64, 0, 0, 0, true)));
    assert!(!prep("gfx1100", &encode(64, 0, 0, 4, false)));
    assert!(!prep("gfx1201", &encode(70, 1, 0, 0, false)));
    // NEG[2] on an integer form: refused with clamp (where "C signed" and
    // "ignored" would differ, and no document says which), and on gfx12
    // (LLVM 19: invalid encoding); without clamp on gfx11 it runs
    // (`integer_neg_c_without_clamp`).
    assert!(!prep("gfx1100", &encode(68, 4, 0, 0, true)));
    assert!(!prep("gfx1100", &encode(69, 7, 0, 0, true)));
    assert!(!prep("gfx1201", &encode(68, 4, 0, 0, false)));
    assert!(prep("gfx1100", &encode(68, 4, 0, 0, false)));
    // gfx12 inline constants as C (llvm-mc-19): `v_wmma_bf16_16x16x16_bf16
    // v[0:3], v[8:11], v[16:19], 1.0` and `v_wmma_f32_16x16x16_f16 v[0:7],
    // v[8:11], v[16:19], 1` are refused; 0, 1.0 on f32/f16 and integers
    // on i32 run (`inline_constant_c`).
    assert!(!prep(
        "gfx1201",
        &[0x00, 0x40, 0x43, 0xcc, 0x08, 0x21, 0xca, 0x1b]
    ));
    assert!(!prep(
        "gfx1201",
        &[0x00, 0x40, 0x40, 0xcc, 0x08, 0x21, 0x06, 0x1a]
    ));
    // The sparse forms: not implemented.
    let swmmac = 0xCC50_4000u32
        .to_le_bytes()
        .iter()
        .chain(0x1c02_2108u32.to_le_bytes().iter())
        .copied()
        .collect::<Vec<_>>();
    assert!(!prep("gfx1201", &swmmac));
    // Lanes of EXEC clear: refused when run.
    let i = isa("gfx1100", false);
    let mut w = Wave::new(i, 48);
    w.set_exec(0xffff);
    let mut bytes = encode(64, 0, 0, 0, false);
    bytes.extend_from_slice(&0xBFB0_0000u32.to_le_bytes());
    let prog = program::build(i, 0, &bytes);
    let err = super::run(&mut w, &prog.insts[0]).unwrap_err();
    assert!(err.to_string().contains("EXEC"), "{err}");
}

#[test]
fn wave64_encodings_from_llvm_mc_decode_and_are_prepared() {
    // llvm-mc-19 -mattr=+wavefrontsize64: gfx1100
    // `v_wmma_f32_16x16x16_f16 v[0:3], v[8:15], v[16:23], v[0:3]` and
    // gfx1200 `v_wmma_f32_16x16x16_f16 v[0:3], v[8:9], v[16:17], v[0:3]`
    // (the same bytes: the wave size changes the register counts only).
    let bytes = [
        0x00, 0x40, 0x40, 0xcc, 0x08, 0x21, 0x02, 0x1c, 0x00, 0x00, 0xb0, 0xbf,
    ];
    for target in ["gfx1100", "gfx1201"] {
        let prog = program::build(isa(target, true), 0, &bytes);
        assert_eq!(prog.insts[0].decoded.mnemonic(), "v_wmma_f32_16x16x16_f16");
        assert!(matches!(prog.insts[0].kind, Kind::Valu(_)), "{target}");
    }
}

#[test]
fn inline_constant_c() {
    // llvm-mc-19 gfx1200: v_wmma_f32_16x16x16_f16 v[0:7], v[8:11],
    // v[16:19], 1.0 / ... 0; v_wmma_f16_16x16x16_f16 v[0:3], v[8:11],
    // v[16:19], 1.0; v_wmma_i32_16x16x16_iu8 v[0:7], v[8:9], v[16:17], 1.
    // A = B = 0 (so D is C): every element of D is the constant.
    let cases: [([u8; 8], u32); 4] = [
        (
            [0x00, 0x40, 0x40, 0xcc, 0x08, 0x21, 0xca, 0x1b],
            1f32.to_bits(),
        ),
        ([0x00, 0x40, 0x40, 0xcc, 0x08, 0x21, 0x02, 0x1a], 0),
        (
            [0x00, 0x40, 0x42, 0xcc, 0x08, 0x21, 0xca, 0x1b],
            0x3c00_3c00,
        ),
        ([0x00, 0x40, 0x44, 0xcc, 0x08, 0x21, 0x06, 0x1a], 1),
    ];
    for (code, want) in cases {
        for wave64 in [false, true] {
            let i = isa("gfx1201", wave64);
            let mut w = Wave::new(i, 48);
            for reg in 0..8 {
                for l in 0..w.lanes {
                    w.vgpr[reg][l] = 0xdead_beef;
                }
            }
            super::tests::run(i, &code, &mut w);
            let n = if code[2] == 0x42 { 4 } else { 8 } / if wave64 { 2 } else { 1 };
            for reg in 0..n {
                for l in 0..w.lanes {
                    assert_eq!(w.vgpr[reg][l], want, "{code:02x?} v{reg} lane {l}");
                }
            }
        }
    }
}
