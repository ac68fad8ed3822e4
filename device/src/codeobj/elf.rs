//! The ELF64 container of an AMDGPU HSA code object: header, loadable
//! segments, sections, symbols and notes, read through the `object`
//! crate's zero-copy ELF structures (every table taken as a bounds-checked
//! slice of them), with relaunch's own resource caps and consistency rules
//! on top (image size, overlaps, zero fill the file justifies, note and
//! entry limits), each refusal a typed error naming the part. Nothing here
//! knows about kernels or metadata.

use std::collections::HashMap;
use std::mem::size_of;

use object::elf::{
    FileHeader64, NoteHeader64, ProgramHeader64, Rel64, Rela64, SectionHeader64, Sym64, ELFCLASS64,
    ELFDATA2LSB, PT_LOAD, PT_NOTE, SHT_DYNSYM, SHT_NOBITS, SHT_NOTE, SHT_STRTAB, SHT_SYMTAB,
};
use object::pod::{from_bytes, slice_from_bytes, Pod};
use object::LittleEndian as LE;

use super::error::CodeObjectError as E;

pub use object::elf::EM_AMDGPU;
/// `ELFOSABI_AMDGPU_HSA` (LLVM AMDGPUUsage; `object` does not name it).
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
pub(super) const SHF_ALLOC: u64 = object::elf::SHF_ALLOC as u64;
pub(super) const RELA_BYTES: u64 = size_of::<Rela64<LE>>() as u64;
pub(super) const REL_BYTES: u64 = size_of::<Rel64<LE>>() as u64;
const EHDR_BYTES: u64 = size_of::<FileHeader64<LE>>() as u64;
const PHDR_BYTES: u64 = size_of::<ProgramHeader64<LE>>() as u64;
const SHDR_BYTES: u64 = size_of::<SectionHeader64<LE>>() as u64;
pub(super) const SYM_BYTES: u64 = size_of::<Sym64<LE>>() as u64;
const NOTE_HEADER_BYTES: usize = size_of::<NoteHeader64<LE>>();
/// Largest loaded image accepted: code objects are kilobytes to a few
/// megabytes, and a loader allocates this much, so a crafted memsz must not
/// pass.
///
/// Below that ceiling the image must also be justified by the file
/// (`check_image_justified`): zero fill past a segment's file bytes is
/// covered by NOBITS sections (`.bss`, `.relro_padding`) inside it plus
/// `MAX_SEGMENT_PADDING`, and the span of the image exceeds the sum of
/// the segments by at most `MAX_SEGMENT_PADDING` per segment. A 10 KB file
/// declaring a 256 MiB segment is refused instead of committing 256 MiB.
pub const MAX_IMAGE_BYTES: u64 = 256 << 20;
/// Alignment padding a loadable segment may add beyond what its file bytes
/// and NOBITS sections account for (the largest ELF page size a linker
/// uses for AMDGPU, 64 KiB), and that the image may leave before each
/// segment.
pub const MAX_SEGMENT_PADDING: u64 = 64 << 10;
/// Notes any file may hold; a larger file may hold one more per
/// `NOTE_BYTES` of its size. Linked Tensile libraries carry one metadata
/// note per linked object (a 223 MB rocBLAS library has 4844), so a fixed
/// cap refused them; a crafted note table still stops early, its list a
/// small fraction of the file's size.
const MIN_NOTE_LIMIT: usize = 1024;
const NOTE_BYTES: usize = 1024;

/// The note limit of a file of `len` bytes.
pub fn note_limit(len: usize) -> usize {
    MIN_NOTE_LIMIT + len / NOTE_BYTES
}

/// Code object versions relaunch reads (ELF `e_ident[EI_ABIVERSION]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CodeObjectVersion {
    /// ABI version 2.
    V4,
    /// ABI version 3.
    V5,
    /// ABI version 4: V5's layout and metadata, plus generic processors
    /// (`gfx11-generic`, ...; EF_AMDGPU_GENERIC_VERSION in e_flags), which
    /// relaunch does not know as targets and refuses by their name.
    V6,
}

