//! Memset and memcpy nodes as relaunch copy/fill ops (`DMA_DATA` inside
//! the IB): what HIP's node parameters (`hipMemsetParams`,
//! `hipMemcpy3DParms`, the 1-D form) and captured `hipMemsetAsync` /
//! `hipMemcpyAsync` calls ask for, checked against the memory the
//! interposer saw HIP allocate (`exports/allocators.rs`). The CP reaches device
//! memory (`hipMalloc`, `hipMallocAsync`) and pinned host memory
//! (`hipHostMalloc`, registered memory at the same address); managed
//! memory, registered memory the GPU reaches elsewhere, pageable host
//! memory, or any
//! pointer this library did not see allocated, makes the graph fall
//! through with the reason.
//!
//! Layouts from the public HIP headers (`hip_runtime_api.h`,
//! `driver_types.h`): `hipMemsetParams { void *dst; unsigned elementSize;
//! size_t height, pitch; unsigned value; size_t width; }`, `hipPitchedPtr
//! { void *ptr; size_t pitch, xsize, ysize; }`, `hipPos`/`hipExtent`
//! (three `size_t`), `hipMemcpy3DParms { hipArray_t srcArray; hipPos
//! srcPos; hipPitchedPtr srcPtr; hipArray_t dstArray; hipPos dstPos;
//! hipPitchedPtr dstPtr; hipExtent extent; hipMemcpyKind kind; }`;
//! `hipMemcpyKind`: HostToHost 0, HostToDevice 1, DeviceToHost 2,
//! DeviceToDevice 3, Default 4.

use std::collections::BTreeMap;
use std::ffi::c_void;

use relaunch::DmaOp;
use relaunch::MAX_DMA_PACKETS_PER_NODE;

use crate::model::reason::{CopyKind, NodeKind, Reason, Side};

/// What kind of memory an allocation HIP made is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemKind {
    /// `hipMalloc`, `hipMallocAsync`.
    Device,
    /// `hipHostMalloc` (or `hipHostRegister`ed memory the GPU reaches at
    /// the same address): pinned, GPU-accessible host memory.
    PinnedHost,
    /// `hipMallocManaged`: may migrate between host and device.
    Managed,
    /// `hipHostRegister`ed memory the GPU reaches at another address.
    RegisteredAt(u64),
}

/// The live allocations the interposer saw HIP make, by start address.
#[derive(Debug, Default)]
pub struct MemoryMap {
    live: BTreeMap<u64, (u64, MemKind)>,
}

impl MemoryMap {
    pub fn insert(&mut self, addr: u64, len: u64, kind: MemKind) {
        if addr != 0 && len != 0 {
            self.live.insert(addr, (len, kind));
        }
    }

    pub fn remove(&mut self, addr: u64) {
        self.live.remove(&addr);
    }

    /// The kind of the allocation holding all of `[addr, addr+len)`.
    pub fn kind_of(&self, addr: u64, len: u64) -> Option<MemKind> {
        let (&start, &(size, kind)) = self.live.range(..=addr).next_back()?;
        let end = addr.checked_add(len)?;
        (end <= start + size).then_some(kind)
    }

    /// Why the CP cannot reach `[addr, addr+len)` (`what` names the side),
    /// or `Ok` when it is device or pinned host memory HIP allocated.
    fn reachable(&self, side: Side, addr: u64, len: u64, kind: i32) -> Result<MemKind, Reason> {
        let copy = copy_kind(kind);
        match self.kind_of(addr, len) {
            Some(k @ (MemKind::Device | MemKind::PinnedHost)) => return Ok(k),
            Some(MemKind::Managed) => {
                return Err(Reason::ManagedMemory {
                    kind: copy,
                    side,
                    addr,
                    len,
                })
            }
            Some(MemKind::RegisteredAt(device)) => {
                return Err(Reason::RegisteredElsewhere {
                    kind: copy,
                    side,
                    addr,
                    device,
                })
            }
            None => {}
        }
        let host_side = matches!(
            (side, kind),
            (Side::Source, MEMCPY_HOST_TO_DEVICE | MEMCPY_HOST_TO_HOST)
                | (
                    Side::Destination,
                    MEMCPY_DEVICE_TO_HOST | MEMCPY_HOST_TO_HOST
                )
        );
        Err(if host_side {
            Reason::PageableHost {
                kind: copy,
                side,
                addr,
                len,
            }
        } else {
            Reason::UnknownMemory {
                kind: copy,
                side,
                addr,
                len,
            }
        })
    }
}

