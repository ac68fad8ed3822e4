//! Buffer atomics on the interpreter (MUBUF on gfx10/gfx11, VBUFFER on
//! gfx12), with kernels assembled by llvm-mc-19 in each family's spelling:
//! a returning atomic (GLC; gfx12's TH_ATOMIC_RETURN) puts the old value
//! into VDATA itself, cmpswap's data is (new, compare) and swaps only on
//! equality, a non-returning atomic leaves VDATA alone, and a lane past
//! NUM_RECORDS writes nothing. Fails when `CI` is set and the tools are
//! missing.

use relaunch_sim::isa::KernelMode;
use relaunch_sim::SimConfig;
use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::{linear, Rig};

/// (cmpswap 32, cmpswap 64, add 32, the return modifier, SOFFSET, wait
/// for returned data) per family.
fn names(cpu: &str) -> [&'static str; 6] {
    match cpu {
        "gfx1030" => [
            "buffer_atomic_cmpswap",
            "buffer_atomic_cmpswap_x2",
            "buffer_atomic_add",
            "glc",
            "0",
            "s_waitcnt vmcnt(0)",
        ],
        "gfx1100" => [
            "buffer_atomic_cmpswap_b32",
            "buffer_atomic_cmpswap_b64",
            "buffer_atomic_add_u32",
            "glc",
            "0",
            "s_waitcnt vmcnt(0)",
        ],
        _ => [
            "buffer_atomic_cmpswap_b32",
            "buffer_atomic_cmpswap_b64",
            "buffer_atomic_add_u32",
            "th:TH_ATOMIC_RETURN",
            "null",
            "s_wait_loadcnt 0x0",
        ],
    }
}

#[test]
fn buffer_atomics_swap_add_and_return_into_vdata() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1030", "gfx1100", "gfx1201"] {
        let sp = asm::spelling(cpu);
        let [cas, cas64, add, rtn, soff, wait] = names(cpu);
        let st32 = sp.global_store_b32;
        // A raw V# over the first 64 bytes of `out` (stride 0, OOB_SELECT
        // 3: offset + size <= NUM_RECORDS).
        let body = format!(
            "  {load} s[2:3], s[0:1], 0x0\n  {ws}\n  s_mov_b32 exec_lo, 1\n\
             s_mov_b32 s4, s2\n  s_and_b32 s5, s3, 0xffff\n  s_mov_b32 s6, 64\n\
             s_mov_b32 s7, 0x30000000\n  v_mov_b32 v0, 0\n\
             v_mov_b32 v2, 0x55\n  v_mov_b32 v3, 7\n\
             {cas} v[2:3], off, s[4:7], {soff} {rtn}\n  {wait}\n\
             {st32} v0, v2, s[2:3] offset:32\n\
             v_mov_b32 v2, 0x66\n  v_mov_b32 v3, 7\n\
             {cas} v[2:3], off, s[4:7], {soff} offset:4 {rtn}\n  {wait}\n\
             {st32} v0, v2, s[2:3] offset:36\n\
             v_mov_b32 v4, 0xccccdddd\n  v_mov_b32 v5, 0xaaaabbbb\n\
             v_mov_b32 v6, 2\n  v_mov_b32 v7, 1\n\
             {cas64} v[4:7], off, s[4:7], {soff} offset:8 {rtn}\n  {wait}\n\
             {st32} v0, v4, s[2:3] offset:40\n\
             {st32} v0, v5, s[2:3] offset:44\n\
             v_mov_b32 v1, 5\n\
             {add} v1, off, s[4:7], {soff} offset:16 {rtn}\n  {wait}\n\
             {st32} v0, v1, s[2:3] offset:48\n\
             v_mov_b32 v2, 0x77\n  v_mov_b32 v3, 5\n\
             {cas} v[2:3], off, s[4:7], {soff} offset:20\n\
             {st32} v0, v2, s[2:3] offset:52\n\
             v_mov_b32 v1, 1\n\
             {add} v1, off, s[4:7], {soff} offset:64\n\
             s_endpgm",
            load = sp.s_load_b64,
            ws = sp.wait_scalar,
        );
        let bytes = asm::one_kernel(cpu, "buf_atomics", &body, "");
        let mut cfg = SimConfig::new(cpu);
        cfg.kernels = KernelMode::Isa;
        let rig = Rig::from_bytes(cfg, &bytes);
        let out = rig.alloc(128);
        let init: [(u64, u32); 7] = [
            (0, 7),
            (4, 9),
            (8, 2),
            (12, 1),
            (16, 100),
            (20, 5),
            (64, 0xDEAD),
        ];
        for (at, v) in init {
            rig.dev.memory.write_u32(out + at, v).unwrap();
        }
        let mut b = rig.builder();
        rig.dispatch(&mut b, "buf_atomics", &linear(32, 32), &out.to_le_bytes());
        let (ib, _) = rig.finish(b);
        let v = rig.run(&ib.segments[0].dwords).expect(cpu);
        assert_eq!(v, vec![], "{cpu}");
        let word = |at: u64| rig.dev.memory.read_u32(out + at).unwrap();
        // Memory: swapped, not swapped (9 != 7), the 64-bit swap, the add,
        // the non-returning swap, and the out-of-range add dropped.
        let memory: Vec<u32> = [0, 4, 8, 12, 16, 20, 64].map(word).to_vec();
        assert_eq!(
            memory,
            [0x55, 9, 0xCCCC_DDDD, 0xAAAA_BBBB, 105, 0x77, 0xDEAD],
            "{cpu}"
        );
        // VDATA: the old values, and the non-returning one's own data.
        let returned: Vec<u32> = [32, 36, 40, 44, 48, 52].map(word).to_vec();
        assert_eq!(returned, [7, 9, 2, 1, 100, 0x77], "{cpu}");
    }
}

#[test]
fn a_returning_buffer_atomic_past_num_records_is_refused() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1030", "gfx1100", "gfx1201"] {
        let sp = asm::spelling(cpu);
        let [_, _, add, rtn, soff, wait] = names(cpu);
        // What the hardware returns for a lane outside the buffer is not
        // documented: refused, never guessed.
        let body = format!(
            "  {load} s[2:3], s[0:1], 0x0\n  {ws}\n  s_mov_b32 exec_lo, 1\n\
             s_mov_b32 s4, s2\n  s_and_b32 s5, s3, 0xffff\n  s_mov_b32 s6, 64\n\
             s_mov_b32 s7, 0x30000000\n  v_mov_b32 v1, 1\n\
             {add} v1, off, s[4:7], {soff} offset:64 {rtn}\n  {wait}\n  s_endpgm",
            load = sp.s_load_b64,
            ws = sp.wait_scalar,
        );
        let bytes = asm::one_kernel(cpu, "oob_rtn", &body, "");
        let (rig, out, result) = Rig::run_isa_once(cpu, &bytes, "oob_rtn", 128);
        let err = format!("{:?}", result.unwrap_err());
        assert!(err.contains("lanes outside the buffer"), "{cpu}: {err}");
        assert_eq!(rig.dev.memory.read_u32(out + 64).unwrap(), 0, "{cpu}");
    }
}
