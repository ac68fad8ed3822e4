//! Opaque handles and the few plain structs the runtime hands back
//! (`hsa_queue_t`, `hsa_dim3_t`). Layouts match `hsa.h` in the large
//! (64-bit) model on little-endian x86-64, the only model relaunch supports.

use std::ffi::c_void;

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name {
            /// Opaque value chosen by the runtime; 0 is never a live object.
            pub handle: u64,
        }
    };
}

handle!(
    /// `hsa_agent_t`: a CPU or GPU agent.
    Agent
);
handle!(
    /// `hsa_signal_t`: a 64-bit signal.
    Signal
);
handle!(
    /// `hsa_region_t`: a memory region (core API; relaunch uses AMD pools).
    Region
);
handle!(
    /// `hsa_amd_memory_pool_t`: an AMD memory pool.
    MemoryPool
);
handle!(
    /// `hsa_executable_t`: loaded and frozen code.
    Executable
);
handle!(
    /// `hsa_code_object_reader_t`: a view of code-object bytes.
    CodeObjectReader
);
handle!(
    /// `hsa_loaded_code_object_t`: one code object loaded into an executable.
    LoadedCodeObject
);
handle!(
    /// `hsa_executable_symbol_t`: a kernel or variable in an executable.
    ExecutableSymbol
);

/// `hsa_signal_value_t` in the large model.
pub type SignalValue = i64;

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `hsa_queue_t`: the user-visible head of an AQL queue. The runtime owns
/// it; relaunch only reads `base_address`, `doorbell_signal`, `size`, `id`.
#[repr(C)]
#[derive(Debug)]
pub struct Queue {
    /// `hsa_queue_type32_t`.
    pub queue_type: u32,
    /// Bit set of `HSA_QUEUE_FEATURE_*`.
    pub features: u32,
    /// Start of the ring of `size` 64-byte packets.
    pub base_address: *mut c_void,
    /// Ring it with the packet id after publishing a packet.
    pub doorbell_signal: Signal,
    /// Ring size in packets (a power of two).
    pub size: u32,
    pub reserved1: u32,
    /// Runtime-wide unique queue id.
    pub id: u64,
}

/// `hsa_queue_type32_t` values.
pub const HSA_QUEUE_TYPE_MULTI: u32 = 0;
pub const HSA_QUEUE_TYPE_SINGLE: u32 = 1;
pub const HSA_QUEUE_TYPE_COOPERATIVE: u32 = 2;
/// `hsa_queue_feature_t` bits.
pub const HSA_QUEUE_FEATURE_KERNEL_DISPATCH: u32 = 1;
pub const HSA_QUEUE_FEATURE_AGENT_DISPATCH: u32 = 2;
