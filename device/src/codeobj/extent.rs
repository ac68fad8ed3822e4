//! How long a code object is when all a caller has is where it starts:
//! HIP hands `hipModuleLoadData` and `__hipRegisterFatBinary` a bare
//! pointer, so the HIP interposer works the length out from the image's own
//! headers before copying it and handing it to [`super::CodeObject`]. The
//! walk only reads what a header says is there, through a caller-supplied
//! reader, and every range is checked against one set of limits before it
//! is read:
//!
//! - an ELF image is at most [`MAX_ELF_BYTES`] (the ELF reader's own
//!   limit, [`super::elf::MAX_IMAGE_BYTES`]: a longer one would be copied
//!   only to be refused);
//! - an offload bundle, plain or compressed, is at most
//!   [`MAX_BUNDLE_BYTES`] (the most a compressed one may decompress to,
//!   [`super::compressed::MAX_UNCOMPRESSED_BYTES`]) and holds at most
//!   [`MAX_BUNDLE_ENTRIES`] entries with ids of 1 to [`MAX_BUNDLE_ID_BYTES`]
//!   bytes (the bundle reader's limits).
//!
//! Layouts: the ELF64 header and its program and section header tables
//! (System V gABI); clang offload bundles as in `bundle.rs` (LLVM's "Clang
//! Offload Bundler" document), compressed ones as in `compressed.rs`.

use std::mem::size_of;

use object::elf::{
    FileHeader64, ProgramHeader64, SectionHeader64, ELFCLASS64, ELFDATA2LSB, EM_AMDGPU, SHT_NOBITS,
};
use object::LittleEndian as LE;

use super::compressed::{self, COMPRESSED_MAGIC};
use super::error::CodeObjectError;

pub use super::bundle::{is_bundle, BUNDLE_MAGIC};

/// Largest ELF image whose extent is accepted.
pub const MAX_ELF_BYTES: u64 = super::elf::MAX_IMAGE_BYTES;
/// Largest offload bundle (plain, or compressed) whose extent is accepted.
pub const MAX_BUNDLE_BYTES: u64 = compressed::MAX_UNCOMPRESSED_BYTES;
/// Most entries a bundle may list.
pub const MAX_BUNDLE_ENTRIES: u64 = super::bundle::MAX_ENTRIES;
/// Longest entry id a bundle may hold.
pub const MAX_BUNDLE_ID_BYTES: u64 = super::bundle::MAX_ID_BYTES;

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
const EHDR_BYTES: u64 = size_of::<FileHeader64<LE>>() as u64;

/// Reads `len` bytes at `offset` of the image, or says why it cannot.
pub type Read<'a> = &'a dyn Fn(u64, u64) -> std::result::Result<Vec<u8>, String>;

/// Why an image's extent could not be worked out; nothing past the
/// refused range was read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtentError {
    #[error("reading the {what}: {reason}")]
    Read { what: &'static str, reason: String },
    #[error("{len} bytes at {offset} of the {what} came back short")]
    Short {
        what: &'static str,
        offset: u64,
        len: u64,
    },
    #[error(
        "the image is a clang offload bundle; only a plain AMDGPU ELF code object \
         is replayed (load the device's entry of the bundle instead)"
    )]
    BundleNotElf,
    #[error("the image is neither an ELF code object nor an offload bundle")]
    NotElf,
    #[error("the ELF image is not little-endian ELF64")]
    NotElf64,
    #[error("the ELF image is for machine {machine}, not AMDGPU ({EM_AMDGPU})")]
    Machine { machine: u16 },
    #[error("ELF {table} header entries of {entsize} bytes (need {need})")]
    EntrySize {
        table: &'static str,
        entsize: u64,
        need: u64,
    },
    #[error("the ELF image claims more than {MAX_ELF_BYTES} bytes")]
    ElfTooLarge,
    #[error("the fat binary is not a clang offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)")]
    NotBundle,
    #[error(
        "the offload bundle claims {count} entries (0 or more than {MAX_BUNDLE_ENTRIES}): \
         not a real bundle"
    )]
    EntryCount { count: u64 },
    #[error("offload bundle entry {index}: an id of {len} bytes (want 1..={MAX_BUNDLE_ID_BYTES})")]
    IdLength { index: u64, len: u64 },
    #[error(
        "offload bundle entry {index}: {size} bytes at {offset} reach past {MAX_BUNDLE_BYTES} bytes"
    )]
    EntryTooFar { index: u64, offset: u64, size: u64 },
    #[error(
        "the fat binary is a version 1 compressed offload bundle (CCOB), whose header \
         records no size: its end behind a bare pointer is unknown"
    )]
    CompressedV1,
    #[error(
        "the fat binary is a compressed offload bundle (CCOB) of version {0}, which \
         relaunch does not read (2, 3)"
    )]
    CompressedVersion(u16),
    #[error(transparent)]
    CompressedHeader(CodeObjectError),
    #[error("the compressed offload bundle claims {0} bytes, past {MAX_BUNDLE_BYTES}")]
    CompressedTooLarge(u64),
    #[error("the compressed offload bundle records no size")]
    CompressedNoSize,
}

