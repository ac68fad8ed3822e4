//! The call and long-branch analysis on hand-assembled code (each word
//! checked with llvm-mc-19 -show-encoding).

use super::*;
use crate::isa::program::{self, Kind};
use relaunch_isa::Isa;

fn isa(target: &str) -> Isa {
    Isa::from_processor(target, false).expect("facts row")
}

/// The program builder's view of `code`, and the jumps in it.
fn analyse(target: &str, code: &[u8]) -> (Vec<u32>, Jumps) {
    let prog = program::build(isa(target), 0, code);
    let decoded: BTreeMap<u32, &Instruction> = prog
        .insts
        .iter()
        .filter(|i| !matches!(i.kind, Kind::OutOfCode | Kind::Undecodable(_)))
        .map(|i| (i.offset, &i.decoded))
        .collect();
    (decoded.keys().copied().collect(), jumps(&decoded))
}

fn set(v: &[i64]) -> BTreeSet<i64> {
    v.iter().copied().collect()
}

/// Tensile's activation call: each path sets the pair in its own getpc
/// block (`s_add_i32 s8, k, 4`, then the 64-bit add of s8), the call
/// is at the join.
const TWO_PATHS: [u8; 64] = [
    0x06, 0x80, 0x06, 0xbf, // s_cmp_eq_u32 s6, 0
    0x05, 0x00, 0xa2, 0xbf, // s_cbranch_scc1 5 (to 0x1c)
    0x00, 0x47, 0x8c, 0xbe, // s_getpc_b64 s[12:13] (0xc)
    0xa4, 0x84, 0x08, 0x81, // s_add_i32 s8, 36, 4
    0x0c, 0x08, 0x0c, 0x80, // s_add_u32 s12, s12, s8
    0x0d, 0x80, 0x0d, 0x82, // s_addc_u32 s13, s13, 0
    0x04, 0x00, 0xa0, 0xbf, // s_branch 4 (to 0x2c)
    0x00, 0x47, 0x8c, 0xbe, // 0x1c: s_getpc_b64 s[12:13] (0x20)
    0x94, 0x84, 0x08, 0x81, // s_add_i32 s8, 20, 4
    0x0c, 0x08, 0x0c, 0x80, // s_add_u32 s12, s12, s8
    0x0d, 0x80, 0x0d, 0x82, // s_addc_u32 s13, s13, 0
    0x0c, 0x49, 0x9e, 0xbe, // 0x2c: s_swappc_b64 s[30:31], s[12:13]
    0x00, 0x00, 0xb0, 0xbf, // s_endpgm
    0x1e, 0x48, 0x80, 0xbe, // 0x34: the first callee: s_setpc_b64 s[30:31]
    0x82, 0x02, 0x02, 0x7e, // 0x38: the second: v_mov_b32_e32 v1, 2
    0x1e, 0x48, 0x80, 0xbe, // s_setpc_b64 s[30:31]
];

#[test]
fn a_call_at_a_join_reaches_the_callee_of_each_path() {
    let (offsets, j) = analyse("gfx1100", &TWO_PATHS);
    let call = &j.calls[&0x2c];
    assert_eq!(call.targets, set(&[0x34, 0x38]));
    assert!(call.direct());
    // Both callees decoded; their returns are no long branches.
    assert!(offsets.contains(&0x34) && offsets.contains(&0x38) && offsets.contains(&0x3c));
    assert!(j
        .setpcs
        .values()
        .all(|r| r.targets.is_empty() && r.computed));
}

