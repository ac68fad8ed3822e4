//! A lower bound for `relaunch-bench encode`'s serial shape, not an
//! encoder: the least work any encoder producing the same output does,
//! timed beside the memcpy floor the benchmark divides by.
//! `cargo run --release -p relaunch-bench --example encode-floor`
//!
//! Per dispatch it does what the benchmark's caller does (a boundary, a
//! fresh kernarg built on the stack), then one key comparison, a 16-byte
//! append to the kernarg image and a count; then it writes the finished
//! IB's dwords (one dispatch's 18 copied over and over, the kernarg pointer
//! advanced) and one 20-byte site per dispatch. Nothing is checked,
//! nothing is cut into segments: a real encoder costs at least this.

use std::hint::black_box;
use std::time::Instant;

use relaunch_bench::shapes::{Workload, KERNARG_BASE};
use relaunch_encoders::DispatchSite;

const DISPATCHES: usize = 50_000;
/// The serial shape's dwords per dispatch (`dwords_serial_fresh`).
const PER: usize = 18;
/// DISPATCH_DIRECT's length (header, three group counts, initiator).
const DISPATCH_DIRECT_DWORDS: usize = 5;
const ROUNDS: usize = 41;

struct Model {
    image: Vec<u8>,
    count: u32,
    key: u64,
    pending: Option<u8>,
}

impl Model {
    #[inline(always)]
    fn boundary(&mut self) {
        self.pending = Some(3);
    }

    #[inline(always)]
    fn dispatch(&mut self, template: u32, kernarg: &[u8; 8]) -> Option<u32> {
        let key = u64::from(self.pending.unwrap_or(0)) | u64::from(template) << 2;
        if key != self.key {
            return None;
        }
        self.pending = None;
        let chunk = (u64::from_le_bytes(*kernarg) as u128).to_le_bytes();
        self.image.extend_from_slice(&chunk);
        self.count += 1;
        Some(self.count)
    }
}

fn main() -> Result<(), String> {
    let n = DISPATCHES;
    let ib = Workload::serial()
        .encode(n as u64)
        .map_err(|e| e.to_string())?;
    let words: Vec<u32> = ib.segments.iter().flat_map(|s| s.dwords.clone()).collect();
    // One steady dispatch's words (the eleventh: its boundary, the low
    // kernarg pointer's SET_SH_REG, DISPATCH_DIRECT; all in the first
    // segment) and where the pointer dword sits: just before the dispatch.
    let (d10, d11) = (ib.sites[10].dispatch_dword, ib.sites[11].dispatch_dword);
    if (d11 - d10) as usize != PER {
        return Err(format!(
            "the serial shape takes {} dwords per dispatch, the model {PER}",
            d11 - d10
        ));
    }
    // A constant, so the copies below are fixed-size ones (the cheapest).
    let per = PER;
    let end = d11 as usize + DISPATCH_DIRECT_DWORDS;
    let period = &words[end - per..end];
    let lo_at = per - DISPATCH_DIRECT_DWORDS - 1;
    let mut dst = vec![1u32; words.len()];
    let mut out = vec![0u32; n * per];
    let mut sites: Vec<DispatchSite> = Vec::with_capacity(n);
    let mut model = Model {
        image: Vec::with_capacity(n * 16),
        count: 0,
        key: 3,
        pending: None,
    };
    let (mut copy, mut floor) = (f64::MAX, f64::MAX);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        dst.copy_from_slice(black_box(&words));
        black_box(&mut dst);
        copy = copy.min(t.elapsed().as_nanos() as f64 / n as f64);

        model.image.clear();
        model.count = 0;
        sites.clear();
        let t = Instant::now();
        let template = black_box(0u32);
        let base = black_box([7u8; 8]);
        for i in 0..n as u64 {
            model.boundary();
            let mut kernarg = base;
            kernarg.copy_from_slice(&i.to_le_bytes());
            black_box(model.dispatch(template, &kernarg));
        }
        for (c, to) in out.chunks_exact_mut(per).enumerate() {
            to.copy_from_slice(period);
            to[lo_at] = KERNARG_BASE as u32 + 16 * c as u32;
        }
        sites.extend((0..n as u32).map(|c| DispatchSite {
            segment: 0,
            dispatch_dword: (c as usize * per + per - DISPATCH_DIRECT_DWORDS) as u32,
            kernarg_offset: 16 * c,
            kernarg_len: 8,
            kernel: 0,
        }));
        black_box((&model.image, &mut out, &sites));
        floor = floor.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    println!("memcpy_ns_per_dispatch {copy:.3}");
    println!("floor_model_ns_per_dispatch {floor:.3}");
    println!("floor_model_vs_memcpy {:.3}", floor / copy);
    Ok(())
}