type Result<T> = std::result::Result<T, ExtentError>;

/// `read` with its failures and short reads named for `what`.
fn exact(read: Read<'_>, what: &'static str, offset: u64, len: u64) -> Result<Vec<u8>> {
    let bytes = read(offset, len).map_err(|reason| ExtentError::Read { what, reason })?;
    if bytes.len() as u64 != len {
        return Err(ExtentError::Short { what, offset, len });
    }
    Ok(bytes)
}

/// The little-endian `n`-byte integer at `at` (offload bundle fields).
fn le(b: &[u8], at: usize, n: usize) -> u64 {
    b[at..at + n]
        .iter()
        .rev()
        .fold(0u64, |acc, &byte| (acc << 8) | u64::from(byte))
}

/// The first bytes of `b` as ELF structure `T` (`object`'s zero-copy
/// layouts); `b` was read at least that long (`exact`).
fn as_elf<T: object::pod::Pod>(b: &[u8]) -> Result<&T> {
    object::pod::from_bytes::<T>(b)
        .map(|(t, _)| t)
        .map_err(|()| ExtentError::NotElf64)
}

/// The byte length of the little-endian AMDGPU ELF64 image (`e_machine`
/// 224) `read` gives access to: the furthest end of its header, header
/// tables, segments and sections. Refuses bundles (with a hint), other
/// formats and images past [`MAX_ELF_BYTES`].
pub fn elf_extent(read: Read<'_>) -> Result<u64> {
    const WHAT: &str = "ELF image";
    let head = exact(read, WHAT, 0, 24)?;
    if head.starts_with(BUNDLE_MAGIC) {
        return Err(ExtentError::BundleNotElf);
    }
    if !head.starts_with(ELF_MAGIC) {
        return Err(ExtentError::NotElf);
    }
    let header_bytes = exact(read, WHAT, 0, EHDR_BYTES)?;
    let h: &FileHeader64<LE> = as_elf(&header_bytes)?;
    if h.e_ident.class != ELFCLASS64 || h.e_ident.data != ELFDATA2LSB {
        return Err(ExtentError::NotElf64);
    }
    let machine = h.e_machine.get(LE);
    if machine != EM_AMDGPU {
        return Err(ExtentError::Machine { machine });
    }
    let (phoff, shoff) = (h.e_phoff.get(LE), h.e_shoff.get(LE));
    let (phentsize, phnum) = (h.e_phentsize.get(LE).into(), h.e_phnum.get(LE).into());
    let (shentsize, shnum) = (h.e_shentsize.get(LE).into(), h.e_shnum.get(LE).into());
    let phdr = size_of::<ProgramHeader64<LE>>() as u64;
    let segments = table_extent(read, "program", (phoff, phentsize, phnum), phdr, |e| {
        let ph: &ProgramHeader64<LE> = as_elf(e).ok()?;
        Some((ph.p_offset.get(LE), ph.p_filesz.get(LE)))
    })?;
    // NOBITS sections take no file bytes.
    let shdr = size_of::<SectionHeader64<LE>>() as u64;
    let sections = table_extent(read, "section", (shoff, shentsize, shnum), shdr, |e| {
        let sh: &SectionHeader64<LE> = as_elf(e).ok()?;
        (sh.sh_type.get(LE) != SHT_NOBITS).then(|| (sh.sh_offset.get(LE), sh.sh_size.get(LE)))
    })?;
    // The ELF header itself, at least.
    Ok(EHDR_BYTES.max(segments).max(sections))
}

