//! Kernarg blocks as launches take them: the whole segment, or only the
//! explicit arguments (what an engine packing its own struct passes), in
//! which case the hidden arguments are filled from the launch geometry
//! exactly as `pack_kernargs` does. Zero-padding instead would give
//! kernels that read blockDim or the grid size wrong answers.

use std::borrow::Cow;

use relaunch_device::codeobj::KernelInfo;
use relaunch_encoders::kernarg_pack::{pack, Geometry};

use crate::error::Result;
use crate::refusal::Refusal;

/// Bytes before the first hidden argument (the whole segment when the
/// kernel has none): the explicit block an engine packs itself.
pub fn explicit_kernarg_size(info: &KernelInfo) -> u32 {
    info.args
        .iter()
        .filter(|a| a.value_kind.is_hidden())
        .map(|a| a.offset)
        .min()
        .unwrap_or(info.kernarg_size)
        .min(info.kernarg_size)
}

/// `kernarg` as a full segment for one launch of `info`: unchanged when
/// it is at least the segment, completed when it is exactly the explicit
/// block, refused naming both accepted lengths otherwise.
pub fn complete<'a>(
    info: &KernelInfo,
    kernarg: &'a [u8],
    geometry: &Geometry,
) -> Result<Cow<'a, [u8]>> {
    let full = info.kernarg_size as usize;
    let explicit = explicit_kernarg_size(info) as usize;
    if kernarg.len() >= full {
        return Ok(Cow::Borrowed(kernarg));
    }
    if kernarg.len() == explicit {
        return Ok(Cow::Owned(pack(info, kernarg, geometry)?));
    }
    Err(Refusal::KernargSize {
        kernel: info.name.clone(),
        given: kernarg.len(),
        full,
        explicit,
    }
    .into())
}
