//! Type-3 packet facts: opcodes, the header word, and the fields of the body
//! dwords relaunch emits or decodes, declared like register fields so the
//! encoder and decoder share them (facts from the kernel's `nvd.h` and
//! `soc21_enum.h`; see `docs/pm4.md`).

use crate::field::Field;

/// Type-3 opcodes relaunch emits or decodes.
pub mod op {
    pub const NOP: u8 = 0x10;
    pub const DISPATCH_DIRECT: u8 = 0x15;
    pub const WRITE_DATA: u8 = 0x37;
    pub const WAIT_REG_MEM: u8 = 0x3C;
    pub const INDIRECT_BUFFER: u8 = 0x3F;
    pub const COPY_DATA: u8 = 0x40;
    pub const EVENT_WRITE: u8 = 0x46;
    pub const RELEASE_MEM: u8 = 0x49;
    pub const DMA_DATA: u8 = 0x50;
    pub const ACQUIRE_MEM: u8 = 0x58;
    pub const SET_SH_REG: u8 = 0x76;
}

/// How many body dwords (after the header) a packet has, as the CP reads
/// it: the one layout table the encoders' decoder and the simulated CP
/// both read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// Any count (NOP: the CP skips the body).
    Any,
    /// Exactly this many.
    Exact(usize),
    /// At least this many (a run of register values or data dwords).
    AtLeast(usize),
    /// One of two forms (EVENT_WRITE: plain, or with an address).
    Either(usize, usize),
}

impl Body {
    /// True when `n` body dwords fit this layout.
    pub const fn allows(self, n: usize) -> bool {
        match self {
            Body::Any => true,
            Body::Exact(k) => n == k,
            Body::AtLeast(k) => n >= k,
            Body::Either(a, b) => n == a || n == b,
        }
    }
}

/// One type-3 packet's layout: opcode, name as in `nvd.h`, body count and
/// that count in words (for messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketLayout {
    pub opcode: u8,
    pub name: &'static str,
    pub body: Body,
    pub expected: &'static str,
}

const fn layout(
    opcode: u8,
    name: &'static str,
    body: Body,
    expected: &'static str,
) -> PacketLayout {
    PacketLayout {
        opcode,
        name,
        body,
        expected,
    }
}

/// Every packet relaunch decodes or the simulated CP parses (gfx10-12 forms).
pub static PACKETS: [PacketLayout; 11] = [
    layout(op::NOP, "NOP", Body::Any, "any"),
    layout(op::DISPATCH_DIRECT, "DISPATCH_DIRECT", Body::Exact(4), "4"),
    layout(
        op::WRITE_DATA,
        "WRITE_DATA",
        Body::AtLeast(4),
        "at least 4 (control, address, one data dword)",
    ),
    layout(op::WAIT_REG_MEM, "WAIT_REG_MEM", Body::Exact(6), "6"),
    layout(op::INDIRECT_BUFFER, "INDIRECT_BUFFER", Body::Exact(3), "3"),
    layout(op::COPY_DATA, "COPY_DATA", Body::Exact(5), "5"),
    layout(
        op::EVENT_WRITE,
        "EVENT_WRITE",
        Body::Either(1, 3),
        "1, or 3 with an address",
    ),
    layout(op::RELEASE_MEM, "RELEASE_MEM", Body::Exact(7), "7"),
    layout(op::DMA_DATA, "DMA_DATA", Body::Exact(6), "6"),
    // gfx10+ form (GCR_CNTL in body dword 7); gfx9's 6-dword form is not ours.
    layout(op::ACQUIRE_MEM, "ACQUIRE_MEM", Body::Exact(7), "7"),
    layout(
        op::SET_SH_REG,
        "SET_SH_REG",
        Body::AtLeast(2),
        "at least 2 (offset and one value)",
    ),
];

