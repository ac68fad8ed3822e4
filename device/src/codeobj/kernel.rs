//! One kernel of a code object: its metadata joined with its descriptor
//! bytes, checked against each other. Whether the direct PM4 path runs it
//! is the encoders' verdict (`relaunch_encoders::verdict`), computed from
//! this.

use std::collections::HashMap;

use super::args::KernelArg;
use super::elf::Elf;
use super::error::CodeObjectError as E;
use super::metadata::{KernelMetadata, RegisterUse};
use relaunch_facts::descriptor::{KernelDescriptor, KERNEL_DESCRIPTOR_BYTES};
use relaunch_facts::GfxTarget;

/// Largest kernarg alignment accepted (real kernels ask for 8 or 16).
const MAX_KERNARG_ALIGN: u32 = 4096;

/// Everything relaunch needs about one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// Kernel name (`.name`), e.g. `counter`.
    pub name: String,
    /// Descriptor symbol (`.symbol`), e.g. `counter.kd`.
    pub symbol: String,
    /// The code object's target (same for every kernel of one object).
    pub target: GfxTarget,
    /// The descriptor as read, except that `group_segment_fixed_size` is
    /// raised to the metadata's when that is larger (see `build`).
    pub descriptor: KernelDescriptor,
    /// Virtual address of the descriptor in the loaded image.
    pub kd_vaddr: u64,
    /// Code entry as an offset into the loaded image
    /// (`kd_vaddr + kernel_code_entry_byte_offset`).
    pub code_entry_offset: u64,
    pub kernarg_size: u32,
    pub kernarg_align: u32,
    pub args: Vec<KernelArg>,
    /// Static LDS bytes (dynamic group memory comes on top, per dispatch):
    /// the larger of the metadata's and the descriptor's.
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    pub wavefront_size: u32,
    pub uses_dynamic_stack: bool,
    pub max_flat_workgroup_size: Option<u32>,
    /// Register counts and spills from the metadata.
    pub registers: RegisterUse,
    /// Inputs it asks for that its code provably never reads (the reader
    /// runs that proof: `certify::inputs`).
    pub unread: UnreadInputs,
}

/// Runtime inputs a kernel's descriptor or metadata asks for that its
/// machine code provably never reads, so the direct PM4 path, which has no
/// value for them, may deliver zeros there. Compilers leave such inputs
/// enabled (clang at -O0: the queue pointer, the dispatch id and the
/// hostcall buffer of every HIP kernel). All false unless proven.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct UnreadInputs {
    /// The queue pointer SGPRs.
    pub queue_ptr: bool,
    /// The dispatch id SGPRs.
    pub dispatch_id: bool,
    /// The `hidden_hostcall_buffer` kernarg bytes.
    pub hostcall_buffer: bool,
}

impl UnreadInputs {
    /// Nothing proven unread.
    pub const NONE: UnreadInputs = UnreadInputs {
        queue_ptr: false,
        dispatch_id: false,
        hostcall_buffer: false,
    };
}

impl KernelInfo {
    /// Arguments the caller supplies (not hidden), in kernarg order.
    pub fn explicit_args(&self) -> impl Iterator<Item = &KernelArg> {
        self.args.iter().filter(|a| !a.value_kind.is_hidden())
    }
}

