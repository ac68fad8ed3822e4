//! One [`FamilyFacts`] row per family: every value or rule that differs
//! by family and is the same for all of the family's targets. Users read
//! the row (`family.facts().isa.sgprs.m0`); code that is genuinely
//! different per family (opcode tables, encodings with different shapes)
//! stays an exhaustive `match` at its user (see the crate README).

use super::{Family, FlatScratch, ScratchRules, UserSgprRules};
use crate::field::Field;
use crate::packet::gcr;
use crate::regs::{INIT_CS_W32_EN, LDS_GRANULE_BYTES, RSRC2_TRAP_PRESENT};

/// Everything relaunch knows that is shared by every target of a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FamilyFacts {
    pub family: Family,
    /// Lower-case name as used in messages, dumps and `pm4 dump --family`.
    pub name: &'static str,
    pub user_sgprs: UserSgprRules,
    pub scratch: ScratchRules,
    pub dispatch: DispatchRules,
    pub isa: IsaRules,
    pub memory: MemoryFields,
    pub resource: ResourceRules,
    pub cache: CacheModel,
    pub runtime: RuntimeFacts,
    /// The SDMA engine generation of the family's GPUs (SDMA 5.x on
    /// RDNA1/2, 6.0 on RDNA3, 7.0 on RDNA4; Linux amdgpu's `sdma_v*`).
    pub sdma_engine: u32,
}

/// How a dispatch's state becomes its waves' state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DispatchRules {
    /// DISPATCH_INITIATOR's wave32 bit (CS_W32_EN, bit 15 on gfx10-12).
    pub wave32_bit: Field,
    /// Bytes per RSRC2.LDS_SIZE granule for compute (512 on gfx10-12).
    pub lds_granule: u32,
    pub trap: TrapRule,
    /// RSRC1's DX10_CLAMP (bit 21) and IEEE_MODE (bit 23) exist and set
    /// MODE bits 8 and 9 at wave launch: gfx10 and gfx11; gfx12 has
    /// neither (LLVM 19 refuses `.amdhsa_dx10_clamp`/`.amdhsa_ieee_mode`).
    pub rsrc1_clamp_ieee: bool,
    pub workgroup_ids: WorkgroupIds,
    /// The work-item ids come packed in v0 (x 9:0, y 19:10, z 29:20;
    /// AMDGPUUsage, LLVM's `hasPackedTID`): gfx11 and gfx12; gfx10 loads
    /// one VGPR per dimension.
    pub packed_work_item_ids: bool,
}

/// What decides whether a wave traps to the handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrapRule {
    /// RSRC2.TRAP_PRESENT (bit 6): the CP sets it for an AQL dispatch when
    /// the runtime installed a handler, and the wave's TRAP_EN follows it
    /// (gfx10, gfx11).
    Rsrc2Bit(Field),
    /// No such bit (gfx12: the bit is gone from RSRC2): the handler is the
    /// per-process TBA/TMA the driver gives the scheduler firmware, so the
    /// runtime's state decides.
    RuntimeState,
}

/// Where a wave finds its workgroup ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkgroupIds {
    /// System SGPRs after the user SGPRs, as RSRC2.TGID_*_EN enable them
    /// (gfx10, gfx11).
    SystemSgprs,
    /// Architected SGPRs (gfx12, AMDGPUUsage): x in TTMP9, y in TTMP7
    /// bits 15:0, z in TTMP7 bits 31:16, always.
    Ttmp,
}

/// Instruction-set rules that are values, not encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IsaRules {
    pub sgprs: SgprCodes,
    /// SDWA (src0 code 0xF9 on VOP1/VOP2/VOPC): gfx10 only; LLVM's
    /// disassembler has no SDWA from gfx11.
    pub sdwa: bool,
    /// VOP3 may carry DPP16/DPP8 (src0 0xFA/0xE9/0xEA): gfx11 and gfx12
    /// (LLVM's `VOP3_DPP`); on gfx10 those codes are invalid in VOP3.
    pub vop3_dpp: bool,
    /// 16-bit VOP1/VOP2/VOPC VGPR fields name the high half with bit 7
    /// (v128+ are v0.h+; "true16", gfx11 and gfx12).
    pub vgpr_high_halves: bool,
    /// ds_bpermute_b32 in wave64 reaches all 64 lanes
    /// (`GCNSubtarget::supportsWaveWideBPermute`: gfx12); on gfx10/gfx11
    /// each half permutes within its 32 lanes.
    pub wave_wide_bpermute: bool,
    /// The s_sendmsg id of MSG_DEALLOC_VGPRS (3, gfx11 and gfx12: the
    /// wave's VGPRs are released early); gfx10 has no such message.
    pub dealloc_vgprs_msg: Option<u32>,
}

