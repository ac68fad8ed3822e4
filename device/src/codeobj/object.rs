//! `CodeObject`: a whole AMDGPU HSA code object read and checked, owning its
//! bytes so a loader can copy the PT_LOAD segments later.

use super::bundle;
use super::elf::{CodeObjectVersion, Elf, LoadSegment};
use super::error::CodeObjectError as E;
use super::kernel::{self, KernelInfo};
use super::notes;
use relaunch_facts::generic::{EF_AMDGPU_GENERIC_VERSION_SHIFT, GENERIC_VERSION_MIN};
use relaunch_facts::GfxTarget;

/// The processor named by an ELF e_flags value, when it is one the facts
/// rows know (used to cross-check the metadata target; an unlisted value is
/// not an error, the metadata stays authoritative).
pub use relaunch_facts::rows::processor_from_elf_flags as processor_from_flags;

/// A code object read completely: every kernel with its descriptor,
/// arguments and PM4 verdict, plus the loadable image description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObject {
    bytes: Vec<u8>,
    version: CodeObjectVersion,
    e_flags: u32,
    /// The target the code runs on (a generic object's: the processor it
    /// was read for).
    target: GfxTarget,
    /// The generic target a generic object declares (`gfx11-generic`).
    generic: Option<GfxTarget>,
    metadata_version: (u64, u64),
    segments: Vec<LoadSegment>,
    kernels: Vec<KernelInfo>,
}

impl CodeObject {
    /// Read an ELF code object (not a bundle). A generic one
    /// (`gfx11-generic`) needs the processor it is for: [`Self::parse_for`].
    pub fn parse(bytes: &[u8]) -> Result<CodeObject, E> {
        CodeObject::parse_for(bytes, None)
    }

    /// Read an ELF code object for the processor `on` names. A generic
    /// object covering that processor is read as its code (its target
    /// becomes `on`'s processor with the object's feature settings; the
    /// declared one stays in [`Self::generic`]), as ROCr loads it; a
    /// generic object without `on` is refused naming what it covers. A
    /// non-generic object is read as it is: whether it suits `on` is the
    /// caller's check.
    pub fn parse_for(bytes: &[u8], on: Option<&GfxTarget>) -> Result<CodeObject, E> {
        let elf = Elf::parse(bytes)?;
        let md = notes::read(&elf)?;
        let declared = GfxTarget::parse(&md.target).map_err(|e| E::MetadataTarget {
            target: md.target.clone(),
            reason: e.to_string(),
        })?;
        if let Some(flags) = processor_from_flags(elf.e_flags) {
            if flags != declared.processor() {
                return Err(E::TargetMismatch {
                    flags: flags.to_string(),
                    metadata: declared.to_string(),
                });
            }
        }
        let (target, generic) = match declared.generic() {
            Some(g) => {
                let version = match elf.version {
                    CodeObjectVersion::V6 => elf.e_flags >> EF_AMDGPU_GENERIC_VERSION_SHIFT,
                    CodeObjectVersion::V4 | CodeObjectVersion::V5 => 0,
                };
                if version < GENERIC_VERSION_MIN {
                    return Err(E::MetadataTarget {
                        target: md.target.clone(),
                        reason: format!(
                            "a generic target needs code object V6 with a generic version \
                             (e_flags bits 31:24) of at least {GENERIC_VERSION_MIN}; this is \
                             V{} with e_flags {:#x}",
                            elf.version.number(),
                            elf.e_flags
                        ),
                    });
                }
                let Some(on) = on else {
                    return Err(E::GenericNeedsProcessor {
                        generic: declared.to_string(),
                        covers: g.covers_list(),
                    });
                };
                if !declared.runs_on(on) {
                    return Err(E::WrongTarget {
                        wanted: on.to_string(),
                        found: format!("{declared} (which runs on {})", g.covers_list()),
                    });
                }
                (declared.with_processor(on.processor()), Some(declared))
            }
            None => (declared, None),
        };
        let symbols = elf.descriptor_symbols()?;
        let mut kernels = md
            .kernels
            .into_iter()
            .map(|k| kernel::build(&elf, &symbols, &target, k))
            .collect::<Result<Vec<_>, E>>()?;
        super::certify::mark_unread_inputs(&elf, &mut kernels);
        tracing::debug!(
            target = %target,
            version = elf.version.number(),
            kernels = kernels.len(),
            "code object read"
        );
        Ok(CodeObject {
            bytes: bytes.to_vec(),
            version: elf.version,
            e_flags: elf.e_flags,
            target,
            generic,
            metadata_version: md.version,
            segments: elf.segments,
            kernels,
        })
    }