/// The layout of a known opcode.
pub fn packet_layout(opcode: u8) -> Option<&'static PacketLayout> {
    PACKETS.iter().find(|p| p.opcode == opcode)
}

/// Name of a known opcode.
pub fn opcode_name(opcode: u8) -> Option<&'static str> {
    packet_layout(opcode).map(|p| p.name)
}

/// Header word fields.
pub mod header {
    use crate::field::Field;
    pub const PREDICATE: Field = Field::bit("PREDICATE", 0);
    pub const SHADER_TYPE: Field = Field::bit("SHADER_TYPE", 1);
    pub const OPCODE: Field = Field::new("IT_OPCODE", 8, 15);
    pub const COUNT: Field = Field::new("COUNT", 16, 29);
    pub const TYPE: Field = Field::new("TYPE", 30, 31);
}

/// Largest body a type-3 header can describe (COUNT is 14 bits, count+1 dwords).
pub const MAX_BODY_DWORDS: u32 = 0x4000;

/// A type-3 header for `body_dwords` (1..=0x4000) body dwords. `compute` sets
/// SHADER_TYPE, which SET_SH_REG and DISPATCH_DIRECT on compute queues use.
/// Out-of-range counts are masked into the 14-bit COUNT field (the result is
/// then a wrong but well-formed header, which the decoder reports).
#[inline]
pub const fn type3(opcode: u8, body_dwords: u32, compute: bool) -> u32 {
    (3 << 30)
        | ((body_dwords.wrapping_sub(1) & 0x3FFF) << 16)
        | ((opcode as u32) << 8)
        | ((compute as u32) << 1)
}

/// Event types (`soc21_enum.h` VGT_EVENT_TYPE) relaunch uses or names.
pub mod event {
    pub const CS_PARTIAL_FLUSH: u32 = 0x07;
    pub const CACHE_FLUSH_AND_INV_TS_EVENT: u32 = 0x14;
    pub const BOTTOM_OF_PIPE_TS: u32 = 0x28;
    pub const CS_DONE: u32 = 0x2F;
    /// EVENT_INDEX for the *_PARTIAL_FLUSH events.
    pub const INDEX_PARTIAL_FLUSH: u32 = 4;

    /// Name of an event type relaunch knows.
    pub fn name(event_type: u32) -> Option<&'static str> {
        Some(match event_type {
            CS_PARTIAL_FLUSH => "CS_PARTIAL_FLUSH",
            CACHE_FLUSH_AND_INV_TS_EVENT => "CACHE_FLUSH_AND_INV_TS_EVENT",
            BOTTOM_OF_PIPE_TS => "BOTTOM_OF_PIPE_TS",
            CS_DONE => "CS_DONE",
            _ => return None,
        })
    }
}

/// EVENT_WRITE body dword 1 (and RELEASE_MEM dword 1's low bits).
pub mod event_cntl {
    use crate::field::Field;
    pub const EVENT_TYPE: Field = Field::new("EVENT_TYPE", 0, 5);
    pub const EVENT_INDEX: Field = Field::new("EVENT_INDEX", 8, 11);
    pub static FIELDS: [Field; 2] = [EVENT_TYPE, EVENT_INDEX];
}