/// The end of an ELF header table (`off`, entry size, count) and of every
/// file range its entries name (`range` of an entry, `None` for entries
/// that occupy no bytes); 0 for an empty table. `need` is the entry size
/// the format requires.
fn table_extent(
    read: Read<'_>,
    table: &'static str,
    (off, entsize, num): (u64, u64, u64),
    need: u64,
    range: impl Fn(&[u8]) -> Option<(u64, u64)>,
) -> Result<u64> {
    if num == 0 {
        return Ok(0);
    }
    if entsize < need {
        return Err(ExtentError::EntrySize {
            table,
            entsize,
            need,
        });
    }
    let end = |off: u64, len: u64| {
        off.checked_add(len)
            .filter(|e| *e <= MAX_ELF_BYTES)
            .ok_or(ExtentError::ElfTooLarge)
    };
    // entsize and num are u16 values: their product cannot overflow.
    let mut extent = end(off, entsize * num)?;
    let bytes = exact(read, "ELF image", off, entsize * num)?;
    for entry in bytes.chunks_exact(entsize as usize) {
        if let Some((at, len)) = range(entry) {
            extent = extent.max(end(at, len)?);
        }
    }
    Ok(extent)
}

/// The byte length of the offload bundle `read` gives access to: the
/// furthest end of its header, its entry table and its entries, or the
/// size a compressed bundle's header records (versions 2 and 3; version
/// 1 records none and is refused). Refuses anything that is not a bundle
/// and every limit of the module docs.
pub fn bundle_extent(read: Read<'_>) -> Result<u64> {
    const WHAT: &str = "offload bundle";
    if exact(read, WHAT, 0, 4)? == COMPRESSED_MAGIC {
        return compressed_extent(read);
    }
    let head = exact(read, WHAT, 0, 32).map_err(|_| ExtentError::NotBundle)?;
    if !head.starts_with(BUNDLE_MAGIC) {
        return Err(ExtentError::NotBundle);
    }
    let count = le(&head, 24, 8);
    if count == 0 || count > MAX_BUNDLE_ENTRIES {
        return Err(ExtentError::EntryCount { count });
    }
    let (mut at, mut extent) = (32u64, 32u64);
    for index in 0..count {
        let fixed = exact(read, WHAT, at, 24)?;
        let (offset, size, id_len) = (le(&fixed, 0, 8), le(&fixed, 8, 8), le(&fixed, 16, 8));
        if id_len == 0 || id_len > MAX_BUNDLE_ID_BYTES {
            return Err(ExtentError::IdLength { index, len: id_len });
        }
        // At most 1024 entries of at most 24 + 1024 bytes: no overflow.
        at += 24 + id_len;
        let end = offset
            .checked_add(size)
            .filter(|e| *e <= MAX_BUNDLE_BYTES)
            .ok_or(ExtentError::EntryTooFar {
                index,
                offset,
                size,
            })?;
        extent = extent.max(at).max(end);
    }
    Ok(extent)
}

/// The extent of a compressed bundle: the total size its header records.
fn compressed_extent(read: Read<'_>) -> Result<u64> {
    const WHAT: &str = "offload bundle";
    // Version first: it says how long the header is.
    let version = le(&exact(read, WHAT, 4, 2)?, 0, 2) as u16;
    let header_len = match version {
        2 => 24,
        3 => 32,
        1 => return Err(ExtentError::CompressedV1),
        v => return Err(ExtentError::CompressedVersion(v)),
    };
    let h = compressed::parse_header(&exact(read, WHAT, 0, header_len)?)
        .map_err(ExtentError::CompressedHeader)?;
    match h.file_size {
        Some(size) if size <= MAX_BUNDLE_BYTES => Ok(size),
        Some(size) => Err(ExtentError::CompressedTooLarge(size)),
        None => Err(ExtentError::CompressedNoSize),
    }
}

#[cfg(test)]
#[path = "extent_tests.rs"]
mod tests;
