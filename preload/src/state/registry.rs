//! The fat binaries registered by hipcc-built programs (keyed by the real
//! `void **` handle `__hipRegisterFatBinary` returned) and the host stub
//! -> (fat binary, kernel name) map graph kernel nodes are resolved
//! through. Its own lock, taken after the state's (`function_of_stub` is
//! called with the state locked): registration runs before `main`, and
//! must not wait for the shadow.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use crate::model::fatbin::FatBinary;
use crate::model::shadow::Function;
use crate::state::gpu::gpu;

/// Fat binaries by their real handle, and host stubs by address.
#[derive(Default)]
struct Registry {
    fatbins: HashMap<usize, Arc<FatBinary>>,
    stubs: HashMap<usize, (Arc<FatBinary>, String)>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Default::default);

/// The kernel a registered host stub (its key) launches, `None` when
/// `func` is not a registered stub; the first one of a fat binary picks
/// its code object for the device (opening it). Called with the shadow
/// state locked (lock order: state, then registry).
pub fn function_of_stub(func: usize) -> Option<Function> {
    let (fatbin, symbol) = REGISTRY.lock().stubs.get(&func).cloned()?;
    Some(Function {
        module: fatbin.module(gpu),
        symbol,
    })
}

/// Files the fat binary the real HIP registered as `modules`.
pub fn register_fatbin(modules: usize, fatbin: FatBinary) {
    REGISTRY.lock().fatbins.insert(modules, Arc::new(fatbin));
}

/// Files host stub `stub` as kernel `name` of fat binary `modules` (a
/// stub of a fat binary not registered here is ignored).
pub fn register_stub(modules: usize, stub: usize, name: String) {
    let mut r = REGISTRY.lock();
    if let Some(fatbin) = r.fatbins.get(&modules).cloned() {
        r.stubs.insert(stub, (fatbin, name));
    }
}

/// The fat binary registered as `modules`.
pub fn fatbin(modules: usize) -> Option<Arc<FatBinary>> {
    REGISTRY.lock().fatbins.get(&modules).cloned()
}

/// Forgets fat binary `modules` and its stubs (nodes built earlier keep
/// their copied code object).
pub fn unregister_fatbin(modules: usize) {
    let mut r = REGISTRY.lock();
    if let Some(gone) = r.fatbins.remove(&modules) {
        r.stubs.retain(|_, (f, _)| !Arc::ptr_eq(f, &gone));
    }
}
