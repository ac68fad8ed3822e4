//! The code object's metadata from all of its NT_AMDGPU_METADATA notes.
//!
//! A linked object (Tensile's libraries link many kernels' objects into
//! one) carries one metadata note per linked object: the kernels are the
//! union of the notes' lists. The notes must agree: one `amdhsa.version`,
//! one target, and a kernel named in two notes described the same way in
//! both (a repeat is dropped); anything else is refused naming what
//! differs. A note without `amdhsa.target` takes the target from the ELF
//! header's e_flags (processor and the V4+ xnack/sramecc settings), and
//! when no note names one the object's target is the e_flags one.

use std::collections::HashMap;

use super::elf::Elf;
use super::error::CodeObjectError as E;
use super::metadata::{self, KernelMetadata, NOTE_OWNER, NT_AMDGPU_METADATA};
use relaunch_facts::rows::processor_from_elf_flags;

/// Kernels the merged notes may list (each note is capped at
/// `metadata::MAX_KERNELS`; this bounds their union).
pub const MAX_MERGED_KERNELS: usize = 16 * metadata::MAX_KERNELS;

/// Every metadata note decoded and merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub version: (u64, u64),
    /// `amdhsa.target` as written, or the e_flags target when no note
    /// names one.
    pub target: String,
    pub kernels: Vec<KernelMetadata>,
}

/// The target e_flags name: the processor (when the facts rows know its
/// machine value) with `:sramecc±` and `:xnack±` where the V4+ feature
/// fields say on or off ("any" and "unsupported" add nothing).
pub fn target_from_flags(e_flags: u32) -> Option<String> {
    let mut t = processor_from_elf_flags(e_flags)?.to_string();
    // EF_AMDGPU_FEATURE_SRAMECC_V4 (bits 11:10) and _XNACK_V4 (bits 9:8):
    // 2 off, 3 on.
    for (shift, name) in [(10, "sramecc"), (8, "xnack")] {
        match (e_flags >> shift) & 3 {
            2 => t.push_str(&format!(":{name}-")),
            3 => t.push_str(&format!(":{name}+")),
            _ => {}
        }
    }
    Some(t)
}

/// Decode and merge the metadata notes of `elf`.
pub fn read(elf: &Elf<'_>) -> Result<Merged, E> {
    let mut merged: Option<Merged> = None;
    let mut index: HashMap<String, usize> = HashMap::new();
    let flags_target = || target_from_flags(elf.e_flags);
    for note in elf.notes()? {
        if note.owner != NOTE_OWNER || note.kind != NT_AMDGPU_METADATA {
            continue;
        }
        let md = metadata::decode_note(note.desc)?;
        let target = match md.target {
            Some(t) => t,
            None => flags_target().ok_or(E::MissingTarget {
                e_flags: elf.e_flags,
            })?,
        };
        let m = merged.get_or_insert_with(|| Merged {
            version: md.version,
            target: target.clone(),
            kernels: Vec::new(),
        });
        if m.version != md.version {
            return Err(E::MetadataConflict {
                what: "amdhsa.version",
                first: format!("{:?}", m.version),
                second: format!("{:?}", md.version),
            });
        }
        if !same_target(&m.target, &target) {
            return Err(E::MetadataConflict {
                what: "amdhsa.target",
                first: m.target.clone(),
                second: target,
            });
        }
        for k in md.kernels {
            match index.get(&k.name) {
                Some(&i) if m.kernels[i] == k => {}
                Some(_) => return Err(E::ConflictingKernel { kernel: k.name }),
                None => {
                    if m.kernels.len() >= MAX_MERGED_KERNELS {
                        return Err(E::TooMany {
                            what: "kernels in the metadata notes",
                            count: m.kernels.len() as u64 + 1,
                            limit: MAX_MERGED_KERNELS as u64,
                        });
                    }
                    index.insert(k.name.clone(), m.kernels.len());
                    m.kernels.push(k);
                }
            }
        }
    }
    merged.ok_or(E::MissingMetadata)
}

/// Two spellings of one target: the `amdgcn-amd-amdhsa--` prefix is
/// optional in a note, and the e_flags target carries none.
fn same_target(a: &str, b: &str) -> bool {
    let bare = |t: &str| t.rsplit_once("--").map_or(t, |(_, p)| p).to_string();
    bare(a) == bare(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_name_the_processor_and_its_settings() {
        // gfx1100 is machine 0x41, gfx1201 0x4e, gfx90a 0x3f.
        assert_eq!(target_from_flags(0x041).as_deref(), Some("gfx1100"));
        assert_eq!(target_from_flags(0x14e).as_deref(), Some("gfx1201"));
        assert_eq!(
            target_from_flags(0xb3f).as_deref(),
            Some("gfx90a:sramecc-:xnack+")
        );
        assert_eq!(target_from_flags(0x0ff), None);
    }

    #[test]
    fn the_triple_prefix_does_not_make_targets_differ() {
        assert!(same_target("amdgcn-amd-amdhsa--gfx1200", "gfx1200"));
        assert!(!same_target("gfx1200", "gfx1201"));
        assert!(!same_target("gfx1030:xnack-", "gfx1030"));
    }
}
