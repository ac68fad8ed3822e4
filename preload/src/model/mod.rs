//! The bottom floor: what the interposer knows about HIP's graphs and how
//! they replay, without the exported doors or the process-wide state.
//! Shadow modules and graphs (`shadow`), the nodes that only order others
//! (`ordering_nodes`, `events`, `child_graph`), a stream capture
//! (`capture`), a kernel launch from HIP's two argument forms (`args`),
//! memsets and memcpys as CP DMA ops (`transfers`, `fills`), an exec
//! (`exec`), its builds (`build`), stream-ordered launches (`ordered`) and
//! the thread that follows them (`watch`), launch counts (`launches`),
//! code objects and offload bundles behind a bare pointer (`image`,
//! `bundle`), a registered fat binary (`fatbin`), and why things fall
//! through (`reason`, `category`). Imports the HIP ground (`crate::hip`)
//! and the facade, never `crate::state` or `crate::exports`: what it
//! needs from them (the device, the function a handle names) it is
//! given.

pub mod args;
pub mod build;
pub mod bundle;
pub mod capture;
pub mod category;
pub mod child_graph;
pub mod events;
pub mod exec;
pub mod fatbin;
pub mod fills;
pub mod image;
pub mod launches;
pub mod ordered;
pub mod ordering_nodes;
pub mod reason;
pub mod shadow;
pub mod transfers;
pub mod watch;
