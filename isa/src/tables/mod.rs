//! Generated opcode tables, one module per family. Regenerate with
//! `isa/tools/gen_tables.py` (needs llvm-mc-19); never edit by hand.
#![allow(clippy::all, unused_imports)]
#![cfg_attr(rustfmt, rustfmt_skip)]

pub(crate) mod gfx10;
pub(crate) mod gfx11;
pub(crate) mod gfx12;
