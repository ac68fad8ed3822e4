//! Lowering a whole plan: every lane into its own encoder, in parallel
//! (rayon) when there are several, results in lane order. The facade
//! drives it with its resolver (`src/submission.rs`), then hands the
//! programs to the scheduler to install: facade -> lanes -> encoders, then
//! sched installs.

use rayon::prelude::*;
use relaunch_encoders::{EncodeError, IbBuilder};

use crate::error::LowerError;
use crate::lower::{EncoderSink, KernelResolver, SinkError};
use crate::plan::Plan;

/// A lane that failed to encode, with the encoder's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("lane {lane} failed to encode: {error}")]
pub struct LaneFailure<E: std::fmt::Display> {
    pub lane: usize,
    pub error: E,
}

/// Runs `encode(lane)` for every lane, in parallel when there are several,
/// returning results in lane order or the lowest failing lane's error.
pub fn encode_lanes<T, E, F>(lanes: usize, encode: F) -> Result<Vec<T>, LaneFailure<E>>
where
    T: Send,
    E: Send + std::fmt::Display,
    F: Fn(usize) -> Result<T, E> + Sync,
{
    let run = |lane| encode(lane).map_err(|error| LaneFailure { lane, error });
    if lanes <= 1 {
        return (0..lanes).map(run).collect();
    }
    // rayon's collect into Result keeps the order and stops on an error;
    // which error wins is unspecified, so take the lowest lane's.
    let results: Vec<Result<T, LaneFailure<E>>> = (0..lanes).into_par_iter().map(run).collect();
    let mut out = Vec::with_capacity(lanes);
    for r in results {
        out.push(r?);
    }
    Ok(out)
}

/// Why one lane could not be lowered: its builder could not be made (a
/// stream-ordered builder refusing its words), or lowering the lane into
/// it failed (the sink's error, e.g. a kernel that did not resolve).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LowerLaneError<E: std::fmt::Display> {
    #[error("{0}")]
    Builder(EncodeError),
    #[error("{0}")]
    Lower(LowerError<SinkError<E>>),
}

/// The one lowering of a plan into PM4 IBs: every lane into the
/// `IbBuilder` that `builder(lane)` makes (labelled `lane<N>`), in
/// parallel when there are several, with `resolver(lane)` mapping its
/// nodes' kernels. Builders in lane order.
pub fn lower_plan<R, F, B>(
    plan: &Plan,
    builder: B,
    resolver: F,
) -> Result<Vec<IbBuilder>, LaneFailure<LowerLaneError<R::Error>>>
where
    R: KernelResolver,
    R::Error: Send,
    F: Fn(usize) -> R + Sync,
    B: Fn(usize) -> Result<IbBuilder, EncodeError> + Sync,
{
    encode_lanes(plan.lane_count(), |lane| {
        let builder = builder(lane).map_err(LowerLaneError::Builder)?;
        let mut sink = EncoderSink::new(builder, resolver(lane));
        plan.lower_lane(lane, &mut sink)
            .map_err(LowerLaneError::Lower)?;
        let mut program = sink.into_builder();
        program.set_label(format!("lane{lane}"));
        Ok(program)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_lanes_keeps_order_and_names_the_lowest_failure() {
        let out = encode_lanes(5, |l| Ok::<_, String>(l * 10)).unwrap();
        assert_eq!(out, vec![0, 10, 20, 30, 40]);
        let err = encode_lanes(6, |l| {
            if l % 2 == 1 {
                Err(format!("bad {l}"))
            } else {
                Ok(l)
            }
        })
        .unwrap_err();
        assert_eq!(err.lane, 1);
        assert_eq!(err.to_string(), "lane 1 failed to encode: bad 1");
        assert_eq!(encode_lanes(1, |_| Err::<u8, _>("x")).unwrap_err().lane, 0);
    }
}
