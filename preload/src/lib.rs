//! relaunch-hipgraph: `librelaunch_hipgraph.so`, the `LD_PRELOAD`
//! interposer. Owns the exported HIP entry points (`exports`), the real
//! functions behind them (`real`, `dlsym(RTLD_NEXT)`), the HIP ABI slice it
//! reads (`hip`), a kernel launch from HIP's two argument forms (`args`),
//! stream capture (`capture`), why things fall through (`reason`), the
//! graph launch that replays (`launch`), the inspection API
//! (`rl_hipgraph_*`, `inspect`),
//! code-object images and offload bundles from a bare pointer (`image`,
//! `bundle`), static registration of fat binaries and host stubs
//! (`registry`), the allocations the shadow sees (`allocators`), memset
//! and memcpy nodes and stream copies as CP DMA ops
//! (`transfers`, `fills`, `nodes`, `stream_transfers`), graph and exec
//! changes made behind the builders' backs (`mutate`), stream-ordered
//! launches and the thread that follows them (`ordered`, `watch`) and the shadow
//! record of modules, graphs and execs (`shadow`, `exec`, `build`,
//! `state`).
//!
//! Every call goes to the real HIP first, so the application only holds
//! real handles; supported graphs then replay as retained PM4 through the
//! `relaunch` facade and everything else falls through unchanged. Refuses:
//! panicking across the C boundary (a panic disables the shadow and all
//! later calls fall through). Must not import anything below the facade
//! except through `relaunch::` re-exports, and nothing may depend on it.

pub mod allocators;
pub mod args;
pub mod build;
pub mod bundle;
pub mod capture;
pub mod child_graph;
pub mod events;
pub mod exec;
pub mod exports;
pub mod fills;
pub mod hip;
pub mod image;
pub mod inspect;
pub mod launch;
pub mod mutate;
pub mod mutate_nodes;
pub mod nodes;
pub mod ordered;
pub mod ordering_nodes;
pub mod real;
pub mod reason;
pub mod registry;
pub mod shadow;
pub mod state;
pub mod stream_transfers;
pub mod transfers;
pub mod watch;
