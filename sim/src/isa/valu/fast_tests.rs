//! The resolved forms (`fast`) against the general path: every VOP1,
//! VOP2, VOP3 and VOPC opcode of each family that resolves, with VGPR, SGPR, inline and
//! literal first sources, on random lanes (special floats included) under
//! random EXEC (full, sparse, one or two lanes, none) and VCC, in wave32 and wave64, in MODEs the forms run and
//! in ones they hand to the general path: the same registers after.

use relaunch_isa::{Family, Format};

use super::super::program;
use super::super::wave::Wave;
use super::tests::isa;

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A lane value: often a special float or a small integer.
    fn lane(&mut self) -> u32 {
        const SPECIAL: [u32; 9] = [
            0xFFFF_FFFF, // a NaN; all ones for the carries
            0x7FC0_0000, // quiet NaN
            0x7F80_0001, // signalling NaN
            0x7F80_0000, // +inf
            0xFF80_0000, // -inf
            0x8000_0000, // -0
            0x0000_0001, // smallest denormal
            0x807F_FFFF, // largest negative denormal
            0x3F80_0000, // 1.0
        ];
        let r = self.next();
        match r % 4 {
            0 => SPECIAL[(r >> 8) as usize % SPECIAL.len()],
            1 => (r >> 8) as u32 % 64,
            _ => (r >> 16) as u32,
        }
    }
}

fn word(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// `op` with VDST v3 (a VOP3 compare: s3), second source v2 and first
/// source `src0` (a 9-bit source code; 255 takes the literal): VOP1, VOP2,
/// VOPC (into VCC), or VOP3 with no
/// modifiers but NEG (`neg`, bits 63:61), v0 as the third source, and VCC
/// as the carry-out (`sd`) and carry-in of the VOP3SD forms.
fn encode(format: Format, op: u16, sd: bool, src0: u32, neg: u32) -> Vec<u8> {
    let op = u32::from(op);
    let mut out = match format {
        Format::Vop1 => word((0x3F << 25) | (3 << 17) | (op << 9) | src0).to_vec(),
        Format::Vop2 => word((op << 25) | (3 << 17) | (2 << 9) | src0).to_vec(),
        Format::Vopc => word((0x3E << 25) | (op << 17) | (2 << 9) | src0).to_vec(),
        _ => {
            let (sdst, src2) = if sd { (106, 106) } else { (0, 256) };
            let mut v = word((0x35 << 26) | (op << 16) | (sdst << 8) | 3).to_vec();
            v.extend(word(src0 | (258 << 9) | (src2 << 18) | (neg << 29)));
            v
        }
    };
    if src0 == 255 {
        out.extend(word(0x4049_0FDB));
    }
    out
}

#[test]
fn resolved_forms_match_the_general_path() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for (name, family) in [
        ("gfx1030", Family::Gfx10),
        ("gfx1100", Family::Gfx11),
        ("gfx1200", Family::Gfx12),
    ] {
        for wave64 in [false, true] {
            let i = isa(name, wave64);
            let (mut resolved, mut compares) = (0, 0);
            for format in [Format::Vop1, Format::Vop2, Format::Vop3, Format::Vopc] {
                for row in relaunch_isa::opcodes(family, format) {
                    let sd = row.sdst != relaunch_isa::table::Dst::None;
                    // VOP3 with each NEG setting (the float forms take it).
                    let negs = if format == Format::Vop3 { 0..8 } else { 0..1 };
                    // v1, s5, the integer 1, 0.5, a literal.
                    for (src0, neg) in [257, 5, 0x81, 0xF0, 255]
                        .into_iter()
                        .flat_map(|s| negs.clone().map(move |n| (s, n)))
                    {
                        let bytes = encode(format, row.code, sd, src0, neg);
                        let prog = program::build(i, 0, &bytes);
                        let inst = &prog.insts[0];
                        if inst.fast.is_none() {
                            continue;
                        }
                        resolved += 1;
                        compares += usize::from(format == Format::Vopc);
                        for mode in [0xF0, 0x00, 0xF1] {
                            for _ in 0..8 {
                                let mut w = Wave::new(i, 8);
                                w.mode = mode;
                                for r in 0..4 {
                                    for l in 0..w.lanes {
                                        w.vgpr[r][l] = rng.lane();
                                    }
                                }
                                w.sgpr[5] = rng.lane();
                                w.sgpr[106] = rng.next() as u32;
                                w.sgpr[107] = rng.next() as u32;
                                // Full, random, one or two lanes (the
                                // forms' lane-by-lane path), none.
                                let bit = |r: &mut Rng| 1u64 << (r.next() % 64);
                                let exec = match rng.next() % 6 {
                                    0 | 1 => u64::MAX,
                                    2 => rng.next(),
                                    3 => bit(&mut rng),
                                    4 => bit(&mut rng) | bit(&mut rng),
                                    _ => 0,
                                };
                                w.set_exec(exec);
                                let mut general = w.clone();
                                let a = super::run(&mut w, inst).map_err(|e| e.to_string());
                                let b = super::general(&mut general, inst)
                                    .map_err(|e| super::name_fault(e, inst).to_string());
                                let what = format!(
                                    "{} src0 {src0} neg {neg} mode {mode:#x} on {name}",
                                    row.name
                                );
                                assert_eq!(a, b, "{what}");
                                assert_eq!(w.vgpr, general.vgpr, "{what}");
                                assert_eq!(w.sgpr, general.sgpr, "{what}");
                                assert_eq!(w.exec, general.exec, "{what}");
                            }
                        }
                    }
                }
            }
            // The adds, multiplies, moves, selects and carries of each family.
            assert!(resolved >= 60, "{name}: only {resolved} resolved forms");
            // The eq/ne/lt/... of u32, i32 and f32 (with each first source).
            assert!(compares >= 100, "{name}: only {compares} resolved compares");
        }
    }
}
