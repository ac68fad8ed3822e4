//! `.kpack` archives: the writer and reader round-trip real code objects
//! bit-exact in both compression schemes; hostile archives (mutated bytes,
//! truncation, forged TOC values, zstd bombs) give an error, never a panic,
//! and no read allocates more than its documented bound (a counting
//! allocator measures the peak).

use proptest::prelude::*;
use proptest::test_runner::Config;
use relaunch_device::bundle::{read_kpack, BundleError, Compression, Kpack, KpackWriter};
use relaunch_testsupport::alloc::{peak_of, CountingAlloc};
use relaunch_testsupport::fixture;
use rmpv::Value;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

fn archive(compression: Compression) -> (Vec<u8>, Vec<(String, Vec<u8>)>) {
    let mut w = KpackWriter::new("test", "gfx1100", &["gfx1100"], compression);
    let mut items = Vec::new();
    for name in ["counter", "axpy", "decode"] {
        let bytes = fixture("gfx1100", name);
        let key = format!("test/{name}");
        w.add(&key, "gfx1100", bytes.clone()).unwrap();
        items.push((key, bytes));
    }
    (w.finish().unwrap(), items)
}

#[test]
fn round_trips_both_schemes_bit_exact() {
    for scheme in [Compression::None, Compression::ZstdPerKernel] {
        let (bytes, items) = archive(scheme);
        let k = Kpack::parse(&bytes).unwrap();
        assert_eq!(k.compression, scheme);
        assert_eq!(k.group_name, "test");
        assert_eq!(k.gfx_arches, vec!["gfx1100"]);
        assert_eq!(k.entries().len(), 3);
        for (key, want) in &items {
            let e = k.entry(key, "gfx1100").unwrap();
            assert_eq!(e.kind, "hsaco");
            assert_eq!(&k.extract(e).unwrap(), want, "{key} {scheme:?}");
        }
        assert_eq!(read_kpack(&bytes).unwrap().len(), 3);
    }
    // zstd actually compresses code objects.
    let (plain, _) = archive(Compression::None);
    let (packed, _) = archive(Compression::ZstdPerKernel);
    assert!(
        packed.len() * 2 < plain.len(),
        "{} vs {}",
        packed.len(),
        plain.len()
    );
}

#[test]
fn none_blobs_are_aligned_and_header_is_the_documented_one() {
    let (bytes, _) = archive(Compression::None);
    assert_eq!(&bytes[..4], b"KPAK");
    assert_eq!(u32::from_le_bytes(bytes[4..8].try_into().unwrap()), 1);
    let toc = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
    assert!(bytes[16..64].iter().all(|&b| b == 0));
    let root = rmpv::decode::read_value(&mut &bytes[toc..]).unwrap();
    let blobs = root
        .as_map()
        .unwrap()
        .iter()
        .find(|(k, _)| k.as_str() == Some("blobs"))
        .unwrap()
        .1
        .as_array()
        .unwrap()
        .clone();
    for blob in blobs {
        let off = blob.as_map().unwrap()[0].1.as_u64().unwrap();
        assert_eq!(off % 64, 0);
    }
}

/// Rewrite one TOC field (path of map keys) of an archive.
fn with_toc(bytes: &[u8], edit: impl FnOnce(&mut Vec<(Value, Value)>)) -> Vec<u8> {
    let toc = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
    let mut root = rmpv::decode::read_value(&mut &bytes[toc..]).unwrap();
    if let Value::Map(m) = &mut root {
        edit(m);
    }
    let mut out = bytes[..toc].to_vec();
    rmpv::encode::write_value(&mut out, &root).unwrap();
    out
}

fn set(m: &mut [(Value, Value)], key: &str, value: Value) {
    for (k, v) in m.iter_mut() {
        if k.as_str() == Some(key) {
            *v = value;
            return;
        }
    }
    panic!("no {key}");
}

fn first_entry(m: &mut [(Value, Value)]) -> &mut Vec<(Value, Value)> {
    let toc = m
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some("toc"))
        .unwrap();
    let Value::Map(keys) = &mut toc.1 else {
        panic!()
    };
    let Value::Map(arches) = &mut keys[0].1 else {
        panic!()
    };
    let Value::Map(info) = &mut arches[0].1 else {
        panic!()
    };
    info
}