/// The scalar register file codes of `m0` and `null` (gfx11 swapped them:
/// LLVM's `SIRegisterInfo`/disassembler, 124 and 125).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SgprCodes {
    pub m0: u8,
    pub null: u8,
}

/// Bits `hi:lo` of an instruction counted across its dwords from bit 0
/// of the first (`63:56` is dword 1's top byte); never crossing a dword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InstBits {
    pub hi: u8,
    pub lo: u8,
}

impl InstBits {
    pub const fn new(hi: u8, lo: u8) -> Self {
        InstBits { hi, lo }
    }

    /// Bits wide.
    pub const fn width(self) -> u32 {
        (self.hi - self.lo + 1) as u32
    }

    /// The field's value in `words` (the instruction's dwords).
    #[inline]
    pub fn get(self, words: &[u32]) -> u32 {
        let w = words[usize::from(self.lo / 32)] >> (self.lo % 32);
        match self.width() {
            32 => w,
            n => w & ((1 << n) - 1),
        }
    }

    /// The field's value sign-extended from its width.
    #[inline]
    pub fn get_signed(self, words: &[u32]) -> i64 {
        let n = self.width();
        let v = i64::from(self.get(words));
        (v << (64 - n)) >> (64 - n)
    }
}

/// Field positions of memory instructions (LLVM's encodings, as
/// llvm-mc-19 assembles them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemoryFields {
    /// SMEM opcode: bits 25:18 on gfx10/gfx11, 18:13 on gfx12.
    pub smem_op: InstBits,
    /// SMEM signed byte offset: 52:32 (21 bits) on gfx10/gfx11, 55:32
    /// (24 bits) on gfx12.
    pub smem_offset: InstBits,
    /// DS's GDS bit (17, gfx10/gfx11): the access goes to the global data
    /// share or the global wave sync, not to LDS. gfx12 has neither.
    pub ds_gds: Option<InstBits>,
    pub flat: FlatFields,
    pub buffer: BufferFields,
}

/// FLAT/GLOBAL/SCRATCH fields (VFLAT/VGLOBAL/VSCRATCH on gfx12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlatFields {
    pub op: InstBits,
    pub vdst: InstBits,
    pub addr: InstBits,
    pub data: InstBits,
    pub saddr: InstBits,
    /// Signed byte offset: 12 bits on gfx10, 13 on gfx11, 24 on gfx12.
    pub offset: InstBits,
    /// An atomic returns the old value: GLC (bit 16 on gfx10, 14 on
    /// gfx11), TH bit 0 (bit 52) on gfx12.
    pub returns: InstBits,
    /// The SVE bit (VADDR is used although SADDR is on): bit 55 on gfx11,
    /// 49 on gfx12; gfx10 has none (VADDR is used exactly when SADDR is off).
    pub vaddr_enable: Option<InstBits>,
}

/// MUBUF/MTBUF fields (VBUFFER on gfx12) a buffer access's address and
/// data come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferFields {
    /// Unsigned byte offset: 12 bits in dword 0 on gfx10/gfx11, 24 bits
    /// (95:72) on gfx12.
    pub offset: InstBits,
    pub offen: InstBits,
    pub idxen: InstBits,
    pub vaddr: InstBits,
    pub vdata: InstBits,
    /// The V#'s first SGPR, in units of `rsrc_scale` SGPRs.
    pub rsrc: InstBits,
    pub rsrc_scale: u32,
    /// An atomic returns the old value (into VDATA): GLC, bit 14 on
    /// gfx10/gfx11 (flat's is 16 on gfx10); TH bit 0 (bit 52) on gfx12.
    pub returns: InstBits,
}

/// Buffer resource (V#) fields that differ by family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResourceRules {
    /// SWIZZLE_ENABLE in dword 1: bit 31 on gfx10, bits 31:30 from gfx11
    /// (Linux amdgpu's `SQ_BUF_RSRC_WORD1` per generation).
    pub swizzle: Field,
    /// The SWIZZLE_ENABLE value meaning 4-byte swizzle elements (1: the
    /// only swizzle gfx10 has; from gfx11 the 2-bit field's value 1).
    pub swizzle_four_byte: u32,
}

