//! Several NT_AMDGPU_METADATA notes (Tensile's linked libraries): the
//! kernels are the union, repeats that agree are dropped, disagreements
//! are refused by name; a note without amdhsa.target takes the ELF
//! header's; the note count limit grows with the file.

use relaunch_device::codeobj::elf::{note_limit, Elf};
use relaunch_device::codeobj::{CodeObject, CodeObjectError as E};
use relaunch_testsupport::fixture;
use rmpv::Value;

fn rd64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The fixture's metadata as a MessagePack map.
fn metadata(b: &[u8]) -> Vec<(Value, Value)> {
    let elf = Elf::parse(b).unwrap();
    let notes = elf.notes().unwrap();
    let md = notes
        .iter()
        .find(|n| n.owner == b"AMDGPU" && n.kind == 32)
        .unwrap();
    let v = rmpv::decode::read_value(&mut &md.desc[..]).unwrap();
    v.as_map().unwrap().clone()
}

fn set(map: &mut Vec<(Value, Value)>, key: &str, v: Option<Value>) {
    map.retain(|(k, _)| k.as_str() != Some(key));
    if let Some(v) = v {
        map.push((Value::from(key), v));
    }
}

/// One note of owner `owner`, type `kind` and description `desc`.
fn note(owner: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
    let mut n = Vec::new();
    n.extend_from_slice(&(owner.len() as u32 + 1).to_le_bytes());
    n.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    n.extend_from_slice(&kind.to_le_bytes());
    n.extend_from_slice(owner);
    n.push(0);
    while n.len() % 4 != 0 {
        n.push(0);
    }
    n.extend_from_slice(desc);
    while n.len() % 4 != 0 {
        n.push(0);
    }
    n
}

fn metadata_note(map: &[(Value, Value)]) -> Vec<u8> {
    let mut desc = Vec::new();
    rmpv::encode::write_value(&mut desc, &Value::Map(map.to_vec())).unwrap();
    note(b"AMDGPU", 32, &desc)
}

/// `base` with its PT_NOTE segment replaced by `notes`, appended to the
/// file (padded to `pad` more bytes at the end).
fn with_notes(base: &[u8], notes: &[Vec<u8>], pad: usize) -> Vec<u8> {
    let mut b = base.to_vec();
    while b.len() % 4 != 0 {
        b.push(0);
    }
    let at = b.len() as u64;
    let area: Vec<u8> = notes.concat();
    b.extend_from_slice(&area);
    b.resize(b.len() + pad, 0);
    let (phoff, phnum) = (rd64(&b, 32) as usize, u16::from_le_bytes([b[56], b[57]]));
    let ph = (0..phnum as usize)
        .map(|i| phoff + 56 * i)
        .find(|&p| u32::from_le_bytes(b[p..p + 4].try_into().unwrap()) == 4)
        .expect("the fixture has a PT_NOTE segment");
    b[ph + 8..ph + 16].copy_from_slice(&at.to_le_bytes());
    b[ph + 32..ph + 40].copy_from_slice(&(area.len() as u64).to_le_bytes());
    b
}

fn counter() -> Vec<u8> {
    fixture("gfx1201", "counter")
}

#[test]
fn kernels_listed_in_any_note_are_read_and_repeats_dropped() {
    let b = counter();
    let full = metadata(&b);
    let mut empty = full.clone();
    set(&mut empty, "amdhsa.kernels", Some(Value::Array(Vec::new())));
    let c = with_notes(
        &b,
        &[
            metadata_note(&empty),
            note(b"Other", 7, b"ignored"),
            metadata_note(&full),
            metadata_note(&full),
        ],
        0,
    );
    let obj = CodeObject::parse(&c).unwrap();
    assert_eq!(obj.kernels().len(), 1);
    assert_eq!(obj.kernels()[0].name, "counter");
    assert_eq!(obj.target().to_string(), "gfx1201");
}

#[test]
fn a_note_without_a_target_takes_the_elf_headers() {
    let b = counter();
    let mut md = metadata(&b);
    set(&mut md, "amdhsa.target", None);
    let obj = CodeObject::parse(&with_notes(&b, &[metadata_note(&md)], 0)).unwrap();
    assert_eq!(obj.target().to_string(), "gfx1201");
    assert_eq!(obj.kernels().len(), 1);
    // With a machine value no row knows, nothing names the target.
    let mut c = with_notes(&b, &[metadata_note(&md)], 0);
    c[48] = 0xff;
    assert_eq!(
        CodeObject::parse(&c).unwrap_err(),
        E::MissingTarget { e_flags: 0xff }
    );
}

#[test]
fn disagreeing_notes_are_refused_naming_what_differs() {
    let b = counter();
    let full = metadata(&b);
    // Another target, another metadata version: each note names it.
    for (key, value) in [
        ("amdhsa.target", Value::from("amdgcn-amd-amdhsa--gfx1200")),
        (
            "amdhsa.version",
            Value::Array(vec![Value::from(1), Value::from(0)]),
        ),
    ] {
        let mut other = full.clone();
        set(&mut other, key, Some(value));
        let e = CodeObject::parse(&with_notes(
            &b,
            &[metadata_note(&full), metadata_note(&other)],
            0,
        ))
        .unwrap_err();
        assert!(
            matches!(e, E::MetadataConflict { what, .. } if what == key),
            "{key}: {e}"
        );
    }
    // The same kernel with another kernarg size.
    let mut other = full.clone();
    let kernels = other
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some("amdhsa.kernels"))
        .unwrap();
    let Value::Array(list) = &mut kernels.1 else {
        panic!("kernels are an array")
    };
    let Value::Map(k) = &mut list[0] else {
        panic!("a kernel is a map")
    };
    set(k, ".kernarg_segment_size", Some(Value::from(4096)));
    let e = CodeObject::parse(&with_notes(
        &b,
        &[metadata_note(&full), metadata_note(&other)],
        0,
    ))
    .unwrap_err();
    assert_eq!(
        e,
        E::ConflictingKernel {
            kernel: "counter".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "kernel counter is described differently by two metadata notes"
    );
}

#[test]
fn the_note_limit_grows_with_the_file() {
    let b = counter();
    let full = metadata(&b);
    let mut notes = vec![metadata_note(&full)];
    notes.extend((0..1100).map(|_| note(b"X", 1, b"")));
    // A small file may not hold 1101 notes ...
    let small = with_notes(&b, &notes, 0);
    assert!(note_limit(small.len()) < notes.len());
    let e = CodeObject::parse(&small).unwrap_err();
    assert!(matches!(e, E::TooMany { what: "notes", .. }), "{e}");
    // ... a file a few hundred KB larger may.
    let large = with_notes(&b, &notes, 512 << 10);
    assert!(note_limit(large.len()) >= notes.len());
    assert_eq!(CodeObject::parse(&large).unwrap().kernels().len(), 1);
}