#[test]
fn forged_toc_values_are_refused_by_name() {
    let (zstd, _) = archive(Compression::ZstdPerKernel);
    let (plain, _) = archive(Compression::None);
    let err = |b: &[u8]| read_kpack(b).unwrap_err().to_string();

    // A zstd bomb: original_size far past the frame.
    let bomb = with_toc(&zstd, |m| {
        set(first_entry(m), "original_size", Value::from(60u64 << 20))
    });
    assert!(err(&bomb).contains("more than 1024x"), "{}", err(&bomb));
    // Past the ceiling.
    let huge = with_toc(&zstd, |m| {
        set(first_entry(m), "original_size", Value::from(1u64 << 40))
    });
    assert!(err(&huge).contains("ceiling"), "{}", err(&huge));
    // Decodes to a different size than declared.
    let short = with_toc(&zstd, |m| {
        set(first_entry(m), "original_size", Value::from(100u64))
    });
    assert!(
        err(&short).contains("decodes to more than 100"),
        "{}",
        err(&short)
    );
    let long = with_toc(&zstd, |m| {
        set(first_entry(m), "original_size", Value::from(20_000u64))
    });
    assert!(
        err(&long).contains("original_size is 20000"),
        "{}",
        err(&long)
    );
    // Ordinal past the blobs.
    let ord = with_toc(&plain, |m| {
        set(first_entry(m), "ordinal", Value::from(7u64))
    });
    assert!(
        err(&ord).contains("ordinal 7 is past the 3 blobs"),
        "{}",
        err(&ord)
    );
    // Plain blob size disagreeing with original_size.
    let size = with_toc(&plain, |m| {
        set(first_entry(m), "original_size", Value::from(5u64))
    });
    assert!(err(&size).contains("holds"), "{}", err(&size));
    // Unknown scheme, wrong version, zstd blob beyond the file.
    let scheme = with_toc(&plain, |m| set(m, "compression_scheme", Value::from("lz4")));
    assert!(err(&scheme).contains("\"lz4\""), "{}", err(&scheme));
    let version = with_toc(&plain, |m| set(m, "format_version", Value::from(2u64)));
    assert!(matches!(read_kpack(&version), Err(BundleError::Version(2))));
    let beyond = with_toc(&zstd, |m| set(m, "zstd_size", Value::from(u64::MAX)));
    assert!(err(&beyond).contains("beyond"), "{}", err(&beyond));
    // Header damage.
    assert!(matches!(read_kpack(b"KPA"), Err(BundleError::NotKpack(_))));
    let mut toc_off = plain.clone();
    toc_off[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(err(&toc_off).contains("beyond"), "{}", err(&toc_off));
}

#[test]
fn a_frame_with_a_huge_window_is_bounded() {
    // A real frame of 1000 zeros compressed with a 128 MiB window declared.
    let data = vec![0u8; 1000];
    let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    enc.window_log(27).unwrap();
    enc.include_contentsize(false).unwrap();
    std::io::Write::write_all(&mut enc, &data).unwrap();
    let frame = enc.finish().unwrap();
    let mut w = KpackWriter::new("t", "gfx1100", &["gfx1100"], Compression::ZstdPerKernel);
    w.add("t/z", "gfx1100", data.clone()).unwrap();
    let bytes = w.finish().unwrap();
    // Swap the writer's frame for the big-window one.
    let k = Kpack::parse(&bytes).unwrap();
    let toc = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
    let root = rmpv::decode::read_value(&mut &bytes[toc..]).unwrap();
    let mut out = bytes[..64].to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    out.extend_from_slice(&frame);
    let new_toc = out.len() as u64;
    let root = match root {
        Value::Map(mut m) => {
            set(&mut m, "zstd_size", Value::from(8 + frame.len() as u64));
            Value::Map(m)
        }
        _ => panic!(),
    };
    rmpv::encode::write_value(&mut out, &root).unwrap();
    out[8..16].copy_from_slice(&new_toc.to_le_bytes());
    drop(k);
    let (got, peak) = peak_of(|| read_kpack(&out));
    // Either it decodes within a small window or is refused; never 128 MiB.
    match got {
        Ok(items) => assert_eq!(items[0].1, data),
        Err(e) => assert!(e.to_string().contains("zstd"), "{e}"),
    }
    assert!(peak < 4 << 20, "peak {peak}");
}

/// Bytes allowed for reading `input`: the archive copy and TOC, plus every
/// code object it may declare (bounded by the ratio), plus zstd's contexts.
fn bound(input: &[u8]) -> usize {
    16 * input.len() + (4 << 20)
}

fn mutate(base: &[u8], flips: &[(usize, u8)], cut: Option<usize>) -> Vec<u8> {
    let mut b = base.to_vec();
    for &(at, x) in flips {
        let i = at % b.len();
        b[i] ^= x.max(1);
    }
    if let Some(c) = cut {
        b.truncate(c % (b.len() + 1));
    }
    b
}

fn check(bytes: &[u8]) {
    let (result, peak) = peak_of(|| read_kpack(bytes));
    if let Ok(items) = result {
        for (entry, data) in items {
            assert_eq!(data.len() as u64, entry.original_size);
        }
    }
    assert!(
        peak <= bound(bytes) + 1024 * bytes.len(),
        "peak {peak} for {} bytes",
        bytes.len()
    );
}

proptest! {
    #![proptest_config(Config { cases: 200, ..Config::default() })]

    #[test]
    fn mutated_plain_archives_never_panic(
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        cut in prop::option::of(any::<usize>()),
    ) {
        let (base, _) = archive(Compression::None);
        check(&mutate(&base, &flips, cut));
    }

    #[test]
    fn mutated_zstd_archives_never_panic(
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        cut in prop::option::of(any::<usize>()),
    ) {
        let (base, _) = archive(Compression::ZstdPerKernel);
        check(&mutate(&base, &flips, cut));
    }

    #[test]
    fn mutated_tables_of_contents_never_panic(
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6),
    ) {
        // Flips land in the MessagePack table only.
        let (base, _) = archive(Compression::ZstdPerKernel);
        let toc = u64::from_le_bytes(base[8..16].try_into().unwrap()) as usize;
        let mut b = base.clone();
        for (at, x) in flips {
            let i = toc + at % (b.len() - toc);
            b[i] ^= x.max(1);
        }
        check(&b);
    }

    #[test]
    fn arbitrary_bytes_after_a_header_never_panic(
        tail in prop::collection::vec(any::<u8>(), 0..512),
        toc in 0u64..600,
    ) {
        let mut b = b"KPAK".to_vec();
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&toc.to_le_bytes());
        b.extend_from_slice(&tail);
        check(&b);
    }
}

