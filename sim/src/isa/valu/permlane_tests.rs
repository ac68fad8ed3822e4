//! v_permlane16_b32 and v_permlanex16_b32 on llvm-mc-19's encodings
//! (VOP3 opcode 0x377/0x378 on gfx10.3, 0x25b/0x25c on gfx11 and gfx12;
//! `v1, v2, s3, s4`, OP_SEL[0] FI in bit 11, OP_SEL[1] BOUND_CTRL in 12).

use super::super::wave::Wave;
use super::tests::{isa, run, set, wave};

fn bytes(target: &str, cross: bool, opsel: u8) -> [u8; 8] {
    let (lo, hi) = match target {
        "gfx1030" => (0x77 + u8::from(cross), 0xd7),
        _ => (0x5b + u8::from(cross), 0xd6),
    };
    [0x01, opsel << 3, lo, hi, 0x02, 0x07, 0x10, 0x00]
}

fn filled(target: &str, wave64: bool, sel: u64) -> Wave {
    let mut w = wave(isa(target, wave64));
    set(&mut w, 2, |l| 100 + l as u32);
    set(&mut w, 1, |_| 0xAAAA);
    w.sgpr[3] = sel as u32;
    w.sgpr[4] = (sel >> 32) as u32;
    w
}

const TARGETS: [(&str, bool); 4] = [
    ("gfx1030", false),
    ("gfx1030", true),
    ("gfx1100", false),
    ("gfx1201", true),
];

#[test]
fn permlane16_gathers_within_each_row() {
    // Nibble i = 15 - i: each row reversed.
    let reverse = 0x0123_4567_89AB_CDEFu64;
    for (target, wave64) in TARGETS {
        let mut w = filled(target, wave64, reverse);
        run(w.isa, &bytes(target, false, 0), &mut w);
        for l in 0..w.lanes {
            let want = 100 + (l / 16 * 16 + 15 - l % 16) as u32;
            assert_eq!(w.vgpr[1][l], want, "{target} wave64 {wave64} lane {l}");
        }
    }
}

#[test]
fn permlanex16_gathers_from_the_other_row_of_the_half() {
    // Nibble i = i: lane 16r + i reads lane 16(r ^ 1) + i; with nibble
    // i = 0 every lane reads the other row's first lane.
    for (sel, first) in [(0xFEDC_BA98_7654_3210u64, false), (0, true)] {
        for (target, wave64) in TARGETS {
            let mut w = filled(target, wave64, sel);
            run(w.isa, &bytes(target, true, 0), &mut w);
            for l in 0..w.lanes {
                let from = ((l / 16) ^ 1) * 16 + if first { 0 } else { l % 16 };
                assert_eq!(w.vgpr[1][l], 100 + from as u32, "{target} lane {l}");
            }
        }
    }
}

#[test]
fn an_inactive_source_lane_is_read_with_fi_zero_with_bound_ctrl_else_kept() {
    // Every lane reads lane 3 of its row; lane 3 is inactive.
    let sel = 0x3333_3333_3333_3333u64;
    for (target, wave64) in TARGETS {
        for (opsel, row0) in [(0, 0xAAAA), (2, 0), (1, 103), (3, 103)] {
            let mut w = filled(target, wave64, sel);
            w.set_exec(!(1u64 << 3));
            run(w.isa, &bytes(target, false, opsel), &mut w);
            for l in 0..w.lanes {
                let want = match l {
                    3 => 0xAAAA,
                    0..=15 => row0,
                    _ => 100 + (l / 16 * 16 + 3) as u32,
                };
                assert_eq!(w.vgpr[1][l], want, "{target} op_sel {opsel} lane {l}");
            }
        }
    }
}
