//! The reader's proof of inputs a kernel never reads (`KernelInfo::unread`,
//! `certify::inputs`): hand-written gfx1030 code object v4 kernels with the
//! queue pointer, kernarg pointer and dispatch id user SGPRs (private
//! segment buffer s[0:3], queue pointer s[4:5], kernarg pointer s[6:7],
//! dispatch id s[8:9]) and a hidden hostcall buffer at kernarg offset 8,
//! assembled with llvm-mc-19 and ld.lld-19 (skipped without them unless
//! `CI`).

use relaunch_device::codeobj::{CodeObject, UnreadInputs};
use relaunch_testsupport::asm;

/// (name, body, expected: queue pointer, dispatch id, hostcall buffer
/// unread).
const KERNELS: [(&str, &str, [bool; 3]); 10] = [
    ("untouched", "", [true, true, true]),
    ("reads_queue_ptr", "  v_mov_b32 v2, s4", [false, true, true]),
    (
        "dispatch_id_written_on_one_path",
        "  s_cmp_eq_u32 s12, 0
  s_cbranch_scc0 .Lskip
  s_mov_b32 s9, 0
.Lskip:
  v_mov_b32 v2, s9",
        [true, false, true],
    ),
    (
        "overwritten_then_read",
        "  s_mov_b64 s[8:9], 0
  s_mov_b32 s4, 1
  s_mov_b32 s5, 2
  v_mov_b32 v2, s9
  v_mov_b32 v3, s5",
        [true, true, true],
    ),
    (
        "loads_the_hostcall_buffer",
        "  s_load_dwordx2 s[12:13], s[6:7], 0x8",
        [true, true, false],
    ),
    (
        "kernarg_pointer_arithmetic",
        "  s_add_u32 s14, s6, 8
  s_addc_u32 s15, s7, 0
  s_load_dwordx2 s[12:13], s[14:15], 0x0",
        [true, true, false],
    ),
    (
        "copied_kernarg_pointer",
        "  s_mov_b64 s[20:21], s[6:7]
  s_load_dword s12, s[20:21], 0x4",
        [true, true, true],
    ),
    (
        "kernarg_pointer_in_a_vgpr",
        "  v_mov_b32 v2, s6",
        [true, true, false],
    ),
    // SOPK compares read their register field, which the decoder does
    // not list as an operand.
    (
        "compares_the_queue_ptr",
        "  s_cmpk_eq_u32 s4, 0x0",
        [false, true, true],
    ),
    // A trap leaves the walk: nothing is proven.
    ("traps", "  s_trap 2", [false, false, false]),
];

fn source() -> String {
    let mut s = String::from(
        "  .amdgcn_target \"amdgcn-amd-amdhsa--gfx1030\"\n  .amdhsa_code_object_version 4\n  .text\n",
    );
    for (name, body, _) in KERNELS {
        let body = body.replace(".Lskip", &format!(".Lskip_{name}"));
        s += &format!(
            "  .globl {name}\n  .p2align 8\n  .type {name},@function\n{name}:\n  \
             s_load_dwordx2 s[10:11], s[6:7], 0x0\n{body}\n  s_waitcnt lgkmcnt(0)\n  \
             v_mov_b32 v0, 0\n  v_mov_b32 v1, 1\n  global_store_dword v0, v1, s[10:11]\n  \
             s_endpgm\n.L{name}_end:\n  .size {name}, .L{name}_end-{name}\n"
        );
    }
    s += "  .rodata\n";
    for (name, _, _) in KERNELS {
        s += &format!(
            "  .p2align 6\n  .amdhsa_kernel {name}\n    .amdhsa_user_sgpr_private_segment_buffer 1\n    \
             .amdhsa_user_sgpr_queue_ptr 1\n    .amdhsa_user_sgpr_kernarg_segment_ptr 1\n    \
             .amdhsa_user_sgpr_dispatch_id 1\n    .amdhsa_user_sgpr_count 10\n    \
             .amdhsa_kernarg_size 16\n    .amdhsa_next_free_vgpr 4\n    \
             .amdhsa_next_free_sgpr 24\n    .amdhsa_wavefront_size32 1\n  .end_amdhsa_kernel\n"
        );
    }
    s += "  .amdgpu_metadata\n---\namdhsa.version: [ 1, 1 ]\namdhsa.target: amdgcn-amd-amdhsa--gfx1030\namdhsa.kernels:\n";
    for (name, _, _) in KERNELS {
        s += &format!(
            "  - .name: {name}\n    .symbol: {name}.kd\n    .kernarg_segment_size: 16\n    \
             .kernarg_segment_align: 8\n    .group_segment_fixed_size: 0\n    \
             .private_segment_fixed_size: 0\n    .wavefront_size: 32\n    .sgpr_count: 24\n    \
             .vgpr_count: 4\n    .max_flat_workgroup_size: 64\n    .args:\n      \
             - {{ .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }}\n      \
             - {{ .offset: 8, .size: 8, .value_kind: hidden_hostcall_buffer }}\n"
        );
    }
    s + "...\n  .end_amdgpu_metadata\n"
}

#[test]
fn inputs_the_code_never_reads_are_proven_per_path_and_nothing_else() {
    if !asm::tools() {
        return;
    }
    let co = CodeObject::parse(&asm::code_object("gfx1030", &source())).unwrap();
    for (name, _, [queue_ptr, dispatch_id, hostcall_buffer]) in KERNELS {
        let k = co.kernel(name).unwrap();
        let want = UnreadInputs {
            queue_ptr,
            dispatch_id,
            hostcall_buffer,
        };
        assert_eq!(k.unread, want, "{name}");
    }
}
