//! Kernel arguments from the metadata note and what the direct PM4 path can
//! put in each one.
//!
//! Hidden arguments are filled by the runtime, not the caller. A library that
//! writes the kernarg block itself (relaunch does) knows the grid and the
//! workgroup shape at record time, so it can fill the dispatch-geometry
//! values honestly. Anything that points at runtime-owned objects (the AQL
//! queue, printf/hostcall buffers, the device heap, device-side enqueue,
//! multi-grid sync, aperture bases) has no honest value without the ROCr
//! machinery behind it, so a kernel that lists one is refused (AMDGPUUsage:
//! the compiler omits a hidden argument the code provably never uses, so a
//! listed one must be assumed live).

use std::fmt;

/// The `.value_kind` of one argument.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ValueKind {
    ByValue,
    GlobalBuffer,
    DynamicSharedPointer,
    Sampler,
    Image,
    Pipe,
    Queue,
    HiddenGlobalOffsetX,
    HiddenGlobalOffsetY,
    HiddenGlobalOffsetZ,
    HiddenNone,
    HiddenPrintfBuffer,
    HiddenHostcallBuffer,
    HiddenDefaultQueue,
    HiddenCompletionAction,
    HiddenMultigridSyncArg,
    HiddenHeapV1,
    HiddenBlockCountX,
    HiddenBlockCountY,
    HiddenBlockCountZ,
    HiddenGroupSizeX,
    HiddenGroupSizeY,
    HiddenGroupSizeZ,
    HiddenRemainderX,
    HiddenRemainderY,
    HiddenRemainderZ,
    HiddenGridDims,
    HiddenPrivateBase,
    HiddenSharedBase,
    HiddenQueuePtr,
    HiddenDynamicLdsSize,
    /// A kind this reader does not know (kept verbatim; always refused).
    Other(String),
}

const NAMES: &[(&str, ValueKind)] = &[
    ("by_value", ValueKind::ByValue),
    ("global_buffer", ValueKind::GlobalBuffer),
    ("dynamic_shared_pointer", ValueKind::DynamicSharedPointer),
    ("sampler", ValueKind::Sampler),
    ("image", ValueKind::Image),
    ("pipe", ValueKind::Pipe),
    ("queue", ValueKind::Queue),
    ("hidden_global_offset_x", ValueKind::HiddenGlobalOffsetX),
    ("hidden_global_offset_y", ValueKind::HiddenGlobalOffsetY),
    ("hidden_global_offset_z", ValueKind::HiddenGlobalOffsetZ),
    ("hidden_none", ValueKind::HiddenNone),
    ("hidden_printf_buffer", ValueKind::HiddenPrintfBuffer),
    ("hidden_hostcall_buffer", ValueKind::HiddenHostcallBuffer),
    ("hidden_default_queue", ValueKind::HiddenDefaultQueue),
    (
        "hidden_completion_action",
        ValueKind::HiddenCompletionAction,
    ),
    (
        "hidden_multigrid_sync_arg",
        ValueKind::HiddenMultigridSyncArg,
    ),
    ("hidden_heap_v1", ValueKind::HiddenHeapV1),
    ("hidden_block_count_x", ValueKind::HiddenBlockCountX),
    ("hidden_block_count_y", ValueKind::HiddenBlockCountY),
    ("hidden_block_count_z", ValueKind::HiddenBlockCountZ),
    ("hidden_group_size_x", ValueKind::HiddenGroupSizeX),
    ("hidden_group_size_y", ValueKind::HiddenGroupSizeY),
    ("hidden_group_size_z", ValueKind::HiddenGroupSizeZ),
    ("hidden_remainder_x", ValueKind::HiddenRemainderX),
    ("hidden_remainder_y", ValueKind::HiddenRemainderY),
    ("hidden_remainder_z", ValueKind::HiddenRemainderZ),
    ("hidden_grid_dims", ValueKind::HiddenGridDims),
    ("hidden_private_base", ValueKind::HiddenPrivateBase),
    ("hidden_shared_base", ValueKind::HiddenSharedBase),
    ("hidden_queue_ptr", ValueKind::HiddenQueuePtr),
    ("hidden_dynamic_lds_size", ValueKind::HiddenDynamicLdsSize),
];

/// Which grid axis a geometry value refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    X,
    Y,
    Z,
}

/// Who supplies an argument's bytes on the direct PM4 path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgFill {
    /// An explicit argument: the caller's bytes.
    Caller,
    /// A `__local` pointer argument (`dynamic_shared_pointer`): the
    /// group-segment offset of this argument's dynamic LDS block. Blocks
    /// follow the static group segment in argument order, each aligned to
    /// its `pointee_align`. The caller gives the sizes; the library computes
    /// the offsets.
    DynamicLdsOffset,
    /// Padding the library leaves zero (`hidden_none`).
    Ignored,
    /// Global offset: always zero (relaunch dispatches start at 0).
    Zero,
    /// Workgroups along an axis (grid / block, rounded up).
    BlockCount(Axis),
    /// Work-items per workgroup along an axis.
    GroupSize(Axis),
    /// Work-items in the last, partial workgroup along an axis (0 if whole).
    Remainder(Axis),
    /// Number of grid dimensions (1-3).
    GridDims,
    /// Bytes of dynamic group memory given at dispatch.
    DynamicLdsSize,
    /// No honest value: the kernel is refused.
    Unfillable,
}

impl ValueKind {
    /// Parse a `.value_kind` string; unknown kinds are kept as `Other`.
    pub fn parse(text: &str) -> ValueKind {
        NAMES
            .iter()
            .find(|(name, _)| *name == text)
            .map(|(_, kind)| kind.clone())
            .unwrap_or_else(|| ValueKind::Other(text.to_string()))
    }