/// ACQUIRE_MEM GCR_CNTL (body dword 7).
pub mod gcr {
    use crate::field::Field;
    pub const GLI_INV: Field = Field::new("GLI_INV", 0, 1);
    pub const GL1_RANGE: Field = Field::new("GL1_RANGE", 2, 3);
    pub const GLM_WB: Field = Field::bit("GLM_WB", 4);
    pub const GLM_INV: Field = Field::bit("GLM_INV", 5);
    pub const GLK_WB: Field = Field::bit("GLK_WB", 6);
    pub const GLK_INV: Field = Field::bit("GLK_INV", 7);
    pub const GLV_INV: Field = Field::bit("GLV_INV", 8);
    pub const GL1_INV: Field = Field::bit("GL1_INV", 9);
    pub const GL2_US: Field = Field::bit("GL2_US", 10);
    pub const GL2_RANGE: Field = Field::new("GL2_RANGE", 11, 12);
    pub const GL2_DISCARD: Field = Field::bit("GL2_DISCARD", 13);
    pub const GL2_INV: Field = Field::bit("GL2_INV", 14);
    pub const GL2_WB: Field = Field::bit("GL2_WB", 15);
    pub const SEQ: Field = Field::new("SEQ", 16, 17);
    pub const RANGE_IS_PA: Field = Field::bit("RANGE_IS_PA", 18);
    pub static FIELDS: [Field; 15] = [
        GLI_INV,
        GL1_RANGE,
        GLM_WB,
        GLM_INV,
        GLK_WB,
        GLK_INV,
        GLV_INV,
        GL1_INV,
        GL2_US,
        GL2_RANGE,
        GL2_DISCARD,
        GL2_INV,
        GL2_WB,
        SEQ,
        RANGE_IS_PA,
    ];

    /// A cache GCR_CNTL acts on.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Cache {
        /// GLI: the instruction cache.
        Instruction,
        /// GLM: the compression metadata cache.
        Metadata,
        /// GLK: the scalar L0 (K$).
        Scalar,
        /// GLV: the vector L0 (V$).
        Vector,
        /// GL1: the shader-array L1 (read-only).
        Gl1,
        /// GL2: the device L2.
        Gl2,
    }

    /// What a GCR_CNTL field asks for when non-zero.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Effect {
        Invalidate(Cache),
        WriteBack(Cache),
        /// Which lines the cache's action covers: 0 = the whole cache,
        /// otherwise the COHER_BASE/COHER_SIZE range.
        Range(Cache),
        /// GL2_DISCARD: drop dirty GL2 lines without writing them back.
        Discard,
        /// GL2_US: a GL2 action mode the kernel headers name without
        /// describing.
        Gl2Us,
        /// SEQ: the order the actions are performed in (0 = in parallel,
        /// 1 = forward, 2 = reverse); all are done when the packet completes.
        Sequence,
        /// RANGE_IS_PA: the range is physical (only ranged actions read it).
        RangeIsPhysical,
    }

    /// GLI_INV's values: 0 none, 1 the whole I$, 2 a range, 3 first/last line.
    pub const GLI_INV_ALL: u32 = 1;

    /// The effect of the GCR_CNTL field called `name` (`None`: unknown name).
    pub fn effect(name: &str) -> Option<Effect> {
        Some(match name {
            "GLI_INV" => Effect::Invalidate(Cache::Instruction),
            "GL1_RANGE" => Effect::Range(Cache::Gl1),
            "GLM_WB" => Effect::WriteBack(Cache::Metadata),
            "GLM_INV" => Effect::Invalidate(Cache::Metadata),
            "GLK_WB" => Effect::WriteBack(Cache::Scalar),
            "GLK_INV" => Effect::Invalidate(Cache::Scalar),
            "GLV_INV" => Effect::Invalidate(Cache::Vector),
            "GL1_INV" => Effect::Invalidate(Cache::Gl1),
            "GL2_US" => Effect::Gl2Us,
            "GL2_RANGE" => Effect::Range(Cache::Gl2),
            "GL2_DISCARD" => Effect::Discard,
            "GL2_INV" => Effect::Invalidate(Cache::Gl2),
            "GL2_WB" => Effect::WriteBack(Cache::Gl2),
            "SEQ" => Effect::Sequence,
            "RANGE_IS_PA" => Effect::RangeIsPhysical,
            _ => return None,
        })
    }
}