/// Join one metadata entry with its descriptor in `elf`.
pub(crate) fn build(
    elf: &Elf<'_>,
    symbols: &HashMap<&str, (u64, u64)>,
    target: &GfxTarget,
    md: KernelMetadata,
) -> Result<KernelInfo, E> {
    let kernel = md.name.clone();
    let &(kd_vaddr, _size) =
        symbols
            .get(md.symbol.as_str())
            .ok_or_else(|| E::MissingDescriptor {
                kernel: kernel.clone(),
                symbol: md.symbol.clone(),
            })?;
    let size = KERNEL_DESCRIPTOR_BYTES as u64;
    let bytes = elf
        .bytes_at_vaddr(kd_vaddr, size)
        .ok_or_else(|| E::DescriptorOutsideSegments {
            kernel: kernel.clone(),
            vaddr: kd_vaddr,
            size,
        })?;
    // bytes_at_vaddr returned exactly 64 bytes, so parse cannot fail; keep
    // the error path anyway rather than unwrap.
    let descriptor = KernelDescriptor::parse(bytes).map_err(|_| E::DescriptorOutsideSegments {
        kernel: kernel.clone(),
        vaddr: kd_vaddr,
        size,
    })?;
    let entry = kd_vaddr
        .checked_add_signed(descriptor.kernel_code_entry_byte_offset)
        .filter(|&e| elf.segments.iter().any(|s| s.contains(e)))
        .ok_or_else(|| E::EntryOutsideSegments {
            kernel: kernel.clone(),
            entry: kd_vaddr.wrapping_add_signed(descriptor.kernel_code_entry_byte_offset),
        })?;

    let disagree = |field, metadata: u32, descriptor: u32| {
        if metadata == descriptor {
            Ok(())
        } else {
            Err(E::DescriptorDisagrees {
                kernel: kernel.clone(),
                field,
                metadata: metadata.into(),
                descriptor: descriptor.into(),
            })
        }
    };
    // Static LDS: the workgroup gets what the dispatch asks for (the AQL
    // packet's group_segment_size, which HIP fills from the metadata; on
    // PM4 RSRC2.LDS_SIZE), not what either field says, and ROCr reports the
    // descriptor's field while CLR launches with the metadata's. An object
    // whose two values differ (hipBLASLt's Softmax: 1024 in the metadata,
    // 0 in the descriptor) may use what either declares, so both are
    // covered: the larger stands, in `group_segment_size` and in the
    // descriptor copy relaunch programs from.
    let mut descriptor = descriptor;
    let lds = md
        .group_segment_fixed_size
        .max(descriptor.group_segment_fixed_size);
    if md.group_segment_fixed_size != descriptor.group_segment_fixed_size {
        tracing::warn!(
            kernel = %kernel,
            metadata = md.group_segment_fixed_size,
            descriptor = descriptor.group_segment_fixed_size,
            used = lds,
            "group_segment_fixed_size differs between metadata and descriptor; the larger is used"
        );
        descriptor.group_segment_fixed_size = lds;
    }
    disagree(
        "private_segment_fixed_size",
        md.private_segment_fixed_size,
        descriptor.private_segment_fixed_size,
    )?;
    // KERNARG_SIZE 0 leaves the size unspecified (AMDGPUUsage); Tensile's
    // hand-written kernels leave it so, and the metadata's size stands.
    if descriptor.kernarg_size != 0 {
        disagree(
            "kernarg_segment_size",
            md.kernarg_segment_size,
            descriptor.kernarg_size,
        )?;
    }
    disagree(
        "wavefront_size",
        md.wavefront_size,
        descriptor.wavefront_size(),
    )?;
    for (index, a) in md.args.iter().enumerate() {
        let end = u64::from(a.offset) + u64::from(a.size);
        if end > u64::from(md.kernarg_segment_size) {
            return Err(E::ArgumentOutsideKernarg {
                kernel: kernel.clone(),
                index,
                kind: a.value_kind.to_string(),
                offset: a.offset.into(),
                size: a.size.into(),
                kernarg_size: md.kernarg_segment_size.into(),
            });
        }
    }

    let align = md.kernarg_segment_align;
    if !align.is_power_of_two() || align > MAX_KERNARG_ALIGN {
        return Err(E::Metadata(format!(
            "kernel {kernel}: .kernarg_segment_align {align} is not a power of two \
             up to {MAX_KERNARG_ALIGN}"
        )));
    }

    Ok(KernelInfo {
        name: md.name,
        symbol: md.symbol,
        target: target.clone(),
        descriptor,
        kd_vaddr,
        code_entry_offset: entry,
        kernarg_size: md.kernarg_segment_size,
        kernarg_align: md.kernarg_segment_align,
        args: md.args,
        group_segment_size: lds,
        private_segment_size: md.private_segment_fixed_size,
        wavefront_size: md.wavefront_size,
        uses_dynamic_stack: md.uses_dynamic_stack || descriptor.uses_dynamic_stack(),
        max_flat_workgroup_size: md.max_flat_workgroup_size,
        registers: md.registers,
        unread: UnreadInputs::NONE,
    })
}
