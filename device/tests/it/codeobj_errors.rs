//! Damaged code objects and bundles: each kind of damage gets its own error
//! variant with a one-line message, never a panic.

use std::process::Command;

use relaunch_device::codeobj::{CodeObject, CodeObjectError as E};
use relaunch_testsupport::bundle::assemble_packed as bundle;
use relaunch_testsupport::fixture;

fn counter() -> Vec<u8> {
    fixture("gfx1201", "counter")
}

fn rd64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}
fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn wr64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// File offset of section header `i`.
fn shdr(b: &[u8], i: usize) -> usize {
    rd64(b, 40) as usize + 64 * i
}

/// Index of the first section of ELF type `kind`.
fn section_of_type(b: &[u8], kind: u32) -> usize {
    let n = u16::from_le_bytes([b[60], b[61]]) as usize;
    (0..n).find(|&i| rd32(b, shdr(b, i) + 4) == kind).unwrap()
}

fn err(bytes: &[u8]) -> E {
    let e = CodeObject::parse(bytes).expect_err("damaged input must be refused");
    let text = e.to_string();
    assert!(
        !text.contains('\n') && !text.is_empty(),
        "one line: {text:?}"
    );
    e
}

#[test]
fn header_damage() {
    assert_eq!(err(&[]), E::Empty);
    assert!(matches!(err(b"MZ\x90\x00junk"), E::NotElf { .. }));
    let b = counter();
    assert!(matches!(
        err(&b[..40]),
        E::Truncated {
            what: "ELF header",
            ..
        }
    ));
    let with = |at: usize, v: u8| {
        let mut c = b.clone();
        c[at] = v;
        err(&c)
    };
    assert_eq!(with(4, 1), E::WrongClass(1));
    assert_eq!(with(5, 2), E::WrongEndian(2));
    assert_eq!(with(18, 62), E::WrongMachine(62));
    assert_eq!(with(7, 0), E::WrongOsAbi(0));
    // V6 (ABI version 4) is read; V7 is not.
    let v7 = with(8, 5);
    assert_eq!(v7, E::UnknownVersion(5));
    assert_eq!(
        v7.to_string(),
        "unknown code object version (ELF ABI version 5); relaunch reads V4 (2), V5 (3) and V6 (4)"
    );
    assert_eq!(with(8, 1), E::UnknownVersion(1));
    // A V5 object marked V6 reads the same (V6 adds generic processors
    // only; Debian's ROCm 6.4 libraries ship V6 objects).
    let mut v6 = b.clone();
    v6[8] = 4;
    let object = CodeObject::parse(&v6).expect("V6");
    assert_eq!(
        object.version(),
        relaunch_device::codeobj::CodeObjectVersion::V6
    );
    assert_eq!(object.version().number(), 6);
}

#[test]
fn table_damage() {
    let b = counter();
    // Section header table beyond the end of the file.
    let mut c = b.clone();
    wr64(&mut c, 40, b.len() as u64 - 10);
    assert!(matches!(err(&c), E::OutOfBounds { .. }));
    // A section whose size runs to the end of the address space.
    let mut c = b.clone();
    let comment = shdr(&b, 10);
    wr64(&mut c, comment + 32, u64::MAX - 8);
    let e = err(&c);
    assert!(
        matches!(&e, E::OutOfBounds { what, .. } if what == "section 10"),
        "{e}"
    );
    // Two sections sharing bytes.
    let mut c = b.clone();
    let dynsym = section_of_type(&b, 11);
    let off = rd64(&b, shdr(&b, dynsym) + 24);
    wr64(&mut c, shdr(&b, dynsym + 1) + 24, off);
    assert!(matches!(err(&c), E::Overlap { .. }));
    // Symbol table pointing outside the file (both tables).
    let mut c = b.clone();
    for kind in [2, 11] {
        let s = shdr(&b, section_of_type(&b, kind));
        wr64(&mut c, s + 24, 1 << 40);
    }
    assert!(matches!(err(&c), E::OutOfBounds { .. }));
    // Program header with filesz > memsz.
    let mut c = b.clone();
    let ph = rd64(&b, 32) as usize + 56; // second header: the first PT_LOAD
    assert_eq!(rd32(&b, ph), 1);
    wr64(&mut c, ph + 40, 1);
    assert!(matches!(err(&c), E::SegmentSizes { .. }));
    // A memory size no loader should allocate.
    let mut c = b.clone();
    wr64(&mut c, ph + 40, 1 << 40);
    assert!(matches!(err(&c), E::ImageTooLarge { index: 1, .. }));
    // Two loadable segments sharing addresses.
    let mut c = b.clone();
    wr64(&mut c, ph + 56 + 16, 0x100);
    let e = err(&c);
    assert!(matches!(e, E::Overlap { .. }), "{e}");
}

