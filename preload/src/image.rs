//! What `hipModuleLoadData` was given: HIP passes only a pointer, so the
//! size of a plain ELF code object is worked out from its own headers (the
//! furthest end of the header tables, segments and sections). Only a
//! little-endian ELF64 for AMDGPU (`e_machine` 224) is read here; a clang
//! offload bundle is `bundle`'s (`hipModuleLoadData` routes it there first)
//! and anything else is refused with the reason, which marks the module
//! unsupported (its graphs fall through to the real HIP).

/// Largest code object accepted (a bound on what is read from the pointer).
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
const EM_AMDGPU: u16 = 224;
const SHT_NOBITS: u32 = 8;

fn u16_at(b: &[u8], at: usize) -> u64 {
    u64::from(u16::from_le_bytes([b[at], b[at + 1]]))
}

fn u32_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u64::from(u32::from_le_bytes(x))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// The byte length of the AMDGPU ELF64 image whose bytes `read(offset,
/// len)` returns (an error when a range is not available). Refuses bundles,
/// other formats and images larger than [`MAX_IMAGE_BYTES`].
pub fn elf_extent(read: &dyn Fn(u64, u64) -> Result<Vec<u8>, String>) -> Result<u64, String> {
    let head = read(0, 24)?;
    if head.starts_with(BUNDLE_MAGIC) {
        return Err(
            "the image is a clang offload bundle; only a plain AMDGPU ELF code object \
                    is replayed (load the device's entry of the bundle instead)"
                .into(),
        );
    }
    if !head.starts_with(ELF_MAGIC) {
        return Err("the image is neither an ELF code object nor an offload bundle".into());
    }
    let h = read(0, 64)?;
    if h[4] != 2 || h[5] != 1 {
        return Err("the ELF image is not little-endian ELF64".into());
    }
    let machine = u16_at(&h, 18);
    if machine != u64::from(EM_AMDGPU) {
        return Err(format!(
            "the ELF image is for machine {machine}, not AMDGPU ({EM_AMDGPU})"
        ));
    }
    let (phoff, shoff) = (u64_at(&h, 32), u64_at(&h, 40));
    let (phentsize, phnum) = (u16_at(&h, 54), u16_at(&h, 56));
    let (shentsize, shnum) = (u16_at(&h, 58), u16_at(&h, 60));
    // Program headers: p_offset at 8, p_filesz at 32.
    let segments = table_extent(read, "program", (phoff, phentsize, phnum), 56, |e| {
        Some((u64_at(e, 8), u64_at(e, 32)))
    })?;
    // Section headers: sh_offset at 24, sh_size at 32; NOBITS take no bytes.
    let sections = table_extent(read, "section", (shoff, shentsize, shnum), 64, |e| {
        (u32_at(e, 4) != u64::from(SHT_NOBITS)).then(|| (u64_at(e, 24), u64_at(e, 32)))
    })?;
    // The 64-byte ELF header itself, at least.
    Ok(64u64.max(segments).max(sections))
}

/// The end of an ELF header table (`off`, entry size, count) and of every
/// file range its entries name (`range` of an entry, `None` for entries
/// that occupy no bytes); 0 for an empty table. `min_entsize` is the
/// entry size the format requires.
fn table_extent(
    read: &dyn Fn(u64, u64) -> Result<Vec<u8>, String>,
    what: &str,
    (off, entsize, num): (u64, u64, u64),
    min_entsize: u64,
    range: impl Fn(&[u8]) -> Option<(u64, u64)>,
) -> Result<u64, String> {
    if num == 0 {
        return Ok(0);
    }
    if entsize < min_entsize {
        return Err(format!(
            "ELF {what} header entries of {entsize} bytes (need {min_entsize})"
        ));
    }
    let too_big = || format!("the ELF image claims more than {MAX_IMAGE_BYTES} bytes");
    let end = |off: u64, len: u64| off.checked_add(len).filter(|e| *e <= MAX_IMAGE_BYTES);
    let mut extent = end(off, entsize * num).ok_or_else(too_big)?;
    let table = read(off, entsize * num)?;
    for i in 0..num as usize {
        if let Some((at, len)) = range(&table[i * entsize as usize..]) {
            extent = extent.max(end(at, len).ok_or_else(too_big)?);
        }
    }
    Ok(extent)
}

/// Copies the code object at `image` (see [`elf_extent`]).
///
/// # Safety
/// `image` must point to a readable code object as `hipModuleLoadData`
/// requires (the real HIP reads the same bytes).
pub unsafe fn copy_image(image: *const u8) -> Result<Vec<u8>, String> {
    if image.is_null() {
        return Err("hipModuleLoadData was given a null image".into());
    }
    let read = |off: u64, len: u64| -> Result<Vec<u8>, String> {
        // SAFETY: the caller vouches for a readable code object; offsets
        // come from its own headers and are bounded by MAX_IMAGE_BYTES.
        let bytes = unsafe { std::slice::from_raw_parts(image.add(off as usize), len as usize) };
        Ok(bytes.to_vec())
    };
    let len = elf_extent(&read)?;
    read(0, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(bytes: &[u8]) -> impl Fn(u64, u64) -> Result<Vec<u8>, String> + '_ {
        move |off, len| {
            let (off, len) = (off as usize, len as usize);
            bytes
                .get(off..off + len)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| format!("range {off}+{len} is outside the {} bytes", bytes.len()))
        }
    }

    fn fixture(name: &str) -> Vec<u8> {
        relaunch_testsupport::fixture("gfx1201", name)
    }

    #[test]
    fn extent_of_a_real_code_object_is_its_file_size() {
        let bytes = fixture("counter");
        assert_eq!(elf_extent(&reader(&bytes)), Ok(bytes.len() as u64));
    }

    #[test]
    fn bundles_and_other_formats_are_refused_with_the_reason() {
        let mut bundle = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
        bundle.resize(128, 0);
        let err = elf_extent(&reader(&bundle)).unwrap_err();
        assert!(err.contains("offload bundle"), "{err}");
        let err = elf_extent(&reader(&[0u8; 64])).unwrap_err();
        assert!(err.contains("neither an ELF"), "{err}");
        let mut x86 = fixture("counter");
        x86[18..20].copy_from_slice(&62u16.to_le_bytes());
        let err = elf_extent(&reader(&x86)).unwrap_err();
        assert!(err.contains("machine 62"), "{err}");
    }

    #[test]
    fn absurd_header_offsets_are_refused_not_read() {
        let mut bytes = fixture("counter");
        bytes[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        let err = elf_extent(&reader(&bytes)).unwrap_err();
        assert!(err.contains("more than"), "{err}");
    }
}
