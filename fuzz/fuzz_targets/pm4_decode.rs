//! The PM4 decoder. Properties: no panic; wherever the strict decoder
//! accepts a packet the lenient one decodes the same packet at the same
//! dword; an IB the strict decoder accepts whole dumps to the same text
//! both ways (the dump is what a user reads when the simulator refuses).
#![no_main]

use libfuzzer_sys::fuzz_target;
use relaunch_device::Family;
use relaunch_encoders::decode::{decode_lenient, dump, dump_lenient, Decoder, Entry};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let family = match pick % 3 {
        0 => Family::Gfx10,
        1 => Family::Gfx11,
        _ => Family::Gfx12,
    };
    let dwords: Vec<u32> = rest
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let lenient = decode_lenient(&dwords, family);
    let mut whole = true;
    let mut strict_packets = 0;
    for (i, item) in Decoder::new(&dwords, family).enumerate() {
        match item {
            Ok((at, packet)) => {
                strict_packets += 1;
                match lenient.get(i) {
                    Some(Entry::Packet { at: a, packet: p }) if *a == at && *p == packet => {}
                    other => panic!(
                        "strict packet {i} at dword {at} is {packet:?}, lenient has {other:?}"
                    ),
                }
            }
            Err(_) => whole = false,
        }
    }
    if whole {
        assert_eq!(
            lenient.len(),
            strict_packets,
            "lenient decoded more than the strict decoder"
        );
        let strict_text = dump(&dwords, family).expect("strict decode accepted it");
        assert_eq!(strict_text, dump_lenient(&dwords, family));
    }
});