pub const MEMCPY_HOST_TO_HOST: i32 = 0;
pub const MEMCPY_HOST_TO_DEVICE: i32 = 1;
pub const MEMCPY_DEVICE_TO_HOST: i32 = 2;
pub const MEMCPY_DEVICE_TO_DEVICE: i32 = 3;
pub const MEMCPY_DEFAULT: i32 = 4;

/// A `hipMemcpyKind` as a reason names it.
pub fn copy_kind(kind: i32) -> CopyKind {
    match kind {
        MEMCPY_HOST_TO_HOST => CopyKind::HostToHost,
        MEMCPY_HOST_TO_DEVICE => CopyKind::HostToDevice,
        MEMCPY_DEVICE_TO_HOST => CopyKind::DeviceToHost,
        MEMCPY_DEVICE_TO_DEVICE => CopyKind::DeviceToDevice,
        MEMCPY_DEFAULT => CopyKind::Default,
        other => CopyKind::Unknown(other),
    }
}

/// `hipMemsetParams`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemsetParams {
    pub dst: *mut c_void,
    pub element_size: u32,
    pub height: usize,
    pub pitch: usize,
    pub value: u32,
    pub width: usize,
}

/// `hipPos` / `hipExtent` (x/width, y/height, z/depth).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Triple {
    pub a: usize,
    pub b: usize,
    pub c: usize,
}

/// `hipPitchedPtr`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

/// `hipMemcpy3DParms`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Memcpy3DParams {
    pub src_array: *mut c_void,
    pub src_pos: Triple,
    pub src_ptr: PitchedPtr,
    pub dst_array: *mut c_void,
    pub dst_pos: Triple,
    pub dst_ptr: PitchedPtr,
    pub extent: Triple,
    pub kind: i32,
}

/// A 2-D memset (`height` rows of `width` elements, `pitch` bytes apart;
/// `height` 1 is 1-D) as fills.
pub fn memset_ops(mem: &MemoryMap, p: &MemsetParams) -> Result<Vec<DmaOp>, Reason> {
    let pattern = match p.element_size {
        1 => (p.value & 0xFF) * 0x0101_0101,
        2 => (p.value & 0xFFFF) * 0x0001_0001,
        4 => p.value,
        other => return Err(Reason::MemsetElement { size: other }),
    };
    let row = (p.width as u64)
        .checked_mul(u64::from(p.element_size))
        .ok_or(Reason::Overflow {
            what: "a memset row",
        })?;
    let rows = p.height as u64;
    if row == 0 || rows == 0 {
        return Err(Reason::EmptyMemset);
    }
    if rows > 1 && (p.pitch as u64) < row {
        return Err(Reason::ShortMemsetPitch {
            pitch: p.pitch as u64,
            row,
        });
    }
    let dst = p.dst as u64;
    let pitch = if rows == 1 { row } else { p.pitch as u64 };
    let span = pitch
        .checked_mul(rows - 1)
        .and_then(|s| s.checked_add(row))
        .ok_or(Reason::Overflow {
            what: "a memset's extent",
        })?;
    mem.reachable(Side::Destination, dst, span, MEMCPY_DEVICE_TO_DEVICE)?;
    let size = u64::from(p.element_size);
    if dst % size != 0 || (rows > 1 && pitch % size != 0) {
        return Err(match size {
            4 => Reason::UnalignedFill { row, dst, pitch },
            _ => Reason::MisalignedElement {
                size: p.element_size,
                dst,
                pitch,
            },
        });
    }
    // Contiguous rows are one span; otherwise each row is one, its
    // unaligned ends (1- and 2-byte elements) copied from its middle.
    let (spans, span_bytes) = if pitch == row { (1, span) } else { (rows, row) };
    // Every row's fill first, then the copies of the ends (each reads only
    // its own row's middle): two stages for the whole node (`build.rs`).
    let (mut fills, mut copies) = (Vec::new(), Vec::new());
    for r in 0..spans {
        let more = crate::model::fills::span_ops(dst + r * pitch, span_bytes, pattern)?;
        if fills.len() + copies.len() + more.len() > MAX_DMA_PACKETS_PER_NODE {
            return Err(Reason::TooManyPackets {
                kind: NodeKind::Memset,
                rows,
                max: MAX_DMA_PACKETS_PER_NODE,
            });
        }
        for op in more {
            match op {
                DmaOp::Fill { .. } => fills.push(op),
                DmaOp::Copy { .. } => copies.push(op),
            }
        }
    }
    fills.extend(copies);
    Ok(fills)
}

