//! The program's layout over a whole code allocation: callees before the
//! entry, and the return points of calls whose callee never returns.

use super::*;

fn gfx1030() -> Isa {
    Isa::from_processor("gfx1030", false).expect("gfx1030 row")
}

/// A callee at byte 0, the kernel's entry at byte 8 calling it.
const CALLEE_FIRST: [u8; 28] = [
    0xa9, 0x02, 0x02, 0x7e, // 0: callee: v_mov_b32_e32 v1, 41
    0x1e, 0x20, 0x80, 0xbe, // 4: s_setpc_b64 s[30:31]
    0x00, 0x1f, 0xa4, 0xbe, // 8: entry: s_getpc_b64 s[36:37]
    0x24, 0xcc, 0x24, 0x80, // 12: s_add_u32 s36, s36, -12
    0x25, 0xc1, 0x25, 0x82, // 16: s_addc_u32 s37, s37, -1
    0x24, 0x21, 0x9e, 0xbe, // 20: s_swappc_b64 s[30:31], s[36:37]
    0x00, 0x00, 0x81, 0xbf, // 24: s_endpgm
];

#[test]
fn a_callee_before_the_entry_is_decoded_after_the_kernel() {
    let entry = 0x1000_0008;
    let prog = build_in(gfx1030(), entry, &CALLEE_FIRST, 8);
    let offsets: Vec<i64> = prog.insts.iter().map(Inst::from_entry).collect();
    // The entry first, the callee after the kernel's code, then the
    // past-the-code placeholder (the end of the allocation).
    assert_eq!(offsets, [0, 4, 8, 12, 16, -8, -4, 20]);
    assert_eq!(prog.insts[0].decoded.name, "s_getpc_b64");
    assert_eq!(prog.insts[5].decoded.name, "v_mov_b32_e32");
    assert_eq!(prog.address_of(&prog.insts[5]), entry - 8);
    // The callee and the return point are found by address.
    assert_eq!(prog.index_at(entry - 8), Some(5));
    assert_eq!(prog.index_at(entry + 16), Some(4));
    assert_eq!(prog.index_at(entry - 2), None);
    assert_eq!(prog.index_at(entry + 20), None);
    // The call's fall-through is the s_endpgm.
    assert_eq!(prog.insts[3].next, 4);
    // From the entry on only, the callee is out of reach.
    let tail = build(gfx1030(), entry, &CALLEE_FIRST[8..]);
    assert_eq!(tail.insts.len(), 6);
    assert!(tail.index_at(entry - 8).is_none());
}

/// A at 0 calls B at 20 and returns after it; the entry at 24 calls A,
/// and after the call sits a zero word (undecodable) then s_endpgm.
fn nested(b_returns: bool) -> Vec<u8> {
    let b: [u8; 4] = if b_returns {
        [0x20, 0x20, 0x80, 0xbe] // s_setpc_b64 s[32:33]
    } else {
        [0x00, 0x00, 0x81, 0xbf] // s_endpgm
    };
    let mut code = vec![
        0x00, 0x1f, 0xa2, 0xbe, // 0: A: s_getpc_b64 s[34:35]
        0x22, 0x90, 0x22, 0x80, // 4: s_add_u32 s34, s34, 16
        0x23, 0x80, 0x23, 0x82, // 8: s_addc_u32 s35, s35, 0
        0x22, 0x21, 0xa0, 0xbe, // 12: s_swappc_b64 s[32:33], s[34:35]
        0x1e, 0x20, 0x80, 0xbe, // 16: s_setpc_b64 s[30:31]
    ];
    code.extend(b); // 20: B
    code.extend([
        0x00, 0x1f, 0xa4, 0xbe, // 24: entry: s_getpc_b64 s[36:37]
        0x24, 0xff, 0x24, 0x80, 0xe4, 0xff, 0xff, 0xff, // 28: s_add_u32 s36, s36, 0xffffffe4
        0x25, 0xc1, 0x25, 0x82, // 36: s_addc_u32 s37, s37, -1
        0x24, 0x21, 0x9e, 0xbe, // 40: s_swappc_b64 s[30:31], s[36:37]
        0x00, 0x00, 0x00, 0x00, // 44: padding (undecodable)
        0x00, 0x00, 0x81, 0xbf, // 48: s_endpgm
    ]);
    code
}

