//! The d16 loads and stores on the interpreter, with kernels assembled by
//! llvm-mc-19 for gfx1030, gfx1100 and gfx1201 (each family's spelling):
//! the high-half stores write bytes 2-3 (or byte 2) of the VGPR, d16 loads
//! fill one half (bytes zero- or sign-extended to 16 bits) and keep the
//! other; the same for LDS. Fails when `CI` is set and the tools are
//! missing.

use relaunch_sim::isa::KernelMode;
use relaunch_sim::SimConfig;
use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::{linear, Rig};

/// The LDS d16 mnemonics per family: (store b16 hi, store b8 hi, load
/// u16 hi, load i8 lo).
fn ds_names(cpu: &str) -> [&'static str; 4] {
    match cpu {
        "gfx1030" => [
            "ds_write_b16_d16_hi",
            "ds_write_b8_d16_hi",
            "ds_read_u16_d16_hi",
            "ds_read_i8_d16",
        ],
        _ => [
            "ds_store_b16_d16_hi",
            "ds_store_b8_d16_hi",
            "ds_load_u16_d16_hi",
            "ds_load_i8_d16",
        ],
    }
}

/// Mnemonics per family: (store_short_d16_hi, store_byte_d16_hi,
/// load_short_d16_hi, load_sbyte_d16, load_sbyte_d16_hi,
/// load_ubyte_d16_hi, store_byte, wait for loads).
fn names(cpu: &str) -> [&'static str; 8] {
    match cpu {
        "gfx1030" => [
            "global_store_short_d16_hi",
            "global_store_byte_d16_hi",
            "global_load_short_d16_hi",
            "global_load_sbyte_d16",
            "global_load_sbyte_d16_hi",
            "global_load_ubyte_d16_hi",
            "global_store_byte",
            "s_waitcnt vmcnt(0)",
        ],
        _ => [
            "global_store_d16_hi_b16",
            "global_store_d16_hi_b8",
            "global_load_d16_hi_b16",
            "global_load_d16_i8",
            "global_load_d16_hi_i8",
            "global_load_d16_hi_u8",
            "global_store_b8",
            if cpu == "gfx1201" {
                "s_wait_loadcnt 0x0"
            } else {
                "s_waitcnt vmcnt(0)"
            },
        ],
    }
}

#[test]
fn d16_halves_are_loaded_and_stored() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1030", "gfx1100", "gfx1201"] {
        let sp = asm::spelling(cpu);
        let [st_hi16, st_hi8, ld_hi16, ld_i8, ld_hi_i8, ld_hi_u8, st8, wait] = names(cpu);
        let st32 = sp.global_store_b32;
        let [ds_hi16, ds_hi8, ds_ld_hi16, ds_ld_i8] = ds_names(cpu);
        let body = format!(
            "  {load} s[2:3], s[0:1], 0x0\n  {ws}\n  s_mov_b32 exec_lo, 1\n  v_mov_b32 v0, 0\n\
             v_mov_b32 v1, 0x11223344\n\
             {st_hi16} v0, v1, s[2:3]\n\
             {st_hi8} v0, v1, s[2:3] offset:2\n\
             v_mov_b32 v2, 0xaaaabbbb\n\
             {ld_hi16} v2, v0, s[2:3]\n  {wait}\n\
             {st32} v0, v2, s[2:3] offset:4\n\
             v_mov_b32 v3, 0xaaaabbbb\n\
             {ld_i8} v3, v0, s[2:3] offset:2\n  {wait}\n\
             {st32} v0, v3, s[2:3] offset:8\n\
             v_mov_b32 v5, 0x80\n\
             {st8} v0, v5, s[2:3] offset:12\n\
             v_mov_b32 v4, 0x12345678\n\
             {ld_hi_i8} v4, v0, s[2:3] offset:12\n  {wait}\n\
             {st32} v0, v4, s[2:3] offset:16\n\
             v_mov_b32 v6, 0x12345678\n\
             {ld_hi_u8} v6, v0, s[2:3] offset:12\n  {wait}\n\
             {st32} v0, v6, s[2:3] offset:20\n\
             {ds_hi16} v0, v1\n\
             {ds_hi8} v0, v1 offset:2\n\
             v_mov_b32 v2, 0xaaaabbbb\n\
             {ds_ld_hi16} v2, v0\n\
             v_mov_b32 v3, 0xaaaabbbb\n\
             {ds_ld_i8} v3, v0 offset:1\n  {wait}\n\
             s_waitcnt lgkmcnt(0)\n\
             {st32} v0, v2, s[2:3] offset:24\n\
             {st32} v0, v3, s[2:3] offset:28\n\
             s_endpgm",
            load = sp.s_load_b64,
            ws = sp.wait_scalar,
        );
        let bytes = asm::one_kernel(cpu, "d16", &body, "");
        let mut cfg = SimConfig::new(cpu);
        cfg.kernels = KernelMode::Isa;
        let rig = Rig::from_bytes(cfg, &bytes);
        let out = rig.alloc(32);
        let mut b = rig.builder();
        // 64 bytes of dynamic LDS for the ds_* part.
        let mut launch = linear(32, 32);
        launch.dynamic_group_bytes = 64;
        rig.dispatch(&mut b, "d16", &launch, &out.to_le_bytes());
        let (ib, _) = rig.finish(b);
        let v = rig.run(&ib.segments[0].dwords).expect(cpu);
        assert_eq!(v, vec![], "{cpu}");
        let got: Vec<u32> = (0..8)
            .map(|i| rig.dev.memory.read_u32(out + 4 * i).unwrap())
            .collect();
        assert_eq!(
            got,
            [
                0x0022_1122,
                0x1122_BBBB,
                0xAAAA_0022,
                0x0000_0080,
                0xFF80_5678,
                0x0080_5678,
                0x1122_BBBB,
                0xAAAA_0011,
            ],
            "{cpu}"
        );
    }
}
