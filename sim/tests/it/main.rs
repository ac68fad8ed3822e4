//! The simulator's integration tests, one binary (one link) for all that
//! can share a process. Tests that replace a kernel twin process-wide
//! (`hung_twin`, `scalar_cache`) stay binaries of their own.

mod cache_floor;
mod cdylib;
mod cross_queue;
mod fuzz_inputs;
mod hsa_runtime;
mod isa_buffer_atomics;
mod isa_calls;
mod isa_clock;
mod isa_d16;
mod isa_fixtures;
mod isa_gws;
mod isa_kernels_dot;
mod isa_kernels_reference;
mod isa_llvm;
mod isa_mode;
mod pinned;
mod pm4;
mod pm4_dispatch_packet;
mod pm4_rocr;
mod pm4_rules;
mod pm4_scratch;
mod pm4_stream_order;
mod pm4_timestamp;
mod replay;
mod scratch;
mod scratch_queue;
mod sdma;
mod trap;
mod workers;
