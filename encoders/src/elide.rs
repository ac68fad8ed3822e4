//! Stateful SH-register elision: a shadow of the compute SH registers
//! (0x200..0x24F) within one IB segment, so a run of registers is written only
//! where its value changed.
//!
//! Shadow values are `u64`: a plain register value in the low 32 bits, or a
//! tagged placeholder for a kernarg pointer dword whose final value is only
//! known at `finish` (its address is relative to the kernarg base until then).

use crate::packet::{op, type3};
use crate::writer::DwordWriter;

/// First SET_SH_REG offset the shadow covers (COMPUTE_DISPATCH_INITIATOR).
pub const SHADOW_FIRST: u16 = 0x200;
/// Registers covered (through COMPUTE_USER_DATA_15).
pub const SHADOW_LEN: usize = 0x50;

/// Placeholder tag: the low kernarg-pointer dword; low 32 bits hold the
/// block's offset from the kernarg base.
pub(crate) const TAG_KERNARG_LO: u64 = 1 << 32;
/// Placeholder tag: the high kernarg-pointer dword.
pub(crate) const TAG_KERNARG_HI: u64 = 2 << 32;
/// Placeholder tag: a scratch ring value (`scratch::Word` in the low 32
/// bits), known at `finish_with_scratch`. Constant over an IB, so equal
/// placeholders elide exactly where the final values would.
pub(crate) const TAG_SCRATCH: u64 = 4 << 32;
const UNKNOWN: u64 = u64::MAX;

/// What the registers hold after the dwords written so far in this segment.
#[derive(Debug, Clone)]
pub struct ShShadow {
    values: [u64; SHADOW_LEN],
}

impl Default for ShShadow {
    fn default() -> Self {
        ShShadow {
            values: [UNKNOWN; SHADOW_LEN],
        }
    }
}

impl ShShadow {
    pub fn new() -> Self {
        Self::default()
    }

    /// Forget everything (start of a segment: the queue's own dispatches may
    /// have changed any register).
    pub fn reset(&mut self) {
        self.values = [UNKNOWN; SHADOW_LEN];
    }

    /// Record `values` for consecutive registers from `first`, known to be
    /// what the dwords written so far leave in them.
    #[inline]
    pub(crate) fn assign(&mut self, first: u16, values: &[u64]) {
        let base = (first - SHADOW_FIRST) as usize;
        self.values[base..base + values.len()].copy_from_slice(values);
    }

    /// Write plain `values` to consecutive registers from `first`, emitting
    /// one SET_SH_REG per maximal run of changed values. Returns the dwords
    /// written, or `None` (writing nothing) when the run leaves 0x200..0x24F.
    pub fn write(&mut self, w: &mut DwordWriter, first: u16, values: &[u32]) -> Option<usize> {
        let start = first.checked_sub(SHADOW_FIRST)? as usize;
        if start + values.len() > SHADOW_LEN {
            return None;
        }
        let mut tagged = [0u64; SHADOW_LEN];
        for (t, v) in tagged.iter_mut().zip(values) {
            *t = *v as u64;
        }
        let before = w.len();
        self.write_tagged(w, first, &tagged[..values.len()], false, |_, _| {});
        Some(w.len() - before)
    }

    /// Like `write`, with tagged values; `full` writes every value regardless
    /// of the shadow. `on_placeholder(dword_index, tag)` is called for each
    /// tagged dword written (its dword holds the tag's low 32 bits for now).
    #[inline]
    pub(crate) fn write_tagged(
        &mut self,
        w: &mut DwordWriter,
        first: u16,
        values: &[u64],
        full: bool,
        mut on_placeholder: impl FnMut(usize, u64),
    ) {
        let base = (first - SHADOW_FIRST) as usize;
        let shadow = &mut self.values[base..base + values.len()];
        let n = values.len();
        let mut i = 0;
        while i < n {
            if !full && shadow[i] == values[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i < n && (full || shadow[i] != values[i]) {
                i += 1;
            }
            let mut r = w.reserve(2 + i - start);
            r.push(type3(op::SET_SH_REG, 1 + (i - start) as u32, true));
            r.push((first + start as u16) as u32);
            for k in start..i {
                let v = values[k];
                shadow[k] = v;
                if v >> 32 != 0 {
                    on_placeholder(r.position(), v);
                }
                r.push(v as u32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_only_changed_registers() {
        let mut w = DwordWriter::new();
        let mut s = ShShadow::new();
        assert_eq!(s.write(&mut w, 0x240, &[1, 2, 3, 4]), Some(6));
        let mut w = DwordWriter::new();
        assert_eq!(s.write(&mut w, 0x240, &[5, 2, 6, 4]), Some(6));
        assert_eq!(
            w.as_slice(),
            [0xC0017602, 0x240, 5, 0xC0017602, 0x242, 6],
            "two single-register writes"
        );
        let mut w = DwordWriter::new();
        assert_eq!(s.write(&mut w, 0x240, &[5, 2, 6, 4]), Some(0));
        assert_eq!(s.write(&mut w, 0x1FF, &[1]), None);
        assert_eq!(s.write(&mut w, 0x24F, &[1, 2]), None);
        assert!(w.is_empty());
    }

    #[test]
    fn reset_forgets_state() {
        let mut w = DwordWriter::new();
        let mut s = ShShadow::new();
        s.write(&mut w, 0x212, &[7, 8]);
        s.reset();
        let mut w = DwordWriter::new();
        assert_eq!(s.write(&mut w, 0x212, &[7, 8]), Some(4));
    }
}
