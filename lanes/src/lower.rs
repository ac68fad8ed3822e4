//! Lowering a lane: `EncoderSink` implements `LaneSink` over the encoders'
//! `IbBuilder` (PM4, one IB per lane), `AqlSink` over their `AqlBuilder`
//! (public AQL, one kernel-dispatch packet per node). What a node's kernel is (its
//! descriptor and code address) is the caller's knowledge, supplied through
//! `KernelResolver`; the graph only names kernels.

use relaunch_device::codeobj::{KernelDescriptor, UnreadInputs};
use relaunch_device::Family;
use relaunch_encoders::{AqlBuilder, BoundaryKind, EncodeError, IbBuilder, KernelCode, Launch};

use crate::boundary::BoundaryReason;
use crate::graph::KernelRef;
use crate::plan::{LaneSink, PlannedNode};

/// A node's kernel as the encoder needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedKernel {
    pub descriptor: KernelDescriptor,
    /// GPU virtual address of the kernel's `.kd` symbol.
    pub kd_address: u64,
    /// Kernarg alignment from the kernel's metadata.
    pub kernarg_align: u32,
    /// Inputs its code provably never reads (`KernelInfo::unread`).
    pub unread: UnreadInputs,
}

/// Maps a node's kernel reference to a loaded kernel.
pub trait KernelResolver {
    /// Why a kernel could not be resolved (the caller's own error type).
    type Error: std::fmt::Display;
    fn resolve(&mut self, kernel: &KernelRef) -> Result<ResolvedKernel, Self::Error>;
}

impl<E, F> KernelResolver for F
where
    E: std::fmt::Display,
    F: FnMut(&KernelRef) -> Result<ResolvedKernel, E>,
{
    type Error = E;
    fn resolve(&mut self, kernel: &KernelRef) -> Result<ResolvedKernel, E> {
        self(kernel)
    }
}

/// Why `EncoderSink` could not lower a node: its kernel did not resolve
/// (the resolver's error, shown as it is), or the encoder refused it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SinkError<E: std::fmt::Display> {
    #[error("{0}")]
    Resolve(E),
    #[error("node {node}: {source}")]
    Encode { node: u32, source: EncodeError },
}

/// Encodes one lane: boundaries and dispatches go straight to the builder.
/// Counts the dwords boundaries took (for the dword-ratio figures).
pub struct EncoderSink<R> {
    builder: IbBuilder,
    family: Family,
    resolver: R,
    boundary_dwords: usize,
}

impl<R: KernelResolver> EncoderSink<R> {
    pub fn new(builder: IbBuilder, resolver: R) -> Self {
        EncoderSink {
            family: builder.family(),
            builder,
            resolver,
            boundary_dwords: 0,
        }
    }

    /// Dwords emitted by boundaries so far.
    pub fn boundary_dwords(&self) -> usize {
        self.boundary_dwords
    }

    /// The builder, ready for `finish`.
    pub fn into_builder(self) -> IbBuilder {
        self.builder
    }
}

/// What both sinks hand their builder for a kernel node: its code (the
/// resolved descriptor), its launch and its kernarg alignment.
fn resolve_launch<'a, R: KernelResolver>(
    resolver: &mut R,
    family: Family,
    node: &PlannedNode<'_>,
    symbol: &'a str,
) -> Result<(KernelCode<'a>, Launch, u32), SinkError<R::Error>> {
    let kernel = resolver.resolve(node.kernel).map_err(SinkError::Resolve)?;
    let code = KernelCode {
        symbol,
        family,
        descriptor: kernel.descriptor,
        kd_address: kernel.kd_address,
        unread: kernel.unread,
    };
    let launch = Launch {
        grid: node.grid,
        block: node.block,
        dynamic_group_bytes: node.dynamic_group_bytes,
    };
    Ok((code, launch, kernel.kernarg_align))
}

impl<R: KernelResolver> LaneSink for EncoderSink<R> {
    type Error = SinkError<R::Error>;

    fn dispatch(&mut self, node: &PlannedNode<'_>) -> Result<(), Self::Error> {
        let symbol = match node.kernel {
            KernelRef::Named(name) => name,
            KernelRef::Module { symbol, .. } => symbol,
            KernelRef::Transfer(ops) => {
                // A copy/fill: the CP's DMA_DATA, no kernel to resolve.
                return self.builder.transfer(ops).map(|_| ()).map_err(|source| {
                    SinkError::Encode {
                        node: node.node.raw(),
                        source,
                    }
                });
            }
        };
        let (code, launch, align) = resolve_launch(&mut self.resolver, self.family, node, symbol)?;
        self.builder
            .dispatch(&code, &launch, node.kernarg, align)
            .map(|_| ())
            .map_err(|source| SinkError::Encode {
                node: node.node.raw(),
                source,
            })
    }

    fn boundary(&mut self, kind: BoundaryKind, _: &BoundaryReason) -> Result<(), Self::Error> {
        // The builder emits a boundary lazily at the next dispatch and drops
        // one before the first dispatch; a plan never puts two boundaries in
        // a row, so each boundary after a dispatch costs exactly its words.
        if self.builder.dispatch_count() > 0 {
            self.boundary_dwords += kind.dwords();
        }
        self.builder.boundary(kind);
        Ok(())
    }
}

/// Lowers one lane to public-AQL kernel-dispatch packets: the same
/// boundaries become BARRIER bits and fence scopes (see
/// `relaunch_encoders::aql`). Transfer nodes are refused there.
pub struct AqlSink<R> {
    builder: AqlBuilder,
    family: Family,
    resolver: R,
}

impl<R: KernelResolver> AqlSink<R> {
    /// `family` is the device's (the code object's target family is what
    /// the resolver returned it for).
    pub fn new(builder: AqlBuilder, family: Family, resolver: R) -> Self {
        AqlSink {
            builder,
            family,
            resolver,
        }
    }

    /// The builder, ready for `finish`.
    pub fn into_builder(self) -> AqlBuilder {
        self.builder
    }
}

impl<R: KernelResolver> LaneSink for AqlSink<R> {
    type Error = SinkError<R::Error>;

    fn dispatch(&mut self, node: &PlannedNode<'_>) -> Result<(), Self::Error> {
        let encode = |source| SinkError::Encode {
            node: node.node.raw(),
            source,
        };
        let symbol = match node.kernel {
            KernelRef::Named(name) => name,
            KernelRef::Module { symbol, .. } => symbol,
            KernelRef::Transfer(ops) => return self.builder.transfer(ops).map_err(encode),
        };
        let (code, launch, align) = resolve_launch(&mut self.resolver, self.family, node, symbol)?;
        self.builder
            .dispatch(&code, &launch, node.kernarg, align)
            .map(|_| ())
            .map_err(encode)
    }

    fn boundary(&mut self, kind: BoundaryKind, _: &BoundaryReason) -> Result<(), Self::Error> {
        self.builder.boundary(kind);
        Ok(())
    }
}