/// RELEASE_MEM body dword 1 (event and GCR control).
pub mod release_cntl {
    use crate::field::Field;
    pub const GCR_GLM_WB: Field = Field::bit("GCR_GLM_WB", 12);
    pub const GCR_GLM_INV: Field = Field::bit("GCR_GLM_INV", 13);
    pub const GCR_GLV_INV: Field = Field::bit("GCR_GLV_INV", 14);
    pub const GCR_GL1_INV: Field = Field::bit("GCR_GL1_INV", 15);
    pub const GCR_GL2_US: Field = Field::bit("GCR_GL2_US", 16);
    pub const GCR_GL2_RANGE: Field = Field::bit("GCR_GL2_RANGE", 17);
    pub const GCR_GL2_DISCARD: Field = Field::bit("GCR_GL2_DISCARD", 19);
    pub const GCR_GL2_INV: Field = Field::bit("GCR_GL2_INV", 20);
    pub const GCR_GL2_WB: Field = Field::bit("GCR_GL2_WB", 21);
    pub const GCR_SEQ: Field = Field::bit("GCR_SEQ", 22);
    pub const CACHE_POLICY: Field = Field::new("CACHE_POLICY", 25, 26);
    pub const EXECUTE: Field = Field::bit("EXECUTE", 28);
    pub static FIELDS: [Field; 14] = [
        super::event_cntl::EVENT_TYPE,
        super::event_cntl::EVENT_INDEX,
        GCR_GLM_WB,
        GCR_GLM_INV,
        GCR_GLV_INV,
        GCR_GL1_INV,
        GCR_GL2_US,
        GCR_GL2_RANGE,
        GCR_GL2_DISCARD,
        GCR_GL2_INV,
        GCR_GL2_WB,
        GCR_SEQ,
        CACHE_POLICY,
        EXECUTE,
    ];
}

/// RELEASE_MEM body dword 2 (data control).
pub mod release_data {
    use crate::field::Field;
    pub const DST_SEL: Field = Field::new("DST_SEL", 16, 17);
    pub const INT_SEL: Field = Field::new("INT_SEL", 24, 26);
    pub const DATA_SEL: Field = Field::new("DATA_SEL", 29, 31);
    pub static FIELDS: [Field; 3] = [DST_SEL, INT_SEL, DATA_SEL];
    /// DST_SEL: memory.
    pub const DST_SEL_MEMORY: u32 = 0;
    /// DATA_SEL: no data, the low 32 bits of DATA, all 64 bits of DATA,
    /// the 64-bit GPU clock counter (`nvd.h`/`soc15d.h` EOP DATA_SEL).
    pub const DATA_SEL_NONE: u32 = 0;
    pub const DATA_SEL_DATA32: u32 = 1;
    pub const DATA_SEL_DATA64: u32 = 2;
    pub const DATA_SEL_TIMESTAMP: u32 = 3;
}

/// WRITE_DATA body dword 1.
pub mod write_data {
    use crate::field::Field;
    pub const DST_SEL: Field = Field::new("DST_SEL", 8, 11);
    pub const WR_ONE_ADDR: Field = Field::bit("WR_ONE_ADDR", 16);
    pub const WR_CONFIRM: Field = Field::bit("WR_CONFIRM", 20);
    pub const CACHE_POLICY: Field = Field::new("CACHE_POLICY", 25, 26);
    pub const ENGINE_SEL: Field = Field::new("ENGINE_SEL", 30, 31);
    pub static FIELDS: [Field; 5] = [DST_SEL, WR_ONE_ADDR, WR_CONFIRM, CACHE_POLICY, ENGINE_SEL];
}

/// WAIT_REG_MEM body dword 1.
pub mod wait_reg_mem {
    use crate::field::Field;
    pub const FUNCTION: Field = Field::new("FUNCTION", 0, 2);
    pub const MEM_SPACE: Field = Field::new("MEM_SPACE", 4, 5);
    pub const OPERATION: Field = Field::new("OPERATION", 6, 7);
    pub const ENGINE: Field = Field::new("ENGINE", 8, 9);
    pub static FIELDS: [Field; 4] = [FUNCTION, MEM_SPACE, OPERATION, ENGINE];
}