impl CodeObjectVersion {
    fn from_abi_version(v: u8) -> Result<Self, E> {
        match v {
            2 => Ok(CodeObjectVersion::V4),
            3 => Ok(CodeObjectVersion::V5),
            4 => Ok(CodeObjectVersion::V6),
            other => Err(E::UnknownVersion(other)),
        }
    }

    /// `4`, `5` or `6`.
    pub fn number(self) -> u32 {
        match self {
            CodeObjectVersion::V4 => 4,
            CodeObjectVersion::V5 => 5,
            CodeObjectVersion::V6 => 6,
        }
    }
}

/// One PT_LOAD program header: what a loader copies where. Virtual addresses
/// are offsets into the loaded image (code objects are linked at base 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LoadSegment {
    pub vaddr: u64,
    pub file_offset: u64,
    pub filesz: u64,
    pub memsz: u64,
    /// PF_X = 1, PF_W = 2, PF_R = 4.
    pub flags: u32,
    pub align: u64,
}

impl LoadSegment {
    /// True when `[vaddr, vaddr + size)` lies inside this segment's file bytes.
    fn holds_file_bytes(&self, vaddr: u64, size: u64) -> bool {
        let Some(end) = vaddr.checked_add(size) else {
            return false;
        };
        vaddr >= self.vaddr && end <= self.vaddr.saturating_add(self.filesz)
    }

    /// True when `vaddr` lies inside the segment's memory image.
    pub fn contains(&self, vaddr: u64) -> bool {
        vaddr >= self.vaddr && vaddr < self.vaddr.saturating_add(self.memsz)
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Section {
    pub(super) kind: u32,
    pub(super) flags: u64,
    pub(super) addr: u64,
    pub(super) offset: u64,
    pub(super) size: u64,
    pub(super) link: u32,
    pub(super) info: u32,
    pub(super) entsize: u64,
}

/// A note's type and payload, owner already matched by the caller.
#[derive(Debug, Clone, Copy)]
pub struct Note<'a> {
    pub owner: &'a [u8],
    pub kind: u32,
    pub desc: &'a [u8],
    pub offset: u64,
}

/// A validated ELF64 AMDGPU HSA image borrowed from the file bytes.
#[derive(Debug)]
pub struct Elf<'a> {
    bytes: &'a [u8],
    pub version: CodeObjectVersion,
    pub e_flags: u32,
    pub segments: Vec<LoadSegment>,
    pub(super) sections: Vec<Section>,
    note_ranges: Vec<(u64, u64)>,
}

fn len64(bytes: &[u8]) -> u64 {
    bytes.len() as u64
}

/// `bytes[offset..offset + size]`, or an error naming `what`.
pub(super) fn range<'a>(
    bytes: &'a [u8],
    offset: u64,
    size: u64,
    what: &str,
) -> Result<&'a [u8], E> {
    let out_of_bounds = || E::OutOfBounds {
        what: what.to_string(),
        offset,
        size,
        len: len64(bytes),
    };
    let end = offset.checked_add(size).ok_or_else(out_of_bounds)?;
    if end > len64(bytes) {
        return Err(out_of_bounds());
    }
    // Both bounds are <= bytes.len(), which fits in usize.
    Ok(&bytes[offset as usize..end as usize])
}

/// `table` (already bounds-checked by `range`) as `count` ELF structures.
pub(super) fn entries<T: Pod>(table: &[u8], count: u64) -> &[T] {
    // `range` sized the table as count * size_of::<T>(), and these
    // structures are byte arrays (alignment 1), so the slice always fits.
    slice_from_bytes::<T>(table, count as usize).map_or(&[], |(entries, _)| entries)
}

/// A NUL-terminated string inside `table`.
pub(super) fn cstr<'a>(table: &'a [u8], offset: u32, name: &'static str) -> Result<&'a str, E> {
    let bad = || E::BadString {
        table: name,
        offset: u64::from(offset),
    };
    let tail = table.get(offset as usize..).ok_or_else(bad)?;
    let end = tail.iter().position(|&c| c == 0).ok_or_else(bad)?;
    std::str::from_utf8(&tail[..end]).map_err(|_| bad())
}

