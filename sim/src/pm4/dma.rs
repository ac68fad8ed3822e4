//! DMA_DATA (CP DMA) in the forms the model performs: memory to memory
//! through L2, or a dword pattern (SRC_SEL DATA) to memory, with CP_SYNC
//! (relaunch's copy and fill nodes are these). Any other form (GDS,
//! registers, fixed addresses, no CP_SYNC, the PFP engine, cache policies)
//! is refused as not modelled, naming the field.
//!
//! A transfer is unordered with the dispatches of its group (the CP starts
//! it without waiting for earlier waves), so the executor runs it among
//! them in the seeded order and hands its trace to the ordering model like
//! a dispatch's: its reads count as vector reads (stale unless invalidated
//! after a wait, never cheaper than a kernel's), its writes as writes.

use relaunch_facts::packet::{dma_command, dma_data};

use crate::memory::DeviceMemory;
use crate::memory::VmFault;
use crate::trace::{AccessKind, AccessTrace};

/// A checked DMA_DATA, ready to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transfer {
    Copy { src: u64, dst: u64, bytes: u64 },
    Fill { pattern: u32, dst: u64, bytes: u64 },
}

impl Transfer {
    /// The name the ordering model reports it under.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Transfer::Copy { .. } => "DMA_DATA copy",
            Transfer::Fill { .. } => "DMA_DATA fill",
        }
    }

    /// Bytes moved (for the modelled clock).
    pub(crate) fn bytes(&self) -> u64 {
        match *self {
            Transfer::Copy { bytes, .. } | Transfer::Fill { bytes, .. } => bytes,
        }
    }

    /// Performs the transfer through the checked memory; the trace holds
    /// what it read and wrote.
    pub(crate) fn run(&self, mem: &DeviceMemory, trace: &mut AccessTrace) -> Result<(), VmFault> {
        match *self {
            Transfer::Copy { src, dst, bytes } => {
                let data = mem.read_vec(src, bytes as usize)?;
                trace.record(AccessKind::VectorRead, src, bytes);
                mem.write(dst, &data)?;
                trace.record(AccessKind::Write, dst, bytes);
            }
            Transfer::Fill {
                pattern,
                dst,
                bytes,
            } => {
                let data: Vec<u8> = pattern
                    .to_le_bytes()
                    .into_iter()
                    .cycle()
                    .take(bytes as usize)
                    .collect();
                mem.write(dst, &data)?;
                trace.record(AccessKind::Write, dst, bytes);
            }
        }
        Ok(())
    }
}

