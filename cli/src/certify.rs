//! `relaunch certify CODE_OBJECT [-o MANIFEST.json] [--target gfx…]`: run
//! relaunch's proof on every kernel and print per kernel the verdict
//! (`vmem_only` / `scalar_or_unknown`), the reason, the memory instruction
//! counts, register use and wavefront size; with `-o`, write the manifest
//! that binds those verdicts to the file's bytes (sha256). Exit 0 when the
//! file was read, 2 when it was not.

use std::fmt::Write as _;
use std::path::PathBuf;

use relaunch::CodeObject;
use relaunch::{certify, Certificate};

use super::output::{read_capped, MAX_CODE_OBJECT_FILE_BYTES};
use super::Failure;

#[derive(clap::Args)]
pub struct Args {
    /// Code object (ELF) or clang offload bundle.
    path: PathBuf,
    /// Write the certification manifest (JSON) here.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Pick this target's entry from an offload bundle.
    #[arg(long)]
    target: Option<String>,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let shown = args.path.display().to_string();
    let bytes = read_capped("certify", &args.path, MAX_CODE_OBJECT_FILE_BYTES)?;
    let object = CodeObject::from_bundle_or_elf(&bytes, args.target.as_deref())
        .map_err(|e| Failure::input(format!("certify: {shown}: {e}")))?;
    let certs = certify(&object);
    print!("{}", render(&shown, &bytes, &object, &certs));
    if let Some(out) = &args.output {
        let manifest = relaunch::manifest::write(&bytes, &object, &certs);
        let text = serde_json::to_string_pretty(&manifest).expect("a JSON value serializes");
        std::fs::write(out, text + "\n").map_err(|e| Failure {
            message: format!("certify: cannot write {}: {e}", out.display()),
            code: 1,
        })?;
        say!("manifest: {}", out.display());
    }
    Ok(())
}

fn opt(v: Option<u32>) -> String {
    v.map_or_else(|| "-".to_string(), |n| n.to_string())
}

/// What a vmem_only kernel's scalar loads read, per pointer.
fn proven(c: &Certificate) -> String {
    let pair = |s: Option<u8>| s.map_or("-".into(), |s| format!("s[{s}:{}]", s + 1));
    let mut parts = vec![format!(
        "the kernarg segment through {} ({} load(s))",
        pair(c.kernarg_sgpr),
        c.kernarg_loads.len()
    )];
    if !c.packet_loads.is_empty() {
        parts.push(format!(
            "the dispatch packet through {} ({} load(s))",
            pair(c.dispatch_sgpr),
            c.packet_loads.len()
        ));
    }
    if !c.read_only_loads.is_empty() {
        parts.push(format!(
            "read-only code object data ({} load(s))",
            c.read_only_loads.len()
        ));
    }
    format!("every scalar load reads {}", parts.join(", "))
}

fn render(path: &str, bytes: &[u8], object: &CodeObject, certs: &[Certificate]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{path}: target {}, sha256 {}, {} kernel(s)",
        object.target_label(),
        relaunch::manifest::sha256_hex(bytes),
        object.kernels().len()
    );
    for (k, c) in object.kernels().iter().zip(certs) {
        let r = &k.registers;
        let _ = writeln!(out, "\nkernel {}: {}", k.name, c.read_cache.as_str());
        match &c.reason {
            Some(reason) => {
                let _ = writeln!(out, "  reason:   {reason}");
            }
            None => {
                let _ = writeln!(out, "  reason:   {}", proven(c));
            }
        }
        let _ = writeln!(
            out,
            "  memory:   {} scalar, {} vector, {} LDS of {} instructions",
            c.counts.scalar, c.counts.vector, c.counts.lds, c.counts.instructions
        );
        let _ = writeln!(
            out,
            "  regs:     {} VGPR, {} SGPR; spills {} VGPR, {} SGPR; private {} bytes",
            opt(r.vgpr_count),
            opt(r.sgpr_count),
            opt(r.vgpr_spill_count),
            opt(r.sgpr_spill_count),
            k.private_segment_size
        );
        let _ = writeln!(out, "  wave:     {}", k.wavefront_size);
    }
    out
}
