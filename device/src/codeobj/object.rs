//! `CodeObject`: a whole AMDGPU HSA code object read and checked, owning its
//! bytes so a loader can copy the PT_LOAD segments later.

use super::bundle;
use super::elf::{CodeObjectVersion, Elf, LoadSegment};
use super::error::CodeObjectError as E;
use super::kernel::{self, KernelInfo};
use super::metadata::{self, NOTE_OWNER, NT_AMDGPU_METADATA};
use crate::target::GfxTarget;

/// EF_AMDGPU_MACH (e_flags bits 7:0) values of RDNA targets and two CDNA
/// ones, as LLVM 19 writes them. Used to cross-check the metadata target;
/// an unlisted value is not an error (the metadata stays authoritative).
const MACH: &[(u32, &str)] = &[
    (0x033, "gfx1010"),
    (0x034, "gfx1011"),
    (0x035, "gfx1012"),
    (0x042, "gfx1013"),
    (0x036, "gfx1030"),
    (0x037, "gfx1031"),
    (0x038, "gfx1032"),
    (0x039, "gfx1033"),
    (0x03e, "gfx1034"),
    (0x03d, "gfx1035"),
    (0x045, "gfx1036"),
    (0x041, "gfx1100"),
    (0x046, "gfx1101"),
    (0x047, "gfx1102"),
    (0x044, "gfx1103"),
    (0x043, "gfx1150"),
    (0x04a, "gfx1151"),
    (0x055, "gfx1152"),
    (0x048, "gfx1200"),
    (0x04e, "gfx1201"),
    (0x03f, "gfx90a"),
    (0x04c, "gfx942"),
];
const EF_AMDGPU_MACH: u32 = 0xff;

/// The processor named by an ELF e_flags value, when it is one we know.
pub fn processor_from_flags(e_flags: u32) -> Option<&'static str> {
    let mach = e_flags & EF_AMDGPU_MACH;
    MACH.iter().find(|(m, _)| *m == mach).map(|(_, name)| *name)
}

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
        let mut found = None;
        for note in elf.notes()? {
            if note.owner == NOTE_OWNER && note.kind == NT_AMDGPU_METADATA {
                if found.is_some() {
                    return Err(E::DuplicateMetadata);
                }
                found = Some(note.desc);
            }
        }
        let md = metadata::decode(found.ok_or(E::MissingMetadata)?)?;
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
        let kernels = md
            .kernels
            .into_iter()
            .map(|k| kernel::build(&elf, &symbols, &target, k))
            .collect::<Result<Vec<_>, E>>()?;
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

    /// Code object version (V4 or V5).
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