/// A one-entry zstd-per-kernel archive whose only slot holds `slot`.
fn single_slot(slot: &[u8], original_size: u64) -> Vec<u8> {
    let mut out = b"KPAK".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.resize(64, 0);
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(slot.len() as u32).to_le_bytes());
    out.extend_from_slice(slot);
    let toc_offset = out.len() as u64;
    let s = |t: &str| Value::from(t);
    let toc = Value::Map(vec![
        (s("format_version"), Value::from(1u64)),
        (s("group_name"), s("t")),
        (s("gfx_arch_family"), s("gfx1100")),
        (s("gfx_arches"), Value::Array(vec![s("gfx1100")])),
        (s("compression_scheme"), s("zstd-per-kernel")),
        (s("zstd_offset"), Value::from(64u64)),
        (s("zstd_size"), Value::from(8 + slot.len() as u64)),
        (
            s("toc"),
            Value::Map(vec![(
                s("t/k"),
                Value::Map(vec![(
                    s("gfx1100"),
                    Value::Map(vec![
                        (s("type"), s("hsaco")),
                        (s("ordinal"), Value::from(0u64)),
                        (s("original_size"), Value::from(original_size)),
                    ]),
                )]),
            )]),
        ),
    ]);
    rmpv::encode::write_value(&mut out, &toc).unwrap();
    out[8..16].copy_from_slice(&toc_offset.to_le_bytes());
    out
}

#[test]
fn a_slot_must_hold_exactly_one_frame() {
    let data = fixture("gfx1100", "counter");
    let frame = zstd::bulk::compress(&data, 3).unwrap();
    let ok = single_slot(&frame, data.len() as u64);
    assert_eq!(read_kpack(&ok).unwrap()[0].1, data);
    let mut trailing = frame.clone();
    trailing.push(0);
    let err = read_kpack(&single_slot(&trailing, data.len() as u64)).unwrap_err();
    assert!(err.to_string().contains("but its slot holds"), "{err}");
    let mut two = frame.clone();
    two.extend_from_slice(&frame);
    let err = read_kpack(&single_slot(&two, data.len() as u64)).unwrap_err();
    assert!(err.to_string().contains("but its slot holds"), "{err}");
    let err = read_kpack(&single_slot(b"not zstd at all", 10)).unwrap_err();
    assert!(err.to_string().contains("not a zstd frame"), "{err}");
}
