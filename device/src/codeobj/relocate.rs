//! The relocations a loader applies when it places a code object in
//! memory: every entry of the REL/RELA sections for loaded sections (as
//! ROCr's loader takes them), resolved against the object's own symbols
//! into the values to write at a given load base. A linked HIP object has
//! them where it holds addresses: a `__device__` table of function
//! pointers, a global pointing at another (`R_AMDGPU_RELATIVE64`). Types
//! and their computations are LLVM AMDGPUUsage's "Relocation Records"
//! (S the symbol's address, A the addend, B the load base); the ones a
//! linked object does not carry for a loader (PC-relative, GOT, 16-bit)
//! are refused by name, as is a symbol the object does not define: a
//! loader of one code object has nothing to resolve it against.

use object::elf::{Rel64, Rela64, Sym64, SHT_REL, SHT_RELA};
use object::LittleEndian as LE;

use super::elf::{entries, range, Elf, RELA_BYTES, REL_BYTES, SHF_ALLOC, SYM_BYTES};
use super::error::CodeObjectError as E;

/// `R_AMDGPU_ABS32_LO`: the low 32 bits of S + A.
pub const R_AMDGPU_ABS32_LO: u32 = 1;
/// `R_AMDGPU_ABS32_HI`: the high 32 bits of S + A.
pub const R_AMDGPU_ABS32_HI: u32 = 2;
/// `R_AMDGPU_ABS64`: S + A.
pub const R_AMDGPU_ABS64: u32 = 3;
/// `R_AMDGPU_ABS32`: S + A in 32 bits.
pub const R_AMDGPU_ABS32: u32 = 6;
/// `R_AMDGPU_RELATIVE64`: B + A.
pub const R_AMDGPU_RELATIVE64: u32 = 13;

/// The undefined section index, and SHN_ABS (a value not moved by the
/// load base).
const SHN_UNDEF: u16 = 0;
const SHN_ABS: u16 = 0xfff1;

/// One relocation entry as the file gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relocation {
    /// Where to write: a virtual address of the image.
    pub offset: u64,
    pub kind: u32,
    /// The symbol's index in the table the section links to (0: none).
    pub symbol: u32,
    /// RELA's addend; REL's is the value in place.
    pub addend: Option<i64>,
    /// The symbol table's section index.
    table: u32,
}

/// A value to write into the image: `width` bytes (4 or 8) at `vaddr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patch {
    pub vaddr: u64,
    pub value: u64,
    pub width: u8,
}

