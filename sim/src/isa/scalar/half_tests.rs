//! The scalar f16-result operations of `half` on llvm-mc-19's encodings
//! (the same bytes on gfx1151 and gfx1201; s_minimum/maximum_f16 are
//! gfx12's): one rounding to nearest even, overflow, NaN, infinities,
//! signed zeros, denormals, the high half written zero, f16 inline
//! constants, and MODE's refusals.

use relaunch_isa::Isa;

use super::super::execute;
use crate::isa::program::{self, Kind};
use crate::isa::wave::Wave;

/// Denormals kept, round to nearest even (as compute kernels start).
const MODE: u32 = 0xF0;

const ADD: [u8; 4] = [0x01, 0x02, 0x80, 0xa4];
const SUB: [u8; 4] = [0x01, 0x02, 0x00, 0xa5];
const MUL: [u8; 4] = [0x01, 0x02, 0x80, 0xa6];
const FMAC: [u8; 4] = [0x01, 0x02, 0x00, 0xa7];
/// s_min_f16 (gfx1151) / s_min_num_f16 (gfx1201), and max.
const MIN: [u8; 4] = [0x01, 0x02, 0x80, 0xa5];
const MAX: [u8; 4] = [0x01, 0x02, 0x00, 0xa6];
const MINIMUM: [u8; 4] = [0x01, 0x02, 0x80, 0xa8];
const MAXIMUM: [u8; 4] = [0x01, 0x02, 0x00, 0xa9];
const CVT: [u8; 4] = [0x01, 0x68, 0x80, 0xbe];
const CEIL: [u8; 4] = [0x01, 0x6b, 0x80, 0xbe];
const FLOOR: [u8; 4] = [0x01, 0x6c, 0x80, 0xbe];
const TRUNC: [u8; 4] = [0x01, 0x6d, 0x80, 0xbe];
const RNDNE: [u8; 4] = [0x01, 0x6e, 0x80, 0xbe];
/// s_add_f16 s0, s1, 1.0 / s_cmp_lt_f16 s1, 1.0 / s_cvt_f32_f16 s0, 1.0.
const ADD_ONE: [u8; 4] = [0x01, 0xf2, 0x80, 0xa4];
const CMP_LT_ONE: [u8; 4] = [0x01, 0xf2, 0x51, 0xbf];
const WIDEN_ONE: [u8; 4] = [0xf2, 0x69, 0x80, 0xbe];

const TARGETS: [&str; 2] = ["gfx1151", "gfx1201"];

fn wave(target: &str) -> Wave {
    let mut w = Wave::new(Isa::from_processor(target, false).unwrap(), 16);
    w.mode = MODE;
    w
}

fn step(w: &mut Wave, bytes: &[u8]) -> Result<(), String> {
    let mut code = bytes.to_vec();
    code.extend_from_slice(&0xBFB0_0000u32.to_le_bytes());
    let prog = program::build(w.isa, 0, &code);
    let inst = &prog.insts[0];
    let Kind::Salu(op) = inst.kind else {
        return Err(format!("{} is not prepared", inst.decoded.mnemonic()));
    };
    execute(w, inst, op).map(|_| ()).map_err(|e| e.to_string())
}

/// s0 = op(s1, s2) with garbage in the sources' and s0's high halves.
fn bin(target: &str, bytes: &[u8], a: u16, b: u16) -> u32 {
    let mut w = wave(target);
    w.sgpr[0] = 0xdead_0000;
    w.sgpr[1] = 0xbeef_0000 | u32::from(a);
    w.sgpr[2] = 0xcafe_0000 | u32::from(b);
    step(&mut w, bytes).unwrap();
    w.sgpr[0]
}

fn is_nan16(r: u32) -> bool {
    r >> 16 == 0 && r & 0x7C00 == 0x7C00 && r & 0x3FF != 0
}