/// The cache hierarchy of a family and what a boundary must do with it
/// (`docs/pm4.md`, "Boundaries"); the encoders' epilogue and the
/// simulator's coherence checks read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheModel {
    pub hierarchy: CacheHierarchy,
    /// ACQUIRE_MEM GCR_CNTL of the IB's end-of-work release: results
    /// written back from GL2 before the completion signal.
    pub release_gcr: u32,
}

/// Which caches sit between a wave and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheHierarchy {
    /// Per-CU K$ (scalar) and V$ (vector), GL1 per shader array, GL2 per
    /// GPU; ACQUIRE_MEM's GCR_CNTL invalidates each, RELEASE_MEM writes
    /// GL2 back. Every RDNA1-4 family relaunch supports.
    Gcr,
}

/// gfx10/gfx11 release: GL2 written back with the metadata cache written
/// back and invalidated together (0x8030), as the Linux driver's compute
/// fences do ("GLM_INV must be set with GLM_WB").
const RELEASE_WITH_GLM: u32 = gcr::GLM_WB.place(1) | gcr::GLM_INV.place(1) | gcr::GL2_WB.place(1);
/// gfx12 release: GL2_WB only (0x8000). Linux amdgpu `gfx_v12_0.c`
/// (`gfx_v12_0_ring_emit_fence`) writes back with GCR_SEQ | GL2_WB only;
/// the patch that made it so drops the INV bits ("should be executed via
/// ACQUIRE_MEM before INDIRECT_BUFFER") and the GLM bits ("the hw ignores
/// them"). GL2_WB is bit 15 of GCR_CNTL on gfx12 as on gfx10/11 (the
/// shared `nvd.h`); SEQ is not set: one write-back has nothing to order.
const RELEASE_GL2_ONLY: u32 = gcr::GL2_WB.place(1);

/// What the ROCm runtime does for a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RuntimeFacts {
    /// ROCr (`GpuAgent::BindTrapHandler`) installs its legacy trap handler
    /// when the kernel driver has no exception debugging: gfx10 only (none
    /// on gfx11 and later without it).
    pub legacy_trap_handler: bool,
    /// The ROCr release (and a distribution shipping it) that first runs
    /// the family.
    pub rocr_release: &'static str,
}

const DEALLOC_SINCE_GFX11: Option<u32> = Some(3);

const fn inst(hi: u8, lo: u8) -> InstBits {
    InstBits::new(hi, lo)
}

/// gfx10/gfx11 dispatch rules; only the work-item id packing differs.
const fn dispatch_gfx10_11(packed_work_item_ids: bool) -> DispatchRules {
    DispatchRules {
        wave32_bit: INIT_CS_W32_EN,
        lds_granule: LDS_GRANULE_BYTES,
        trap: TrapRule::Rsrc2Bit(RSRC2_TRAP_PRESENT),
        rsrc1_clamp_ieee: true,
        workgroup_ids: WorkgroupIds::SystemSgprs,
        packed_work_item_ids,
    }
}

/// gfx10/gfx11 MUBUF: OFFSET 11:0, OFFEN 12 and IDXEN 13 on gfx10 (54
/// and 55 on gfx11), GLC 14, VADDR 39:32, VDATA 47:40, SRSRC 52:48 (x4
/// SGPRs).
const fn buffer_gfx10_11(offen: u8, idxen: u8) -> BufferFields {
    BufferFields {
        offset: inst(11, 0),
        offen: inst(offen, offen),
        idxen: inst(idxen, idxen),
        vaddr: inst(39, 32),
        vdata: inst(47, 40),
        rsrc: inst(52, 48),
        rsrc_scale: 4,
        returns: inst(14, 14),
    }
}

