//! The one digest of an encoded IB the byte-identity tests compare
//! (`encoders/tests/it/streams.rs`, and `bench/tests/shapes.rs`, which
//! includes this file by path): everything `finish` returns but the
//! epilogue's words, whose cache-control value is not the encoder's hot
//! path and may change on its own.

use relaunch_encoders::boundary::EPILOGUE_DWORDS;
use relaunch_encoders::EncodedIb;
use sha2::{Digest, Sha256};

/// Feeds `ib` to `h`: segments (the last one's epilogue left out: it
/// ends `after_epilogue` dwords before the segment does, 0 unless the IB
/// is stream-ordered), sites, kernel table, kernarg image.
pub fn digest_ib(h: &mut Sha256, ib: &EncodedIb, after_epilogue: usize) {
    let last = ib.segments.len() - 1;
    for (i, seg) in ib.segments.iter().enumerate() {
        let len = seg.dwords.len();
        let (body, tail) = if i == last {
            let tail = len - after_epilogue;
            (tail - EPILOGUE_DWORDS, tail)
        } else {
            (len, len)
        };
        h.update(seg.first_dispatch.to_le_bytes());
        h.update(seg.dispatch_count.to_le_bytes());
        h.update((body as u64).to_le_bytes());
        for d in seg.dwords[..body].iter().chain(&seg.dwords[tail..]) {
            h.update(d.to_le_bytes());
        }
    }
    for s in &ib.sites {
        for v in [
            s.segment,
            s.dispatch_dword,
            s.kernarg_offset,
            s.kernarg_len,
            s.kernel,
        ] {
            h.update(v.to_le_bytes());
        }
    }
    for k in &ib.kernels {
        h.update(k.symbol.as_bytes());
        h.update(k.kd_address.to_le_bytes());
    }
    h.update(&ib.kernarg_image);
    h.update([ib.kernargs_shared as u8]);
}