#[test]
fn arithmetic_rounds_once_and_writes_the_low_half() {
    for t in TARGETS {
        // 1 + 2 = 3; the high halves of the sources are not read, D's
        // high half is written zero.
        assert_eq!(bin(t, &ADD, 0x3C00, 0x4000), 0x4200, "{t}");
        // 2048 + 1 is a tie between 2048 and 2050: to even (2048);
        // 2048 + 3 = 2051, a tie between 2050 and 2052: to even (2052).
        assert_eq!(bin(t, &ADD, 0x6800, 0x3C00), 0x6800);
        assert_eq!(bin(t, &ADD, 0x6800, 0x4200), 0x6802);
        // Overflow to infinity; inf - inf and NaN + x give NaN.
        assert_eq!(bin(t, &ADD, 0x7BFF, 0x7BFF), 0x7C00);
        assert!(is_nan16(bin(t, &SUB, 0x7C00, 0x7C00)));
        assert!(is_nan16(bin(t, &ADD, 0x7E00, 0x3C00)));
        // x - x is +0; -0 * 1 is -0.
        assert_eq!(bin(t, &SUB, 0x3C00, 0x3C00), 0);
        assert_eq!(bin(t, &MUL, 0x8000, 0x3C00), 0x8000);
        // Into the denormals: 2^-14 * 0.5 = 2^-15 (kept); 2^-24 * 0.5 is
        // a tie between 0 and 2^-24: to even (0).
        assert_eq!(bin(t, &MUL, 0x0400, 0x3800), 0x0200);
        assert_eq!(bin(t, &MUL, 0x0001, 0x3800), 0);
        // Inline constant 1.0 as an f16 operand is 0x3C00.
        let mut w = wave(t);
        w.sgpr[1] = 0x3C00;
        step(&mut w, &ADD_ONE).unwrap();
        assert_eq!(w.sgpr[0], 0x4000);
    }
}

#[test]
fn fmac_accumulates_into_the_low_half() {
    for t in TARGETS {
        // 2 * 3 + 1 = 7, rounded once; D's high half is not read.
        let mut w = wave(t);
        w.sgpr[0] = 0xDEAD_3C00;
        w.sgpr[1] = 0x4000;
        w.sgpr[2] = 0x4200;
        step(&mut w, &FMAC).unwrap();
        assert_eq!(w.sgpr[0], 0x4700, "{t}");
        // 1025 * 2 + 0.5 = 2050.5, between f16 2050 and 2052: 2050.
        w.sgpr[0] = 0x3800;
        w.sgpr[1] = 0x6401; // 1025
        w.sgpr[2] = 0x4000;
        step(&mut w, &FMAC).unwrap();
        assert_eq!(w.sgpr[0], 0x6801, "{t}");
    }
}

#[test]
fn min_max_and_ieee_minimum_maximum() {
    for t in TARGETS {
        assert_eq!(bin(t, &MIN, 0x3C00, 0x4000), 0x3C00);
        assert_eq!(bin(t, &MAX, 0x3C00, 0x4000), 0x4000);
        // A NaN gives way to the other operand.
        assert_eq!(bin(t, &MIN, 0x7E00, 0x4000), 0x4000);
        assert_eq!(bin(t, &MAX, 0x4000, 0x7E00), 0x4000);
        assert_eq!(bin(t, &MIN, 0xFC00, 0x4000), 0xFC00);
    }
    // gfx12's minimum/maximum: a NaN wins (quiet), -0 below +0.
    let t = "gfx1201";
    assert!(is_nan16(bin(t, &MINIMUM, 0x7E00, 0x4000)));
    assert!(is_nan16(bin(t, &MAXIMUM, 0x3C00, 0x7C01)));
    assert_eq!(bin(t, &MINIMUM, 0x0000, 0x8000), 0x8000);
    assert_eq!(bin(t, &MAXIMUM, 0x8000, 0x0000), 0x0000);
    assert_eq!(bin(t, &MAXIMUM, 0x3C00, 0x4000), 0x4000);
}