/// COPY_DATA body dword 1 (layout as public PM4 references describe it; the
/// kernel's nvd.h names no COPY_DATA fields, so the header check skips them).
pub mod copy_data {
    use crate::field::Field;
    pub const SRC_SEL: Field = Field::new("SRC_SEL", 0, 3);
    pub const DST_SEL: Field = Field::new("DST_SEL", 8, 11);
    pub const COUNT_SEL: Field = Field::bit("COUNT_SEL", 16);
    pub const WR_CONFIRM: Field = Field::bit("WR_CONFIRM", 20);
    pub const ENGINE_SEL: Field = Field::new("ENGINE_SEL", 30, 31);
    pub static FIELDS: [Field; 5] = [SRC_SEL, DST_SEL, COUNT_SEL, WR_CONFIRM, ENGINE_SEL];
}

/// DMA_DATA body dword 1 (CONTROL; `nvd.h` PACKET3_DMA_DATA_*). The body is
/// CONTROL, SRC_ADDR_LO (or the fill DATA), SRC_ADDR_HI, DST_ADDR_LO,
/// DST_ADDR_HI, then COMMAND (`dma_command`).
pub mod dma_data {
    use crate::field::Field;
    /// 0 = ME (the engine relaunch uses), 1 = PFP.
    pub const ENGINE: Field = Field::bit("ENGINE", 0);
    pub const SRC_CACHE_POLICY: Field = Field::new("SRC_CACHE_POLICY", 13, 14);
    /// 0 = DST_ADDR using DAS, 1 = GDS, 3 = DST_ADDR using L2.
    pub const DST_SEL: Field = Field::new("DST_SEL", 20, 21);
    pub const DST_CACHE_POLICY: Field = Field::new("DST_CACHE_POLICY", 25, 26);
    /// 0 = SRC_ADDR using SAS, 1 = GDS, 2 = DATA (fill), 3 = SRC_ADDR using L2.
    pub const SRC_SEL: Field = Field::new("SRC_SEL", 29, 30);
    /// The CP waits for the transfer to finish before the next packet.
    pub const CP_SYNC: Field = Field::bit("CP_SYNC", 31);
    pub static FIELDS: [Field; 6] = [
        ENGINE,
        SRC_CACHE_POLICY,
        DST_SEL,
        DST_CACHE_POLICY,
        SRC_SEL,
        CP_SYNC,
    ];
    /// DST_SEL / SRC_SEL: an address through the L2 cache.
    pub const SEL_L2: u32 = 3;
    /// SRC_SEL: the source dword is the fill value.
    pub const SRC_SEL_DATA: u32 = 2;
}

/// DMA_DATA body dword 6 (COMMAND and BYTE_COUNT; on gfx10+ `nvd.h` gives
/// COMMAND [31:26] | BYTE_COUNT [25:0]).
pub mod dma_command {
    use crate::field::Field;
    pub const BYTE_COUNT: Field = Field::new("BYTE_COUNT", 0, 25);
    /// Source / destination address space: 0 memory, 1 register.
    pub const SAS: Field = Field::bit("SAS", 26);
    pub const DAS: Field = Field::bit("DAS", 27);
    /// Source / destination address increment: 0 increment, 1 fixed.
    pub const SAIC: Field = Field::bit("SAIC", 28);
    pub const DAIC: Field = Field::bit("DAIC", 29);
    pub const RAW_WAIT: Field = Field::bit("RAW_WAIT", 30);
    pub static FIELDS: [Field; 6] = [BYTE_COUNT, SAS, DAS, SAIC, DAIC, RAW_WAIT];
}