    /// The metadata spelling.
    pub fn as_str(&self) -> &str {
        if let ValueKind::Other(text) = self {
            return text;
        }
        NAMES
            .iter()
            .find(|(_, kind)| kind == self)
            .map_or("?", |(name, _)| name)
    }

    /// True for kinds the runtime, not the caller, supplies.
    pub fn is_hidden(&self) -> bool {
        self.as_str().starts_with("hidden_")
    }

    /// How the direct PM4 path fills this argument.
    pub fn fill(&self) -> ArgFill {
        use ValueKind as K;
        match self {
            K::ByValue | K::GlobalBuffer => ArgFill::Caller,
            K::DynamicSharedPointer => ArgFill::DynamicLdsOffset,
            K::HiddenNone => ArgFill::Ignored,
            K::HiddenGlobalOffsetX | K::HiddenGlobalOffsetY | K::HiddenGlobalOffsetZ => {
                ArgFill::Zero
            }
            K::HiddenBlockCountX => ArgFill::BlockCount(Axis::X),
            K::HiddenBlockCountY => ArgFill::BlockCount(Axis::Y),
            K::HiddenBlockCountZ => ArgFill::BlockCount(Axis::Z),
            K::HiddenGroupSizeX => ArgFill::GroupSize(Axis::X),
            K::HiddenGroupSizeY => ArgFill::GroupSize(Axis::Y),
            K::HiddenGroupSizeZ => ArgFill::GroupSize(Axis::Z),
            K::HiddenRemainderX => ArgFill::Remainder(Axis::X),
            K::HiddenRemainderY => ArgFill::Remainder(Axis::Y),
            K::HiddenRemainderZ => ArgFill::Remainder(Axis::Z),
            K::HiddenGridDims => ArgFill::GridDims,
            K::HiddenDynamicLdsSize => ArgFill::DynamicLdsSize,
            // Runtime-owned objects (queue, printf/hostcall buffers, heap,
            // device enqueue, multi-grid sync, aperture bases), opaque
            // OpenCL objects and unknown kinds.
            K::Sampler
            | K::Image
            | K::Pipe
            | K::Queue
            | K::HiddenPrintfBuffer
            | K::HiddenHostcallBuffer
            | K::HiddenDefaultQueue
            | K::HiddenCompletionAction
            | K::HiddenMultigridSyncArg
            | K::HiddenHeapV1
            | K::HiddenPrivateBase
            | K::HiddenSharedBase
            | K::HiddenQueuePtr
            | K::Other(_) => ArgFill::Unfillable,
        }
    }
}

/// What the public-AQL path gives a runtime-owned hidden argument that
/// the direct PM4 path cannot fill ([`ValueKind::aql_fill`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AqlFill {
    /// The address of the GPU's hostcall buffer (HIP's device printf and
    /// other device-to-host services), which relaunch's listener serves.
    HostcallBuffer,
    /// Null, as HIP passes it for a launch with no device-side enqueue
    /// and no cooperative multi-device group.
    Null,
}

impl ValueKind {
    /// What the public-AQL path fills this argument with, when it is one
    /// the PM4 path refuses ([`ArgFill::Unfillable`]) but an AQL dispatch
    /// by HIP's rules can honour; `None` for everything else.
    pub fn aql_fill(&self) -> Option<AqlFill> {
        match self {
            ValueKind::HiddenHostcallBuffer => Some(AqlFill::HostcallBuffer),
            ValueKind::HiddenDefaultQueue
            | ValueKind::HiddenCompletionAction
            | ValueKind::HiddenMultigridSyncArg => Some(AqlFill::Null),
            _ => None,
        }
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of `amdhsa.kernels[].args`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelArg {
    /// Byte offset in the kernarg segment.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    pub value_kind: ValueKind,
    /// `.name`, when the compiler kept it.
    pub name: Option<String>,
    /// `.type_name`, when present.
    pub type_name: Option<String>,
    /// `.address_space` of pointer arguments (`global`, `local`, ...).
    pub address_space: Option<String>,
    /// `.pointee_align` of `dynamic_shared_pointer` arguments.
    pub pointee_align: Option<u32>,
}

impl KernelArg {
    /// How the direct PM4 path fills this argument.
    pub fn fill(&self) -> ArgFill {
        self.value_kind.fill()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (name, kind) in NAMES {
            assert_eq!(ValueKind::parse(name), *kind);
            assert_eq!(kind.as_str(), *name);
        }
        let odd = ValueKind::parse("hidden_tool_correlation_id");
        assert_eq!(odd.as_str(), "hidden_tool_correlation_id");
        assert!(odd.is_hidden());
        assert_eq!(odd.fill(), ArgFill::Unfillable);
    }

    #[test]
    fn geometry_is_fillable_runtime_objects_are_not() {
        assert_eq!(
            ValueKind::HiddenBlockCountY.fill(),
            ArgFill::BlockCount(Axis::Y)
        );
        assert_eq!(ValueKind::HiddenGlobalOffsetZ.fill(), ArgFill::Zero);
        assert_eq!(ValueKind::HiddenNone.fill(), ArgFill::Ignored);
        for k in [
            ValueKind::HiddenQueuePtr,
            ValueKind::HiddenHostcallBuffer,
            ValueKind::HiddenPrintfBuffer,
            ValueKind::HiddenMultigridSyncArg,
            ValueKind::HiddenHeapV1,
            ValueKind::HiddenDefaultQueue,
            ValueKind::HiddenCompletionAction,
            ValueKind::HiddenPrivateBase,
            ValueKind::HiddenSharedBase,
        ] {
            assert_eq!(k.fill(), ArgFill::Unfillable, "{k}");
        }
        assert!(!ValueKind::GlobalBuffer.is_hidden());
    }
}
