//! Register fields, named as in the kernel headers' `*_sh_mask.h`. Fields the
//! encoder sets are named constants; the per-register arrays list every field
//! of the registers relaunch decodes in detail.

use crate::family::{Family, TrapRule};
use crate::field::Field;

const fn f(name: &'static str, lo: u8, hi: u8) -> Field {
    Field::new(name, lo, hi)
}
const fn b(name: &'static str, bit: u8) -> Field {
    Field::bit(name, bit)
}

// COMPUTE_DISPATCH_INITIATOR
pub const INIT_COMPUTE_SHADER_EN: Field = b("COMPUTE_SHADER_EN", 0);
pub const INIT_PARTIAL_TG_EN: Field = b("PARTIAL_TG_EN", 1);
pub const INIT_FORCE_START_AT_000: Field = b("FORCE_START_AT_000", 2);
pub const INIT_USE_THREAD_DIMENSIONS: Field = b("USE_THREAD_DIMENSIONS", 5);
pub const INIT_ORDER_MODE: Field = b("ORDER_MODE", 6);
pub const INIT_CS_W32_EN: Field = b("CS_W32_EN", 15);

const INIT_COMMON: [Field; 13] = [
    INIT_COMPUTE_SHADER_EN,
    INIT_PARTIAL_TG_EN,
    INIT_FORCE_START_AT_000,
    b("ORDERED_APPEND_ENBL", 3),
    b("ORDERED_APPEND_MODE", 4),
    INIT_USE_THREAD_DIMENSIONS,
    INIT_ORDER_MODE,
    b("SCALAR_L1_INV_VOL", 10),
    b("VECTOR_L1_INV_VOL", 11),
    b("RESERVED", 12),
    b("TUNNEL_ENABLE", 13),
    b("RESTORE", 14),
    INIT_CS_W32_EN,
];
pub static DISPATCH_INITIATOR_GFX10: [Field; 13] = INIT_COMMON;
pub static DISPATCH_INITIATOR_GFX11: [Field; 15] = {
    let c = INIT_COMMON;
    [
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        c[5],
        c[6],
        c[7],
        c[8],
        c[9],
        c[10],
        c[11],
        c[12],
        b("AMP_SHADER_EN", 16),
        b("DISABLE_DISP_PREMPT_EN", 17),
    ]
};
pub static DISPATCH_INITIATOR_GFX12: [Field; 17] = {
    let c = INIT_COMMON;
    [
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        c[5],
        c[6],
        c[7],
        c[8],
        b("PING_PONG_EN", 12),
        c[10],
        c[11],
        c[12],
        b("AMP_SHADER_EN", 16),
        b("DISABLE_DISP_PREMPT_EN", 17),
        b("INTERLEAVE_2D_EN", 18),
        f("TTRACE_QUEUE_ID", 29, 31),
    ]
};

// COMPUTE_NUM_THREAD_X/Y/Z
pub const NUM_THREAD_FULL: Field = f("NUM_THREAD_FULL", 0, 15);
/// gfx12 narrows NUM_THREAD_FULL to 13 bits (interleave bits above).
pub const NUM_THREAD_FULL_GFX12: Field = f("NUM_THREAD_FULL", 0, 12);
pub static NUM_THREAD_GFX10: [Field; 2] = [NUM_THREAD_FULL, f("NUM_THREAD_PARTIAL", 16, 31)];
pub static NUM_THREAD_X_GFX12: [Field; 3] = [
    NUM_THREAD_FULL_GFX12,
    f("INTERLEAVE_BITS_X", 13, 15),
    f("NUM_THREAD_PARTIAL", 16, 31),
];
pub static NUM_THREAD_Y_GFX12: [Field; 3] = [
    NUM_THREAD_FULL_GFX12,
    f("INTERLEAVE_BITS_Y", 13, 15),
    f("NUM_THREAD_PARTIAL", 16, 31),
];
pub static NUM_THREAD_Z_GFX12: [Field; 2] =
    [f("NUM_THREAD_FULL", 0, 15), f("NUM_THREAD_PARTIAL", 16, 31)];

// COMPUTE_PGM_HI and other narrow high halves
pub static DATA_8: [Field; 1] = [f("DATA", 0, 7)];

// COMPUTE_PGM_RSRC1
pub static RSRC1_GFX10: [Field; 12] = [
    f("VGPRS", 0, 5),
    f("SGPRS", 6, 9),
    f("PRIORITY", 10, 11),
    f("FLOAT_MODE", 12, 19),
    b("PRIV", 20),
    b("DX10_CLAMP", 21),
    b("IEEE_MODE", 23),
    b("BULKY", 24),
    b("FP16_OVFL", 26),
    b("WGP_MODE", 29),
    b("MEM_ORDERED", 30),
    b("FWD_PROGRESS", 31),
];
pub static RSRC1_GFX12: [Field; 14] = [
    f("VGPRS", 0, 5),
    f("SGPRS", 6, 9),
    f("PRIORITY", 10, 11),
    f("FLOAT_MODE", 12, 19),
    b("PRIV", 20),
    b("WG_RR_EN", 21),
    b("DEBUG_MODE", 22),
    b("DISABLE_PERF", 23),
    b("BULKY", 24),
    b("CDBG_USER", 25),
    b("FP16_OVFL", 26),
    b("WGP_MODE", 29),
    b("MEM_ORDERED", 30),
    b("FWD_PROGRESS", 31),
];