    /// Read either an ELF code object or a clang offload bundle. For a
    /// bundle, `target` picks the entry (`gfx1100`, `gfx1100:xnack-` or a
    /// full id); without it the bundle must hold exactly one GPU entry. For
    /// a plain ELF a given `target` must be compatible with the object's
    /// (same processor, no feature set the other way).
    pub fn from_bundle_or_elf(bytes: &[u8], target: Option<&str>) -> Result<CodeObject, E> {
        let on = target.and_then(|t| GfxTarget::parse(t).ok());
        if bundle::is_bundle(bytes) {
            let plain = super::compressed::plain_bundle(bytes)?;
            let entry = bundle::select(&plain, target)?;
            return CodeObject::parse_for(entry.bytes, on.as_ref());
        }
        let object = CodeObject::parse_for(bytes, on.as_ref())?;
        if let Some(wanted) = target {
            let matches = on.is_some_and(|w| bundle::compatible(&w, &object.target));
            if !matches {
                return Err(E::WrongTarget {
                    wanted: wanted.to_string(),
                    found: object.target.to_string(),
                });
            }
        }
        Ok(object)
    }

    /// Every kernel, in metadata order.
    pub fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }

    /// The kernel named `name` (without `.kd`), if present.
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The generic target a generic object declares (`gfx11-generic`);
    /// [`Self::target`] is then the processor it was read for.
    pub fn generic(&self) -> Option<&GfxTarget> {
        self.generic.as_ref()
    }

    /// The target as messages name it: `gfx1100`, or for a generic object
    /// `gfx1100 (gfx11-generic code)`.
    pub fn target_label(&self) -> String {
        match &self.generic {
            Some(g) => format!("{} ({g} code)", self.target),
            None => self.target.to_string(),
        }
    }

    /// The target from `amdhsa.target`, e.g. `gfx1100` or `gfx1030:xnack-`
    /// (a generic object's: the processor it was read for).
    pub fn target(&self) -> &GfxTarget {
        &self.target
    }

    /// Code object version (V4, V5 or V6).
    pub fn version(&self) -> CodeObjectVersion {
        self.version
    }

    /// `amdhsa.version` from the metadata.
    pub fn metadata_version(&self) -> (u64, u64) {
        self.metadata_version
    }

    /// Raw ELF e_flags (machine in bits 7:0, xnack/sramecc above).
    pub fn e_flags(&self) -> u32 {
        self.e_flags
    }

    /// The ELF file bytes (the chosen entry when read from a bundle).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// What a loader writes after copying the segments of an image placed
    /// at `base`: the load-time relocations resolved (`relocate`).
    pub fn patches(&self, base: u64) -> Result<Vec<super::relocate::Patch>, E> {
        super::elf::Elf::parse(&self.bytes)?.patches(base)
    }

    /// PT_LOAD segments: copy `filesz` bytes from `file_offset` to `vaddr`
    /// in the image and zero the rest up to `memsz`.
    pub fn load_segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// Bytes of memory the loaded image spans (highest segment end).
    pub fn image_size(&self) -> u64 {
        self.segments
            .iter()
            .map(|s| s.vaddr.saturating_add(s.memsz))
            .max()
            .unwrap_or(0)
    }

    /// The file bytes of one segment (bounds were checked when reading).
    pub fn segment_bytes(&self, segment: &LoadSegment) -> &[u8] {
        let start = segment.file_offset as usize;
        self.bytes
            .get(start..start.saturating_add(segment.filesz as usize))
            .unwrap_or(&[])
    }
}