impl<'a> Elf<'a> {
    /// Validate the header and read the program and section header tables.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, E> {
        if bytes.is_empty() {
            return Err(E::Empty);
        }
        if bytes.len() < 4 || bytes[..4] != *b"\x7fELF" {
            return Err(E::NotElf {
                found: bytes.iter().take(4).copied().collect(),
            });
        }
        if len64(bytes) < EHDR_BYTES {
            return Err(E::Truncated {
                what: "ELF header",
                offset: 0,
                needed: EHDR_BYTES,
                len: len64(bytes),
            });
        }
        let (h, _) = from_bytes::<FileHeader64<LE>>(bytes).map_err(|()| E::Truncated {
            what: "ELF header",
            offset: 0,
            needed: EHDR_BYTES,
            len: len64(bytes),
        })?;
        let ident = &h.e_ident;
        if ident.class != ELFCLASS64 {
            return Err(E::WrongClass(ident.class));
        }
        if ident.data != ELFDATA2LSB {
            return Err(E::WrongEndian(ident.data));
        }
        let machine = h.e_machine.get(LE);
        if machine != EM_AMDGPU {
            return Err(E::WrongMachine(machine));
        }
        if ident.os_abi != ELFOSABI_AMDGPU_HSA {
            return Err(E::WrongOsAbi(ident.os_abi));
        }
        let version = CodeObjectVersion::from_abi_version(ident.abi_version)?;
        let e_flags = h.e_flags.get(LE);
        let phoff = h.e_phoff.get(LE);
        let shoff = h.e_shoff.get(LE);
        let phentsize = u64::from(h.e_phentsize.get(LE));
        let phnum = u64::from(h.e_phnum.get(LE));
        let shentsize = u64::from(h.e_shentsize.get(LE));
        let shnum = u64::from(h.e_shnum.get(LE));
        let shstrndx = u32::from(h.e_shstrndx.get(LE));

        let mut segments = Vec::new();
        let mut note_ranges = Vec::new();
        if phnum > 0 {
            if phentsize != PHDR_BYTES {
                return Err(E::BadEntrySize {
                    what: "program header",
                    found: phentsize,
                    expected: PHDR_BYTES,
                });
            }
            let table = range(bytes, phoff, phnum * PHDR_BYTES, "program header table")?;
            for (index, ph) in entries::<ProgramHeader64<LE>>(table, phnum)
                .iter()
                .enumerate()
            {
                let kind = ph.p_type.get(LE);
                let (offset, filesz) = (ph.p_offset.get(LE), ph.p_filesz.get(LE));
                if kind == PT_LOAD || kind == PT_NOTE {
                    range(bytes, offset, filesz, &format!("program header {index}"))?;
                }
                if kind == PT_NOTE {
                    note_ranges.push((offset, filesz));
                }
                if kind == PT_LOAD {
                    let (vaddr, memsz) = (ph.p_vaddr.get(LE), ph.p_memsz.get(LE));
                    if vaddr
                        .checked_add(memsz)
                        .is_none_or(|end| end > MAX_IMAGE_BYTES)
                    {
                        return Err(E::ImageTooLarge {
                            index,
                            vaddr,
                            memsz,
                            limit: MAX_IMAGE_BYTES,
                        });
                    }
                    if filesz > memsz {
                        return Err(E::SegmentSizes {
                            index,
                            filesz,
                            memsz,
                        });
                    }
                    segments.push(LoadSegment {
                        vaddr,
                        file_offset: offset,
                        filesz,
                        memsz,
                        flags: ph.p_flags.get(LE),
                        align: ph.p_align.get(LE),
                    });
                }
            }
        }
        check_segments_disjoint(&segments)?;