// COMPUTE_PGM_RSRC2
pub const RSRC2_SCRATCH_EN: Field = b("SCRATCH_EN", 0);
pub const RSRC2_USER_SGPR: Field = f("USER_SGPR", 1, 5);
/// Trap handler present (gfx10/gfx11 only; gfx12 has DYNAMIC_VGPR here).
pub const RSRC2_TRAP_PRESENT: Field = b("TRAP_PRESENT", 6);

/// The RSRC2 bits the CP sets for an AQL dispatch when the runtime has a
/// trap handler installed (ROCr: on gfx10 always, on gfx11 and later when
/// the driver supports exception debugging; see relaunch-device's
/// `hsa::trap`): the
/// code object leaves TRAP_PRESENT 0 by contract, so the direct PM4 path
/// sets it itself to give replayed kernels the handler they have under
/// HIP. gfx12 has no such bit.
pub const fn rsrc2_trap_bits(family: Family, trap_handler: bool) -> u32 {
    match family.facts().dispatch.trap {
        TrapRule::Rsrc2Bit(bit) => bit.place(trap_handler as u32),
        TrapRule::RuntimeState => 0,
    }
}

pub const RSRC2_TGID_X_EN: Field = b("TGID_X_EN", 7);
pub const RSRC2_TGID_Y_EN: Field = b("TGID_Y_EN", 8);
pub const RSRC2_TGID_Z_EN: Field = b("TGID_Z_EN", 9);
pub const RSRC2_TG_SIZE_EN: Field = b("TG_SIZE_EN", 10);
pub const RSRC2_TIDIG_COMP_CNT: Field = f("TIDIG_COMP_CNT", 11, 12);
pub const RSRC2_EXCP_EN_MSB: Field = f("EXCP_EN_MSB", 13, 14);
pub const RSRC2_EXCP_EN: Field = f("EXCP_EN", 24, 30);

/// LDS allocation in 512-byte granules for compute on gfx10-12.
pub const RSRC2_LDS_SIZE: Field = f("LDS_SIZE", 15, 23);
/// Bytes per LDS_SIZE granule for compute on these families.
pub const LDS_GRANULE_BYTES: u32 = 512;
pub static RSRC2_GFX10: [Field; 11] = [
    RSRC2_SCRATCH_EN,
    RSRC2_USER_SGPR,
    RSRC2_TRAP_PRESENT,
    RSRC2_TGID_X_EN,
    RSRC2_TGID_Y_EN,
    RSRC2_TGID_Z_EN,
    RSRC2_TG_SIZE_EN,
    RSRC2_TIDIG_COMP_CNT,
    RSRC2_EXCP_EN_MSB,
    RSRC2_LDS_SIZE,
    RSRC2_EXCP_EN,
];
pub static RSRC2_GFX12: [Field; 12] = [
    RSRC2_SCRATCH_EN,
    RSRC2_USER_SGPR,
    b("DYNAMIC_VGPR", 6),
    RSRC2_TGID_X_EN,
    RSRC2_TGID_Y_EN,
    RSRC2_TGID_Z_EN,
    RSRC2_TG_SIZE_EN,
    RSRC2_TIDIG_COMP_CNT,
    RSRC2_EXCP_EN_MSB,
    RSRC2_LDS_SIZE,
    RSRC2_EXCP_EN,
    b("WGP_TAKEOVER", 31),
];

// COMPUTE_PGM_RSRC3
pub static RSRC3_GFX10: [Field; 1] = [f("SHARED_VGPR_CNT", 0, 3)];
pub static RSRC3_GFX11: [Field; 5] = [
    f("SHARED_VGPR_CNT", 0, 3),
    f("INST_PREF_SIZE", 4, 9),
    b("TRAP_ON_START", 10),
    b("TRAP_ON_END", 11),
    b("IMAGE_OP", 31),
];
pub static RSRC3_GFX12: [Field; 4] = [
    f("SHARED_VGPR_CNT", 0, 3),
    f("INST_PREF_SIZE", 4, 11),
    b("GLG_EN", 13),
    b("IMAGE_OP", 31),
];

// COMPUTE_RESOURCE_LIMITS (the same on every family)
pub static RESOURCE_LIMITS: [Field; 6] = [
    f("WAVES_PER_SH", 0, 9),
    f("TG_PER_CU", 12, 15),
    f("LOCK_THRESHOLD", 16, 21),
    b("SIMD_DEST_CNTL", 22),
    b("FORCE_SIMD_DIST", 23),
    f("CU_GROUP_COUNT", 24, 26),
];

// COMPUTE_STATIC_THREAD_MGMT_SE* (CU masks the queue owns)
pub static CU_MASK: [Field; 2] = [f("SA0_CU_EN", 0, 15), f("SA1_CU_EN", 16, 31)];

// COMPUTE_TMPRING_SIZE (the dispatch's scratch ring); WAVESIZE widens per family
pub static TMPRING_GFX10: [Field; 2] = [f("WAVES", 0, 11), f("WAVESIZE", 12, 24)];
pub static TMPRING_GFX11: [Field; 2] = [f("WAVES", 0, 11), f("WAVESIZE", 12, 26)];
pub static TMPRING_GFX12: [Field; 2] = [f("WAVES", 0, 11), f("WAVESIZE", 12, 29)];

// COMPUTE_DISPATCH_INTERLEAVE (gfx11+)
pub static INTERLEAVE_GFX11: [Field; 1] = [f("INTERLEAVE", 0, 9)];
pub static INTERLEAVE_GFX12: [Field; 3] = [
    f("INTERLEAVE_1D", 0, 9),
    f("INTERLEAVE_2D_X_SIZE", 16, 19),
    f("INTERLEAVE_2D_Y_SIZE", 24, 27),
];

// COMPUTE_VMID
pub static VMID: [Field; 1] = [f("DATA", 0, 3)];
