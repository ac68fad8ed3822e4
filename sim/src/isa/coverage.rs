//! What the interpreter would refuse in a kernel, found before it runs:
//! the kernel is decoded from its entry as a dispatch would decode it
//! (`program::build_in`: every instruction reachable by fall-through,
//! branches, callees and long-branch targets, in the whole code given,
//! before the entry too; a call's return point only when its callee can
//! return) and each instruction is classified the same way. What only a
//! run can tell (MODE's directed rounding, an LDS access outside the
//! allocation, scratch) is not known here. A call whose pair is not a
//! PC-relative constant on every path to it (`calls::jumps`; a function
//! pointer loaded from memory or computed) reaches code a run decodes only
//! when it gets there (`growth`), so what runs there is not known here and
//! the call stops the verdict (`indirect_calls`); so does a direct call or
//! a long branch (`s_getpc_b64`-based `s_setpc_b64`) to code outside the
//! bytes given (a dispatch decodes the kernel's whole allocation, so give
//! the whole text section or segment).

use std::collections::BTreeMap;

use relaunch_isa::{Decoded, Format, Instruction, Isa};

use super::calls;
use super::program::{self, Kind};

/// The static verdict on one kernel's code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Reachable instructions decoded.
    pub instructions: usize,
    /// Mnemonics (as LLVM spells them, `_sdwa`/`_dpp` forms apart) the
    /// interpreter does not execute, with how often each occurs.
    pub missing: BTreeMap<String, usize>,
    /// Reachable words the decoder does not know.
    pub undecodable: usize,
    /// Calls (`s_swappc_b64`) whose target is not a PC-relative constant
    /// on every path to them: a run decodes what they reach when it gets
    /// there, unchecked here.
    pub indirect_calls: usize,
    /// Direct calls to code outside the bytes given (at run time, outside
    /// the kernel's code allocation): nothing there to decode.
    pub outside_calls: usize,
    /// Long branches (`s_setpc_b64` of a PC-relative constant) to code
    /// outside the kernel's slice: the builder cannot decode their target.
    pub outside_branches: usize,
}

impl Coverage {
    /// Whether the interpreter executes every reachable instruction.
    pub fn runs(&self) -> bool {
        self.missing.is_empty()
            && self.undecodable == 0
            && self.indirect_calls == 0
            && self.outside_calls == 0
            && self.outside_branches == 0
    }
}

/// The coverage of the kernel whose entry is byte `entry_at` of `code`
/// (the whole code the kernel is loaded with: its text section or
/// segment).
pub fn coverage(isa: Isa, code: &[u8], entry_at: usize) -> Coverage {
    let prog = program::build_in(isa, entry_at as u64, code, entry_at);
    let mut out = Coverage::default();
    // Keyed by offset in `code`, as the builder follows calls.
    let at = |i: &program::Inst| (entry_at as i64 + i.from_entry()) as u32;
    let decoded: BTreeMap<u32, &Instruction> = prog
        .insts
        .iter()
        .filter(|i| !matches!(i.kind, Kind::OutOfCode | Kind::Undecodable(_)))
        .map(|i| (at(i), &i.decoded))
        .collect();
    let jumps = calls::jumps(&decoded);
    let outside = |t: &i64| *t < 0 || *t as u64 >= code.len() as u64;
    for reach in jumps.calls.values() {
        if !reach.direct() {
            out.indirect_calls += 1;
        } else if reach.targets.iter().any(outside) {
            out.outside_calls += 1;
        }
    }
    out.outside_branches = jumps
        .setpcs
        .values()
        .filter(|r| r.targets.iter().any(outside))
        .count();
    for inst in &prog.insts {
        match inst.kind {
            Kind::OutOfCode => {}
            Kind::Undecodable(_) => {
                out.instructions += 1;
                out.undecodable += 1;
            }
            Kind::Unimplemented | Kind::GlobalShare => {
                out.instructions += 1;
                *out.missing.entry(inst.refused_name()).or_default() += 1;
            }
            Kind::Valu(_)
            | Kind::Salu(_)
            | Kind::Ctrl(_)
            | Kind::Smem(_)
            | Kind::Ds(_)
            | Kind::Gws(_)
            | Kind::Vmem(_)
            | Kind::GetPc
            | Kind::SetPc
            | Kind::SwapPc => out.instructions += 1,
        }
    }
    out
}

