//! Attribute enums passed to the `*_get_info` calls, and flag values.
//! All C enums here are passed as 32-bit unsigned integers. The comment on
//! each attribute names the type the runtime writes through `value`.

/// `hsa_system_info_t`.
pub type SystemInfo = u32;
/// u16.
pub const HSA_SYSTEM_INFO_VERSION_MAJOR: SystemInfo = 0;
/// u16.
pub const HSA_SYSTEM_INFO_VERSION_MINOR: SystemInfo = 1;
/// u64.
pub const HSA_SYSTEM_INFO_TIMESTAMP: SystemInfo = 2;
/// u64, in Hz: the unit of `hsa_signal_wait_*` timeout hints.
pub const HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY: SystemInfo = 3;
/// u64.
pub const HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT: SystemInfo = 4;
/// `const char*`: ROCr's build identifier (e.g. "6.2.41133-..."), how
/// relaunch tells runtime versions apart.
pub const HSA_AMD_SYSTEM_INFO_BUILD_VERSION: SystemInfo = 0x200;

/// `hsa_device_type_t`.
pub type DeviceType = u32;
pub const HSA_DEVICE_TYPE_CPU: DeviceType = 0;
pub const HSA_DEVICE_TYPE_GPU: DeviceType = 1;
pub const HSA_DEVICE_TYPE_DSP: DeviceType = 2;

/// `hsa_agent_info_t` and `hsa_amd_agent_info_t` (same parameter).
pub type AgentInfo = u32;
/// char[64], NUL-terminated (e.g. "gfx1100").
pub const HSA_AGENT_INFO_NAME: AgentInfo = 0;
/// char[64].
pub const HSA_AGENT_INFO_VENDOR_NAME: AgentInfo = 1;
/// u32 bit set (`HSA_AGENT_FEATURE_*`).
pub const HSA_AGENT_INFO_FEATURE: AgentInfo = 2;
/// u32.
pub const HSA_AGENT_INFO_WAVEFRONT_SIZE: AgentInfo = 6;
/// u16[3].
pub const HSA_AGENT_INFO_WORKGROUP_MAX_DIM: AgentInfo = 7;
/// u32.
pub const HSA_AGENT_INFO_WORKGROUP_MAX_SIZE: AgentInfo = 8;
/// `hsa_dim3_t`.
pub const HSA_AGENT_INFO_GRID_MAX_DIM: AgentInfo = 9;
/// u32.
pub const HSA_AGENT_INFO_GRID_MAX_SIZE: AgentInfo = 10;
/// u32.
pub const HSA_AGENT_INFO_QUEUES_MAX: AgentInfo = 12;
/// u32.
pub const HSA_AGENT_INFO_QUEUE_MIN_SIZE: AgentInfo = 13;
/// u32.
pub const HSA_AGENT_INFO_QUEUE_MAX_SIZE: AgentInfo = 14;
/// `hsa_queue_type32_t`.
pub const HSA_AGENT_INFO_QUEUE_TYPE: AgentInfo = 15;
/// u32.
pub const HSA_AGENT_INFO_NODE: AgentInfo = 16;
/// `hsa_device_type_t`.
pub const HSA_AGENT_INFO_DEVICE: AgentInfo = 17;
/// u32.
pub const HSA_AMD_AGENT_INFO_CHIP_ID: AgentInfo = 0xA000;
/// u32.
pub const HSA_AMD_AGENT_INFO_CACHELINE_SIZE: AgentInfo = 0xA001;
/// u32.
pub const HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT: AgentInfo = 0xA002;
/// u32.
pub const HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY: AgentInfo = 0xA003;
/// u32.
pub const HSA_AMD_AGENT_INFO_DRIVER_NODE_ID: AgentInfo = 0xA004;
/// u32: bus [15:8], device [7:3], function [2:0].
pub const HSA_AMD_AGENT_INFO_BDFID: AgentInfo = 0xA006;
/// char[64].
pub const HSA_AMD_AGENT_INFO_PRODUCT_NAME: AgentInfo = 0xA009;
/// u32.
pub const HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES: AgentInfo = 0xA00C;
/// u32 (PCI domain).
pub const HSA_AMD_AGENT_INFO_DOMAIN: AgentInfo = 0xA00F;
/// char[21], e.g. "GPU-0123456789abcdef"; "GPU-XX" means no UUID.
/// The agent attribute relaunch's simulator answers (a `u8`, 1 when the
/// simulated runtime installed a trap handler for that GPU): outside the
/// HSA and AMD ranges, and never asked of another runtime.
pub const RELAUNCH_SIM_AGENT_INFO_TRAP_HANDLER: AgentInfo = 0x7E1A_0001;
pub const HSA_AMD_AGENT_INFO_UUID: AgentInfo = 0xA011;
/// u32.
pub const HSA_AMD_AGENT_INFO_ASIC_REVISION: AgentInfo = 0xA012;

