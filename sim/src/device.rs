//! The simulated GPU as a whole: configuration, memory, signals, loaded
//! kernels (code entry -> descriptor, symbol, family) and the violation log.
//! Queues hold an `Arc<SimDevice>`; the HSA table is a thin layer above.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use relaunch_device::codeobj::{CodeObject, KernelDescriptor};
use relaunch_facts::family::CacheHierarchy;
use relaunch_facts::TargetFacts;
use relaunch_facts::{Family, GfxTarget};

use crate::memory::{DeviceMemory, MemKind, MemoryError, VmFault};
use crate::ordering::{InFlight, Violation};
use crate::signal::SignalTable;

/// How many violations the device log keeps (later ones are counted only).
const VIOLATION_LOG_CAP: usize = 10_000;

/// Compute units a [`SimConfig`] reports unless told otherwise.
pub const DEFAULT_COMPUTE_UNITS: u32 = 32;

/// How the simulated device is set up.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The GPU target it claims to be, e.g. `gfx1201`.
    pub target: String,
    /// Seed for permuting unordered dispatches.
    pub seed: u64,
    /// When true, any ordering violation fails the packet with a queue error;
    /// otherwise violations are only logged (see [`SimDevice::take_violations`]).
    pub strict: bool,
    /// Most bytes of device memory live at once.
    pub memory_limit: usize,
    /// Marketing name reported as the product name.
    pub product_name: String,
    /// Compute units reported.
    pub compute_units: u32,
    /// UUID reported (`GPU-<hex>`); `None` derives a stable one from the
    /// reported name and which board of that name this is (`hsa::anchors`). `Some("GPU-XX")` reports "no UUID", like
    /// boards without one.
    pub uuid: Option<String>,
    /// PCI location reported; `None` puts the k-th board named gfxNNNN at
    /// `NNNN:(e0+k):00.0` (`hsa::anchors`), wherever it is in the list.
    pub pci: Option<SimPci>,
    /// Most workgroups one dispatch may have: twins run on the host, so a
    /// garbage grid must be refused rather than run for hours.
    pub max_workgroups_per_dispatch: u64,
    /// The agent name reported instead of `target` (e.g. `gfx90a`): a
    /// stand-in for a GPU relaunch cannot use (a CDNA board), so the
    /// shared library can play a ROCr whose GPUs are all unusable. Code
    /// objects for the reported name are not loadable on it.
    pub listed_as: Option<String>,
    /// The runtime installs a trap handler (ROCr's rule in relaunch-device's
    /// `hsa::trap`; the simulator answers it to relaunch): dispatches must
    /// then carry RSRC2.TRAP_PRESENT on gfx10/gfx11, as the CP sets it for
    /// AQL dispatches; without one they must not.
    pub trap_handler: bool,
    /// Which runner executes kernels: twins, the instruction interpreter, or
    /// both compared (`RELAUNCH_SIM_KERNELS`, read when the config is made).
    pub kernels: crate::isa::KernelMode,
}

impl SimConfig {
    pub fn new(target: &str) -> Self {
        SimConfig {
            target: target.to_string(),
            seed: 0x5EED,
            strict: true,
            memory_limit: 4 << 30,
            product_name: format!("relaunch simulated {target}"),
            compute_units: DEFAULT_COMPUTE_UNITS,
            max_workgroups_per_dispatch: 1 << 18,
            uuid: None,
            pci: None,
            listed_as: None,
            // `RELAUNCH_SIM_TRAP_HANDLER=0` models a runtime without one
            // (ROCr on gfx11 without the driver's exception debugging).
            trap_handler: std::env::var("RELAUNCH_SIM_TRAP_HANDLER").map_or(true, |v| v != "0"),
            kernels: crate::isa::KernelMode::from_env(),
        }
    }

    /// True when `other` describes the same board (target and identity).
    pub fn same_board(&self, other: &SimConfig) -> bool {
        self.target == other.target
            && self.uuid == other.uuid
            && self.pci == other.pci
            && self.listed_as == other.listed_as
    }
}

/// A simulated board's PCI location (what HSA's BDFID and DOMAIN report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SimPci {
    pub domain: u32,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

/// Errors of device-level operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error("simulated device target {target:?}: {reason}")]
    Target { target: String, reason: String },
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error(transparent)]
    Fault(#[from] VmFault),
    #[error("code object refused: {0}")]
    CodeObject(String),
    #[error(
        "code object is for {object} but this simulated device is {device}: \
         load the build for {device}"
    )]
    WrongTarget { object: String, device: String },
    #[error("kernel {symbol}: {reason}")]
    Kernel { symbol: String, reason: String },
    #[error("queue: {0}")]
    Queue(String),
}