const GFX10: FamilyFacts = FamilyFacts {
    family: Family::Gfx10,
    name: "gfx10",
    user_sgprs: UserSgprRules {
        private_segment_buffer: true,
    },
    scratch: ScratchRules {
        flat_scratch: FlatScratch::Init,
        wavesize_granule: 1024,
        dispatch_scratch_base: false,
        flat_scratch_hwregs: Some((20, 21)),
        waves_per_engine: false,
    },
    dispatch: dispatch_gfx10_11(false),
    isa: IsaRules {
        sgprs: SgprCodes { m0: 124, null: 125 },
        sdwa: true,
        vop3_dpp: false,
        vgpr_high_halves: false,
        wave_wide_bpermute: false,
        dealloc_vgprs_msg: None,
    },
    memory: MemoryFields {
        smem_op: inst(25, 18),
        smem_offset: inst(52, 32),
        ds_gds: Some(inst(17, 17)),
        flat: FlatFields {
            op: inst(24, 18),
            vdst: inst(63, 56),
            addr: inst(39, 32),
            data: inst(47, 40),
            saddr: inst(54, 48),
            offset: inst(11, 0),
            returns: inst(16, 16),
            vaddr_enable: None,
        },
        buffer: buffer_gfx10_11(12, 13),
    },
    resource: ResourceRules {
        swizzle: Field::bit("SWIZZLE_ENABLE", 31),
        swizzle_four_byte: 1,
    },
    cache: CacheModel {
        hierarchy: CacheHierarchy::Gcr,
        release_gcr: RELEASE_WITH_GLM,
    },
    runtime: RuntimeFacts {
        legacy_trap_handler: true,
        rocr_release: "ROCr 5.x or later",
    },
    sdma_engine: 5,
};

const GFX11: FamilyFacts = FamilyFacts {
    family: Family::Gfx11,
    name: "gfx11",
    user_sgprs: UserSgprRules {
        private_segment_buffer: true,
    },
    scratch: ScratchRules {
        flat_scratch: FlatScratch::Architected,
        wavesize_granule: 256,
        dispatch_scratch_base: true,
        flat_scratch_hwregs: Some((20, 21)),
        waves_per_engine: true,
    },
    dispatch: dispatch_gfx10_11(true),
    isa: IsaRules {
        sgprs: SgprCodes { m0: 125, null: 124 },
        sdwa: false,
        vop3_dpp: true,
        vgpr_high_halves: true,
        wave_wide_bpermute: false,
        dealloc_vgprs_msg: DEALLOC_SINCE_GFX11,
    },
    memory: MemoryFields {
        smem_op: inst(25, 18),
        smem_offset: inst(52, 32),
        ds_gds: Some(inst(17, 17)),
        flat: FlatFields {
            op: inst(24, 18),
            vdst: inst(63, 56),
            addr: inst(39, 32),
            data: inst(47, 40),
            saddr: inst(54, 48),
            offset: inst(12, 0),
            returns: inst(14, 14),
            vaddr_enable: Some(inst(55, 55)),
        },
        buffer: buffer_gfx10_11(54, 55),
    },
    resource: ResourceRules {
        swizzle: Field::new("SWIZZLE_ENABLE", 30, 31),
        swizzle_four_byte: 1,
    },
    cache: CacheModel {
        hierarchy: CacheHierarchy::Gcr,
        release_gcr: RELEASE_WITH_GLM,
    },
    runtime: RuntimeFacts {
        legacy_trap_handler: false,
        rocr_release: "ROCr 6.1 (Debian trixie) or later",
    },
    sdma_engine: 6,
};

const GFX12: FamilyFacts = FamilyFacts {
    family: Family::Gfx12,
    name: "gfx12",
    // AMDGPUUsage: the 4-SGPR private segment buffer descriptor exists up
    // to gfx11; gfx12 has architected flat scratch only.
    user_sgprs: UserSgprRules {
        private_segment_buffer: false,
    },
    scratch: ScratchRules {
        flat_scratch: FlatScratch::Architected,
        wavesize_granule: 256,
        dispatch_scratch_base: true,
        flat_scratch_hwregs: None,
        waves_per_engine: true,
    },
    dispatch: DispatchRules {
        wave32_bit: INIT_CS_W32_EN,
        lds_granule: LDS_GRANULE_BYTES,
        trap: TrapRule::RuntimeState,
        rsrc1_clamp_ieee: false,
        workgroup_ids: WorkgroupIds::Ttmp,
        packed_work_item_ids: true,
    },
    isa: IsaRules {
        sgprs: SgprCodes { m0: 125, null: 124 },
        sdwa: false,
        vop3_dpp: true,
        vgpr_high_halves: true,
        wave_wide_bpermute: true,
        dealloc_vgprs_msg: DEALLOC_SINCE_GFX11,
    },
    memory: MemoryFields {
        smem_op: inst(18, 13),
        smem_offset: inst(55, 32),
        ds_gds: None,
        flat: FlatFields {
            op: inst(21, 14),
            vdst: inst(39, 32),
            addr: inst(71, 64),
            data: inst(62, 55),
            saddr: inst(6, 0),
            offset: inst(95, 72),
            returns: inst(52, 52),
            vaddr_enable: Some(inst(49, 49)),
        },
        // VBUFFER: OFFSET 95:72, OFFEN 62, IDXEN 63, VADDR 71:64,
        // VDATA 39:32, RSRC 49:41 (an SGPR number), TH 54:52.
        buffer: BufferFields {
            offset: inst(95, 72),
            offen: inst(62, 62),
            idxen: inst(63, 63),
            vaddr: inst(71, 64),
            vdata: inst(39, 32),
            rsrc: inst(49, 41),
            rsrc_scale: 1,
            returns: inst(52, 52),
        },
    },
    resource: ResourceRules {
        swizzle: Field::new("SWIZZLE_ENABLE", 30, 31),
        swizzle_four_byte: 1,
    },
    cache: CacheModel {
        hierarchy: CacheHierarchy::Gcr,
        release_gcr: RELEASE_GL2_ONLY,
    },
    runtime: RuntimeFacts {
        legacy_trap_handler: false,
        rocr_release: "ROCr 6.4 (Debian sid)",
    },
    sdma_engine: 7,
};