/// `hsa_amd_segment_t`.
pub const HSA_AMD_SEGMENT_GLOBAL: u32 = 0;
pub const HSA_AMD_SEGMENT_READONLY: u32 = 1;
pub const HSA_AMD_SEGMENT_PRIVATE: u32 = 2;
pub const HSA_AMD_SEGMENT_GROUP: u32 = 3;

/// `hsa_amd_memory_pool_global_flag_t` bits.
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT: u32 = 1;
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED: u32 = 4;

/// `hsa_amd_memory_pool_info_t`.
pub type MemoryPoolInfo = u32;
/// `hsa_amd_segment_t`.
pub const HSA_AMD_MEMORY_POOL_INFO_SEGMENT: MemoryPoolInfo = 0;
/// u32 bit set of `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*`.
pub const HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS: MemoryPoolInfo = 1;
/// size_t.
pub const HSA_AMD_MEMORY_POOL_INFO_SIZE: MemoryPoolInfo = 2;
/// bool (one byte).
pub const HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED: MemoryPoolInfo = 5;
/// size_t.
pub const HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE: MemoryPoolInfo = 6;
/// size_t.
pub const HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT: MemoryPoolInfo = 7;
/// bool.
pub const HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL: MemoryPoolInfo = 15;
/// size_t.
pub const HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE: MemoryPoolInfo = 16;

/// `hsa_amd_memory_pool_flag_t` (the `flags` of `hsa_amd_memory_pool_allocate`).
/// Declared by ROCr's headers from interface 1.7 on, not by Debian's 5.2 header.
pub const HSA_AMD_MEMORY_POOL_STANDARD_FLAG: u32 = 0;
/// Memory the CP may fetch PM4 indirect buffers or code from.
pub const HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG: u32 = 1 << 2;

/// `hsa_amd_agent_memory_pool_info_t`.
pub type AgentMemoryPoolInfo = u32;
/// `hsa_amd_memory_pool_access_t`.
pub const HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS: AgentMemoryPoolInfo = 0;
pub const HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED: u32 = 0;
pub const HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT: u32 = 1;
pub const HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT: u32 = 2;

/// `hsa_signal_condition_t`.
pub type SignalCondition = u32;
pub const HSA_SIGNAL_CONDITION_EQ: SignalCondition = 0;
pub const HSA_SIGNAL_CONDITION_NE: SignalCondition = 1;
pub const HSA_SIGNAL_CONDITION_LT: SignalCondition = 2;
pub const HSA_SIGNAL_CONDITION_GTE: SignalCondition = 3;

/// `hsa_wait_state_t`.
pub type WaitState = u32;
pub const HSA_WAIT_STATE_BLOCKED: WaitState = 0;
pub const HSA_WAIT_STATE_ACTIVE: WaitState = 1;

/// `hsa_profile_t`.
pub const HSA_PROFILE_BASE: u32 = 0;
pub const HSA_PROFILE_FULL: u32 = 1;
/// `hsa_default_float_rounding_mode_t`.
pub const HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT: u32 = 0;
pub const HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO: u32 = 1;
pub const HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR: u32 = 2;

/// `hsa_symbol_kind_t`.
pub const HSA_SYMBOL_KIND_VARIABLE: u32 = 0;
pub const HSA_SYMBOL_KIND_KERNEL: u32 = 1;
pub const HSA_SYMBOL_KIND_INDIRECT_FUNCTION: u32 = 2;

/// `hsa_executable_symbol_info_t`.
pub type ExecutableSymbolInfo = u32;
/// `hsa_symbol_kind_t`.
pub const HSA_EXECUTABLE_SYMBOL_INFO_TYPE: ExecutableSymbolInfo = 0;
/// u32.
pub const HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH: ExecutableSymbolInfo = 1;
/// char[NAME_LENGTH], not NUL-terminated.
pub const HSA_EXECUTABLE_SYMBOL_INFO_NAME: ExecutableSymbolInfo = 2;
/// `hsa_agent_t`.
pub const HSA_EXECUTABLE_SYMBOL_INFO_AGENT: ExecutableSymbolInfo = 20;
/// u64.
pub const HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS: ExecutableSymbolInfo = 21;
/// u64: the kernel descriptor's address.
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT: ExecutableSymbolInfo = 22;
/// u32.
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE: ExecutableSymbolInfo = 11;
/// u32.
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT: ExecutableSymbolInfo = 12;
/// u32.
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE: ExecutableSymbolInfo = 13;
/// u32.
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE: ExecutableSymbolInfo = 14;
/// bool.
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK: ExecutableSymbolInfo = 15;
