//! Certification of what no kernel writes (issue 29): scalar loads through
//! the dispatch packet pointer inside the 64-byte packet, and through
//! PC-relative addresses (`s_getpc_b64` + `s_add_u32`/`s_addc_u32` of a
//! `rel32` offset) inside the code object's read-only segments, are proven;
//! a writable target, an offset past the segment or the packet, a register
//! offset, a pointer advanced in a loop, a carry not taken at once and a
//! pointer loaded from kernargs are not. Hand-written gfx1030 kernels with
//! the code object v4 user SGPRs (private segment buffer s[0:3], dispatch
//! pointer s[4:5], kernarg pointer s[6:7]), assembled with llvm-mc-19 and
//! ld.lld-19 (skipped without them unless `CI`).

use relaunch_device::codeobj::certify::{certify, Certificate, ReadCache};
use relaunch_device::codeobj::elf::Elf;
use relaunch_device::codeobj::CodeObject;
use relaunch_testsupport::asm;

/// The address of `tab` (relative to the image) computed into s[10:11].
const TAB: &str = "  s_getpc_b64 s[10:11]
  s_add_u32 s10, s10, tab@rel32@lo+4
  s_addc_u32 s11, s11, tab@rel32@hi+12";

const KERNELS: [(&str, &str); 11] = [
    (
        "table",
        "  s_load_dword s16, s[4:5], 0x4
  s_load_dwordx4 s[12:15], s[10:11], 0x10",
    ),
    (
        "table_copy",
        "  s_mov_b64 s[20:21], s[10:11]
  s_add_u32 s20, s20, 0x40
  s_addc_u32 s21, s21, 0
  s_load_dword s22, s[20:21], 0x3c",
    ),
    (
        "own_code",
        "  s_getpc_b64 s[10:11]
  s_load_dword s12, s[10:11], 0x4",
    ),
    (
        "writable",
        "  s_getpc_b64 s[10:11]
  s_add_u32 s10, s10, var@rel32@lo+4
  s_addc_u32 s11, s11, var@rel32@hi+12
  s_load_dword s12, s[10:11], 0x0",
    ),
    ("past_the_image", "  s_load_dword s12, s[10:11], 0xffff0"),
    (
        "carry_not_at_once",
        "  s_getpc_b64 s[10:11]
  s_add_u32 s10, s10, tab@rel32@lo+4
  s_nop 0
  s_addc_u32 s11, s11, tab@rel32@hi+12
  s_load_dword s12, s[10:11], 0x0",
    ),
    (
        "advanced_in_a_loop",
        "  s_mov_b32 s12, 0
.Lloop:
  s_load_dword s13, s[10:11], 0x0
  s_add_u32 s10, s10, 4
  s_addc_u32 s11, s11, 0
  s_add_u32 s12, s12, 1
  s_cmp_lt_u32 s12, 4
  s_cbranch_scc1 .Lloop",
    ),
    ("register_offset", "  s_load_dword s12, s[10:11], s9"),
    ("packet_past_the_end", "  s_load_dword s12, s[4:5], 0x40"),
    ("packet_register_offset", "  s_load_dword s12, s[4:5], s9"),
    (
        "pointer_from_kernargs",
        "  s_waitcnt lgkmcnt(0)
  s_load_dword s12, s[8:9], 0x0",
    ),
];

