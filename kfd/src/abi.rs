//! The thunk's C types (`hsakmttypes.h` of libhsakmt, API facts): the
//! header packs its structs to 4 bytes, so 64-bit fields may sit at
//! 4-byte offsets. `tests/layout.rs` checks every size and offset here
//! against the system's header with a C compiler.

#![allow(non_snake_case)]

pub type Status = u32;
pub const SUCCESS: Status = 0;
pub const ERROR: Status = 1;
pub const INVALID_PARAMETER: Status = 3;
pub const INVALID_HANDLE: Status = 4;
pub const INVALID_NODE_UNIT: Status = 5;
pub const NO_MEMORY: Status = 6;
pub const NOT_IMPLEMENTED: Status = 10;
pub const NOT_SUPPORTED: Status = 11;
pub const OUT_OF_RESOURCES: Status = 13;
pub const KERNEL_IO_CHANNEL_NOT_OPENED: Status = 20;
pub const WAIT_TIMEOUT: Status = 31;
pub const MEMORY_ALREADY_REGISTERED: Status = 35;
pub const MEMORY_NOT_REGISTERED: Status = 36;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaVersionInfo {
    pub KernelInterfaceMajorVersion: u32,
    pub KernelInterfaceMinorVersion: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaSystemProperties {
    pub NumNodes: u32,
    pub PlatformOem: u32,
    pub PlatformId: u32,
    pub PlatformRev: u32,
}

#[repr(C, packed(4))]
#[derive(Clone, Copy)]
pub struct HsaNodeProperties {
    pub NumCPUCores: u32,
    pub NumFComputeCores: u32,
    pub NumMemoryBanks: u32,
    pub NumCaches: u32,
    pub NumIOLinks: u32,
    pub CComputeIdLo: u32,
    pub FComputeIdLo: u32,
    /// HSA_CAPABILITY bit field.
    pub Capability: u32,
    pub MaxWavesPerSIMD: u32,
    pub LDSSizeInKB: u32,
    pub GDSSizeInKB: u32,
    pub WaveFrontSize: u32,
    pub NumShaderBanks: u32,
    pub NumArrays: u32,
    pub NumCUPerArray: u32,
    pub NumSIMDPerCU: u32,
    pub MaxSlotsScratchCU: u32,
    /// HSA_ENGINE_ID: uCode 9:0, Major 15:10, Minor 23:16, Stepping 31:24.
    pub EngineId: u32,
    pub VendorId: u16,
    pub DeviceId: u16,
    pub LocationId: u32,
    pub LocalMemSize: u64,
    pub MaxEngineClockMhzFCompute: u32,
    pub MaxEngineClockMhzCCompute: u32,
    pub DrmRenderMinor: i32,
    pub MarketingName: [u16; 64],
    pub AMDName: [u8; 64],
    pub uCodeEngineVersions: u32,
    pub DebugProperties: u64,
    pub HiveID: u64,
    pub NumSdmaEngines: u32,
    pub NumSdmaXgmiEngines: u32,
    pub NumSdmaQueuesPerEngine: u8,
    pub NumCpQueues: u8,
    pub NumGws: u8,
    pub Reserved2: u8,
    pub Domain: u32,
    pub UniqueID: u64,
    pub VGPRSizePerCU: u32,
    pub SGPRSizePerCU: u32,
    pub Reserved: [u8; 12],
}

/// HSA_CAPABILITY bits used here.
pub mod capability {
    pub const QUEUE_SIZE_POW2: u32 = 1 << 3;
    pub const QUEUE_SIZE_32BIT: u32 = 1 << 4;
    /// DoorbellType (bits 13:12) = 2: 64-bit doorbells of gfx9 and later.
    pub const DOORBELL_TYPE_2: u32 = 2 << 12;
}

pub mod heap {
    pub const SYSTEM: u32 = 0;
    pub const FRAME_BUFFER_PUBLIC: u32 = 1;
    pub const GPU_LDS: u32 = 4;
    pub const GPU_SCRATCH: u32 = 5;
    pub const MMIO_REMAP: u32 = 7;
}

#[repr(C, packed(4))]
#[derive(Clone, Copy, Default)]
pub struct HsaMemoryProperties {
    pub HeapType: u32,
    pub SizeInBytes: u64,
    pub Flags: u32,
    pub Width: u32,
    pub MemoryClockMax: u32,
    pub VirtualBaseAddress: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct HsaCacheProperties {
    pub ProcessorIdLow: u32,
    pub CacheLevel: u32,
    pub CacheSize: u32,
    pub CacheLineSize: u32,
    pub CacheLinesPerTag: u32,
    pub CacheAssociativity: u32,
    pub CacheLatency: u32,
    /// Data 0, Instruction 1, CPU 2, HSACU 3.
    pub CacheType: u32,
    pub SiblingMap: [u32; 256],
}

pub mod cache_type {
    pub const DATA: u32 = 1;
    pub const INSTRUCTION: u32 = 2;
    pub const CPU: u32 = 4;
    pub const HSACU: u32 = 8;
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct HsaIoLinkProperties {
    pub IoLinkType: u32,
    pub VersionMajor: u32,
    pub VersionMinor: u32,
    pub NodeFrom: u32,
    pub NodeTo: u32,
    pub Weight: u32,
    pub MinimumLatency: u32,
    pub MaximumLatency: u32,
    pub MinimumBandwidth: u32,
    pub MaximumBandwidth: u32,
    pub RecTransferSize: u32,
    pub Flags: u32,
}

pub const IOLINK_PCIEXPRESS: u32 = 2;

/// HsaMemFlags bits.
pub mod mem_flag {
    pub const CACHE_POLICY_SHIFT: u32 = 1;
    pub const READ_ONLY: u32 = 1 << 3;
    pub const HOST_ACCESS: u32 = 1 << 6;
    pub const GDS_MEMORY: u32 = 1 << 8;
    pub const SCRATCH: u32 = 1 << 9;
    pub const EXECUTE_ACCESS: u32 = 1 << 12;
    pub const COARSE_GRAIN: u32 = 1 << 13;
    pub const AQL_QUEUE_MEMORY: u32 = 1 << 14;
    pub const FIXED_ADDRESS: u32 = 1 << 15;
    pub const UNCACHED: u32 = 1 << 17;
}

pub mod queue_type {
    pub const COMPUTE: u32 = 1;
    pub const SDMA: u32 = 2;
    pub const SDMA_XGMI: u32 = 5;
    pub const COMPUTE_AQL: u32 = 21;
}

#[repr(C, packed(4))]
#[derive(Clone, Copy, Default)]
pub struct HsaQueueResource {
    pub QueueId: u64,
    pub Queue_DoorBell: u64,
    pub Queue_write_ptr: u64,
    pub Queue_read_ptr: u64,
    pub ErrorReason: u64,
}

pub mod event_type {
    pub const SIGNAL: u32 = 0;
    pub const MEMORY: u32 = 8;
}

#[repr(C, packed(4))]
#[derive(Clone, Copy, Default)]
pub struct HsaSyncVar {
    pub UserData: u64,
    pub SyncVarSize: u64,
}

#[repr(C, packed(4))]
#[derive(Clone, Copy, Default)]
pub struct HsaMemoryAccessFault {
    pub NodeId: u32,
    pub VirtualAddress: u64,
    /// HsaAccessAttributeFailure: NotPresent 0, ReadOnly 1, NoExecute 2, GpuAccess 3.
    pub Failure: u32,
    pub Flags: u32,
}

#[repr(C, packed(4))]
#[derive(Clone, Copy, Default)]
pub struct HsaEventData {
    pub EventType: u32,
    /// The union of HsaSyncVar / HsaMemoryAccessFault / ... (20 bytes at most).
    pub EventData: [u32; 5],
    pub HWData1: u64,
    pub HWData2: u64,
    pub HWData3: u32,
}

#[repr(C, packed(4))]
#[derive(Clone, Copy, Default)]
pub struct HsaEventDescriptor {
    pub EventType: u32,
    pub NodeId: u32,
    pub SyncVar: HsaSyncVar,
}

#[repr(C, packed(4))]
#[derive(Clone, Copy, Default)]
pub struct HsaEvent {
    pub EventId: u32,
    pub EventData: HsaEventData,
}

#[repr(C, packed(4))]
#[derive(Clone, Copy, Default)]
pub struct HsaClockCounters {
    pub GPUClockCounter: u64,
    pub CPUClockCounter: u64,
    pub SystemClockCounter: u64,
    pub SystemClockFrequencyHz: u64,
}

pub mod pointer_type {
    pub const UNKNOWN: u32 = 0;
    pub const ALLOCATED: u32 = 1;
    pub const REGISTERED_USER: u32 = 2;
}

#[repr(C, packed(4))]
#[derive(Clone, Copy)]
pub struct HsaPointerInfo {
    pub Type: u32,
    pub Node: u32,
    pub MemFlags: u32,
    pub CPUAddress: u64,
    pub GPUAddress: u64,
    pub SizeInBytes: u64,
    pub NRegisteredNodes: u32,
    pub NMappedNodes: u32,
    pub RegisteredNodes: *const u32,
    pub MappedNodes: *const u32,
    pub UserData: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct HsaGpuTileConfig {
    pub TileConfig: *mut u32,
    pub MacroTileConfig: *mut u32,
    pub NumTileConfigs: u32,
    pub NumMacroTileConfigs: u32,
    pub GbAddrConfig: u32,
    pub NumBanks: u32,
    pub NumRanks: u32,
    pub Reserved: [u32; 7],
}
