//! The topology the thunk reports: node 0 is the CPU, node `i + 1` the
//! `i`-th simulated GPU, each described from its facts row and its
//! simulator config. ROCr takes the GPU's ISA from the engine id
//! (major.minor.stepping of the gfx target) and expects, per GPU node,
//! the memory banks of a discrete board: frame buffer, the LDS and
//! scratch apertures, and an MMIO remap page it keeps HDP flush
//! registers in.

use relaunch_sim::SimDevice;

use crate::abi::{
    cache_type, capability, heap, HsaCacheProperties, HsaIoLinkProperties, HsaMemoryProperties,
    HsaNodeProperties, HsaSystemProperties, IOLINK_PCIEXPRESS,
};

/// The LDS and private (scratch) apertures of a GPU node: the numbers
/// the interpreter's flat addressing uses too.
pub const LDS_APERTURE: u64 = 1 << 48;
pub const SCRATCH_APERTURE: u64 = 2 << 48;
const LDS_BYTES: u64 = 64 * 1024;
const SCRATCH_APERTURE_BYTES: u64 = 4 << 30;

/// SIMDs per compute unit as the driver counts them on RDNA.
const SIMDS_PER_CU: u32 = 2;
const SHADER_ENGINES: u32 = 2;
const ARRAYS_PER_ENGINE: u32 = 2;

/// `gfx1030` -> (10, 3, 0): the engine id's major, minor and stepping.
pub fn engine_version(processor: &str) -> Option<(u32, u32, u32)> {
    let digits = processor.strip_prefix("gfx")?;
    if digits.len() < 3 {
        return None;
    }
    let (major, rest) = digits.split_at(digits.len() - 2);
    let major = major.parse().ok()?;
    let mut rest = rest.chars();
    let minor = rest.next()?.to_digit(16)?;
    let stepping = rest.next()?.to_digit(16)?;
    Some((major, minor, stepping))
}

pub fn system(gpus: usize) -> HsaSystemProperties {
    HsaSystemProperties {
        NumNodes: gpus as u32 + 1,
        PlatformOem: 0,
        PlatformId: 0,
        PlatformRev: 0,
    }
}

fn zeroed_node() -> HsaNodeProperties {
    // SAFETY: HsaNodeProperties is plain integers and arrays of them;
    // all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}

fn cpu_cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

fn host_memory_bytes() -> u64 {
    // SAFETY: sysconf only reads system configuration.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages.max(0) as u64).saturating_mul(size.max(0) as u64)
}

pub fn cpu_node(gpus: usize) -> HsaNodeProperties {
    let mut p = zeroed_node();
    p.NumCPUCores = cpu_cores();
    p.NumMemoryBanks = 1;
    p.NumCaches = 1;
    p.NumIOLinks = gpus as u32;
    p.MaxEngineClockMhzCCompute = 3000;
    write_name(&mut p, "relaunch simulated host CPU");
    p
}

pub fn gpu_node(index: usize, device: &SimDevice) -> HsaNodeProperties {
    let config = device.config();
    let mut p = zeroed_node();
    let cus = config.compute_units.max(SHADER_ENGINES * ARRAYS_PER_ENGINE);
    let (major, minor, stepping) = engine_version(device.target().processor()).unwrap_or((0, 0, 0));
    let first_simd = 0x8000_0000u32 + 0x1000 * index as u32;
    p.NumFComputeCores = cus * SIMDS_PER_CU;
    p.NumMemoryBanks = 4;
    p.NumCaches = 2;
    p.NumIOLinks = 1;
    p.FComputeIdLo = first_simd;
    p.Capability =
        capability::QUEUE_SIZE_POW2 | capability::QUEUE_SIZE_32BIT | capability::DOORBELL_TYPE_2;
    p.MaxWavesPerSIMD = 16;
    p.LDSSizeInKB = (LDS_BYTES / 1024) as u32;
    p.WaveFrontSize = 32;
    p.NumShaderBanks = SHADER_ENGINES;
    p.NumArrays = ARRAYS_PER_ENGINE;
    p.NumCUPerArray = cus / (SHADER_ENGINES * ARRAYS_PER_ENGINE);
    p.NumSIMDPerCU = SIMDS_PER_CU;
    p.MaxSlotsScratchCU = 32;
    p.EngineId = (major << 10) | (minor << 16) | (stepping << 24);
    p.VendorId = 0x1002;
    p.DeviceId = 0x7300 + index as u16;
    let pci = config.pci.unwrap_or(relaunch_sim::SimPci {
        domain: 0,
        bus: 0xe0 + index as u8,
        device: 0,
        function: 0,
    });
    p.LocationId =
        (u32::from(pci.bus) << 8) | (u32::from(pci.device) << 3) | u32::from(pci.function);
    p.Domain = pci.domain;
    p.LocalMemSize = config.memory_limit as u64;
    p.MaxEngineClockMhzFCompute = 2000;
    p.DrmRenderMinor = 128 + index as i32;
    write_name(&mut p, &config.product_name);
    let amd = device.target().processor().as_bytes();
    p.AMDName[..amd.len().min(63)].copy_from_slice(&amd[..amd.len().min(63)]);
    p.NumSdmaEngines = 2;
    p.NumSdmaQueuesPerEngine = 2;
    p.NumCpQueues = 8;
    p.UniqueID = unique_id(device);
    p.VGPRSizePerCU = 128 * 1024;
    p.SGPRSizePerCU = 10 * 1024;
    p
}

/// A stable 64-bit id from the board's UUID (`GPU-<hex>`), else its target and index.
fn unique_id(device: &SimDevice) -> u64 {
    let config = device.config();
    config
        .uuid
        .as_deref()
        .and_then(|u| u.strip_prefix("GPU-"))
        .and_then(|h| u64::from_str_radix(&h[..h.len().min(16)], 16).ok())
        .unwrap_or_else(|| {
            config
                .target
                .bytes()
                .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                })
        })
}

