//! The middle floor: the interposer's process-wide state. The shadow
//! record keyed by the real HIP handles (modules, functions, graphs,
//! execs, captures, allocations) behind one mutex; the relaunch device
//! (`gpu`); the registered fat binaries and host stubs (`registry`); the
//! replay switch and launch totals (`counters`). A panic while updating
//! it disables the shadow for the rest of the process (every call then
//! falls through). Stands on the model and the HIP ground; never imports
//! the exports.

pub mod counters;
pub mod gpu;
pub mod registry;

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Once};

use parking_lot::Mutex;

pub use gpu::gpu;

use crate::hip::{key, Handle, KernelNodeParams};
use crate::model::capture::Capture;
use crate::model::exec::ShadowExec;
use crate::model::reason::Reason;
use crate::model::shadow::{Function, NodeKernel, ShadowGraph, ShadowModule};
use crate::model::transfers::MemoryMap;

#[derive(Default)]
pub struct State {
    pub modules: HashMap<usize, Arc<ShadowModule>>,
    pub functions: HashMap<usize, Function>,
    pub graphs: HashMap<usize, ShadowGraph>,
    pub execs: HashMap<usize, Arc<ShadowExec>>,
    /// Execs never shadowed: why, and their launches (`inspect`).
    pub on_hip: HashMap<usize, counters::OnHip>,
    /// Stream -> the capture in progress on it.
    pub captures: HashMap<usize, Capture>,
    /// Allocations HIP made (`hipMalloc`, `hipHostMalloc`): what a memset
    /// or memcpy node may reach (`model/transfers.rs`).
    pub memory: MemoryMap,
}

impl State {
    /// The node launch HIP describes with `params` (a module function, or
    /// a registered host stub), or why it is unsupported.
    ///
    /// # Safety
    /// As [`crate::model::args::kernel_of`].
    pub unsafe fn kernel_of(&self, params: *const KernelNodeParams) -> Result<NodeKernel, Reason> {
        // A module function, else a host stub of a statically registered
        // kernel (hipcc programs put the stub in `func`).
        let function_of = |func: usize| -> Option<Function> {
            match self.functions.get(&func) {
                Some(f) => Some(f.clone()),
                None => registry::function_of_stub(func),
            }
        };
        // SAFETY: per the caller.
        unsafe { crate::model::args::kernel_of(params, function_of) }
    }

    /// Every capture in progress falls through: `stream`, which the real
    /// HIP reports capturing but the shadow does not (joined through
    /// events), put work in a captured graph the shadow cannot attribute.
    pub fn mark_all_captures(&mut self, stream: Handle) {
        for c in self.captures.values_mut() {
            c.mark_unsupported(Reason::CrossStream {
                stream: key(stream),
            });
        }
    }

    /// The shadow graph holding node `node`, and the node's position in it.
    pub fn graph_of(&mut self, node: usize) -> Option<(&mut ShadowGraph, usize)> {
        self.graphs
            .values_mut()
            .find_map(|g| g.index.get(&node).copied().map(|at| (g, at)))
    }

    /// Marks the graph holding `node` unsupported (the first reason is
    /// kept). A node of no shadow graph may belong to a captured one (whose
    /// real node handles the shadow never saw): every captured graph gives
    /// up then, as any may hold it.
    pub fn give_up_graph(&mut self, node: usize, why: Reason) {
        if let Some((g, _)) = self.graph_of(node) {
            tracing::info!(reason = %why, "graph falls through");
            g.unsupported.get_or_insert(why);
            return;
        }
        for g in self.graphs.values_mut().filter(|g| g.positional) {
            tracing::info!(reason = %why, "captured graph falls through (the node may be one of its)");
            g.unsupported.get_or_insert(Reason::PossiblyCaptured {
                reason: Box::new(why.clone()),
                node,
            });
        }
    }

    /// Marks the graph holding memset, memcpy or event node `node`
    /// unsupported (as [`State::give_up_graph`], but an ordering node's
    /// graph is found too).
    pub fn give_up_node_graph(&mut self, node: usize, why: Reason) {
        let graph = self
            .graphs
            .values_mut()
            .find(|g| g.index.contains_key(&node) || g.ordering.contains(node));
        match graph {
            Some(g) => {
                tracing::info!(reason = %why, "graph falls through");
                g.unsupported.get_or_insert(why);
            }
            None => self.give_up_graph(node, why),
        }
    }
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| Mutex::new(State::default()));
static DISABLED: AtomicBool = AtomicBool::new(false);

/// The interposer's reports (what is replayed, what falls through and
/// why) go to stderr when `RELAUNCH_LOG` is set (e.g. `info`), unless the
/// application installed its own global subscriber; unset, nothing is
/// printed. Once, before the first shadow update or registration.
pub fn init_logging() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("RELAUNCH_LOG") else {
            return;
        };
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init();
    });
}

/// Runs `f` on the shadow state unless it was disabled. A panic inside is
/// caught (never crosses the C boundary) and disables the shadow.
pub fn with_state<T>(what: &str, f: impl FnOnce(&mut State) -> T) -> Option<T> {
    guarded(what, || f(&mut STATE.lock()))
}

/// Runs `f` (outside the state lock) with panics caught; a panic disables
/// the shadow and yields `None`.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Option<T> {
    init_logging();
    if DISABLED.load(Ordering::Acquire) {
        return None;
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(panic) => {
            DISABLED.store(true, Ordering::Release);
            tracing::error!(
                call = what,
                panic = %relaunch::panic_message(panic.as_ref()),
                "the relaunch shadow panicked; every later HIP call falls through to the real HIP"
            );
            None
        }
    }
}

/// Makes exec `exec` fall through from now on (outside the state lock).
pub fn give_up_exec(exec: Handle, why: Reason, call: &'static str) {
    let shadow = with_state(call, |s| s.execs.get(&key(exec)).cloned()).flatten();
    if let Some(shadow) = shadow {
        guarded(call, || shadow.fall_back(why));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_to_a_node_of_no_graph_gives_up_every_captured_graph() {
        let mut s = State::default();
        let mut explicit = ShadowGraph::default();
        explicit.add_ordering_node(0x10, &[]);
        s.graphs.insert(1, explicit);
        s.graphs.insert(2, Capture::default().into_graph());
        // A node the explicit graph holds: only that graph gives up.
        s.give_up_node_graph(0x10, Reason::HostNode);
        assert!(matches!(s.graphs[&1].unsupported, Some(Reason::HostNode)));
        assert!(s.graphs[&2].unsupported.is_none());
        // A node of no shadow graph: every captured graph may hold it.
        s.give_up_graph(0x99, Reason::Attribute { attr: 3 });
        let why = s.graphs[&2].unsupported.clone().unwrap();
        assert!(
            matches!(why, Reason::PossiblyCaptured { node: 0x99, .. }),
            "{why}"
        );
    }

    #[test]
    fn a_cross_stream_launch_makes_every_capture_fall_through() {
        let mut s = State::default();
        s.captures.insert(1, Capture::default());
        s.captures.insert(2, Capture::default());
        s.mark_all_captures(0x5 as Handle);
        for (_, c) in s.captures.drain() {
            let why = c.into_graph().unsupported.unwrap();
            assert!(matches!(why, Reason::CrossStream { stream: 0x5 }), "{why}");
        }
    }
}
