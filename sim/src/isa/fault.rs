//! What stops a wave: the interpreter's fault type, and how an instruction
//! hands control back to the execution loop.

use relaunch_isa::Family;

use crate::memory::VmFault;

/// Why an instruction could not be executed. The dispatch turns it into a
/// [`crate::twins::KernelFault::Isa`] naming the kernel and byte offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IsaFault {
    /// An encoding the interpreter does not execute (decoded or not).
    #[error(
        "{mnemonic} ({family:?}) is not implemented by the instruction interpreter: register \
         a host twin for the kernel (twins::register_twin) to run it instead"
    )]
    Unimplemented { mnemonic: String, family: Family },
    /// Bytes the decoder does not know as an instruction of the family.
    #[error(
        "dword {dword:#010x} is not an instruction of {family:?} the decoder knows: register a \
         host twin for the kernel (twins::register_twin) to run it instead"
    )]
    Undecodable { dword: u32, family: Family },
    #[error(transparent)]
    Vm(#[from] VmFault),
    #[error("LDS access of {len} bytes at offset {offset:#x} is outside the {lds_bytes}-byte allocation")]
    Lds {
        offset: u64,
        len: usize,
        lds_bytes: usize,
    },
    /// A register outside what the descriptor allocated (RSRC1 VGPR count).
    #[error("{what}")]
    Register { what: String },
    /// An operand or field value the interpreter cannot give a meaning to.
    #[error("{mnemonic}: {why}")]
    Operand { mnemonic: String, why: String },
    /// Control reached an address that is not an instruction start, or ran
    /// off the end of the decoded code.
    #[error("{0}")]
    Control(String),
    /// An indirect jump to an address the program holds no instruction
    /// at: the workgroup's runner decodes the code there and runs the jump
    /// again (`growth`), or reports why it cannot.
    #[error("indirect jump to {0:#x}, where the simulator has decoded no instruction")]
    Undecoded(u64),
    /// The wave asked the hardware to stop it (s_trap, s_sethalt, ...).
    #[error("{0}")]
    Trap(String),
    /// A private (scratch) access the hardware would not confine to the
    /// wave: outside its slot, or with no scratch enabled.
    #[error("{0}")]
    Private(String),
    /// The kernel's queue was inactivated (abandoned after a timeout, or
    /// destroyed): the interpreter stopped the kernel here.
    #[error(
        "the queue running this kernel was inactivated (abandoned after a timeout, or \
         destroyed): the interpreter stopped the kernel here and its work is discarded"
    )]
    Discarded,
    /// No wave of a cooperative dispatch can go on: each waits at a
    /// barrier or semaphore that only waves which ended or wait too
    /// could release.
    #[error("no wave can go on (deadlock): {0}")]
    Deadlock(String),
}

/// What the execution loop does after an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next instruction.
    Next,
    /// Continue at instruction index `0` of the program.
    Jump(u32),
    /// The wave waits at a workgroup barrier, then goes on with the next
    /// instruction.
    Barrier,
    /// s_endpgm: the wave is done.
    End,
    /// A global wave sync instruction (`gws`): the wave stops before it
    /// (the program counter stays on it) for the cooperative runner,
    /// which performs it and holds or lets the wave go.
    GlobalSync,
}