impl Elf<'_> {
    /// Every load-time relocation, in file order. Like ROCr, every
    /// REL/RELA section counts except those for a section that is not
    /// loaded (link-time relocations kept by `--emit-relocs` for debug
    /// info).
    pub fn relocations(&self) -> Result<Vec<Relocation>, E> {
        let mut out = Vec::new();
        for s in &self.sections {
            let entry = match s.kind {
                SHT_RELA => RELA_BYTES,
                SHT_REL => REL_BYTES,
                _ => continue,
            };
            let target = self.sections.get(s.info as usize);
            if s.info != 0 && target.is_some_and(|t| t.flags & SHF_ALLOC == 0) {
                continue;
            }
            if s.entsize != entry {
                return Err(E::BadEntrySize {
                    what: "relocation",
                    found: s.entsize,
                    expected: entry,
                });
            }
            let table = range(self.bytes(), s.offset, s.size, "relocation table")?;
            let count = s.size / entry;
            // r_info: the symbol index in the high half, the type below.
            let entry = |offset: u64, info: u64, addend: Option<i64>| Relocation {
                offset,
                kind: info as u32,
                symbol: (info >> 32) as u32,
                addend,
                table: s.link,
            };
            if s.kind == SHT_RELA {
                out.extend(entries::<Rela64<LE>>(table, count).iter().map(|r| {
                    entry(
                        r.r_offset.get(LE),
                        r.r_info.get(LE),
                        Some(r.r_addend.get(LE)),
                    )
                }));
            } else {
                out.extend(
                    entries::<Rel64<LE>>(table, count)
                        .iter()
                        .map(|r| entry(r.r_offset.get(LE), r.r_info.get(LE), None)),
                );
            }
        }
        Ok(out)
    }

    /// Where a loader writes into the image: the `r_offset` of every
    /// load-time relocation, sorted.
    pub fn load_time_relocations(&self) -> Result<Vec<u64>, E> {
        let mut at: Vec<u64> = self.relocations()?.iter().map(|r| r.offset).collect();
        at.sort_unstable();
        Ok(at)
    }

    /// The values a loader writes for an image placed at `base`, one per
    /// relocation; an error names a type or symbol it cannot resolve, or a
    /// write outside the loaded segments.
    pub fn patches(&self, base: u64) -> Result<Vec<Patch>, E> {
        self.relocations()?
            .iter()
            .map(|r| self.patch(r, base))
            .collect()
    }

    fn patch(&self, r: &Relocation, base: u64) -> Result<Patch, E> {
        let refuse = |why: String| E::Relocation {
            offset: r.offset,
            kind: r.kind,
            why,
        };
        let width: u8 = match r.kind {
            R_AMDGPU_ABS64 | R_AMDGPU_RELATIVE64 => 8,
            R_AMDGPU_ABS32_LO | R_AMDGPU_ABS32_HI | R_AMDGPU_ABS32 => 4,
            _ => {
                return Err(refuse(
                    "a type a loader does not apply (PC-relative, GOT or 16-bit: a linked \
                     code object resolves those itself)"
                        .into(),
                ))
            }
        };
        let inside = self.segments.iter().any(|s| {
            r.offset >= s.vaddr
                && r.offset
                    .checked_add(u64::from(width))
                    .is_some_and(|end| end <= s.vaddr.saturating_add(s.memsz))
        });
        if !inside {
            return Err(refuse("it writes outside the loaded segments".into()));
        }
        // REL keeps the addend in place (zero where the file has no bytes).
        let addend = match r.addend {
            Some(a) => a as u64,
            None => match self.bytes_at_vaddr(r.offset, u64::from(width)) {
                Some(b) if width == 8 => u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
                Some(b) => u64::from(u32::from_le_bytes(b.try_into().unwrap_or([0; 4]))),
                None => 0,
            },
        };
        let value = match r.kind {
            R_AMDGPU_RELATIVE64 => base.wrapping_add(addend),
            _ => self
                .symbol_address(r, base)
                .map_err(refuse)?
                .wrapping_add(addend),
        };
        let value = match r.kind {
            R_AMDGPU_ABS32_HI => value >> 32,
            R_AMDGPU_ABS32_LO | R_AMDGPU_ABS32 => value & 0xFFFF_FFFF,
            _ => value,
        };
        Ok(Patch {
            vaddr: r.offset,
            value,
            width,
        })
    }

    /// S: the address of the relocation's symbol in an image at `base`.
    fn symbol_address(&self, r: &Relocation, base: u64) -> Result<u64, String> {
        if r.symbol == 0 {
            return Ok(0);
        }
        let table = self
            .sections
            .get(r.table as usize)
            .ok_or_else(|| format!("its symbol table (section {}) does not exist", r.table))?;
        let start = u64::from(r.symbol) * SYM_BYTES;
        let bytes = range(self.bytes(), table.offset, table.size, "symbol table")
            .ok()
            .and_then(|t| t.get(start as usize..(start + SYM_BYTES) as usize))
            .ok_or_else(|| format!("symbol {} is past its table", r.symbol))?;
        let sym = entries::<Sym64<LE>>(bytes, 1)
            .first()
            .ok_or_else(|| format!("symbol {} is unreadable", r.symbol))?;
        let value = sym.st_value.get(LE);
        match sym.st_shndx.get(LE) {
            SHN_UNDEF => {
                let name = self
                    .sections
                    .get(table.link as usize)
                    .and_then(|t| range(self.bytes(), t.offset, t.size, "symbol strings").ok())
                    .and_then(|t| super::elf::cstr(t, sym.st_name.get(LE), "symbol strings").ok())
                    .unwrap_or("?");
                Err(format!(
                    "symbol {name} is not defined in the code object (nothing to resolve it \
                     against: one code object is loaded alone)"
                ))
            }
            SHN_ABS => Ok(value),
            _ => Ok(base.wrapping_add(value)),
        }
    }
}