fn write_name(p: &mut HsaNodeProperties, name: &str) {
    let mut buf = [0u16; 64];
    for (slot, unit) in buf.iter_mut().take(63).zip(name.encode_utf16()) {
        *slot = unit;
    }
    p.MarketingName = buf;
}

pub fn cpu_memory() -> Vec<HsaMemoryProperties> {
    vec![HsaMemoryProperties {
        HeapType: heap::SYSTEM,
        SizeInBytes: host_memory_bytes(),
        Width: 64,
        MemoryClockMax: 3200,
        ..HsaMemoryProperties::default()
    }]
}

/// A GPU node's banks; `mmio_page` is the page ROCr will read HDP flush
/// register addresses from.
pub fn gpu_memory(device: &SimDevice, mmio_page: u64) -> Vec<HsaMemoryProperties> {
    vec![
        HsaMemoryProperties {
            HeapType: heap::FRAME_BUFFER_PUBLIC,
            SizeInBytes: device.config().memory_limit as u64,
            Width: 256,
            MemoryClockMax: 2000,
            ..HsaMemoryProperties::default()
        },
        HsaMemoryProperties {
            HeapType: heap::GPU_LDS,
            SizeInBytes: LDS_BYTES,
            VirtualBaseAddress: LDS_APERTURE,
            ..HsaMemoryProperties::default()
        },
        HsaMemoryProperties {
            HeapType: heap::GPU_SCRATCH,
            SizeInBytes: SCRATCH_APERTURE_BYTES,
            VirtualBaseAddress: SCRATCH_APERTURE,
            ..HsaMemoryProperties::default()
        },
        HsaMemoryProperties {
            HeapType: heap::MMIO_REMAP,
            SizeInBytes: 4096,
            VirtualBaseAddress: mmio_page,
            ..HsaMemoryProperties::default()
        },
    ]
}

fn cache(level: u32, kib: u32, kind: u32, first: u32) -> HsaCacheProperties {
    HsaCacheProperties {
        ProcessorIdLow: first,
        CacheLevel: level,
        CacheSize: kib,
        CacheLineSize: 64,
        CacheLinesPerTag: 1,
        CacheAssociativity: 16,
        CacheLatency: 1,
        CacheType: kind,
        SiblingMap: [0; 256],
    }
}

/// Debian's ROCr is built with assertions: a CPU node without caches aborts it.
pub fn cpu_caches() -> Vec<HsaCacheProperties> {
    let mut l1 = cache(1, 32, cache_type::DATA | cache_type::CPU, 0);
    l1.SiblingMap[0] = 1;
    vec![l1]
}

pub fn gpu_caches(index: usize) -> Vec<HsaCacheProperties> {
    let first = 0x8000_0000u32 + 0x1000 * index as u32;
    vec![
        cache(1, 16, cache_type::DATA | cache_type::HSACU, first),
        cache(2, 4096, cache_type::DATA | cache_type::HSACU, first),
    ]
}

pub fn io_links(node: u32, gpus: usize) -> Vec<HsaIoLinkProperties> {
    let link = |from: u32, to: u32| HsaIoLinkProperties {
        IoLinkType: IOLINK_PCIEXPRESS,
        NodeFrom: from,
        NodeTo: to,
        Weight: 20,
        MinimumBandwidth: 16_000,
        MaximumBandwidth: 32_000,
        ..HsaIoLinkProperties::default()
    };
    if node == 0 {
        (1..=gpus as u32).map(|g| link(0, g)).collect()
    } else {
        vec![link(node, 0)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_versions_of_rdna_targets() {
        assert_eq!(engine_version("gfx1030"), Some((10, 3, 0)));
        assert_eq!(engine_version("gfx1010"), Some((10, 1, 0)));
        assert_eq!(engine_version("gfx1201"), Some((12, 0, 1)));
        assert_eq!(engine_version("gfx90a"), Some((9, 0, 10)));
        assert_eq!(engine_version("sm_90"), None);
    }
}