#[test]
fn a_pair_loaded_from_memory_on_one_path_makes_the_call_indirect() {
    let code = [
        0x04, 0x00, 0xa2, 0xbf, // s_cbranch_scc1 4 (to 0x14)
        0x00, 0x47, 0x8c, 0xbe, // s_getpc_b64 s[12:13]
        0x0c, 0x9c, 0x0c, 0x80, // s_add_u32 s12, s12, 28 (to 8 + 28)
        0x0d, 0x80, 0x0d, 0x82, // s_addc_u32 s13, s13, 0
        0x02, 0x00, 0xa0, 0xbf, // s_branch 2 (to 0x1c)
        0x00, 0x03, 0x04, 0xf4, 0x00, 0x00, 0x00, 0xf8, // s_load_b64 s[12:13], s[0:1], 0x0
        0x0c, 0x49, 0x9e, 0xbe, // 0x1c: s_swappc_b64 s[30:31], s[12:13]
        0x00, 0x00, 0xb0, 0xbf, // s_endpgm
        0x1e, 0x48, 0x80, 0xbe, // 0x24: s_setpc_b64 s[30:31]
    ];
    let (offsets, j) = analyse("gfx1100", &code);
    let call = &j.calls[&0x1c];
    // The constant path's callee is still decoded (a run taking that
    // path reaches it); the verdict stays indirect.
    assert_eq!(call.targets, set(&[0x24]));
    assert!(call.computed && !call.direct());
    assert!(offsets.contains(&0x24));
}

#[test]
fn long_branches_forwards_and_backwards_are_followed() {
    let mut code = vec![
        0x00, 0x47, 0xe2, 0xbe, // s_getpc_b64 s[98:99] (4)
        0xff, 0x84, 0x64, 0x81, 0x48, 0x00, 0x00, 0x00, // s_add_i32 s100, 0x48, 4
        0x62, 0x64, 0x62, 0x80, // s_add_u32 s98, s98, s100
        0x63, 0x80, 0x63, 0x82, // s_addc_u32 s99, s99, 0
        0x62, 0x48, 0x80, 0xbe, // 0x14: s_setpc_b64 s[98:99] (to 4 + 0x4c)
    ];
    // Skipped: never decoded.
    code.extend([0xff; 0x50 - 0x18]);
    code.extend([
        0x01, 0x00, 0xa0, 0xbf, // 0x50: s_branch 1 (to 0x58)
        0x00, 0x00, 0xb0, 0xbf, // 0x54: s_endpgm, reached by the branch back
        0x00, 0x47, 0x84, 0xbe, // 0x58: s_getpc_b64 s[4:5] (0x5c)
        0x04, 0x88, 0x84, 0x80, // s_sub_u32 s4, s4, 8
        0x05, 0x80, 0x85, 0x82, // s_subb_u32 s5, s5, 0
        0x04, 0x48, 0x80, 0xbe, // 0x64: s_setpc_b64 s[4:5]
    ]);
    let (offsets, j) = analyse("gfx1100", &code);
    assert_eq!(j.setpcs[&0x14].targets, set(&[0x50]));
    assert_eq!(j.setpcs[&0x64].targets, set(&[0x54]));
    assert!(!j.setpcs[&0x14].computed && !j.setpcs[&0x64].computed);
    assert_eq!(
        offsets,
        [0, 4, 0xc, 0x10, 0x14, 0x50, 0x54, 0x58, 0x5c, 0x60, 0x64]
    );
}

#[test]
fn gfx12_spells_the_block_its_own_way() {
    let code = [
        0x00, 0x47, 0x9e, 0xbe, // s_getpc_b64 s[30:31] (4)
        0x1f, 0x0f, 0x9f, 0xbe, // s_sext_i32_i16 s31, s31
        0x98, 0x84, 0x08, 0x81, // s_add_co_i32 s8, 24, 4
        0x09, 0x00, 0x87, 0xbf, // s_delay_alu instid0(SALU_CYCLE_1)
        0x1e, 0x08, 0x1e, 0x80, // s_add_co_u32 s30, s30, s8
        0x1f, 0x80, 0x1f, 0x82, // s_add_co_ci_u32 s31, s31, 0
        0x1e, 0x49, 0xa0, 0xbe, // 0x18: s_swappc_b64 s[32:33], s[30:31]
        0x00, 0x00, 0xb0, 0xbf, // s_endpgm
        0x20, 0x48, 0x80, 0xbe, // 0x20: s_setpc_b64 s[32:33]
    ];
    let (offsets, j) = analyse("gfx1200", &code);
    assert_eq!(j.calls[&0x18].targets, set(&[0x20]));
    assert!(j.calls[&0x18].direct());
    assert!(offsets.contains(&0x20));
}