#[test]
fn metadata_damage() {
    let b = counter();
    let note = rd64(&b, shdr(&b, section_of_type(&b, 7)) + 24) as usize;
    assert_eq!(&b[note + 12..note + 18], b"AMDGPU");
    // Wrong note type: no metadata note left.
    let mut c = b.clone();
    c[note + 8] = 33;
    assert_eq!(err(&c), E::MissingMetadata);
    // The root claims a 0x83ae616d-entry array: MessagePack runs out.
    let mut c = b.clone();
    c[note + 20] = 0xdd;
    assert!(matches!(err(&c), E::MetadataEncoding(_)));
    // A root that decodes but is not a map.
    let mut c = b.clone();
    c[note + 20] = 0xc0;
    assert_eq!(
        err(&c).to_string(),
        "metadata: the metadata root is not a map"
    );
    // Description size beyond the note area.
    let mut c = b.clone();
    c[note + 4..note + 8].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    assert!(matches!(err(&c), E::BadNote { .. }));
    // Metadata naming a different processor than e_flags.
    let mut c = b.clone();
    c[48] = 0x41; // EF_AMDGPU_MACH gfx1100
    assert_eq!(
        err(&c).to_string(),
        "ELF e_flags name gfx1100 but the metadata says gfx1201"
    );
}

#[test]
fn descriptor_damage() {
    let b = counter();
    // Move counter.kd (in both symbol tables) far outside every segment.
    let mut c = b.clone();
    for kind in [2, 11] {
        let s = shdr(&b, section_of_type(&b, kind));
        let (off, size) = (rd64(&b, s + 24) as usize, rd64(&b, s + 32) as usize);
        for sym in (off..off + size).step_by(24) {
            if rd64(&b, sym + 8) == 0x500 {
                wr64(&mut c, sym + 8, 0x10_0000);
            }
        }
    }
    let e = err(&c);
    assert!(
        matches!(
            e,
            E::DescriptorOutsideSegments {
                vaddr: 0x10_0000,
                ..
            }
        ),
        "{e}"
    );
    // Descriptor says scratch, metadata says none.
    let mut c = b.clone();
    c[0x504] = 16;
    assert!(matches!(
        err(&c),
        E::DescriptorDisagrees {
            field: "private_segment_fixed_size",
            ..
        }
    ));
    // A descriptor KERNARG_SIZE of 0 leaves the size to the metadata (8);
    // any other value must agree with it.
    let mut c = b.clone();
    assert_eq!(rd32(&c, 0x508), 8);
    c[0x508..0x50c].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(CodeObject::parse(&c).unwrap().kernels()[0].kernarg_size, 8);
    c[0x508..0x50c].copy_from_slice(&16u32.to_le_bytes());
    assert!(matches!(
        err(&c),
        E::DescriptorDisagrees {
            field: "kernarg_segment_size",
            metadata: 8,
            descriptor: 16,
            ..
        }
    ));
    // Code entry moved off its 256-byte boundary: readable (the encoders'
    // verdict refuses it, see its MisalignedCodeEntry test).
    let mut c = b.clone();
    let entry = rd64(&b, 0x510);
    wr64(&mut c, 0x510, entry + 4);
    let o = CodeObject::parse(&c).unwrap();
    assert_eq!(o.kernels()[0].code_entry_offset, 0x1604);
    // A kernarg alignment that is not a power of two.
    let key = b"\xb6.kernarg_segment_align";
    let at = b.windows(key.len()).position(|w| w == key).unwrap() + key.len();
    assert_eq!(b[at], 8);
    let mut c = b.clone();
    c[at] = 6;
    assert_eq!(
        err(&c).to_string(),
        "metadata: kernel counter: .kernarg_segment_align 6 is not a power of two up to 4096"
    );
    // Code entry pointing outside the image.
    let mut c = b.clone();
    wr64(&mut c, 0x510, 0x7fff_0000);
    assert!(matches!(err(&c), E::EntryOutsideSegments { .. }));
}

