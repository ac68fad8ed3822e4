//! What kind of thing keeps an exec on the real HIP: the C enum
//! `rl_hipgraph_reason` of the inspection API (`exports/inspect.rs`), one
//! category per reason (the reason's text says which one exactly).

use crate::model::reason::Reason;

/// The C enum `rl_hipgraph_reason`: what kind of thing keeps an exec on
/// the real HIP (the text says which one exactly).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Replayed = 0,
    /// `rl_hipgraph_set_replay(0)`.
    Disabled = 1,
    /// Opening the relaunch device, or the device is not the application's.
    Device = 2,
    /// A memory fault lost the GPU for relaunch.
    DeviceLost = 3,
    /// The module or code object (format, globals the application reaches).
    Module = 4,
    /// A kernel node's launch (arguments, geometry, unknown function).
    Kernel = 5,
    /// A memset or memcpy node.
    Transfer = 6,
    /// The graph's structure (host nodes, events, unseen nodes, cycles).
    Graph = 7,
    /// Stream capture.
    Capture = 8,
    /// A change made through a call the interposer does not follow.
    Changed = 9,
    /// A patch or update of the exec that is not replayed.
    Update = 10,
    /// Stream ordering of replays.
    StreamOrder = 11,
    /// relaunch failed, a replay failed, or the shadow panicked.
    Internal = 12,
}

/// The category of `r` (by what it is about; wrappers by where they arise).
pub fn category(r: &Reason) -> Category {
    use Category as C;
    use Reason as R;
    match r {
        R::OpenDevice(_) | R::DeviceMismatch { .. } => C::Device,
        R::DeviceLost(_) => C::DeviceLost,
        R::Relaunch(_) | R::ReplayFailed(_) | R::Panicked(_) | R::Internal(_) => C::Internal,
        R::Image(_)
        | R::Extent(_)
        | R::ReadFile { .. }
        | R::FileTooLarge { .. }
        | R::NullWrapper
        | R::WrapperMagic { .. }
        | R::ModuleGlobal { .. }
        | R::FatBinaryGlobal { .. } => C::Module,
        R::NullParams
        | R::UnknownFunction { .. }
        | R::NoKernel { .. }
        | R::BothArgForms
        | R::NullKernelParams
        | R::NullKernelParam { .. }
        | R::Extra(_)
        | R::ShortExtraBuffer { .. }
        | R::GridOverflow { .. }
        | R::LaunchLds { .. } => C::Kernel,
        R::PageableHost { .. }
        | R::UnknownMemory { .. }
        | R::ManagedMemory { .. }
        | R::RegisteredElsewhere { .. }
        | R::MemsetElement { .. }
        | R::Overflow { .. }
        | R::EmptyMemset
        | R::EmptyCopy
        | R::ShortMemsetPitch { .. }
        | R::UnalignedFill { .. }
        | R::NoWholeDword { .. }
        | R::MisalignedElement { .. }
        | R::UnknownCopyKind { .. }
        | R::ArrayCopy
        | R::CopyPitch { .. }
        | R::TooManyPackets { .. } => C::Transfer,
        R::ForeignEdge { .. }
        | R::Cycle
        | R::NoWork
        | R::HostNode
        | R::UnseenChild
        | R::UnseenGraph
        | R::Child(_)
        | R::WaitUnrecorded { .. }
        | R::RecordedTwice { .. }
        | R::WaitBeforeRecord { .. }
        | R::CountMismatch { .. }
        | R::RealMissing { .. }
        | R::RealFailed { .. } => C::Graph,
        R::CaptureToGraph | R::CaptureStatus { .. } | R::CrossStream { .. } => C::Capture,
        R::NodeChanged { .. }
        | R::KindChanged { .. }
        | R::ExecNodeChanged { .. }
        | R::Attribute { .. }
        | R::NodeEnabled { .. }
        | R::PossiblyCaptured { .. } => C::Changed,
        R::NotExecNode { .. }
        | R::PatchChangesKernel { .. }
        | R::Rebuild(_)
        | R::Context { .. }
        | R::UpdateFromUnseen
        | R::UpdateGraph(_)
        | R::UpdateTopology { .. }
        | R::UpdateChangesTransfer { .. }
        | R::UpdateKernelToTransfer { .. }
        | R::UpdateChangesKernel { .. }
        | R::UnknownExecNode { .. }
        | R::UpdateNode { .. } => C::Update,
        R::NoStreamOp { .. } | R::StreamWords { .. } => C::StreamOrder,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_fall_in_the_category_of_what_they_are_about() {
        let cases = [
            (
                Reason::WrapperMagic {
                    magic: 1,
                    expected: 2,
                },
                Category::Module,
            ),
            (Reason::BothArgForms, Category::Kernel),
            (Reason::EmptyCopy, Category::Transfer),
            (Reason::HostNode, Category::Graph),
            (Reason::CaptureToGraph, Category::Capture),
            (Reason::NodeEnabled { enabled: false }, Category::Changed),
            (Reason::UpdateFromUnseen, Category::Update),
            (Reason::NoStreamOp { function: "f" }, Category::StreamOrder),
            (Reason::Panicked("x"), Category::Internal),
        ];
        for (reason, want) in cases {
            assert_eq!(category(&reason), want, "{reason}");
        }
        // The C enum's values.
        assert_eq!(Category::Replayed as i32, 0);
        assert_eq!(Category::Internal as i32, 12);
    }
}
