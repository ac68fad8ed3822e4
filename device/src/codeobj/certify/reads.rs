//! Which scalar loads read nothing a producer kernel writes: through the
//! kernarg segment pointer, the dispatch packet pointer, or a PC-relative
//! address inside a read-only segment of the code object, each at an
//! immediate offset the proof bounds.

use relaunch_isa::{Format, Instruction, Operand, Role};

use super::facts::{Fact, Images, State};
use crate::codeobj::elf::Elf;

/// PF_W in a program header's flags.
const PF_W: u32 = 2;

/// The AQL kernel dispatch packet's size: what a load through the dispatch
/// pointer may read.
pub(super) const PACKET_BYTES: u64 = 64;

/// What a proven load reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Read {
    /// The kernarg segment at this offset.
    Kernarg(i64),
    /// The dispatch packet at this offset.
    Packet(i64),
    /// The code object's read-only image at this virtual address.
    Image(u64),
}

/// The parts of a code object no kernel writes (its loadable segments
/// without write permission; what the loader relocates there is written
/// before any dispatch), and where the loader rewrites the file's bytes,
/// which the proof cannot take as constants.
#[derive(Debug, Clone, Default)]
pub(super) struct ReadOnlyImage {
    /// [start, end) virtual addresses of PT_LOAD segments without PF_W.
    segments: Vec<(u64, u64)>,
    /// Sorted `r_offset`s of the relocations a loader applies.
    relocated: Vec<u64>,
    /// Why nothing in the image is trusted (relocations unreadable).
    refused: Option<String>,
}

impl ReadOnlyImage {
    pub(super) fn of(elf: &Elf<'_>) -> Self {
        let segments = elf
            .segments
            .iter()
            .filter(|s| s.flags & PF_W == 0)
            .map(|s| (s.vaddr, s.vaddr.saturating_add(s.memsz)))
            .collect();
        match elf.load_time_relocations() {
            Ok(relocated) => ReadOnlyImage {
                segments,
                relocated,
                refused: None,
            },
            Err(e) => ReadOnlyImage {
                refused: Some(format!("the relocation tables are unreadable ({e})")),
                ..Default::default()
            },
        }
    }

    /// The dword at `at` is the file's: no relocation (at most 8 bytes
    /// wide, AMDGPU's widest) starting in (at - 8, at + 4) rewrites it.
    pub(super) fn fixed(&self, at: u64) -> bool {
        let from = self
            .relocated
            .partition_point(|&r| r.saturating_add(8) <= at);
        self.relocated
            .get(from)
            .is_none_or(|&r| r >= at.saturating_add(4))
    }

    /// Ok when `[start, start + len)` lies in one read-only segment.
    fn holds(&self, start: u64, len: u64) -> Result<(), String> {
        if let Some(why) = &self.refused {
            return Err(why.clone());
        }
        let end = start.checked_add(len);
        let inside = self
            .segments
            .iter()
            .any(|&(lo, hi)| start >= lo && end.is_some_and(|e| e <= hi));
        if inside {
            Ok(())
        } else {
            Err(format!(
                "reads image address 0x{start:x} (+{len} bytes), not inside a read-only \
                 (PF_W-less) loadable segment of the code object"
            ))
        }
    }
}

/// The pointers a kernel is given and how far each may be read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pointers<'a> {
    pub(super) kernarg: Option<u8>,
    pub(super) kernarg_size: u64,
    pub(super) packet: Option<u8>,
    pub(super) image: &'a ReadOnlyImage,
}