fn decoded_at(prog: &Program) -> Vec<i64> {
    let mut at: Vec<i64> = prog.insts[..prog.insts.len() - 1]
        .iter()
        .map(|i| 24 + i.from_entry())
        .collect();
    at.sort_unstable();
    at
}

#[test]
fn a_call_whose_callee_never_returns_has_no_return_point() {
    // B ends the program: A's return after its call to B is never
    // reached, so A never returns either and the entry's return point
    // (padding) is not decoded.
    let prog = build_in(gfx1030(), 24, &nested(false), 24);
    assert_eq!(decoded_at(&prog), [0, 4, 8, 12, 20, 24, 28, 36, 40]);
    assert!(!prog
        .insts
        .iter()
        .any(|i| matches!(i.kind, Kind::Undecodable(_))));
    // The call's fall-through is the past-the-code placeholder, which
    // faults if a run ever got there.
    let call = prog.index_at(40).expect("the entry's call");
    let next = &prog.insts[prog.insts[call as usize].next as usize];
    assert!(matches!(next.kind, Kind::OutOfCode));
    // B returns: so does A, and both return points are decoded.
    let prog = build_in(gfx1030(), 24, &nested(true), 24);
    assert_eq!(decoded_at(&prog), [0, 4, 8, 12, 16, 20, 24, 28, 36, 40, 44]);
    assert!(matches!(
        prog.insts[prog.index_at(44).unwrap() as usize].kind,
        Kind::Undecodable(0)
    ));
}

#[test]
fn an_unknown_callee_keeps_its_return_point() {
    // s[36:37] comes from nowhere the builder can see: assume it returns.
    let code = [
        0x24, 0x21, 0x9e, 0xbe, // s_swappc_b64 s[30:31], s[36:37]
        0x00, 0x00, 0x81, 0xbf, // s_endpgm
    ];
    let prog = build_in(gfx1030(), 0, &code, 0);
    assert_eq!(prog.insts.len(), 3);
    assert_eq!(prog.insts[0].next, 1);
}

#[test]
fn offsets_before_the_entry_print_negative() {
    assert_eq!(signed_hex(0x40), "0x40");
    assert_eq!(signed_hex(-0x100), "-0x100");
    let prog = build_in(gfx1030(), 8, &CALLEE_FIRST, 8);
    assert_eq!(signed_hex(prog.insts[5].from_entry()), "-0x8");
}

#[test]
fn an_extension_keeps_every_index_and_adds_the_new_code_after() {
    // The entry's return point (44, padding) and the s_endpgm after it
    // (48) were never decoded: a run reaching 48 extends the program.
    let code = nested(false);
    let prog = build_in(gfx1030(), 24, &code, 24);
    let n = prog.insts.len();
    assert!(prog.index_at(48).is_none());
    let grown = extend(&prog, &code, 48);
    for (old, new) in prog.insts.iter().zip(&grown.insts) {
        assert_eq!(
            (old.offset, old.decoded.name),
            (new.offset, new.decoded.name)
        );
    }
    assert_eq!(grown.insts.len(), n + 1);
    assert_eq!(grown.index_at(48), Some(n as u32));
    assert_eq!(grown.insts[n].decoded.name, "s_endpgm");
    assert!(matches!(grown.insts[n - 1].kind, Kind::OutOfCode));
    // Again, from the extended one: its roots are kept, 44 is added.
    let again = extend(&grown, &code, 44);
    assert_eq!(again.roots, [48, 44]);
    assert_eq!(again.index_at(48), Some(n as u32));
    assert_eq!(again.index_at(44), Some(n as u32 + 1));
    assert!(matches!(again.insts[n + 1].kind, Kind::Undecodable(0)));
}
