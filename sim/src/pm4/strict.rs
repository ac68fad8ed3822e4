//! Packet and register values whose effect the simulated device does not
//! model (or the hardware does not define), refused by name instead of
//! run: each rule is one function, called where the packet or register is
//! met (`check.rs`, `mod.rs`, `aql.rs`). Dispatch-state rules are in
//! `rules.rs`.

use relaunch_facts::packet::gcr::{self, Cache, Effect};
use relaunch_facts::packet::ib_control;

use crate::ordering::CacheOps;

/// ACQUIRE_MEM (gfx10+ form) as the CP performs it: COHER_CNTL must be
/// zero (its CB/DB actions belong to a graphics pipeline, not modelled),
/// GCR_CNTL only its defined fields, GLM_WB only with GLM_INV (a metadata
/// write-back alone is not supported by the hardware). Every cache action
/// must cover the whole cache (GLI_INV 0 or 1, GL1_RANGE and GL2_RANGE 0),
/// so COHER_BASE/COHER_SIZE, which only ranged actions read, may hold
/// anything: the kernel driver writes COHER_SIZE_HI 0xFFFFFF, ROCr 0xFF.
/// GL2_DISCARD and GL2_US are refused by name (not modelled).
pub(crate) fn acquire_mem(
    coher_cntl: u32,
    gcr_cntl: u32,
    coher_base: u64,
    coher_size: u64,
) -> Result<CacheOps, String> {
    if coher_cntl != 0 {
        return Err(format!(
            "ACQUIRE_MEM COHER_CNTL is {coher_cntl:#x}: its CB/DB actions belong to a graphics \
             pipeline; a compute queue's acquire must have 0"
        ));
    }
    let defined = gcr::FIELDS.iter().fold(0, |m, f| m | f.mask());
    if gcr_cntl & !defined != 0 {
        return Err(format!(
            "ACQUIRE_MEM GCR_CNTL {gcr_cntl:#x} sets bits above 18 ({:#x}), which are reserved",
            gcr_cntl & !defined
        ));
    }
    if gcr::GLM_WB.get(gcr_cntl) != 0 && gcr::GLM_INV.get(gcr_cntl) == 0 {
        return Err(format!(
            "ACQUIRE_MEM GCR_CNTL {gcr_cntl:#x} sets GLM_WB without GLM_INV: GLM_INV must be \
             set with GLM_WB"
        ));
    }
    for f in gcr::FIELDS.iter() {
        let v = f.get(gcr_cntl);
        if v == 0 {
            continue;
        }
        let refused = match gcr::effect(f.name) {
            Some(Effect::Invalidate(Cache::Instruction)) => v != gcr::GLI_INV_ALL,
            Some(Effect::Range(_) | Effect::Discard | Effect::Gl2Us) | None => true,
            Some(_) => false,
        };
        if refused {
            return Err(format!(
                "ACQUIRE_MEM GCR_CNTL {gcr_cntl:#x} has {} = {v}: only whole-cache \
                 invalidations and write-backs are modelled (ranged actions, GL2_DISCARD and \
                 GL2_US are not; COHER_BASE {:#x}, COHER_SIZE {:#x})",
                f.name, coher_base, coher_size
            ));
        }
    }
    Ok(CacheOps::from_acquire_gcr(gcr_cntl))
}

/// COMPUTE_PGM_HI holds address bits 40..47 only.
pub(crate) fn pgm_hi(hi: u32) -> Result<(), String> {
    if hi & !0xFF != 0 {
        return Err(format!(
            "COMPUTE_PGM_HI {hi:#x} sets bits above 7: it holds address bits 40-47 only"
        ));
    }
    Ok(())
}

/// The PM4-IB packet's INDIRECT_BUFFER control: IB_SIZE and VALID only.
pub(crate) fn ib_control(control: u32) -> Result<(), String> {
    let allowed = ib_control::IB_SIZE.mask() | ib_control::VALID.mask();
    if control & !allowed != 0 {
        return Err(format!(
            "PM4-IB control {control:#010x} sets {:#x} beyond IB_SIZE and VALID \
             (PRE_ENB, CACHE_POLICY, PRE_RESUME or reserved bits)",
            control & !allowed
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acquire(coher_cntl: u32, gcr_cntl: u32) -> Result<CacheOps, String> {
        acquire_mem(coher_cntl, gcr_cntl, 0, 0x00FF_FFFF_FFFF_FFFF)
    }

    #[test]
    fn acquire_mem_refuses_coher_cntl_reserved_gcr_and_glm_wb_alone() {
        assert!(acquire(0, 0x8030).is_ok());
        assert!(acquire(0, 0x8000).is_ok());
        assert!(acquire(0, 0x380).is_ok());
        assert!(acquire(1, 0x380).unwrap_err().contains("COHER_CNTL"));
        assert!(acquire(0, 1 << 19).unwrap_err().contains("above 18"));
        let e = acquire(0, 0x8010).unwrap_err();
        assert!(e.contains("GLM_WB without GLM_INV"), "{e}");
    }

    #[test]
    fn acquire_mem_takes_any_whole_cache_form_and_refuses_ranges_by_name() {
        // ROCr's gfx10 code-object cache invalidation: GLI_INV(1) | GLK_INV
        // | GLV_INV | GL1_INV | GL2_INV over COHER_SIZE 0xFF_FFFFFFFF.
        let ops = acquire_mem(0, 0x4381, 0, 0xFF_FFFF_FFFF).unwrap();
        assert!(ops.glk_inv && ops.glv_inv && ops.gl1_inv && ops.gl2_inv && !ops.gl2_wb);
        // A range in COHER_BASE/SIZE does not matter to whole-cache actions.
        assert_eq!(acquire_mem(0, 0x4381, 0x1000, 4).unwrap(), ops);
        for (gcr, name) in [
            (gcr::GL2_RANGE.place(2) | 0x4000, "GL2_RANGE"),
            (gcr::GL1_RANGE.place(2) | 0x200, "GL1_RANGE"),
            (gcr::GLI_INV.place(2), "GLI_INV"),
            (gcr::GL2_DISCARD.place(1), "GL2_DISCARD"),
            (gcr::GL2_US.place(1), "GL2_US"),
        ] {
            let e = acquire(0, gcr).unwrap_err();
            assert!(e.contains(name), "{e}");
        }
    }

    #[test]
    fn pgm_hi_and_ib_control() {
        assert!(pgm_hi(0xFF).is_ok());
        assert!(pgm_hi(0x100).unwrap_err().contains("above 7"));
        let valid = ib_control::VALID.place(1) | 42;
        assert!(ib_control(valid).is_ok());
        let e = ib_control(valid | ib_control::PRE_ENB.place(1)).unwrap_err();
        assert!(e.contains("beyond IB_SIZE and VALID"), "{e}");
        assert!(ib_control(valid | 1 << 20).is_err(), "reserved bit 20");
    }
}