#[test]
fn roundings_to_integers() {
    // (input, ceil, floor, trunc, rndne): 2.5, -2.5, 3.5, -0.5, inf.
    let cases = [
        (0x4100, 0x4200, 0x4000, 0x4000, 0x4000),
        (0xC100, 0xC000, 0xC200, 0xC000, 0xC000),
        (0x4300, 0x4400, 0x4200, 0x4200, 0x4400),
        (0xB800, 0x8000, 0xBC00, 0x8000, 0x8000),
        (0x7C00, 0x7C00, 0x7C00, 0x7C00, 0x7C00),
    ];
    for t in TARGETS {
        for (x, c, f, tr, r) in cases {
            for (bytes, want) in [(CEIL, c), (FLOOR, f), (TRUNC, tr), (RNDNE, r)] {
                assert_eq!(bin(t, &bytes, x, 0), want, "{t} {bytes:x?} on {x:#x}");
            }
        }
        assert!(is_nan16(bin(t, &CEIL, 0x7E00, 0)));
    }
}

#[test]
fn f32_to_f16_conversion() {
    let f = |x: f32| x.to_bits();
    // (f32 bits, f16 result): exact, ties, overflow, NaN, denormals.
    let cases = [
        (f(1.0), 0x3C00),
        (f(65519.0), 0x7BFF),
        // 65520 is halfway to 65536: to even, infinity.
        (f(65520.0), 0x7C00),
        (f(-1e10), 0xFC00),
        (f(2f32.powi(-25)), 0),
        (f(3.0 * 2f32.powi(-26)), 0x0001),
        (f(-2f32.powi(-14)), 0x8400),
    ];
    for t in TARGETS {
        let mut w = wave(t);
        for (x, want) in cases {
            w.sgpr[1] = x;
            step(&mut w, &CVT).unwrap();
            assert_eq!(w.sgpr[0], want, "{t} on {x:#x}");
        }
        w.sgpr[1] = f(f32::NAN);
        step(&mut w, &CVT).unwrap();
        assert!(is_nan16(w.sgpr[0]));
        // An f32 denormal input flushed by MODE's f32 field (sign kept).
        w.mode = 0xC0;
        w.sgpr[1] = 0x8000_0001;
        step(&mut w, &CVT).unwrap();
        assert_eq!(w.sgpr[0], 0x8000);
    }
}

#[test]
fn mode_refusals_name_the_reason() {
    for t in TARGETS {
        // f16 denormals flushed (f32 kept): refused, as on the vector ALU.
        let mut w = wave(t);
        w.mode = 0x30;
        let e = step(&mut w, &ADD).unwrap_err();
        assert!(e.contains("s_add_f16") && e.contains("denormals"), "{e}");
        // Directed f16 rounding: refused where it matters, not for the
        // exact roundings to an integer.
        let mut w = wave(t);
        w.mode = MODE | 0x4;
        let e = step(&mut w, &MUL).unwrap_err();
        assert!(e.contains("FP_ROUND"), "{e}");
        w.sgpr[1] = 0x4100;
        step(&mut w, &CEIL).unwrap();
        assert_eq!(w.sgpr[0], 0x4200);
        // The conversion under any directed mode (here the f32 field).
        let mut w = wave(t);
        w.mode = MODE | 0x1;
        assert!(step(&mut w, &CVT).unwrap_err().contains("FP_ROUND"));
    }
}

#[test]
fn f16_inline_constants_in_compares_and_widening() {
    for t in TARGETS {
        // s_cmp_lt_f16 s1, 1.0 reads 1.0 as 0x3C00 (0.5 < 1.0).
        let mut w = wave(t);
        w.sgpr[1] = 0x3800;
        step(&mut w, &CMP_LT_ONE).unwrap();
        assert!(w.scc, "{t}");
        w.sgpr[1] = 0x4000;
        step(&mut w, &CMP_LT_ONE).unwrap();
        assert!(!w.scc, "{t}");
        // s_cvt_f32_f16 s0, 1.0 widens 0x3C00.
        step(&mut w, &WIDEN_ONE).unwrap();
        assert_eq!(w.sgpr[0], 1f32.to_bits(), "{t}");
    }
}