#[test]
fn bundles_pick_the_requested_target() {
    let a = fixture("gfx1030", "counter");
    let b = fixture("gfx1201", "scratch_hog");
    let bytes = bundle(&[
        ("host-x86_64-unknown-linux-gnu-", b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx1030", &a),
        ("hipv4-amdgcn-amd-amdhsa--gfx1201", &b),
    ]);
    let o = CodeObject::from_bundle_or_elf(&bytes, Some("gfx1201")).unwrap();
    assert_eq!(o.kernels()[0].name, "scratch_hog");
    assert_eq!(o.bytes(), &b[..]);
    let o = CodeObject::from_bundle_or_elf(&bytes, Some("gfx1030:xnack-")).unwrap();
    assert_eq!(o.kernels()[0].name, "counter");
    let e = CodeObject::from_bundle_or_elf(&bytes, Some("gfx1100")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "offload bundle has no entry for target gfx1100; available: \
         host-x86_64-unknown-linux-gnu-, hipv4-amdgcn-amd-amdhsa--gfx1030, \
         hipv4-amdgcn-amd-amdhsa--gfx1201"
    );
    assert!(matches!(
        CodeObject::from_bundle_or_elf(&bytes, None),
        Err(E::AmbiguousBundle { .. })
    ));
    // A plain ELF with a target that is not its own.
    let e = CodeObject::from_bundle_or_elf(&a, Some("gfx1201")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "code object is built for gfx1030, not gfx1201"
    );
    assert!(CodeObject::from_bundle_or_elf(&a, Some("gfx1030")).is_ok());
    // gfx1030 objects are built for any xnack setting: both requests fit.
    assert!(CodeObject::from_bundle_or_elf(&a, Some("gfx1030:xnack+")).is_ok());
}

#[test]
fn bundles_from_clang_offload_bundler() {
    let tool = "clang-offload-bundler-19";
    if !relaunch_testsupport::require_tool(
        tool,
        "CI installs it; needed for the real-bundler check",
    ) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("relaunch-bundle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b, host, out) = (
        dir.join("a.co"),
        dir.join("b.co"),
        dir.join("host.o"),
        dir.join("bundle.hipfb"),
    );
    std::fs::write(&a, fixture("gfx1100", "axpy")).unwrap();
    std::fs::write(&b, fixture("gfx1151", "counter")).unwrap();
    std::fs::write(&host, b"").unwrap();
    let status = Command::new(tool)
        .arg("-type=o")
        .arg("-targets=host-x86_64-unknown-linux-gnu-,hipv4-amdgcn-amd-amdhsa--gfx1100,hipv4-amdgcn-amd-amdhsa--gfx1151")
        .arg(format!("-input={}", host.display()))
        .arg(format!("-input={}", a.display()))
        .arg(format!("-input={}", b.display()))
        .arg(format!("-output={}", out.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(&out).unwrap();
    let o = CodeObject::from_bundle_or_elf(&bytes, Some("gfx1151")).unwrap();
    assert_eq!(o.kernels()[0].name, "counter");
    let o = CodeObject::from_bundle_or_elf(&bytes, Some("gfx1100")).unwrap();
    assert_eq!(o.kernels()[0].name, "axpy");
    let e = CodeObject::from_bundle_or_elf(&bytes, Some("gfx1030")).unwrap_err();
    assert!(e.to_string().contains("gfx1151"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Static LDS declared differently by metadata and descriptor (hipBLASLt's
/// Softmax kernels: 1024 in the metadata, 0 in the descriptor): read, with
/// the larger value in both `group_segment_size` and the descriptor copy
/// the dispatch is programmed from, since the kernel may use either.
#[test]
fn static_lds_disagreement_takes_the_larger() {
    let b = counter();
    let k = CodeObject::parse(&b).unwrap().kernels()[0].clone();
    assert_eq!(
        (k.group_segment_size, k.descriptor.group_segment_fixed_size),
        (0, 0)
    );
    // Descriptor larger (1024 at 0x500), metadata 0.
    let mut c = b.clone();
    assert_eq!(rd32(&c, 0x500), 0);
    c[0x500..0x504].copy_from_slice(&1024u32.to_le_bytes());
    let k = CodeObject::parse(&c).unwrap().kernels()[0].clone();
    assert_eq!(k.group_segment_size, 1024);
    assert_eq!(k.descriptor.group_segment_fixed_size, 1024);
    // Metadata larger: its msgpack value (positive fixint 0) made 0x7f.
    let key = b"\xb9.group_segment_fixed_size";
    let at = b.windows(key.len()).position(|w| w == key).unwrap() + key.len();
    assert_eq!(b[at], 0);
    let mut c = b.clone();
    c[at] = 0x7f;
    let k = CodeObject::parse(&c).unwrap().kernels()[0].clone();
    assert_eq!(k.group_segment_size, 127);
    assert_eq!(k.descriptor.group_segment_fixed_size, 127);
    // The other fields still must agree (private segment: refused).
    c[0x504] = 16;
    assert!(matches!(
        err(&c),
        E::DescriptorDisagrees {
            field: "private_segment_fixed_size",
            ..
        }
    ));
}
