//! The encoders' integration tests, one binary. `env_full_state.rs`, which
//! sets an environment variable the encoder reads, stays a binary of its own.

#[path = "../common/mod.rs"]
mod common;

mod builder;
mod fixtures;
mod golden;
mod profile;
mod roundtrip;
mod scratch;
mod segments;
mod streams;
mod verdict_fixtures;