impl Family {
    /// The family's facts row.
    pub const fn facts(self) -> &'static FamilyFacts {
        match self {
            Family::Gfx10 => &GFX10,
            Family::Gfx11 => &GFX11,
            Family::Gfx12 => &GFX12,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_name_their_family_and_fields_stay_in_one_dword() {
        for f in Family::ALL {
            let r = f.facts();
            assert_eq!(r.family, f);
            assert_eq!(Family::from_name(r.name), Some(f));
            let m = r.memory;
            let mut fields = vec![
                m.smem_op,
                m.smem_offset,
                m.flat.op,
                m.flat.vdst,
                m.flat.addr,
                m.flat.data,
                m.flat.saddr,
                m.flat.offset,
                m.flat.returns,
                m.buffer.offset,
                m.buffer.offen,
                m.buffer.idxen,
                m.buffer.vaddr,
                m.buffer.vdata,
                m.buffer.rsrc,
                m.buffer.returns,
            ];
            fields.extend(m.flat.vaddr_enable);
            for b in fields {
                assert!(b.lo <= b.hi && b.lo / 32 == b.hi / 32, "{f} {b:?}");
            }
            assert_ne!(r.isa.sgprs.m0, r.isa.sgprs.null);
            // SDWA went when VOP3 DPP and true16 halves came.
            assert_eq!(r.isa.sdwa, !r.isa.vop3_dpp, "{f}");
        }
        assert_eq!(Family::from_name("gfx9"), None);
    }

    #[test]
    fn inst_bits_read_across_dwords() {
        let w = [0x8000_1234, 0xFF00_0000, 0x8000_0100];
        assert_eq!(inst(15, 0).get(&w), 0x1234);
        assert_eq!(inst(31, 31).get(&w), 1);
        assert_eq!(inst(63, 56).get(&w), 0xFF);
        assert_eq!(inst(95, 72).get_signed(&w), -0x7F_FFFF);
        assert_eq!(inst(11, 0).get_signed(&w), 0x234);
        assert_eq!(inst(95, 64).get(&w), 0x8000_0100);
    }

    #[test]
    fn release_words_are_the_documented_values() {
        assert_eq!(Family::Gfx10.facts().cache.release_gcr, 0x8030);
        assert_eq!(Family::Gfx11.facts().cache.release_gcr, 0x8030);
        assert_eq!(Family::Gfx12.facts().cache.release_gcr, 0x8000);
    }

    #[test]
    fn readers_give_the_values_the_per_family_matches_gave() {
        use crate::regs::rsrc2_trap_bits;
        use crate::scratch::scratch_srd;
        use crate::sdma::engine_version;
        let srd_swizzle = |f| scratch_srd(f, 0, 0)[1];
        assert_eq!(srd_swizzle(Family::Gfx10), 1 << 31);
        assert_eq!(srd_swizzle(Family::Gfx11), 1 << 30);
        assert_eq!(srd_swizzle(Family::Gfx12), 1 << 30);
        assert_eq!(rsrc2_trap_bits(Family::Gfx10, true), 1 << 6);
        assert_eq!(rsrc2_trap_bits(Family::Gfx11, true), 1 << 6);
        assert_eq!(rsrc2_trap_bits(Family::Gfx12, true), 0);
        assert_eq!(rsrc2_trap_bits(Family::Gfx11, false), 0);
        let engines: Vec<u32> = Family::ALL.iter().map(|&f| engine_version(f)).collect();
        assert_eq!(engines, [5, 6, 7]);
    }
}
