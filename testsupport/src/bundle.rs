//! Clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`) assembled for tests:
//! the magic, the entry count, then per entry its offset, size, id length
//! and id (little-endian `u64`s), then the entries' bytes. Written here,
//! apart from relaunch-device's reader, so the reader is checked against
//! an independent writer.

/// The uncompressed bundle magic.
pub const MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";

/// A bundle of `(id, bytes)` entries, each at a 16-byte aligned offset
/// after the table (as `clang-offload-bundler` aligns code objects).
pub fn assemble(entries: &[(&str, &[u8])]) -> Vec<u8> {
    aligned(entries, 16)
}

/// A bundle of `(id, bytes)` entries back to back right after the table.
pub fn assemble_packed(entries: &[(&str, &[u8])]) -> Vec<u8> {
    aligned(entries, 1)
}

/// The bundle with each entry at an offset that is a multiple of `align`.
fn aligned(entries: &[(&str, &[u8])], align: usize) -> Vec<u8> {
    let table: usize = entries.iter().map(|(id, _)| 24 + id.len()).sum();
    let mut at = (MAGIC.len() + 8 + table).next_multiple_of(align);
    let mut out = MAGIC.to_vec();
    out.extend((entries.len() as u64).to_le_bytes());
    let mut body = Vec::new();
    for (id, bytes) in entries {
        out.extend((at as u64).to_le_bytes());
        out.extend((bytes.len() as u64).to_le_bytes());
        out.extend((id.len() as u64).to_le_bytes());
        out.extend(id.as_bytes());
        body.push((at, *bytes));
        at = (at + bytes.len()).next_multiple_of(align);
    }
    for (at, bytes) in body {
        out.resize(at, 0);
        out.extend(bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_follow_the_table_at_16_byte_offsets() {
        let b = assemble(&[("a", b"xyz"), ("bc", b"q")]);
        assert!(b.starts_with(MAGIC));
        assert_eq!(b[24..32], 2u64.to_le_bytes());
        let first = u64::from_le_bytes(b[32..40].try_into().unwrap()) as usize;
        assert_eq!(first, (32 + 25 + 26_usize).next_multiple_of(16));
        assert_eq!(&b[first..first + 3], b"xyz");
        assert_eq!(&b[first + 16..], b"q");
        let p = assemble_packed(&[("a", b"xyz"), ("bc", b"q")]);
        assert_eq!(p.len(), 32 + 25 + 26 + 3 + 1);
        assert!(p.ends_with(b"xyzq"));
    }
}
