//! Values hardware would not accept (or relaunch never emits), refused by
//! name instead of run: each rule is one function, called where the packet
//! or register is met (`check.rs`, `mod.rs`, `aql.rs`).

use relaunch_facts::packet::{gcr, ib_control};
use relaunch_facts::regs::{
    INIT_COMPUTE_SHADER_EN, INIT_CS_W32_EN, INIT_FORCE_START_AT_000, INIT_ORDER_MODE,
};

/// The GCR_CNTL bits ACQUIRE_MEM defines (0..=18: GLI_INV .. RANGE_IS_PA).
const GCR_DEFINED: u32 = (1 << 19) - 1;

/// ACQUIRE_MEM: COHER_CNTL must be zero (no CB/DB actions on a compute
/// queue), GCR_CNTL only its defined bits, and GLM_WB only with GLM_INV
/// (the hardware does not support a metadata write-back alone).
pub(crate) fn acquire_mem(coher_cntl: u32, gcr_cntl: u32) -> Result<(), String> {
    if coher_cntl != 0 {
        return Err(format!(
            "ACQUIRE_MEM COHER_CNTL is {coher_cntl:#x}: a compute queue's acquire has no \
             CB/DB actions, it must be 0"
        ));
    }
    if gcr_cntl & !GCR_DEFINED != 0 {
        return Err(format!(
            "ACQUIRE_MEM GCR_CNTL {gcr_cntl:#x} sets bits above 18 ({:#x}), which are reserved",
            gcr_cntl & !GCR_DEFINED
        ));
    }
    if gcr::GLM_WB.get(gcr_cntl) != 0 && gcr::GLM_INV.get(gcr_cntl) == 0 {
        return Err(format!(
            "ACQUIRE_MEM GCR_CNTL {gcr_cntl:#x} sets GLM_WB without GLM_INV: GLM_INV must be \
             set with GLM_WB"
        ));
    }
    Ok(())
}

/// DISPATCH_INITIATOR: exactly what relaunch emits (COMPUTE_SHADER_EN,
/// FORCE_START_AT_000, ORDER_MODE, CS_W32_EN for wave32 kernels); any
/// other bit (RESTORE, ORDERED_APPEND, TUNNEL, reserved) or a missing one
/// is refused by name.
pub(crate) fn initiator(initiator: u32, wave32: bool) -> Result<(), String> {
    let mut expected = INIT_COMPUTE_SHADER_EN.place(1)
        | INIT_FORCE_START_AT_000.place(1)
        | INIT_ORDER_MODE.place(1);
    if wave32 {
        expected |= INIT_CS_W32_EN.place(1);
    }
    if initiator == expected {
        return Ok(());
    }
    let extra = initiator & !expected;
    let missing = expected & !initiator;
    let mut what = Vec::new();
    if extra != 0 {
        what.push(format!("sets {extra:#x}{}", named_initiator_bits(extra)));
    }
    if missing != 0 {
        what.push(format!(
            "clears {missing:#x}{}",
            named_initiator_bits(missing)
        ));
    }
    Err(format!(
        "DISPATCH_INITIATOR {initiator:#x} is not the {expected:#x} relaunch emits: it {}",
        what.join(" and ")
    ))
}

fn named_initiator_bits(bits: u32) -> String {
    const NAMES: [(u32, &str); 7] = [
        (0, "COMPUTE_SHADER_EN"),
        (2, "FORCE_START_AT_000"),
        (3, "ORDERED_APPEND_ENBL"),
        (6, "ORDER_MODE"),
        (13, "RESTORE"),
        (14, "TUNNEL_ENABLE"),
        (15, "CS_W32_EN"),
    ];
    let names: Vec<&str> = NAMES
        .iter()
        .filter(|(bit, _)| bits & (1 << bit) != 0)
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        " (reserved)".to_string()
    } else {
        format!(" ({})", names.join(", "))
    }
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

/// COMPUTE_RESOURCE_LIMITS: what relaunch emits.
pub(crate) fn resource_limits(value: u32, emitted: u32) -> Result<(), String> {
    if value != emitted {
        return Err(format!(
            "COMPUTE_RESOURCE_LIMITS is {value:#x}, not the {emitted:#x} relaunch emits"
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

    #[test]
    fn acquire_mem_refuses_coher_cntl_reserved_gcr_and_glm_wb_alone() {
        assert!(acquire_mem(0, 0x8030).is_ok());
        assert!(acquire_mem(0, 0x8000).is_ok());
        assert!(acquire_mem(0, 0x380).is_ok());
        assert!(acquire_mem(1, 0x380).unwrap_err().contains("COHER_CNTL"));
        assert!(acquire_mem(0, 1 << 19).unwrap_err().contains("above 18"));
        let e = acquire_mem(0, 0x8010).unwrap_err();
        assert!(e.contains("GLM_WB without GLM_INV"), "{e}");
    }

    #[test]
    fn initiator_must_be_exactly_what_is_emitted() {
        assert!(initiator(0x8045, true).is_ok());
        assert!(initiator(0x45, false).is_ok());
        assert!(initiator(0x8045 | 1 << 13, true)
            .unwrap_err()
            .contains("RESTORE"));
        assert!(initiator(0x8045 | 1 << 3, true)
            .unwrap_err()
            .contains("ORDERED_APPEND"));
        assert!(initiator(0x8045 | 1 << 14, true)
            .unwrap_err()
            .contains("TUNNEL"));
        assert!(initiator(0x8045 | 1 << 30, true)
            .unwrap_err()
            .contains("reserved"));
        let e = initiator(0x8041, true).unwrap_err();
        assert!(
            e.contains("clears") && e.contains("FORCE_START_AT_000"),
            "{e}"
        );
    }

    #[test]
    fn pgm_hi_resource_limits_and_ib_control() {
        assert!(pgm_hi(0xFF).is_ok());
        assert!(pgm_hi(0x100).unwrap_err().contains("above 7"));
        assert!(resource_limits(0, 0).is_ok());
        assert!(resource_limits(0x10, 0)
            .unwrap_err()
            .contains("RESOURCE_LIMITS"));
        let valid = ib_control::VALID.place(1) | 42;
        assert!(ib_control(valid).is_ok());
        let e = ib_control(valid | ib_control::PRE_ENB.place(1)).unwrap_err();
        assert!(e.contains("beyond IB_SIZE and VALID"), "{e}");
        assert!(ib_control(valid | 1 << 20).is_err(), "reserved bit 20");
    }
}