/// A kernel whose code is loaded in device memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelEntry {
    /// Symbol without `.kd`.
    pub symbol: String,
    /// Device address of the 64-byte descriptor (the AQL kernel_object).
    pub kd_addr: u64,
    /// Device address of the first instruction (what COMPUTE_PGM_LO/HI hold).
    pub code_entry: u64,
    pub descriptor: KernelDescriptor,
    pub family: Family,
    /// Kernarg segment alignment from the metadata.
    pub kernarg_align: u32,
}

/// A loaded code object image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedImage {
    pub base: u64,
    pub size: usize,
    pub kernels: Vec<Arc<KernelEntry>>,
}

#[derive(Debug, Default)]
struct KernelMaps {
    by_entry: HashMap<u64, Arc<KernelEntry>>,
    by_kd: HashMap<u64, Arc<KernelEntry>>,
}

/// The simulated GPU.
#[derive(Debug)]
pub struct SimDevice {
    config: SimConfig,
    target: GfxTarget,
    family: Family,
    /// The target's facts row (limits, user-SGPR layout, cache model).
    facts: TargetFacts,
    /// Device memory; shared by every simulated GPU of one HSA system.
    pub memory: Arc<DeviceMemory>,
    /// Signals; shared like the memory.
    pub signals: Arc<SignalTable>,
    kernels: RwLock<KernelMaps>,
    /// Kernels found in memory a runtime's loader filled.
    code_in_memory: crate::code_in_memory::CodeInMemory,
    /// What the command processor did (`counters`).
    pub(crate) cp: crate::counters::CpCounters,
    violations: Mutex<(Vec<Violation>, u64)>,
    /// Packets executing on this device's queues (cross-queue check).
    pub(crate) in_flight: InFlight,
    /// The VM fault that stopped every queue (see `fault`).
    pub(crate) lost: std::sync::OnceLock<crate::fault::VmFaultEvent>,
    pub(crate) fault_handlers: crate::fault::Handlers,
}

impl SimDevice {
    /// A device for `config.target` (an RDNA1-4 target, else refused) with
    /// its own memory and signals.
    pub fn new(config: SimConfig) -> Result<Arc<Self>, SimError> {
        let memory = Arc::new(DeviceMemory::new(config.memory_limit));
        let signals = Arc::new(SignalTable::in_memory(Arc::clone(&memory)));
        Self::new_shared(config, memory, signals)
    }

    /// A device that shares `memory` and `signals` with others (several GPU
    /// agents in one simulated HSA system, one address space).
    pub fn new_shared(
        config: SimConfig,
        memory: Arc<DeviceMemory>,
        signals: Arc<SignalTable>,
    ) -> Result<Arc<Self>, SimError> {
        let refuse = |reason: String| SimError::Target {
            target: config.target.clone(),
            reason,
        };
        let target = GfxTarget::parse(&config.target).map_err(|e| refuse(e.to_string()))?;
        let facts = *target.facts().map_err(|e| refuse(e.to_string()))?;
        Self::build(config, memory, signals, target, facts)
    }

    /// A device whose target is described by `facts` instead of its row in
    /// `relaunch-facts`: for checking a new or altered row end to end before
    /// it is added there. `config.target` must still parse as a target name.
    pub fn with_facts(config: SimConfig, facts: TargetFacts) -> Result<Arc<Self>, SimError> {
        let target = GfxTarget::parse(&config.target).map_err(|e| SimError::Target {
            target: config.target.clone(),
            reason: e.to_string(),
        })?;
        let memory = Arc::new(DeviceMemory::new(config.memory_limit));
        let signals = Arc::new(SignalTable::in_memory(Arc::clone(&memory)));
        Self::build(config, memory, signals, target, facts)
    }

    fn build(
        config: SimConfig,
        memory: Arc<DeviceMemory>,
        signals: Arc<SignalTable>,
        target: GfxTarget,
        facts: TargetFacts,
    ) -> Result<Arc<Self>, SimError> {
        // The coherence checks (`ordering/`) model exactly this hierarchy.
        match facts.cache.hierarchy {
            CacheHierarchy::Gcr => {}
        }
        let family = facts.family;
        Ok(Arc::new(SimDevice {
            memory,
            signals,
            kernels: RwLock::new(KernelMaps::default()),
            code_in_memory: Default::default(),
            cp: Default::default(),
            violations: Mutex::new((Vec::new(), 0)),
            in_flight: InFlight::default(),
            lost: std::sync::OnceLock::new(),
            fault_handlers: crate::fault::Handlers::default(),
            target,
            family,
            facts,
            config,
        }))
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }
    pub fn target(&self) -> &GfxTarget {
        &self.target
    }
    pub fn family(&self) -> Family {
        self.family
    }
    /// The target's facts row.
    pub fn facts(&self) -> &TargetFacts {
        &self.facts
    }