        let mut sections = Vec::new();
        if shnum > 0 {
            if shentsize != SHDR_BYTES {
                return Err(E::BadEntrySize {
                    what: "section header",
                    found: shentsize,
                    expected: SHDR_BYTES,
                });
            }
            let table = range(bytes, shoff, shnum * SHDR_BYTES, "section header table")?;
            for (index, sh) in entries::<SectionHeader64<LE>>(table, shnum)
                .iter()
                .enumerate()
            {
                let s = Section {
                    kind: sh.sh_type.get(LE),
                    flags: sh.sh_flags.get(LE),
                    addr: sh.sh_addr.get(LE),
                    offset: sh.sh_offset.get(LE),
                    size: sh.sh_size.get(LE),
                    link: sh.sh_link.get(LE),
                    info: sh.sh_info.get(LE),
                    entsize: sh.sh_entsize.get(LE),
                };
                if s.kind != SHT_NOBITS && index != 0 {
                    range(bytes, s.offset, s.size, &format!("section {index}"))?;
                }
                sections.push(s);
            }
            if shstrndx as usize >= sections.len() || sections[shstrndx as usize].kind != SHT_STRTAB
            {
                return Err(E::BadStringTableIndex(shstrndx));
            }
            check_sections_disjoint(&sections)?;
        }
        check_image_justified(&segments, &sections)?;
        if note_ranges.is_empty() {
            note_ranges = sections
                .iter()
                .filter(|s| s.kind == SHT_NOTE)
                .map(|s| (s.offset, s.size))
                .collect();
        }
        Ok(Elf {
            bytes,
            version,
            e_flags,
            segments,
            sections,
            note_ranges,
        })
    }

    /// The whole file.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Every note in PT_NOTE segments (or SHT_NOTE sections when the file has
    /// no PT_NOTE), in file order.
    pub fn notes(&self) -> Result<Vec<Note<'a>>, E> {
        let mut out = Vec::new();
        let limit = note_limit(self.bytes.len());
        for &(offset, size) in &self.note_ranges {
            let mut data = range(self.bytes, offset, size, "note segment")?;
            let mut at = offset;
            while !data.is_empty() {
                let bad = |reason| E::BadNote { offset: at, reason };
                let Ok((header, _)) = from_bytes::<NoteHeader64<LE>>(data) else {
                    return Err(bad("header shorter than 12 bytes"));
                };
                let namesz = u64::from(header.n_namesz.get(LE));
                let descsz = u64::from(header.n_descsz.get(LE));
                let kind = header.n_type.get(LE);
                let name_end = NOTE_HEADER_BYTES as u64 + namesz;
                let desc_start = align4(name_end);
                let desc_end = desc_start + descsz;
                let next = align4(desc_end);
                if desc_end > len64(data) {
                    return Err(bad("name or description runs past the note area"));
                }
                let owner = &data[NOTE_HEADER_BYTES..name_end as usize];
                let owner = owner.strip_suffix(&[0]).unwrap_or(owner);
                out.push(Note {
                    owner,
                    kind,
                    desc: &data[desc_start as usize..desc_end as usize],
                    offset: at,
                });
                if out.len() > limit {
                    return Err(E::TooMany {
                        what: "notes",
                        count: out.len() as u64,
                        limit: limit as u64,
                    });
                }
                let step = next.min(len64(data));
                data = &data[step as usize..];
                at += step;
            }
        }
        Ok(out)
    }

    /// Every defined symbol whose name ends in `.kd`, by name, with its value
    /// (the descriptor's virtual address) and size. Reads `.symtab` and
    /// `.dynsym`; the first definition of a name wins.
    pub fn descriptor_symbols(&self) -> Result<HashMap<&'a str, (u64, u64)>, E> {
        self.defined_symbols(|name| name.ends_with(".kd"))
    }

    /// Every defined symbol whose name `keep` accepts, with value and size
    /// (the certifier finds a kernel's function extent this way).
    pub fn defined_symbols(
        &self,
        keep: impl Fn(&str) -> bool,
    ) -> Result<HashMap<&'a str, (u64, u64)>, E> {
        let mut found = HashMap::new();
        let mut any_table = false;
        for s in &self.sections {
            if s.kind != SHT_SYMTAB && s.kind != SHT_DYNSYM {
                continue;
            }
            any_table = true;
            if s.entsize != SYM_BYTES {
                return Err(E::BadEntrySize {
                    what: "symbol",
                    found: s.entsize,
                    expected: SYM_BYTES,
                });
            }
            let strings = self
                .sections
                .get(s.link as usize)
                .filter(|t| t.kind == SHT_STRTAB)
                .ok_or(E::BadSymbolStrings(s.link))?;
            let strings = range(self.bytes, strings.offset, strings.size, "symbol strings")?;
            let table = range(self.bytes, s.offset, s.size, "symbol table")?;
            for sym in entries::<Sym64<LE>>(table, s.size / SYM_BYTES) {
                if sym.st_shndx.get(LE) == 0 {
                    continue; // undefined
                }
                let name = cstr(strings, sym.st_name.get(LE), "symbol string table")?;
                if keep(name) {
                    found
                        .entry(name)
                        .or_insert((sym.st_value.get(LE), sym.st_size.get(LE)));
                }
            }
        }
        if !any_table {
            return Err(E::NoSymbolTable);
        }
        Ok(found)
    }

    /// The file bytes at virtual address `vaddr`, `size` long, when they lie
    /// inside one loadable segment's file image.
    pub fn bytes_at_vaddr(&self, vaddr: u64, size: u64) -> Option<&'a [u8]> {
        let seg = self
            .segments
            .iter()
            .find(|s| s.holds_file_bytes(vaddr, size))?;
        let offset = seg.file_offset.checked_add(vaddr - seg.vaddr)?;
        range(self.bytes, offset, size, "segment bytes").ok()
    }
}

