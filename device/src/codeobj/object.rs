//! `CodeObject`: a whole AMDGPU HSA code object read and checked, owning its
//! bytes so a loader can copy the PT_LOAD segments later.

use super::bundle;
use super::elf::{CodeObjectVersion, Elf, LoadSegment};
use super::error::CodeObjectError as E;
use super::kernel::{self, KernelInfo};
use super::notes;
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
    target: GfxTarget,
    metadata_version: (u64, u64),
    segments: Vec<LoadSegment>,
    kernels: Vec<KernelInfo>,
}

impl CodeObject {
    /// Read an ELF code object (not a bundle).
    pub fn parse(bytes: &[u8]) -> Result<CodeObject, E> {
        let elf = Elf::parse(bytes)?;
        let md = notes::read(&elf)?;
        let target = GfxTarget::parse(&md.target).map_err(|e| E::MetadataTarget {
            target: md.target.clone(),
            reason: e.to_string(),
        })?;
        if let Some(flags) = processor_from_flags(elf.e_flags) {
            if flags != target.processor() {
                return Err(E::TargetMismatch {
                    flags: flags.to_string(),
                    metadata: target.to_string(),
                });
            }
        }
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
        if bundle::is_bundle(bytes) {
            let plain = super::compressed::plain_bundle(bytes)?;
            let entry = bundle::select(&plain, target)?;
            return CodeObject::parse(entry.bytes);
        }
        let object = CodeObject::parse(bytes)?;
        if let Some(wanted) = target {
            let matches =
                GfxTarget::parse(wanted).is_ok_and(|w| bundle::compatible(&w, &object.target));
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

    /// The target from `amdhsa.target`, e.g. `gfx1100` or `gfx1030:xnack-`.
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
