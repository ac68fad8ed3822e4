//! `relaunch inspect PATH... [--target gfx…] [--sim-coverage]`: list the
//! kernels of a code object (or of one offload-bundle entry) with their
//! argument tables and PM4 verdicts, or with `--sim-coverage` whether the
//! simulator's interpreter executes every instruction of each (`coverage`).
//! Exit 0 when every file was read, 2 with one line when one was not.

use std::fmt::Write as _;
use std::path::PathBuf;

use relaunch_device::codeobj::{CodeObject, KernelInfo};
use relaunch_encoders::Pm4Verdict;

use super::Failure;

#[derive(clap::Args)]
pub struct Args {
    /// Code objects (ELF) or clang offload bundles (plain or compressed).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Pick this target's entry from an offload bundle.
    #[arg(long)]
    target: Option<String>,
    /// Per kernel: whether the simulator's interpreter executes every
    /// instruction reachable from its entry, and the mnemonics it does not.
    #[arg(long)]
    sim_coverage: bool,
}

/// Largest file `inspect` reads: code objects and bundles are megabytes.
const MAX_INSPECT_BYTES: u64 = 256 << 20;

pub fn run(args: Args) -> Result<(), Failure> {
    let mut out = String::new();
    for (i, path) in args.paths.iter().enumerate() {
        let shown = path.display();
        let bytes = super::output::read_capped("inspect", path, MAX_INSPECT_BYTES)?;
        let object = CodeObject::from_bundle_or_elf(&bytes, args.target.as_deref())
            .map_err(|e| Failure::input(format!("inspect: {shown}: {e}")))?;
        if i > 0 && !args.sim_coverage {
            out.push('\n');
        }
        if args.sim_coverage {
            out.push_str(&super::coverage::render(&shown.to_string(), &object));
        } else {
            out.push_str(&render(&shown.to_string(), &object));
        }
    }
    super::output::print(&out)
}

/// The whole report as text (kept separate from printing for clarity).
fn render(path: &str, object: &CodeObject) -> String {
    let mut out = String::new();
    let n = object.kernels().len();
    let _ = writeln!(
        out,
        "{path}: code object V{}, target {}, {n} kernel{}",
        object.version().number(),
        object.target_label(),
        if n == 1 { "" } else { "s" }
    );
    for k in object.kernels() {
        out.push('\n');
        kernel(&mut out, k);
    }
    out
}

fn kernel(out: &mut String, k: &KernelInfo) {
    let _ = writeln!(out, "kernel {} ({})", k.name, k.symbol);
    let _ = writeln!(out, "  target:     {}", k.target);
    let _ = writeln!(
        out,
        "  kernarg:    {} bytes, align {}",
        k.kernarg_size, k.kernarg_align
    );
    let _ = writeln!(out, "  group:      {} bytes static", k.group_segment_size);
    let _ = writeln!(out, "  private:    {} bytes", k.private_segment_size);
    let _ = writeln!(out, "  wave size:  {}", k.wavefront_size);
    let _ = writeln!(
        out,
        "  code entry: 0x{:x} (descriptor at 0x{:x})",
        k.code_entry_offset, k.kd_vaddr
    );
    let _ = writeln!(out, "  args:");
    let _ = writeln!(
        out,
        "    {:>6} {:>4}  {:<26} name / type",
        "offset", "size", "value kind"
    );
    for a in &k.args {
        let mut label = a.name.clone().unwrap_or_default();
        if let Some(t) = &a.type_name {
            if !label.is_empty() {
                label.push(' ');
            }
            label.push_str(t);
        }
        let line = format!(
            "    {:>6} {:>4}  {:<26} {label}",
            a.offset,
            a.size,
            a.value_kind.as_str()
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(out, "  pm4: {}", k.pm4_verdict());
}