/// Every kernel: TAB, the kernarg pointer's target in s[8:9], its body, a
/// store through the kernarg pointer; `tab` in .rodata, `var` (and a
/// pointer to `tab`, which the loader relocates) in .data.
fn source() -> String {
    let mut s = String::from(
        "  .amdgcn_target \"amdgcn-amd-amdhsa--gfx1030\"\n  .amdhsa_code_object_version 4\n  .text\n",
    );
    for (name, body) in KERNELS {
        let body = body.replace(".Lloop", &format!(".Lloop_{name}"));
        s += &format!(
            "  .globl {name}\n  .p2align 8\n  .type {name},@function\n{name}:\n{TAB}\n  \
             s_load_dwordx2 s[8:9], s[6:7], 0x0\n{body}\n  s_waitcnt lgkmcnt(0)\n  \
             v_mov_b32 v0, 0\n  v_mov_b32 v1, s12\n  global_store_dword v0, v1, s[8:9]\n  \
             s_endpgm\n.L{name}_end:\n  .size {name}, .L{name}_end-{name}\n"
        );
    }
    s += "  .rodata\n";
    for (name, _) in KERNELS {
        s += &format!(
            "  .p2align 6\n  .amdhsa_kernel {name}\n    .amdhsa_user_sgpr_private_segment_buffer 1\n    \
             .amdhsa_user_sgpr_dispatch_ptr 1\n    .amdhsa_user_sgpr_kernarg_segment_ptr 1\n    \
             .amdhsa_user_sgpr_count 8\n    .amdhsa_kernarg_size 8\n    .amdhsa_next_free_vgpr 4\n    \
             .amdhsa_next_free_sgpr 24\n    .amdhsa_wavefront_size32 1\n  .end_amdhsa_kernel\n"
        );
    }
    s += "  .p2align 4\ntab:\n  .fill 32, 4, 0x5a5a5a5a\n  .size tab, 128\n";
    s += "  .data\n  .p2align 4\nvar:\n  .fill 16, 4, 0\n  .size var, 64\n  .quad tab\n";
    s += "  .amdgpu_metadata\n---\namdhsa.version: [ 1, 1 ]\namdhsa.target: amdgcn-amd-amdhsa--gfx1030\namdhsa.kernels:\n";
    for (name, _) in KERNELS {
        s += &format!(
            "  - .name: {name}\n    .symbol: {name}.kd\n    .kernarg_segment_size: 8\n    \
             .kernarg_segment_align: 8\n    .group_segment_fixed_size: 0\n    \
             .private_segment_fixed_size: 0\n    .wavefront_size: 32\n    .sgpr_count: 24\n    \
             .vgpr_count: 4\n    .max_flat_workgroup_size: 64\n    .args:\n      \
             - {{ .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }}\n"
        );
    }
    s + "...\n  .end_amdgpu_metadata\n"
}

fn symbol(bytes: &[u8], name: &str) -> (u64, u64) {
    let elf = Elf::parse(bytes).unwrap();
    elf.defined_symbols(|n| n == name).unwrap()[name]
}

#[test]
fn packet_and_read_only_data_are_proven_and_nothing_else() {
    if !asm::tools() {
        return;
    }
    let bytes = asm::code_object("gfx1030", &source());
    let code = CodeObject::parse(&bytes).unwrap();
    let certs = certify(&code);
    let cert = |name: &str| -> &Certificate { certs.iter().find(|c| c.kernel == name).unwrap() };
    let (tab, _) = symbol(&bytes, "tab");

    let t = cert("table");
    assert_eq!(t.read_cache, ReadCache::VmemOnly, "{:?}", t.reason);
    assert_eq!((t.kernarg_sgpr, t.dispatch_sgpr), (Some(6), Some(4)));
    assert_eq!(t.packet_loads.iter().map(|l| l.1).collect::<Vec<_>>(), [4]);
    assert_eq!(t.read_only_loads.len(), 1);
    assert_eq!(t.read_only_loads[0].1, tab + 0x10);
    assert_eq!(t.kernarg_loads.len(), 1);

    // Copied, then advanced by a constant: still the table, at 0x7c.
    let c = cert("table_copy");
    assert_eq!(c.read_cache, ReadCache::VmemOnly, "{:?}", c.reason);
    assert_eq!(c.read_only_loads[0].1, tab + 0x7c);

    // The kernel's own code is in a segment without write permission.
    let o = cert("own_code");
    assert_eq!(o.read_cache, ReadCache::VmemOnly, "{:?}", o.reason);
    let (own, size) = symbol(&bytes, "own_code");
    assert!((own..own + size).contains(&o.read_only_loads[0].1));

    for (name, why) in [
        ("writable", "not inside a read-only"),
        ("past_the_image", "not inside a read-only"),
        ("carry_not_at_once", "not the kernarg segment pointer"),
        ("advanced_in_a_loop", "not the kernarg segment pointer"),
        (
            "register_offset",
            "register offset s9 into the code object image",
        ),
        ("packet_past_the_end", "outside the 64-byte dispatch packet"),
        (
            "packet_register_offset",
            "register offset s9 into the dispatch packet",
        ),
        ("pointer_from_kernargs", "base s[8:9] is not"),
    ] {
        let c = cert(name);
        assert_eq!(c.read_cache, ReadCache::ScalarOrUnknown, "{name}");
        let r = c.reason.as_ref().unwrap();
        assert!(r.why.contains(why), "{name}: {r}");
        assert!(
            r.instruction
                .as_deref()
                .unwrap()
                .starts_with("s_load_dword"),
            "{name}: {r}"
        );
    }
}

#[test]
fn the_loaders_relocations_are_found() {
    if !asm::tools() {
        return;
    }
    let bytes = asm::code_object("gfx1030", &source());
    let (var, size) = symbol(&bytes, "var");
    let relocated = Elf::parse(&bytes).unwrap().load_time_relocations().unwrap();
    // `.quad tab` after `var`: the loader writes the table's address there.
    assert_eq!(relocated, [var + size]);
}