/// Checks a DMA_DATA body against the forms the model performs.
pub(crate) fn check(control: u32, src: u64, dst: u64, command: u32) -> Result<Transfer, String> {
    let known = dma_data::FIELDS.iter().fold(0, |m, f| m | f.mask());
    if control & !known != 0 {
        return Err(format!(
            "DMA_DATA with undefined CONTROL bits {:#010x}",
            control & !known
        ));
    }
    let field = |f: relaunch_facts::Field| f.get(control);
    if field(dma_data::ENGINE) != 0 {
        return Err("DMA_DATA ENGINE 1 (the PFP engine; only ME, 0, is modelled)".into());
    }
    if field(dma_data::SRC_CACHE_POLICY) != 0 || field(dma_data::DST_CACHE_POLICY) != 0 {
        return Err(format!(
            "DMA_DATA with cache policies src {} dst {} (only LRU, 0, is modelled)",
            field(dma_data::SRC_CACHE_POLICY),
            field(dma_data::DST_CACHE_POLICY)
        ));
    }
    if field(dma_data::CP_SYNC) != 1 {
        return Err("DMA_DATA without CP_SYNC (later packets could overtake the transfer)".into());
    }
    if field(dma_data::DST_SEL) != dma_data::SEL_L2 {
        return Err(format!(
            "DMA_DATA DST_SEL {} (only 3, memory through L2, is modelled)",
            field(dma_data::DST_SEL)
        ));
    }
    let cmd_known = dma_command::FIELDS.iter().fold(0, |m, f| m | f.mask());
    if command & !cmd_known != 0 {
        return Err(format!(
            "DMA_DATA with undefined COMMAND bits {:#010x}",
            command & !cmd_known
        ));
    }
    for f in [
        dma_command::SAS,
        dma_command::DAS,
        dma_command::SAIC,
        dma_command::DAIC,
        dma_command::RAW_WAIT,
    ] {
        if f.get(command) != 0 {
            return Err(format!(
                "DMA_DATA with COMMAND.{} set (not modelled)",
                f.name
            ));
        }
    }
    let bytes = u64::from(dma_command::BYTE_COUNT.get(command));
    if bytes == 0 {
        return Err("DMA_DATA of 0 bytes".into());
    }
    match field(dma_data::SRC_SEL) {
        dma_data::SEL_L2 => {
            if src < dst.saturating_add(bytes) && dst < src.saturating_add(bytes) {
                return Err(format!(
                    "DMA_DATA copy whose source {src:#x} and destination {dst:#x} overlap over {bytes} bytes"
                ));
            }
            Ok(Transfer::Copy { src, dst, bytes })
        }
        dma_data::SRC_SEL_DATA => {
            if src >> 32 != 0 {
                return Err(format!(
                    "DMA_DATA fill with a non-zero SRC_ADDR_HI {:#x}",
                    src >> 32
                ));
            }
            if dst % 4 != 0 || bytes % 4 != 0 {
                return Err(format!(
                    "DMA_DATA fill of {bytes} bytes at {dst:#x}: a fill writes whole, aligned dwords"
                ));
            }
            Ok(Transfer::Fill {
                pattern: src as u32,
                dst,
                bytes,
            })
        }
        other => Err(format!(
            "DMA_DATA SRC_SEL {other} (only 2, data, and 3, memory through L2, are modelled)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relaunch_encoders::dma::control_word;

    #[test]
    fn the_encoders_forms_pass_and_others_are_named() {
        let copy = control_word(false);
        let fill = control_word(true);
        assert_eq!(
            check(copy, 0x1000, 0x2000, 64),
            Ok(Transfer::Copy {
                src: 0x1000,
                dst: 0x2000,
                bytes: 64
            })
        );
        assert_eq!(
            check(fill, 0xAB, 0x2000, 64),
            Ok(Transfer::Fill {
                pattern: 0xAB,
                dst: 0x2000,
                bytes: 64
            })
        );
        let cases = [
            (copy & !dma_data::CP_SYNC.mask(), 64, "CP_SYNC"),
            (copy | dma_data::ENGINE.mask(), 64, "PFP"),
            (
                copy | dma_data::DST_CACHE_POLICY.place(1),
                64,
                "cache policies",
            ),
            (
                dma_data::CP_SYNC.place(1) | dma_data::SRC_SEL.place(3),
                64,
                "DST_SEL 0",
            ),
            (copy | 1 << 5, 64, "undefined CONTROL"),
            (copy, dma_command::SAIC.place(1) | 64, "SAIC"),
            (copy, 1 << 31 | 64, "undefined COMMAND"),
            (copy, 0, "0 bytes"),
            (
                dma_data::CP_SYNC.place(1)
                    | dma_data::DST_SEL.place(3)
                    | dma_data::SRC_SEL.place(1),
                64,
                "SRC_SEL 1",
            ),
        ];
        for (control, command, why) in cases {
            let e = check(control, 0x1000, 0x2000, command).unwrap_err();
            assert!(e.contains(why), "{control:#x} {command:#x}: {e}");
        }
        assert!(check(copy, 0x1000, 0x1010, 64)
            .unwrap_err()
            .contains("overlap"));
        assert!(check(fill, 0, 0x1002, 64).unwrap_err().contains("aligned"));
        assert!(check(fill, 0, 0x1000, 6).unwrap_err().contains("aligned"));
        assert!(check(fill, 1 << 32, 0x1000, 8)
            .unwrap_err()
            .contains("SRC_ADDR_HI"));
    }
}
