//! The register rows of each family, in chunks: rows every family shares are
//! declared once; rows that differ (fields or offsets, per the kernel headers
//! `gc_10_1_0`, `gc_10_3_0`, `gc_11_0_0`, `gc_11_5_0`, `gc_12_0_0`) live in
//! per-family chunks. `scripts/check-registers` verifies every row.

use super::fields::*;
use super::{Class, Register};
use crate::field::Field;

use Class::{Cp, Dispatch, Other, Queue, Scratch};

const NONE: &[Field] = &[];

const fn r(name: &'static str, offset: u16, fields: &'static [Field], class: Class) -> Register {
    Register {
        name,
        offset,
        fields,
        class,
    }
}

/// 0x201..0x20F minus NUM_THREAD (its fields differ on gfx12).
static COMMON_LOW: [Register; 12] = [
    r("COMPUTE_DIM_X", 0x201, NONE, Cp),
    r("COMPUTE_DIM_Y", 0x202, NONE, Cp),
    r("COMPUTE_DIM_Z", 0x203, NONE, Cp),
    r("COMPUTE_START_X", 0x204, NONE, Other),
    r("COMPUTE_START_Y", 0x205, NONE, Other),
    r("COMPUTE_START_Z", 0x206, NONE, Other),
    r("COMPUTE_PIPELINESTAT_ENABLE", 0x20A, NONE, Other),
    r("COMPUTE_PERFCOUNT_ENABLE", 0x20B, NONE, Other),
    r("COMPUTE_PGM_LO", 0x20C, NONE, Dispatch),
    r("COMPUTE_PGM_HI", 0x20D, &DATA_8, Dispatch),
    r("COMPUTE_DISPATCH_PKT_ADDR_LO", 0x20E, NONE, Other),
    r("COMPUTE_DISPATCH_PKT_ADDR_HI", 0x20F, &DATA_8, Other),
];

/// 0x210..0x22A except RSRC1/2, TMPRING_SIZE and RSRC3 (their fields differ).
static COMMON_MID: [Register; 19] = [
    r("COMPUTE_DISPATCH_SCRATCH_BASE_LO", 0x210, NONE, Scratch),
    r("COMPUTE_DISPATCH_SCRATCH_BASE_HI", 0x211, &DATA_8, Scratch),
    r("COMPUTE_VMID", 0x214, &VMID, Cp),
    r("COMPUTE_RESOURCE_LIMITS", 0x215, &RESOURCE_LIMITS, Dispatch),
    r("COMPUTE_STATIC_THREAD_MGMT_SE0", 0x216, &CU_MASK, Queue),
    r("COMPUTE_STATIC_THREAD_MGMT_SE1", 0x217, &CU_MASK, Queue),
    r("COMPUTE_STATIC_THREAD_MGMT_SE2", 0x219, &CU_MASK, Queue),
    r("COMPUTE_STATIC_THREAD_MGMT_SE3", 0x21A, &CU_MASK, Queue),
    r("COMPUTE_RESTART_X", 0x21B, NONE, Cp),
    r("COMPUTE_RESTART_Y", 0x21C, NONE, Cp),
    r("COMPUTE_RESTART_Z", 0x21D, NONE, Cp),
    r("COMPUTE_THREAD_TRACE_ENABLE", 0x21E, NONE, Other),
    // The queue's MQD sets the wave-id base and SE id sending.
    r("COMPUTE_MISC_RESERVED", 0x21F, NONE, Queue),
    r("COMPUTE_DISPATCH_ID", 0x220, NONE, Cp),
    r("COMPUTE_THREADGROUP_ID", 0x221, NONE, Cp),
    r("COMPUTE_REQ_CTRL", 0x222, NONE, Other),
    r("COMPUTE_DDID_INDEX", 0x229, NONE, Other),
    r("COMPUTE_SHADER_CHKSUM", 0x22A, NONE, Other),
    r("COMPUTE_USER_DATA_0", 0x240, NONE, Dispatch),
];

static USER_DATA_1_15: [Register; 15] = [
    r("COMPUTE_USER_DATA_1", 0x241, NONE, Dispatch),
    r("COMPUTE_USER_DATA_2", 0x242, NONE, Dispatch),
    r("COMPUTE_USER_DATA_3", 0x243, NONE, Dispatch),
    r("COMPUTE_USER_DATA_4", 0x244, NONE, Dispatch),
    r("COMPUTE_USER_DATA_5", 0x245, NONE, Dispatch),
    r("COMPUTE_USER_DATA_6", 0x246, NONE, Dispatch),
    r("COMPUTE_USER_DATA_7", 0x247, NONE, Dispatch),
    r("COMPUTE_USER_DATA_8", 0x248, NONE, Dispatch),
    r("COMPUTE_USER_DATA_9", 0x249, NONE, Dispatch),
    r("COMPUTE_USER_DATA_10", 0x24A, NONE, Dispatch),
    r("COMPUTE_USER_DATA_11", 0x24B, NONE, Dispatch),
    r("COMPUTE_USER_DATA_12", 0x24C, NONE, Dispatch),
    r("COMPUTE_USER_DATA_13", 0x24D, NONE, Dispatch),
    r("COMPUTE_USER_DATA_14", 0x24E, NONE, Dispatch),
    r("COMPUTE_USER_DATA_15", 0x24F, NONE, Dispatch),
];