#[test]
fn a_register_set_elsewhere_keeps_the_pair_computed() {
    // TWO_PATHS with the first path's s_add_i32 s8, 36, 4 replaced by
    // s_add_i32 s8, s8, 4: s8 comes from the kernel's start.
    let mut code = TWO_PATHS;
    code[12..16].copy_from_slice(&[0x08, 0x84, 0x08, 0x81]);
    let (_, j) = analyse("gfx1100", &code);
    let call = &j.calls[&0x2c];
    assert_eq!(call.targets, set(&[0x38]));
    assert!(call.computed);
}

/// RCCL's shape: the callee's address, built by a getpc block, spilled
/// to lanes 0 and 1 of v42 and read back (another lane written between),
/// then copied to the pair the call uses.
const SPILLED: [u8; 80] = [
    0x00, 0x1f, 0x84, 0xbe, // s_getpc_b64 s[4:5] (4)
    0x04, 0xc0, 0x04, 0x80, // s_add_u32 s4, s4, 64
    0x05, 0x80, 0x05, 0x82, // s_addc_u32 s5, s5, 0
    0x2a, 0x00, 0x61, 0xd7, 0x04, 0x00, 0x01, 0x00, // 0xc: v_writelane_b32 v42, s4, 0
    0x2a, 0x00, 0x61, 0xd7, 0x05, 0x02, 0x01, 0x00, // v_writelane_b32 v42, s5, 1
    0x80, 0x03, 0x84, 0xbe, // s_mov_b32 s4, 0
    0x2a, 0x00, 0x61, 0xd7, 0x04, 0x04, 0x01, 0x00, // 0x20: v_writelane_b32 v42, s4, 2
    0x08, 0x00, 0x60, 0xd7, 0x2a, 0x01, 0x01, 0x00, // v_readlane_b32 s8, v42, 0
    0x09, 0x00, 0x60, 0xd7, 0x2a, 0x03, 0x01, 0x00, // v_readlane_b32 s9, v42, 1
    0x08, 0x04, 0x8a, 0xbe, // s_mov_b64 s[10:11], s[8:9]
    0x0a, 0x21, 0x9e, 0xbe, // 0x3c: s_swappc_b64 s[30:31], s[10:11]
    0x00, 0x00, 0x81, 0xbf, // s_endpgm
    0xa9, 0x02, 0x02, 0x7e, // 0x44: v_mov_b32_e32 v1, 41
    0x1e, 0x20, 0x80, 0xbe, // s_setpc_b64 s[30:31]
    0x00, 0x00, 0x81, 0xbf, // s_endpgm
];

#[test]
fn a_pair_spilled_to_vgpr_lanes_and_copied_is_followed_to_its_block() {
    let (offsets, j) = analyse("gfx1030", &SPILLED);
    let call = &j.calls[&0x3c];
    assert_eq!(call.targets, set(&[0x44]));
    assert!(call.direct(), "{call:?}");
    assert!(offsets.contains(&0x44));
}

#[test]
fn a_spill_lane_overwritten_on_the_way_makes_the_pair_computed() {
    // The write of lane 2 becomes v_mov_b32_e64 v42, 0: every lane.
    let mut code = SPILLED;
    code[0x20..0x28].copy_from_slice(&[0x2a, 0x00, 0x81, 0xd5, 0x80, 0x00, 0x00, 0x00]);
    let (offsets, j) = analyse("gfx1030", &code);
    let call = &j.calls[&0x3c];
    assert!(call.computed && call.targets.is_empty(), "{call:?}");
    assert!(!offsets.contains(&0x44));
}
