//! How a graph's lanes are submitted: retained PM4 IBs (one vendor AQL
//! packet per replay) or public AQL (one standard kernel-dispatch packet
//! per node, `relaunch_encoders::aql`). [`Submission`] is the caller's
//! choice at instantiate; with `Auto` (the default) a lane runs as PM4
//! unless the PM4 verdict refuses one of its kernels, and then as public
//! AQL, the reason kept per lane ([`LaneSubmission`]) and logged.

use relaunch_encoders::verdict::kernel_verdict;
use relaunch_encoders::{AqlBuilder, EncodeError, IbBuilder, StreamWords};
use relaunch_lanes::{encode_lanes, LaneFailure, LowerLaneError};
use relaunch_lanes::{AqlSink, EncoderSink, KernelRef, KernelResolver, Plan};
use relaunch_sched::hsa::HsaProgram;
use relaunch_sched::scheduler::LaneProgram;

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::refusal::Refusal;

/// What the public-AQL path lacks, for refusals: it serves HIP's hostcall
/// printf (`hidden_hostcall_buffer`) but not OpenCL's printf buffer.
const AQL_MISSING: &str =
    "relaunch serves HIP's hostcall printf (hidden_hostcall_buffer) but has no \
     service for OpenCL's printf buffer (hidden_printf_buffer: no buffer is allocated and nothing \
     reads the records a kernel writes there), no image/sampler/pipe objects, no device-side \
     enqueue, and the LDS limit is the hardware's";

/// Which path a graph's lanes take (an instantiate option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Submission {
    /// PM4 where the PM4 path accepts every kernel of the lane, public
    /// AQL for a lane with a kernel it refuses (the reason is kept).
    #[default]
    Auto,
    /// Every lane as retained PM4; a kernel the PM4 path refuses fails
    /// instantiate, naming it and why.
    Pm4,
    /// Every lane as public-AQL kernel-dispatch packets.
    Aql,
    /// Every lane on a HIP stream (HIP multistream fallback): the graph's
    /// modules must be loaded through [`crate::HipDevice::load_module`],
    /// which `Auto` then picks by itself.
    Hip,
}

impl Submission {
    /// `auto`, `pm4` or `aql` (the C ABI's 0, 1, 2 and Python's strings).
    pub fn parse(name: &str) -> Option<Submission> {
        match name {
            "auto" => Some(Submission::Auto),
            "pm4" => Some(Submission::Pm4),
            "aql" => Some(Submission::Aql),
            "hip" => Some(Submission::Hip),
            _ => None,
        }
    }
}

/// The path one lane takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LaneKind {
    Pm4,
    Aql,
    /// A HIP stream (the graph's modules were loaded through HIP).
    Hip,
}

impl std::fmt::Display for LaneKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LaneKind::Pm4 => "pm4",
            LaneKind::Aql => "aql",
            LaneKind::Hip => "hip",
        })
    }
}

/// How one lane is submitted and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneSubmission {
    pub kind: LaneKind,
    /// Why a lane runs as public AQL: the kernel the PM4 path refuses and
    /// its reasons, or that the caller asked for AQL. `None` for PM4.
    pub reason: Option<String>,
}

/// Per lane of `plan`: its path under `submission`, with the reason for
/// AQL lanes. `kernel` gives a module kernel's metadata (`None`: not a
/// module kernel). Refused: a kernel neither path can run, a PM4-refused
/// kernel under `Submission::Pm4`, a transfer in a lane that must be AQL.
pub(crate) fn choose<'a>(
    plan: &Plan,
    submission: Submission,
    kernel: impl Fn(&KernelRef) -> Option<&'a relaunch_device::codeobj::KernelInfo>,
) -> Result<Vec<LaneSubmission>> {
    if submission == Submission::Hip {
        return Err(Refusal::HipSubmissionOfRocrModules.into());
    }
    let mut out = Vec::with_capacity(plan.lane_count());
    for (lane, nodes) in plan.lanes().enumerate() {
        let mut refused: Option<String> = None;
        let mut transfer = None;
        for node in &nodes {
            if let KernelRef::Transfer(_) = node.kernel {
                transfer.get_or_insert(node.node.raw());
            }
            let Some(info) = kernel(node.kernel) else {
                continue;
            };
            let verdict = kernel_verdict(info);
            if verdict.accepted() {
                continue;
            }
            // What the public-AQL path cannot supply either.
            let both = verdict.aql_refusals();
            if !both.is_empty() {
                let list: Vec<String> = both.iter().map(|r| r.to_string()).collect();
                return Err(Error::kernel_refused(
                    &info.name,
                    relaunch_encoders::error::join(&verdict.refusals),
                    format!(
                        "kernel {} (node {}) cannot run on either path: the PM4 path {verdict}, \
                         and the public-AQL path cannot honour {} either ({})",
                        info.name,
                        node.node.raw(),
                        list.join(", "),
                        AQL_MISSING
                    ),
                ));
            }
            if submission == Submission::Pm4 {
                return Err(Error::kernel_refused(
                    &info.name,
                    relaunch_encoders::error::join(&verdict.refusals),
                    format!(
                        "kernel {} (node {}) cannot run on the direct PM4 path: {verdict}; \
                         instantiate with Submission::Auto or Submission::Aql to run it as a \
                         public-AQL dispatch",
                        info.name,
                        node.node.raw()
                    ),
                ));
            }
            refused.get_or_insert_with(|| {
                format!(
                    "the PM4 path refuses kernel {} (node {}): {verdict}",
                    info.name,
                    node.node.raw()
                )
            });
        }
        let reason = match (submission, refused) {
            (Submission::Aql, _) => Some("public AQL requested (Submission::Aql)".to_string()),
            (_, refused) => refused,
        };
        if let (Some(reason), Some(node)) = (&reason, transfer) {
            return Err(Refusal::TransferInAqlLane {
                lane,
                reason: reason.clone(),
                node,
            }
            .into());
        }
        let kind = if reason.is_some() {
            LaneKind::Aql
        } else {
            LaneKind::Pm4
        };
        if let (LaneKind::Aql, Some(why)) = (kind, &reason) {
            tracing::info!(lane, reason = %why, "lane runs as public AQL");
        }
        out.push(LaneSubmission { kind, reason });
    }
    Ok(out)
}

