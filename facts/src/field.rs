//! A named bit range inside one dword. Registers and packet body dwords are
//! both described with it, so the encoder places values and the decoder
//! prints them through the same declarations.

/// Bits `lo..=hi` of a dword, with the name the kernel headers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Field {
    pub name: &'static str,
    pub lo: u8,
    pub hi: u8,
}

impl Field {
    pub const fn new(name: &'static str, lo: u8, hi: u8) -> Self {
        Field { name, lo, hi }
    }

    /// A one-bit field.
    pub const fn bit(name: &'static str, bit: u8) -> Self {
        Field {
            name,
            lo: bit,
            hi: bit,
        }
    }

    /// Width in bits (0 for a malformed field with `hi < lo` or `hi > 31`).
    pub const fn width(self) -> u32 {
        if self.hi < self.lo || self.hi > 31 {
            0
        } else {
            (self.hi - self.lo) as u32 + 1
        }
    }

    /// The field's mask in place.
    pub const fn mask(self) -> u32 {
        let ones = if self.width() >= 32 {
            u32::MAX
        } else {
            (1u32 << self.width()) - 1
        };
        if self.width() == 0 {
            0
        } else {
            shl(ones, self.lo)
        }
    }

    /// Largest value the field holds.
    pub const fn max(self) -> u32 {
        shr(self.mask(), self.lo)
    }

    /// `value` shifted into place; bits beyond the field's width are dropped
    /// (callers check ranges before, see `fits`).
    pub const fn place(self, value: u32) -> u32 {
        shl(value, self.lo) & self.mask()
    }

    /// True when `value` fits the field without truncation.
    pub const fn fits(self, value: u32) -> bool {
        value <= self.max()
    }

    /// The field's value in `word`.
    pub const fn get(self, word: u32) -> u32 {
        shr(word & self.mask(), self.lo)
    }
}

// Shifts that yield 0 instead of overflowing for malformed fields.
const fn shl(v: u32, by: u8) -> u32 {
    match v.checked_shl(by as u32) {
        Some(x) => x,
        None => 0,
    }
}
const fn shr(v: u32, by: u8) -> u32 {
    match v.checked_shr(by as u32) {
        Some(x) => x,
        None => 0,
    }
}

/// Write `word` as `NAME=value` pairs for every field that is non-zero,
/// then any bits no field covers as `unknown_bits=0x...`.
pub fn describe(word: u32, fields: &[Field], out: &mut String) {
    use std::fmt::Write;
    let mut covered = 0u32;
    let mut first = true;
    for f in fields {
        covered |= f.mask();
        let v = f.get(word);
        if v == 0 {
            continue;
        }
        if !first {
            out.push(' ');
        }
        first = false;
        if f.width() == 1 {
            out.push_str(f.name);
        } else {
            let _ = write!(out, "{}={:#x}", f.name, v);
        }
    }
    let rest = word & !covered;
    if rest != 0 {
        if !first {
            out.push(' ');
        }
        let _ = write!(out, "unknown_bits={rest:#010x}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_and_reads_back() {
        let lds = Field::new("LDS_SIZE", 15, 23);
        assert_eq!(lds.mask(), 0x00FF_8000);
        assert_eq!(lds.max(), 0x1FF);
        assert_eq!(lds.place(0x80), 0x80 << 15);
        assert_eq!(lds.get(0x80 << 15 | 1), 0x80);
        assert!(!lds.fits(0x200));
        assert_eq!(Field::new("DATA", 0, 31).mask(), u32::MAX);
        let bad = Field::new("BAD", 40, 33);
        assert_eq!(
            (bad.mask(), bad.place(1), bad.get(u32::MAX), bad.max()),
            (0, 0, 0, 0)
        );
    }

    #[test]
    fn describes_set_fields_and_leftovers() {
        let fields = [Field::bit("A", 0), Field::new("B", 4, 7)];
        let mut s = String::new();
        describe(0x8000_0031, &fields, &mut s);
        assert_eq!(s, "A B=0x3 unknown_bits=0x80000000");
    }
}
