//! `decode_step_dwords_ratio`: IB dwords of the reference decode step as
//! relaunch encodes it (minimal boundaries) over the dwords of the same IBs
//! when every dependency edge gets the generic 10-dword RMW boundary.
//!
//! The baseline is computed from the real encoding: relaunch's dwords minus
//! the dwords its boundaries took, plus 10 per dependency edge. Kernels are
//! synthetic counter-shaped descriptors, one per op kind at distinct code
//! addresses, so kernel switches cost what they would on hardware.

use relaunch_bench::shapes::synthetic_kernels;
use relaunch_device::Family;
use relaunch_encoders::{EncodeOptions, IbBuilder};
use relaunch_lanes::reference::{decode_step, DecodeShape};
use relaunch_lanes::{EncoderSink, GraphOptions, Mode};

/// Dwords of the generic RMW boundary (CS_PARTIAL_FLUSH + ACQUIRE_MEM).
const GENERIC_BOUNDARY_DWORDS: usize = 10;

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