    /// A queue id unique in the process, as `hsa_queue_t.id` must be
    /// over the application's lifetime (HSA runtime spec): two boards'
    /// queues never share one (a lookup by id found either before).
    pub(crate) fn next_queue_id(&self) -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed)
    }

    /// Load a code object: copy its PT_LOAD segments into device memory and
    /// register every kernel's descriptor and code entry.
    pub fn load_code_object(&self, bytes: &[u8]) -> Result<LoadedImage, SimError> {
        let object =
            CodeObject::from_bundle_or_elf(bytes, Some(self.target.processor())).map_err(|e| {
                match e {
                    relaunch_device::codeobj::CodeObjectError::WrongTarget { found, .. } => {
                        SimError::WrongTarget {
                            object: found,
                            device: self.target.to_string(),
                        }
                    }
                    other => SimError::CodeObject(other.to_string()),
                }
            })?;
        if object.target().processor() != self.target.processor() {
            return Err(SimError::WrongTarget {
                object: object.target().to_string(),
                device: self.target.to_string(),
            });
        }
        let size = usize::try_from(object.image_size())
            .ok()
            .filter(|&s| s > 0)
            .ok_or_else(|| SimError::CodeObject("code object has no loadable bytes".into()))?;
        let base = self.memory.allocate(size, MemKind::Code)?;
        let loaded = self.copy_and_register(&object, base);
        if loaded.is_err() {
            let _ = self.memory.free(base);
        }
        let kernels = loaded?;
        tracing::debug!(
            base,
            size,
            kernels = kernels.len(),
            "sim code object loaded"
        );
        Ok(LoadedImage {
            base,
            size,
            kernels,
        })
    }

    fn copy_and_register(
        &self,
        object: &CodeObject,
        base: u64,
    ) -> Result<Vec<Arc<KernelEntry>>, SimError> {
        for seg in object.load_segments() {
            self.memory
                .write(base + seg.vaddr, object.segment_bytes(seg))?;
        }
        // Then the load-time relocations, as ROCr's loader applies them
        // (a `__device__` table of function pointers holds its callees'
        // addresses only once relocated).
        let patches = object
            .patches(base)
            .map_err(|e| SimError::CodeObject(e.to_string()))?;
        for p in patches {
            let bytes = p.value.to_le_bytes();
            self.memory
                .write(base + p.vaddr, &bytes[..usize::from(p.width)])?;
        }
        let mut out = Vec::new();
        for k in object.kernels() {
            let kd_addr = base + k.kd_vaddr;
            let entry = Arc::new(KernelEntry {
                symbol: k.name.clone(),
                kd_addr,
                code_entry: k.descriptor.code_entry(kd_addr),
                descriptor: k.descriptor,
                family: self.family,
                kernarg_align: k.kernarg_align,
            });
            out.push(entry);
        }
        let mut maps = self.kernels.write();
        for e in &out {
            maps.by_entry.insert(e.code_entry, Arc::clone(e));
            maps.by_kd.insert(e.kd_addr, Arc::clone(e));
        }
        Ok(out)
    }

    /// Place a descriptor for `symbol` in fresh code memory (for tests and
    /// front ends that build kernels without an ELF): the descriptor sits at
    /// the start of a 512-byte block and the code entry 256 bytes after it.
    pub fn install_kernel(
        &self,
        symbol: &str,
        mut descriptor: KernelDescriptor,
    ) -> Result<LoadedImage, SimError> {
        const SIZE: usize = 512;
        let base = self.memory.allocate(SIZE, MemKind::Code)?;
        descriptor.kernel_code_entry_byte_offset = 256;
        self.memory.write(base, &descriptor.to_bytes())?;
        let entry = Arc::new(KernelEntry {
            symbol: symbol.strip_suffix(".kd").unwrap_or(symbol).to_string(),
            kd_addr: base,
            code_entry: base + 256,
            descriptor,
            family: self.family,
            kernarg_align: 16,
        });
        let mut maps = self.kernels.write();
        maps.by_entry.insert(entry.code_entry, Arc::clone(&entry));
        maps.by_kd.insert(entry.kd_addr, Arc::clone(&entry));
        Ok(LoadedImage {
            base,
            size: SIZE,
            kernels: vec![entry],
        })
    }

    /// Forget an image's kernels and free its memory.
    pub fn unload(&self, image: &LoadedImage) -> Result<(), SimError> {
        let mut maps = self.kernels.write();
        for k in &image.kernels {
            maps.by_entry.remove(&k.code_entry);
            maps.by_kd.remove(&k.kd_addr);
        }
        drop(maps);
        self.memory.free(image.base)?;
        Ok(())
    }

    /// The kernel whose first instruction is at `code_entry`: loaded here,
    /// else named by a descriptor in the memory holding the code (a real
    /// runtime's loader put it there, `code_in_memory`).
    pub fn kernel_at_entry(&self, code_entry: u64) -> Option<Arc<KernelEntry>> {
        let loaded = self.kernels.read().by_entry.get(&code_entry).cloned();
        loaded.or_else(|| {
            self.code_in_memory
                .at_entry(&self.memory, self.family, code_entry)
        })
    }

    /// What the command processor has done so far (`counters`).
    pub fn cp_counts(&self) -> crate::counters::CpCounts {
        self.cp.snapshot()
    }

    /// Forget kernels found in `[base, base+len)`, which was freed.
    pub fn forget_code_in(&self, base: u64, len: u64) {
        self.code_in_memory.forget(base, len);
    }

    /// The kernel whose descriptor is at `kd` as memory holds it now (an
    /// AQL packet's `kernel_object`): loaded here, else decoded from memory.
    pub fn kernel_in_memory(&self, kd: u64) -> Result<Arc<KernelEntry>, String> {
        if let Some(known) = self.kernel_at_descriptor(kd) {
            return Ok(known);
        }
        self.code_in_memory
            .at_descriptor(&self.memory, self.family, kd)
    }

    /// The kernel whose descriptor is at `kd_addr`.
    pub fn kernel_at_descriptor(&self, kd_addr: u64) -> Option<Arc<KernelEntry>> {
        self.kernels.read().by_kd.get(&kd_addr).cloned()
    }

    /// Refuse a dispatch with more workgroups than the configured limit.
    pub fn check_dispatch_size(&self, grid: [u32; 3], block: [u32; 3]) -> Result<(), String> {
        // Checked: three 32-bit counts can exceed 64 bits (2^31 x 2^31 x 4
        // wrapped to 0 and ran).
        let groups = (0..3).try_fold(1u64, |acc, d| {
            acc.checked_mul(u64::from(grid[d]).div_ceil(u64::from(block[d].max(1))))
        });
        let limit = self.config.max_workgroups_per_dispatch;
        let Some(groups) = groups else {
            return Err(format!(
                "the dispatch's workgroup count (grid {grid:?}, block {block:?}) overflows 64 \
                 bits; the simulator runs at most {limit} per dispatch"
            ));
        };
        if groups > limit {
            return Err(format!(
                "the dispatch has {groups} workgroups (grid {grid:?}, block {block:?}), more than \
                 the simulator runs per dispatch ({limit}; SimConfig::max_workgroups_per_dispatch)"
            ));
        }
        Ok(())
    }

    /// Record violations found by a queue.
    pub(crate) fn log_violations(&self, found: &[Violation]) {
        let mut log = self.violations.lock();
        for v in found {
            tracing::warn!(violation = %v, "sim ordering violation");
            if log.0.len() < VIOLATION_LOG_CAP {
                log.0.push(v.clone());
            } else {
                log.1 += 1;
            }
        }
    }

    /// Take every violation logged so far (and how many were dropped past the cap).
    pub fn take_violations(&self) -> (Vec<Violation>, u64) {
        std::mem::take(&mut *self.violations.lock())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use relaunch_testsupport::fixture;

    #[test]
    fn refuses_non_rdna_targets() {
        let err = SimDevice::new(SimConfig::new("gfx942")).unwrap_err();
        assert!(err.to_string().contains("gfx942"), "{err}");
        assert!(SimDevice::new(SimConfig::new("sm_90")).is_err());
    }

    #[test]
    fn loads_a_code_object_and_maps_its_kernel() {
        let dev = SimDevice::new(SimConfig::new("gfx1201")).unwrap();
        let image = dev
            .load_code_object(&fixture("gfx1201", "counter"))
            .unwrap();
        let k = &image.kernels[0];
        assert_eq!(k.symbol, "counter");
        assert_eq!(k.code_entry % 256, 0);
        let kd = dev.memory.read_vec(k.kd_addr, 64).unwrap();
        assert_eq!(KernelDescriptor::parse(&kd).unwrap(), k.descriptor);
        assert_eq!(dev.kernel_at_entry(k.code_entry).unwrap().symbol, "counter");
        assert_eq!(
            dev.kernel_at_descriptor(k.kd_addr).unwrap().code_entry,
            k.code_entry
        );
        dev.unload(&image).unwrap();
        assert!(dev.kernel_at_entry(k.code_entry).is_none());
        assert_eq!(dev.memory.stats().live_allocations, 0);
    }

    #[test]
    fn refuses_a_code_object_for_another_target() {
        let dev = SimDevice::new(SimConfig::new("gfx1100")).unwrap();
        let err = dev
            .load_code_object(&fixture("gfx1201", "counter"))
            .unwrap_err();
        assert!(matches!(err, SimError::WrongTarget { .. }), "{err}");
        assert!(err.to_string().contains("gfx1201"), "{err}");
        assert_eq!(dev.memory.stats().live_allocations, 0);
    }
}