/// A 1-D copy of `bytes` from `src` to `dst`.
pub fn copy_ops(
    mem: &MemoryMap,
    dst: u64,
    src: u64,
    bytes: u64,
    kind: i32,
) -> Result<Vec<DmaOp>, Reason> {
    if !(MEMCPY_HOST_TO_HOST..=MEMCPY_DEFAULT).contains(&kind) {
        return Err(Reason::UnknownCopyKind { kind });
    }
    if bytes == 0 {
        return Err(Reason::EmptyCopy);
    }
    mem.reachable(Side::Source, src, bytes, kind)?;
    mem.reachable(Side::Destination, dst, bytes, kind)?;
    Ok(vec![DmaOp::Copy { dst, src, bytes }])
}

/// A 3-D copy between pitched pointers (arrays are refused): one op per
/// row, rows that continue each other on both sides merged.
pub fn copy_3d_ops(mem: &MemoryMap, p: &Memcpy3DParams) -> Result<Vec<DmaOp>, Reason> {
    if !p.src_array.is_null() || !p.dst_array.is_null() {
        return Err(Reason::ArrayCopy);
    }
    if !(MEMCPY_HOST_TO_HOST..=MEMCPY_DEFAULT).contains(&p.kind) {
        return Err(Reason::UnknownCopyKind { kind: p.kind });
    }
    let Triple {
        a: width,
        b: height,
        c: depth,
    } = p.extent;
    let (width, height, depth) = (width as u64, height as u64, depth as u64);
    if width == 0 || height == 0 || depth == 0 {
        return Err(Reason::EmptyCopy);
    }
    let side = |ptr: &PitchedPtr, pos: &Triple, side: Side| -> Result<(u64, u64, u64), Reason> {
        let pitch = ptr.pitch as u64;
        let slice = pitch
            .checked_mul(ptr.ysize as u64)
            .ok_or(Reason::Overflow {
                what: "a memcpy's slice",
            })?;
        if pitch < width.saturating_add(pos.a as u64)
            || (depth > 1 && (ptr.ysize as u64) < height.saturating_add(pos.b as u64))
        {
            return Err(Reason::CopyPitch {
                side,
                pitch,
                rows: ptr.ysize as u64,
            });
        }
        let base = (ptr.ptr as u64)
            .checked_add(pos.a as u64)
            .and_then(|b| b.checked_add((pos.b as u64).checked_mul(pitch)?))
            .and_then(|b| b.checked_add((pos.c as u64).checked_mul(slice)?))
            .ok_or(Reason::Overflow {
                what: "a memcpy's start",
            })?;
        let last = (depth - 1)
            .checked_mul(slice)
            .and_then(|l| l.checked_add((height - 1).checked_mul(pitch)?))
            .and_then(|l| l.checked_add(width))
            .ok_or(Reason::Overflow {
                what: "a memcpy's extent",
            })?;
        mem.reachable(side, base, last, p.kind)?;
        Ok((base, pitch, slice))
    };
    let (sb, sp, ss) = side(&p.src_ptr, &p.src_pos, Side::Source)?;
    let (db, dp, ds) = side(&p.dst_ptr, &p.dst_pos, Side::Destination)?;
    let mut ops: Vec<DmaOp> = Vec::new();
    for z in 0..depth {
        for y in 0..height {
            let (src, dst) = (sb + z * ss + y * sp, db + z * ds + y * dp);
            if let Some(DmaOp::Copy {
                dst: pd,
                src: ps,
                bytes,
            }) = ops.last_mut()
            {
                if *ps + *bytes == src && *pd + *bytes == dst {
                    *bytes += width;
                    continue;
                }
            }
            if ops.len() == MAX_DMA_PACKETS_PER_NODE {
                return Err(Reason::TooManyPackets {
                    kind: NodeKind::Memcpy,
                    rows: height * depth,
                    max: MAX_DMA_PACKETS_PER_NODE,
                });
            }
            ops.push(DmaOp::Copy {
                dst,
                src,
                bytes: width,
            });
        }
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem() -> MemoryMap {
        let mut m = MemoryMap::default();
        m.insert(0x10_0000, 0x1_0000, MemKind::Device);
        m.insert(0x20_0000, 0x1_0000, MemKind::PinnedHost);
        m
    }

    #[test]
    fn the_c_layouts_match_hips_headers() {
        assert_eq!(std::mem::size_of::<MemsetParams>(), 48);
        assert_eq!(std::mem::offset_of!(MemsetParams, value), 32);
        assert_eq!(std::mem::offset_of!(Memcpy3DParams, src_ptr), 32);
        assert_eq!(std::mem::offset_of!(Memcpy3DParams, dst_array), 64);
        assert_eq!(std::mem::offset_of!(Memcpy3DParams, extent), 128);
        assert_eq!(std::mem::offset_of!(Memcpy3DParams, kind), 152);
        assert_eq!(std::mem::size_of::<Memcpy3DParams>(), 160);
    }

    #[test]
    fn memsets_replicate_the_element_and_merge_contiguous_rows() {
        let m = mem();
        let p = MemsetParams {
            dst: 0x10_0000 as *mut c_void,
            element_size: 1,
            height: 1,
            pitch: 0,
            value: 0x1AB,
            width: 64,
        };
        assert_eq!(
            memset_ops(&m, &p).unwrap(),
            vec![DmaOp::Fill {
                dst: 0x10_0000,
                pattern: 0xABAB_ABAB,
                bytes: 64
            }]
        );
        let rows = MemsetParams {
            element_size: 2,
            height: 3,
            pitch: 64,
            value: 0x1234,
            width: 8,
            ..p
        };
        let ops = memset_ops(&m, &rows).unwrap();
        assert_eq!(ops.len(), 3);
        assert_eq!(
            ops[2],
            DmaOp::Fill {
                dst: 0x10_0080,
                pattern: 0x1234_1234,
                bytes: 16
            }
        );
        let packed = MemsetParams { pitch: 16, ..rows };
        assert_eq!(memset_ops(&m, &packed).unwrap().len(), 1);
        // Bytes: the aligned middle filled, head and tail copied from it.
        let odd = MemsetParams {
            dst: 0x10_0001 as *mut c_void,
            width: 10,
            ..p
        };
        assert_eq!(
            memset_ops(&m, &odd).unwrap(),
            vec![
                DmaOp::Fill {
                    dst: 0x10_0004,
                    pattern: 0xABAB_ABAB,
                    bytes: 4
                },
                DmaOp::Copy {
                    dst: 0x10_0001,
                    src: 0x10_0005,
                    bytes: 3
                },
                DmaOp::Copy {
                    dst: 0x10_0008,
                    src: 0x10_0004,
                    bytes: 3
                },
            ]
        );
        let tiny = MemsetParams { width: 3, ..p };
        assert!(matches!(
            memset_ops(&m, &tiny),
            Err(Reason::NoWholeDword { bytes: 3, .. })
        ));
        let odd_half = MemsetParams {
            dst: 0x10_0001 as *mut c_void,
            element_size: 2,
            ..p
        };
        assert!(matches!(
            memset_ops(&m, &odd_half),
            Err(Reason::MisalignedElement { size: 2, .. })
        ));
        let outside = MemsetParams {
            dst: 0x30_0000 as *mut c_void,
            ..p
        };
        assert!(memset_ops(&m, &outside)
            .unwrap_err()
            .to_string()
            .contains("not memory this library saw"));
    }

    #[test]
    fn managed_and_relocated_registered_memory_fall_through_by_name() {
        let mut m = mem();
        m.insert(0x30_0000, 0x1000, MemKind::Managed);
        m.insert(0x40_0000, 0x1000, MemKind::RegisteredAt(0x9000_0000));
        let e = copy_ops(&m, 0x10_0000, 0x30_0000, 16, MEMCPY_DEFAULT).unwrap_err();
        assert!(
            matches!(
                e,
                Reason::ManagedMemory {
                    side: Side::Source,
                    ..
                }
            ),
            "{e}"
        );
        let e = copy_ops(&m, 0x40_0000, 0x10_0000, 16, MEMCPY_DEVICE_TO_HOST).unwrap_err();
        assert!(
            matches!(
                e,
                Reason::RegisteredElsewhere {
                    side: Side::Destination,
                    device: 0x9000_0000,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn pageable_host_memory_is_named_and_pinned_memory_copies() {
        let m = mem();
        let e = copy_ops(&m, 0x10_0000, 0x7000_0000, 16, MEMCPY_HOST_TO_DEVICE)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("host-to-device") && e.contains("pageable"),
            "{e}"
        );
        let e = copy_ops(&m, 0x7000_0000, 0x10_0000, 16, MEMCPY_DEVICE_TO_HOST)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("device-to-host") && e.contains("pageable"),
            "{e}"
        );
        assert_eq!(
            copy_ops(&m, 0x20_0000, 0x10_0000, 16, MEMCPY_DEVICE_TO_HOST).unwrap(),
            vec![DmaOp::Copy {
                dst: 0x20_0000,
                src: 0x10_0000,
                bytes: 16
            }]
        );
        assert!(copy_ops(&m, 0x10_0000, 0x10_8000, 0x9000, MEMCPY_DEVICE_TO_DEVICE).is_err());
    }

    #[test]
    fn a_3d_copy_is_one_op_per_row_with_contiguous_rows_merged() {
        let m = mem();
        let pitched = |at: u64, pitch: usize| PitchedPtr {
            ptr: at as *mut c_void,
            pitch,
            xsize: pitch,
            ysize: 4,
        };
        let p = Memcpy3DParams {
            src_array: std::ptr::null_mut(),
            src_pos: Triple { a: 4, b: 1, c: 0 },
            src_ptr: pitched(0x10_0000, 64),
            dst_array: std::ptr::null_mut(),
            dst_pos: Triple { a: 0, b: 0, c: 0 },
            dst_ptr: pitched(0x10_8000, 16),
            extent: Triple { a: 16, b: 2, c: 2 },
            kind: MEMCPY_DEVICE_TO_DEVICE,
        };
        let ops = copy_3d_ops(&m, &p).unwrap();
        assert_eq!(ops.len(), 4);
        assert_eq!(
            ops[0],
            DmaOp::Copy {
                dst: 0x10_8000,
                src: 0x10_0000 + 64 + 4,
                bytes: 16
            }
        );
        // Second slice: src one slice (64 * 4) further, dst 16 * 4.
        assert_eq!(
            ops[2],
            DmaOp::Copy {
                dst: 0x10_8000 + 64,
                src: 0x10_0000 + 256 + 64 + 4,
                bytes: 16
            }
        );
        let whole = Memcpy3DParams {
            src_pos: Triple { a: 0, b: 0, c: 0 },
            src_ptr: pitched(0x10_0000, 16),
            ..p
        };
        assert_eq!(
            copy_3d_ops(&m, &whole).unwrap().len(),
            2,
            "rows merge within a slice"
        );
        let array = Memcpy3DParams {
            src_array: 0x1000 as *mut c_void,
            ..p
        };
        assert!(matches!(copy_3d_ops(&m, &array), Err(Reason::ArrayCopy)));
    }
}