/// INDIRECT_BUFFER body dword 3 (control).
pub mod ib_control {
    use crate::field::Field;
    pub const IB_SIZE: Field = Field::new("IB_SIZE", 0, 19);
    pub const PRE_ENB: Field = Field::bit("PRE_ENB", 21);
    pub const VALID: Field = Field::bit("VALID", 23);
    pub const CACHE_POLICY: Field = Field::new("CACHE_POLICY", 28, 29);
    pub const PRE_RESUME: Field = Field::bit("PRE_RESUME", 30);
    pub static FIELDS: [Field; 5] = [IB_SIZE, PRE_ENB, VALID, CACHE_POLICY, PRE_RESUME];
}

/// Most dwords one INDIRECT_BUFFER can point at (IB_SIZE is 20 bits).
pub const MAX_IB_DWORDS: u32 = (1 << 20) - 1;

/// INDIRECT_BUFFER control dword for an IB of `dwords` dwords: IB_SIZE and
/// VALID (callers check the size against [`MAX_IB_DWORDS`]).
pub const fn ib_control_word(dwords: u32) -> u32 {
    ib_control::IB_SIZE.place(dwords) | ib_control::VALID.place(1)
}

/// Fields the header check compares with `nvd.h`, as `(group, field)`.
pub fn checked_fields() -> Vec<(&'static str, Field)> {
    let mut out = Vec::new();
    for (group, fields) in [
        ("EVENT_CNTL", &event_cntl::FIELDS[..]),
        ("ACQUIRE_MEM_GCR_CNTL", &gcr::FIELDS[..]),
        ("RELEASE_MEM_CNTL", &release_cntl::FIELDS[..]),
        ("RELEASE_MEM_DATA", &release_data::FIELDS[..]),
        ("WRITE_DATA", &write_data::FIELDS[..]),
        ("WAIT_REG_MEM", &wait_reg_mem::FIELDS[..]),
        ("DMA_DATA_CNTL", &dma_data::FIELDS[..]),
        ("DMA_DATA_COMMAND", &dma_command::FIELDS[..]),
        ("INDIRECT_BUFFER", &ib_control::FIELDS[..]),
    ] {
        out.extend(fields.iter().map(|f| (group, *f)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_golden_words() {
        assert_eq!(type3(op::DISPATCH_DIRECT, 4, true), 0xC003_1502);
        assert_eq!(type3(op::SET_SH_REG, 3, true), 0xC002_7602);
        assert_eq!(type3(op::EVENT_WRITE, 1, false), 0xC000_4600);
        assert_eq!(type3(op::ACQUIRE_MEM, 7, false), 0xC006_5800);
        assert_eq!(type3(op::INDIRECT_BUFFER, 3, false), 0xC002_3F00);
        assert_eq!(type3(op::RELEASE_MEM, 7, false), 0xC006_4900);
        assert_eq!(type3(op::WRITE_DATA, 4, false), 0xC003_3700);
        assert_eq!(type3(op::WAIT_REG_MEM, 6, false), 0xC005_3C00);
        assert_eq!(type3(op::COPY_DATA, 5, false), 0xC004_4000);
        assert_eq!(type3(op::NOP, 1, false), 0xC000_1000);
        assert_eq!(type3(op::DMA_DATA, 6, false), 0xC005_5000);
    }

    #[test]
    fn every_gcr_field_has_an_effect() {
        for f in gcr::FIELDS.iter() {
            assert!(gcr::effect(f.name).is_some(), "{}", f.name);
        }
    }

    #[test]
    fn gcr_bits_match_pm4_md() {
        let rmw = gcr::GLK_INV.place(1) | gcr::GLV_INV.place(1) | gcr::GL1_INV.place(1);
        assert_eq!(rmw, 0x380);
        let full = gcr::GLI_INV.place(1)
            | gcr::GLM_WB.place(1)
            | gcr::GLM_INV.place(1)
            | gcr::GLK_INV.place(1)
            | gcr::GLV_INV.place(1)
            | gcr::GL1_INV.place(1)
            | gcr::GL2_INV.place(1)
            | gcr::GL2_WB.place(1);
        assert_eq!(full, 0xC3B1);
    }
}