/// gfx10 and gfx11 share these field layouts.
static GFX10_11_RSRC12: [Register; 5] = [
    r("COMPUTE_NUM_THREAD_X", 0x207, &NUM_THREAD_GFX10, Dispatch),
    r("COMPUTE_NUM_THREAD_Y", 0x208, &NUM_THREAD_GFX10, Dispatch),
    r("COMPUTE_NUM_THREAD_Z", 0x209, &NUM_THREAD_GFX10, Dispatch),
    r("COMPUTE_PGM_RSRC1", 0x212, &RSRC1_GFX10, Dispatch),
    r("COMPUTE_PGM_RSRC2", 0x213, &RSRC2_GFX10, Dispatch),
];

static GFX10_ONLY: [Register; 7] = [
    r(
        "COMPUTE_DISPATCH_INITIATOR",
        0x200,
        &DISPATCH_INITIATOR_GFX10,
        Cp,
    ),
    r("COMPUTE_TMPRING_SIZE", 0x218, &TMPRING_GFX10, Scratch),
    r("COMPUTE_PGM_RSRC3", 0x228, &RSRC3_GFX10, Dispatch),
    // gfx10 has its relaunch registers where gfx11 put four more CU masks.
    r("COMPUTE_RELAUNCH", 0x22B, NONE, Cp),
    r("COMPUTE_WAVE_RESTORE_ADDR_LO", 0x22C, NONE, Cp),
    r("COMPUTE_WAVE_RESTORE_ADDR_HI", 0x22D, NONE, Cp),
    r("COMPUTE_RELAUNCH2", 0x22E, NONE, Cp),
];

/// gfx11 and gfx12: extra CU masks and the moved relaunch registers.
static GFX11_12_HIGH: [Register; 8] = [
    r("COMPUTE_STATIC_THREAD_MGMT_SE4", 0x22B, &CU_MASK, Queue),
    r("COMPUTE_STATIC_THREAD_MGMT_SE5", 0x22C, &CU_MASK, Queue),
    r("COMPUTE_STATIC_THREAD_MGMT_SE6", 0x22D, &CU_MASK, Queue),
    r("COMPUTE_STATIC_THREAD_MGMT_SE7", 0x22E, &CU_MASK, Queue),
    r("COMPUTE_RELAUNCH", 0x230, NONE, Cp),
    r("COMPUTE_WAVE_RESTORE_ADDR_LO", 0x231, NONE, Cp),
    r("COMPUTE_WAVE_RESTORE_ADDR_HI", 0x232, NONE, Cp),
    r("COMPUTE_RELAUNCH2", 0x233, NONE, Cp),
];

static GFX11_ONLY: [Register; 4] = [
    r(
        "COMPUTE_DISPATCH_INITIATOR",
        0x200,
        &DISPATCH_INITIATOR_GFX11,
        Cp,
    ),
    r("COMPUTE_TMPRING_SIZE", 0x218, &TMPRING_GFX11, Scratch),
    r("COMPUTE_PGM_RSRC3", 0x228, &RSRC3_GFX11, Dispatch),
    r(
        "COMPUTE_DISPATCH_INTERLEAVE",
        0x22F,
        &INTERLEAVE_GFX11,
        Other,
    ),
];

static GFX12_ONLY: [Register; 13] = [
    r(
        "COMPUTE_DISPATCH_INITIATOR",
        0x200,
        &DISPATCH_INITIATOR_GFX12,
        Cp,
    ),
    r("COMPUTE_NUM_THREAD_X", 0x207, &NUM_THREAD_X_GFX12, Dispatch),
    r("COMPUTE_NUM_THREAD_Y", 0x208, &NUM_THREAD_Y_GFX12, Dispatch),
    r("COMPUTE_NUM_THREAD_Z", 0x209, &NUM_THREAD_Z_GFX12, Dispatch),
    r("COMPUTE_PGM_RSRC1", 0x212, &RSRC1_GFX12, Dispatch),
    r("COMPUTE_PGM_RSRC2", 0x213, &RSRC2_GFX12, Dispatch),
    r("COMPUTE_TMPRING_SIZE", 0x218, &TMPRING_GFX12, Scratch),
    // RSRC3 is NOT at 0x223 on gfx12: that is the SE8 CU mask.
    r("COMPUTE_STATIC_THREAD_MGMT_SE8", 0x223, &CU_MASK, Queue),
    r("COMPUTE_PGM_RSRC3", 0x228, &RSRC3_GFX12, Dispatch),
    r(
        "COMPUTE_DISPATCH_INTERLEAVE",
        0x22F,
        &INTERLEAVE_GFX12,
        Other,
    ),
    r("COMPUTE_PRESCALED_DIM_X", 0x235, NONE, Cp),
    r("COMPUTE_PRESCALED_DIM_Y", 0x236, NONE, Cp),
    r("COMPUTE_PRESCALED_DIM_Z", 0x237, NONE, Cp),
];

pub static GFX10: &[&[Register]] = &[
    &COMMON_LOW,
    &COMMON_MID,
    &USER_DATA_1_15,
    &GFX10_11_RSRC12,
    &GFX10_ONLY,
];
pub static GFX11: &[&[Register]] = &[
    &COMMON_LOW,
    &COMMON_MID,
    &USER_DATA_1_15,
    &GFX10_11_RSRC12,
    &GFX11_12_HIGH,
    &GFX11_ONLY,
];
pub static GFX12: &[&[Register]] = &[
    &COMMON_LOW,
    &COMMON_MID,
    &USER_DATA_1_15,
    &GFX11_12_HIGH,
    &GFX12_ONLY,
];