/// The mnemonics (as LLVM's disassembler spells them) of the scalar,
/// memory and control formats the interpreter executes on `family` (the
/// vector ALU lists its own: `valu::implemented`).
pub fn implemented_non_valu(family: relaunch_isa::Family) -> Vec<&'static str> {
    let mut out = Vec::new();
    for format in [
        Format::Sop1,
        Format::Sop2,
        Format::Sopc,
        Format::Sopk,
        Format::Sopp,
        Format::Smem,
        Format::Ds,
        Format::Flat,
        Format::Global,
        Format::Scratch,
        Format::Mubuf,
    ] {
        for row in relaunch_isa::opcodes(family, format) {
            let n = row.name;
            let ok = match format {
                Format::Smem => super::smem::prepare(n).is_some(),
                Format::Ds => super::lds::prepare(n).is_some() || super::gws::prepare(n).is_some(),
                Format::Flat | Format::Global | Format::Scratch | Format::Mubuf => {
                    super::vmem::prepare_kind(format, n).is_some()
                }
                _ => {
                    matches!(n, "s_getpc_b64" | "s_setpc_b64" | "s_swappc_b64")
                        || super::control::prepare(n).is_some()
                        || super::scalar::prepare(n).is_some()
                }
            };
            if ok && !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// See [`super::executes`].
pub(crate) fn executes(isa: Isa, bytes: &[u8]) -> Option<(String, bool)> {
    match relaunch_isa::decode(isa, bytes) {
        Decoded::Known(d) => {
            let k = program::classify(isa, &d, &program::words_of(bytes, d.len));
            let runs = !matches!(k, Kind::Unimplemented | Kind::GlobalShare);
            Some((program::listed_name(&d, k), runs))
        }
        Decoded::Unknown { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gfx1030() -> Isa {
        Isa::from_processor("gfx1030", false).expect("gfx1030 row")
    }

    #[test]
    fn gws_runs_other_gds_accesses_are_refused_by_name_and_lds_ones_run() {
        // llvm-mc-19 -show-encoding, gfx1030 and gfx1100 alike.
        let gws_barrier = [0x00, 0x00, 0x76, 0xd8, 0x01, 0x00, 0x00, 0x00];
        let gws_init = [0x00, 0x00, 0x66, 0xd8, 0x01, 0x00, 0x00, 0x00];
        let add_gds = [0x00, 0x00, 0x02, 0xd8, 0x01, 0x02, 0x00, 0x00];
        let ordered_count = [0x00, 0x00, 0xfe, 0xd8, 0x02, 0x00, 0x00, 0x01];
        let add_lds = [0x00, 0x00, 0x00, 0xd8, 0x01, 0x02, 0x00, 0x00];
        for (cpu, end) in [("gfx1030", 0xbf81_0000u32), ("gfx1100", 0xbfb0_0000)] {
            let isa = Isa::from_processor(cpu, false).unwrap();
            let code: Vec<u8> = [
                &gws_init[..],
                &gws_barrier,
                &add_gds,
                &ordered_count,
                &add_lds,
                &end.to_le_bytes(),
            ]
            .concat();
            let c = coverage(isa, &code, 0);
            assert_eq!(c.instructions, 6, "{cpu}");
            assert_eq!(c.missing.get("ds_add_u32 gds"), Some(&1), "{cpu}: {c:?}");
            assert_eq!(
                c.missing.get("ds_ordered_count gds"),
                Some(&1),
                "{cpu}: {c:?}"
            );
            assert_eq!(c.missing.len(), 2, "{cpu}: {c:?}");
        }
    }

    #[test]
    fn counts_missing_and_implemented() {
        let code = [
            0x01, 0x03, 0x00, 0x7e, // v_mov_b32_e32 v0, v1
            0x08, 0x01, 0x00, 0xf0, 0x00, 0x00, 0x00, 0x00, // image_load (never modelled)
            0x08, 0x01, 0x00, 0xf0, 0x00, 0x00, 0x00, 0x00, // image_load again
            0x00, 0x00, 0x81, 0xbf, // s_endpgm
            0xff, 0xff, 0xff, 0xff, // unreachable: not counted
        ];
        let c = coverage(gfx1030(), &code, 0);
        assert_eq!(c.instructions, 4);
        assert_eq!(c.undecodable, 0);
        assert_eq!(c.missing.get("image_load"), Some(&2));
        assert_eq!(c.missing.len(), 1);
        assert!(!c.runs());
        assert!(coverage(
            gfx1030(),
            &[0x01, 0x03, 0x00, 0x7e, 0x00, 0x00, 0x81, 0xbf],
            0
        )
        .runs());
    }

    #[test]
    fn a_call_through_a_pointer_from_memory_stops_the_kernel() {
        let direct = [
            0x00, 0x1f, 0xa4, 0xbe, // s_getpc_b64 s[36:37]
            0x24, 0x90, 0x24, 0x80, // s_add_u32 s36, s36, 16
            0x25, 0x80, 0x25, 0x82, // s_addc_u32 s37, s37, 0
            0x24, 0x21, 0x9e, 0xbe, // s_swappc_b64 s[30:31], s[36:37]
            0x00, 0x00, 0x81, 0xbf, // s_endpgm
            0x1e, 0x20, 0x80, 0xbe, // the callee: s_setpc_b64 s[30:31]
        ];
        let c = coverage(gfx1030(), &direct, 0);
        assert_eq!((c.instructions, c.indirect_calls), (6, 0));
        assert!(c.runs());
        // s[36:37] is not built from the PC: a pointer the builder cannot
        // follow (and the run faults on).
        let indirect = [
            0x24, 0x21, 0x9e, 0xbe, // s_swappc_b64 s[30:31], s[36:37]
            0x00, 0x00, 0x81, 0xbf, // s_endpgm
        ];
        let c = coverage(gfx1030(), &indirect, 0);
        assert_eq!((c.instructions, c.indirect_calls), (2, 1));
        assert!(c.missing.is_empty());
        assert!(!c.runs());
        // A direct call 12 bytes before the entry: s_add_u32 s36, s36, -16
        // and s_addc_u32 s37, s37, -1 (inline constants 0xD0, 0xC1).
        let mut before = direct;
        before[5] = 0xd0;
        before[9] = 0xc1;
        let c = coverage(gfx1030(), &before[..20], 0);
        assert_eq!((c.indirect_calls, c.outside_calls), (0, 1));
        assert!(!c.runs());
        // gfx12's sequence sign-extends the PC's high half in between.
        let gfx1200 = Isa::from_processor("gfx1200", false).expect("gfx1200 row");
        let sext = [
            0x00, 0x47, 0xa4, 0xbe, // s_getpc_b64 s[36:37]
            0x25, 0x0f, 0xa5, 0xbe, // s_sext_i32_i16 s37, s37
            0x24, 0x94, 0x24, 0x80, // s_add_co_u32 s36, s36, 20
            0x25, 0x80, 0x25, 0x82, // s_add_co_ci_u32 s37, s37, 0
            0x24, 0x49, 0x9e, 0xbe, // s_swappc_b64 s[30:31], s[36:37]
            0x00, 0x00, 0xb0, 0xbf, // s_endpgm
            0x1e, 0x48, 0x80, 0xbe, // the callee: s_setpc_b64 s[30:31]
        ];
        let c = coverage(gfx1200, &sext, 0);
        assert_eq!((c.instructions, c.indirect_calls), (7, 0));
        assert!(c.runs());
    }

    /// A callee at byte 0 (`callee` then, for one that returns,
    /// `s_setpc_b64 s[30:31]`), the kernel's entry at byte 8 calling it,
    /// then two zero words (undecodable) and s_endpgm.
    fn callee_first(returns: bool) -> Vec<u8> {
        let last: [u8; 4] = if returns {
            [0x1e, 0x20, 0x80, 0xbe] // s_setpc_b64 s[30:31]
        } else {
            [0x00, 0x00, 0x81, 0xbf] // s_endpgm
        };
        let mut code = vec![0xa9, 0x02, 0x02, 0x7e]; // 0: v_mov_b32_e32 v1, 41
        code.extend(last); // 4
        code.extend([
            0x00, 0x1f, 0xa4, 0xbe, // 8: entry: s_getpc_b64 s[36:37]
            0x24, 0xcc, 0x24, 0x80, // 12: s_add_u32 s36, s36, -12
            0x25, 0xc1, 0x25, 0x82, // 16: s_addc_u32 s37, s37, -1
            0x24, 0x21, 0x9e, 0xbe, // 20: s_swappc_b64 s[30:31], s[36:37]
            0x00, 0x00, 0x00, 0x00, // 24: padding
            0x00, 0x00, 0x00, 0x00, // 28: padding
            0x00, 0x00, 0x81, 0xbf, // 32: s_endpgm
        ]);
        code
    }

    #[test]
    fn a_callee_before_the_entry_is_counted_from_the_whole_code() {
        // It returns: the padding after the call is read (and stops the
        // kernel, as it would stop a run that got there).
        let code = callee_first(true);
        let c = coverage(gfx1030(), &code, 8);
        assert_eq!((c.outside_calls, c.indirect_calls), (0, 0));
        assert_eq!((c.instructions, c.undecodable), (7, 1));
        assert!(!c.runs());
        // Given from the entry on, the callee is outside the code.
        let c = coverage(gfx1030(), &code[8..], 0);
        assert_eq!(c.outside_calls, 1);
        assert!(!c.runs());
    }

    #[test]
    fn padding_after_a_call_that_never_returns_is_not_read() {
        // As ggml's `no_device_code`: the callee ends the program.
        let c = coverage(gfx1030(), &callee_first(false), 8);
        assert_eq!((c.instructions, c.undecodable, c.outside_calls), (6, 0, 0));
        assert!(c.runs());
    }

    #[test]
    fn a_long_branch_out_of_the_code_stops_the_kernel() {
        let gfx1100 = Isa::from_processor("gfx1100", false).expect("gfx1100 row");
        let mut code = [
            0x00, 0x47, 0xe2, 0xbe, // s_getpc_b64 s[98:99] (4)
            0x62, 0xc0, 0x62, 0x80, // s_add_u32 s98, s98, 64: past the end
            0x63, 0x80, 0x63, 0x82, // s_addc_u32 s99, s99, 0
            0x62, 0x48, 0x80, 0xbe, // s_setpc_b64 s[98:99]
            0x00, 0x00, 0xb0, 0xbf, // 0x10: s_endpgm
        ];
        let c = coverage(gfx1100, &code, 0);
        assert_eq!((c.instructions, c.outside_branches), (4, 1));
        assert!(!c.runs());
        // s_add_u32 s98, s98, 12: to the s_endpgm, which is then decoded.
        code[5] = 0x8c;
        let c = coverage(gfx1100, &code, 0);
        assert_eq!((c.instructions, c.outside_branches), (5, 0));
        assert!(c.runs());
    }
}
