//! `decode_step_dwords_ratio`: IB dwords of the reference decode step as
//! relaunch encodes it (minimal boundaries) over the dwords of the same IBs
//! when every dependency edge gets the generic 10-dword RMW boundary.
//!
//! The baseline is computed from the real encoding: relaunch's dwords minus
//! the dwords its boundaries took, plus 10 per dependency edge. Kernels are
//! synthetic counter-shaped descriptors, one per op kind at distinct code
//! addresses, so kernel switches cost what they would on hardware.

use std::collections::HashMap;

use relaunch_device::codeobj::descriptor::{properties, rsrc2};
use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;
use relaunch_encoders::{EncodeOptions, IbBuilder};
use relaunch_lanes::reference::{decode_step, DecodeShape};
use relaunch_lanes::{EncoderSink, GraphOptions, KernelRef, Mode, ResolvedKernel};

/// Dwords of the generic RMW boundary (CS_PARTIAL_FLUSH + ACQUIRE_MEM).
const GENERIC_BOUNDARY_DWORDS: usize = 10;

/// A distinct synthetic kernel per name, shaped like the counter kernel.
fn synthetic_kernels() -> impl FnMut(&KernelRef) -> Result<ResolvedKernel, String> {
    let mut seen: HashMap<String, ResolvedKernel> = HashMap::new();
    move |kernel| {
        let name = match kernel {
            KernelRef::Named(name) => name.clone(),
            KernelRef::Module { symbol, .. } => symbol.clone(),
        };
        let next = seen.len() as u64;
        Ok(*seen.entry(name).or_insert_with(|| ResolvedKernel {
            descriptor: KernelDescriptor {
                group_segment_fixed_size: 0,
                private_segment_fixed_size: 0,
                kernarg_size: 8,
                kernel_code_entry_byte_offset: 0x100,
                compute_pgm_rsrc3: 0,
                compute_pgm_rsrc1: 0x6000_0000 | (next as u32 & 0xF),
                compute_pgm_rsrc2: 0x80 | (2 << rsrc2::USER_SGPR_SHIFT),
                kernel_code_properties: properties::KERNARG_SEGMENT_PTR
                    | properties::WAVEFRONT_SIZE32,
                kernarg_preload: 0,
            },
            kd_address: 0x7F00_0000_0000 + next * 0x1000,
            kernarg_align: 8,
        }))
    }
}

/// (relaunch dwords, baseline dwords) for the default decode step.
pub fn decode_step_dwords() -> Result<(usize, usize), String> {
    let options = GraphOptions {
        mode: Mode::Latency,
        lanes: 2,
        max_in_flight: 1,
    };
    let decode = decode_step(&DecodeShape::default(), options).map_err(|e| e.to_string())?;
    let plan = decode.graph.instantiate().map_err(|e| e.to_string())?;
    let (mut ours, mut baseline) = (0, 0);
    for (lane, count) in plan.boundary_counts().iter().enumerate() {
        let builder = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
        let mut sink = EncoderSink::new(builder, synthetic_kernels());
        plan.lower_lane(lane, &mut sink)
            .map_err(|e| e.to_string())?;
        let boundary_dwords = sink.boundary_dwords();
        let ib = sink
            .into_builder()
            .finish(0x7F10_0000_0000)
            .map_err(|e| e.to_string())?;
        let dwords = ib.total_dwords();
        ours += dwords;
        baseline += dwords - boundary_dwords + GENERIC_BOUNDARY_DWORDS * count.dependencies;
    }
    Ok((ours, baseline))
}
