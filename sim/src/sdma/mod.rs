//! The copy engine (SDMA) of a simulated GPU, serving a runtime's
//! user-mode SDMA queues: ROCr's host-to-device and device-to-host copies
//! (`hsa_amd_memory_async_copy`, and HIP's copies through it) write SDMA
//! packets to a byte ring and ring a doorbell with the new write offset.
//!
//! What the engine does, as the hardware does it:
//! - the doorbell carries the monotonic byte offset written up to; the
//!   engine reads packets from its read offset up to it (wrapping at the
//!   ring's size) and publishes its read offset where the driver said
//!   (`Queue_read_ptr`), after each packet;
//! - nothing wakes it: it polls the doorbell with a backoff, and keeps
//!   polling briefly after work, as a hardware engine does;
//! - copies, fills, fences, the signal decrement (64-bit atomic add), the
//!   interrupt (TRAP: the driver sets the event whose id it carries),
//!   memory polls and global timestamps; cache actions are counted.
//!
//! Every access goes through the simulator's checked memory, and each
//! packet's footprint meets the cross-queue race check like a compute
//! queue's packets: SDMA work is ordered after what the host knew when it
//! rang the doorbell and before whoever sees the engine's later writes.
//! A VM fault stops the engine and goes to the driver's memory-exception
//! path (ROCr then reports the fault and aborts, as on hardware); a
//! packet the model does not execute halts the engine with an error
//! naming it.

mod engine;
pub mod packets;

pub use engine::{SdmaQueue, SdmaRing};