/// True when the graph's modules were loaded through HIP; refused when
/// HIP and ROCr modules are mixed (their lanes could not share a device).
pub(crate) fn hip_modules<'a>(modules: impl Iterator<Item = &'a crate::Module>) -> Result<bool> {
    let (mut hip, mut hsa) = (0usize, 0usize);
    for m in modules {
        if m.is_hip() {
            hip += 1;
        } else {
            hsa += 1;
        }
    }
    if hip > 0 && hsa > 0 {
        return Err(Refusal::MixedModules { hip, rocr: hsa }.into());
    }
    Ok(hip > 0)
}

/// Every lane of a graph of HIP modules on a HIP stream: refused for
/// `Pm4`/`Aql` (they need ROCr modules) and for a node HIP cannot launch.
pub(crate) fn choose_hip(plan: &Plan, submission: Submission) -> Result<Vec<LaneSubmission>> {
    if let Submission::Pm4 | Submission::Aql = submission {
        return Err(Refusal::RocrSubmissionOfHipModules { submission }.into());
    }
    for lane in plan.lanes() {
        for node in &lane {
            if let KernelRef::Module { .. } = node.kernel {
                crate::hip_streams::blocks(node.grid, node.block)
                    .map_err(|e| e.context(format!("node {}", node.node.raw())))?;
            }
        }
    }
    let reason = "modules loaded through HIP (no direct ROCr access): HIP multistream fallback";
    tracing::info!(lanes = plan.lane_count(), "{reason}");
    Ok((0..plan.lane_count())
        .map(|_| LaneSubmission {
            kind: LaneKind::Hip,
            reason: Some(reason.to_string()),
        })
        .collect())
}

/// Lowers every lane of `plan` its chosen way, in parallel when there are
/// several: PM4 lanes into an `IbBuilder` (stream-ordered through
/// `stream[lane]` when given), AQL lanes into an `AqlBuilder`, each
/// labelled `lane<N>`, with `resolver` mapping kernels.
pub(crate) fn lower<R, F>(
    plan: &Plan,
    gpu: &Gpu,
    lanes: &[LaneSubmission],
    stream: Option<&[StreamWords]>,
    resolver: F,
) -> std::result::Result<Vec<LaneProgram<HsaProgram>>, LaneFailure<LowerLaneError<R::Error>>>
where
    R: KernelResolver,
    R::Error: Send,
    F: Fn(usize) -> R + Sync,
{
    let facts = gpu.facts();
    let options = relaunch_encoders::EncodeOptions {
        trap_handler: gpu.inner.trap_handler,
        ..relaunch_encoders::EncodeOptions::default()
    };
    encode_lanes(plan.lane_count(), |lane| {
        let mut program: HsaProgram = match lanes.get(lane).map(|l| l.kind) {
            Some(LaneKind::Aql) => {
                let mut sink =
                    AqlSink::new(AqlBuilder::for_target(facts), facts.family, resolver(lane));
                plan.lower_lane(lane, &mut sink)
                    .map_err(LowerLaneError::Lower)?;
                sink.into_builder().into()
            }
            // HIP lanes never get here: install refuses graphs of HIP
            // modules before lowering (they replay with launch_hip).
            Some(LaneKind::Pm4 | LaneKind::Hip) | None => {
                let builder = match stream.and_then(|w| w.get(lane)) {
                    Some(words) => IbBuilder::new_stream_ordered(facts, options, *words),
                    None => Ok::<_, EncodeError>(IbBuilder::for_target(facts, options)),
                }
                .map_err(LowerLaneError::Builder)?;
                let mut sink = EncoderSink::new(builder, resolver(lane));
                plan.lower_lane(lane, &mut sink)
                    .map_err(LowerLaneError::Lower)?;
                sink.into_builder().into()
            }
        };
        program.set_label(format!("lane{lane}"));
        Ok(LaneProgram {
            work: program.work(),
            program,
        })
    })
}