/// SMEM forms that read no memory into registers.
pub(super) fn smem_reads_nothing(name: &str) -> bool {
    [
        "s_dcache_inv",
        "s_dcache_wb",
        "s_gl1_inv",
        "s_icache_inv",
        "s_memtime",
        "s_memrealtime",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// What a scalar-memory instruction reads, when the proof bounds it: None
/// for forms that read nothing, Err naming why it is not proven.
pub(super) fn check_smem(
    i: &Instruction,
    st: &State,
    images: &Images,
    p: &Pointers<'_>,
) -> Result<Option<Read>, String> {
    if smem_reads_nothing(i.name) {
        return Ok(None);
    }
    if !i.name.starts_with("s_load_") || i.format != Format::Smem {
        return Err(format!(
            "`{}` is a scalar-memory access other than a load through a trusted pointer",
            i.name
        ));
    }
    let Some(Operand::Sgpr { first, .. }) = i.field(Role::Base) else {
        return Err("scalar load whose base is not an SGPR pair".into());
    };
    let (lo, hi) = (first as usize, first as usize + 1);
    let base = match (st.get(images, lo), st.get(images, hi)) {
        (Some(Fact::KernargLo), Some(Fact::KernargHi)) => Read::Kernarg(0),
        (Some(Fact::PacketLo), Some(Fact::PacketHi)) => Read::Packet(0),
        (Some(Fact::ImageLo(a)), Some(Fact::ImageHi(x))) if a == x as u32 => Read::Image(x),
        _ => {
            let why = if p.kernarg.is_none() && p.packet.is_none() {
                "; the descriptor enables neither the kernarg nor the dispatch pointer"
            } else {
                ""
            };
            return Err(format!(
                "base s[{lo}:{hi}] is not the kernarg segment pointer, the dispatch packet \
                 pointer or a PC-relative code object address on every path{why}"
            ));
        }
    };
    let kind = match base {
        Read::Kernarg(_) => "kernarg segment",
        Read::Packet(_) => "dispatch packet",
        Read::Image(_) => "code object image",
    };
    if let Some(s) = i.field(Role::Soffset) {
        return Err(format!(
            "register offset {s} into the {kind}: not statically known"
        ));
    }
    let Some(Operand::Imm(off)) = i.field(Role::Offset) else {
        return Err("scalar load without an immediate offset".into());
    };
    let bytes = i
        .field(Role::Dst)
        .and_then(|d| d.sgprs())
        .map_or(4, |(_, n)| 4 * u64::from(n));
    let within = |size: u64| off >= 0 && off as u64 + bytes <= size;
    let outside =
        |size: u64| format!("offset {off} (+{bytes} bytes) is outside the {size}-byte {kind}");
    match base {
        Read::Kernarg(_) => {
            // Loads are dword-granular and clang widens them; the hardware
            // reads whole dwords of the segment, which the runtime
            // allocates rounded up to 64 bytes (relaunch's kernarg
            // alignment).
            let end = p.kernarg_size.div_ceil(64) * 64;
            if !within(end.max(64)) {
                return Err(outside(p.kernarg_size));
            }
            Ok(Some(Read::Kernarg(off)))
        }
        Read::Packet(_) => {
            if !within(PACKET_BYTES) {
                return Err(outside(PACKET_BYTES));
            }
            Ok(Some(Read::Packet(off)))
        }
        Read::Image(x) => {
            let start = x.wrapping_add(off as u64);
            p.image.holds(start, bytes)?;
            Ok(Some(Read::Image(start)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(relocated: Vec<u64>) -> ReadOnlyImage {
        ReadOnlyImage {
            segments: vec![(0, 0x1000), (0x2000, 0x2100)],
            relocated,
            refused: None,
        }
    }

    #[test]
    fn a_dword_is_fixed_unless_a_relocation_may_write_into_it() {
        let img = image(vec![0x100, 0x200]);
        // A relocation at 0x100 may write up to 0x108.
        for at in [0xf8, 0x108, 0x1fc - 4, 0x208] {
            assert!(img.fixed(at), "0x{at:x}");
        }
        for at in [0xfd, 0x100, 0x104, 0x107, 0x1fd, 0x200] {
            assert!(!img.fixed(at), "0x{at:x}");
        }
        assert!(image(vec![]).fixed(0));
    }

    #[test]
    fn reads_must_lie_inside_one_read_only_segment() {
        let img = image(vec![]);
        assert!(img.holds(0xff0, 16).is_ok());
        assert!(img.holds(0xff0, 20).is_err(), "runs past the segment");
        assert!(img.holds(0x1800, 4).is_err(), "between segments");
        assert!(img.holds(0x2000, 0x100).is_ok());
        assert!(img.holds(u64::MAX - 2, 4).is_err(), "wraps");
        let refused = ReadOnlyImage {
            refused: Some("unreadable".into()),
            ..image(vec![])
        };
        assert!(refused.holds(0, 4).is_err());
    }
}