fn align4(x: u64) -> u64 {
    x.saturating_add(3) & !3
}

/// Loadable segments must not overlap in the memory image.
fn check_segments_disjoint(segments: &[LoadSegment]) -> Result<(), E> {
    let mut order: Vec<usize> = (0..segments.len()).collect();
    order.sort_by_key(|&i| segments[i].vaddr);
    for pair in order.windows(2) {
        let (a, b) = (&segments[pair[0]], &segments[pair[1]]);
        // Every segment ends below MAX_IMAGE_BYTES, so the sum cannot wrap.
        if a.vaddr + a.memsz > b.vaddr && b.memsz > 0 && a.memsz > 0 {
            return Err(E::Overlap {
                first: format!("loadable segment {} (vaddr 0x{:x})", pair[0], a.vaddr),
                second: format!("loadable segment {} (vaddr 0x{:x})", pair[1], b.vaddr),
            });
        }
    }
    Ok(())
}

/// Sections with file contents must not share bytes.
fn check_sections_disjoint(sections: &[Section]) -> Result<(), E> {
    let mut order: Vec<usize> = (1..sections.len())
        .filter(|&i| sections[i].kind != SHT_NOBITS && sections[i].size > 0)
        .collect();
    order.sort_by_key(|&i| sections[i].offset);
    for pair in order.windows(2) {
        let (a, b) = (&sections[pair[0]], &sections[pair[1]]);
        // In bounds was checked, so the sum cannot overflow.
        if a.offset + a.size > b.offset {
            return Err(E::Overlap {
                first: format!("section {}", pair[0]),
                second: format!("section {}", pair[1]),
            });
        }
    }
    Ok(())
}

/// Loadable memory must be accounted for by the file: see
/// `MAX_IMAGE_BYTES`.
fn check_image_justified(segments: &[LoadSegment], sections: &[Section]) -> Result<(), E> {
    let mut total: u64 = 0;
    for (index, seg) in segments.iter().enumerate() {
        let end = seg.vaddr.saturating_add(seg.memsz);
        let nobits: u64 = sections
            .iter()
            .filter(|s| s.kind == SHT_NOBITS && s.addr >= seg.vaddr && s.addr < end)
            .map(|s| s.size.min(end - s.addr))
            .fold(0, u64::saturating_add);
        let zero_fill = seg.memsz - seg.filesz;
        let justified = nobits.saturating_add(MAX_SEGMENT_PADDING);
        if zero_fill > justified {
            return Err(E::UnjustifiedImage {
                what: format!(
                    "loadable segment {index} (vaddr 0x{:x}) asks for {zero_fill} zero-filled \
                     bytes past its {} file bytes",
                    seg.vaddr, seg.filesz
                ),
                justified,
            });
        }
        total = total.saturating_add(seg.memsz);
    }
    let span = segments
        .iter()
        .map(|s| s.vaddr.saturating_add(s.memsz))
        .max()
        .unwrap_or(0);
    let justified = total.saturating_add(MAX_SEGMENT_PADDING.saturating_mul(segments.len() as u64));
    if span > justified {
        return Err(E::UnjustifiedImage {
            what: format!(
                "the loaded image spans {span} bytes for {total} bytes of segments \
                 (gaps between segments)"
            ),
            justified,
        });
    }
    Ok(())
}
