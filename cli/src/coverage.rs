//! `relaunch inspect --sim-coverage`: per kernel, whether the simulator's
//! instruction interpreter executes every instruction reachable from the
//! kernel's entry, and the mnemonics it does not, so an engine author knows
//! before running. The code is decoded as a dispatch would decode it (the
//! whole loaded segment holding the entry, from the entry on, following
//! branches and direct calls, callees placed before the kernel included),
//! by the simulator's own program builder (`relaunch_sim::isa::coverage`).
//!
//! Output, one line per kernel after a heading per code object:
//! `  runs     NAME (N instructions)` or
//! `  missing  NAME (N instructions): MNEMONIC xCOUNT, ...` (with
//! `<undecodable> xN` for unknown words, `<indirect call> xN` for calls
//! through a pointer the analysis cannot follow (a run decodes their
//! targets when it gets there, so whether those run is not known before),
//! `<call outside the code> xN` for direct calls to an address outside the
//! segment, `<long branch outside the code> xN` for `s_getpc_b64`-based
//! jumps out of it (a run faults there, naming the address))
//! (`scripts/sim-corpus` reads these lines). Scratch instructions count
//! like any other: the interpreter runs private memory when the queue
//! gives the dispatch a scratch ring (`relaunch_sim::isa::ScratchSetup`).

use std::fmt::Write as _;

use relaunch_device::codeobj::certify::isa_of;
use relaunch_device::codeobj::{CodeObject, KernelInfo};
use relaunch_sim::isa::{coverage, Coverage};

/// The coverage report of every kernel of `object`.
pub fn render(path: &str, object: &CodeObject) -> String {
    let results: Vec<(&KernelInfo, Result<Coverage, String>)> = object
        .kernels()
        .iter()
        .map(|k| (k, kernel_coverage(object, k)))
        .collect();
    let runs = results
        .iter()
        .filter(|(_, c)| c.as_ref().is_ok_and(Coverage::runs))
        .count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{path}: target {}, {} kernels, {runs} run every instruction on the simulator",
        object.target_label(),
        results.len()
    );
    for (k, c) in &results {
        match c {
            Ok(c) if c.runs() => {
                let _ = writeln!(
                    out,
                    "  runs     {} ({} instructions)",
                    k.name, c.instructions
                );
            }
            Ok(c) => {
                let mut names: Vec<String> =
                    c.missing.iter().map(|(m, n)| format!("{m} x{n}")).collect();
                if c.undecodable > 0 {
                    names.push(format!("<undecodable> x{}", c.undecodable));
                }
                if c.indirect_calls > 0 {
                    names.push(format!("<indirect call> x{}", c.indirect_calls));
                }
                if c.outside_calls > 0 {
                    names.push(format!("<call outside the code> x{}", c.outside_calls));
                }
                if c.outside_branches > 0 {
                    names.push(format!(
                        "<long branch outside the code> x{}",
                        c.outside_branches
                    ));
                }
                let _ = writeln!(
                    out,
                    "  missing  {} ({} instructions): {}",
                    k.name,
                    c.instructions,
                    names.join(", ")
                );
            }
            Err(why) => {
                let _ = writeln!(out, "  missing  {} (0 instructions): <{why}>", k.name);
            }
        }
    }
    out
}

/// The coverage of one kernel, or why its code cannot be decoded.
fn kernel_coverage(object: &CodeObject, k: &KernelInfo) -> Result<Coverage, String> {
    let isa = isa_of(k).ok_or_else(|| format!("no decoder for {}", k.target.processor()))?;
    let entry = k.code_entry_offset;
    let segment = object
        .load_segments()
        .iter()
        .find(|s| entry >= s.vaddr && entry < s.vaddr.saturating_add(s.filesz))
        .ok_or_else(|| format!("code entry 0x{entry:x} is outside the loaded file bytes"))?;
    // The whole segment: the linker may place a kernel's callees before it.
    let code = object.segment_bytes(segment);
    let at = usize::try_from(entry - segment.vaddr)
        .ok()
        .filter(|&at| at < code.len())
        .ok_or_else(|| format!("code entry 0x{entry:x} is outside the loaded file bytes"))?;
    Ok(coverage(isa, code, at))
}
