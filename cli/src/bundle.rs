//! `relaunch bundle pack|list|verify`: per-architecture kernel bundles.
//! `pack` writes `ROOT/<arch>/relaunch_<group>_<arch>.{kpack,json}` from
//! code objects (or offload bundles); `list` shows what a tree holds;
//! `verify` decodes every code object and checks its sha256, target and
//! args_signature. Exit 2 with one line naming the first failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use relaunch_device::bundle::pack::{self, Input, Launch};
use relaunch_device::bundle::{ArchDir, Compression};

use super::output::{read_capped, MAX_CODE_OBJECT_FILE_BYTES};
use super::Failure;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Pack code objects into one .kpack + manifest per arch under ROOT.
    Pack(PackArgs),
    /// List every arch, toc key, size, sha256 and kernel of a tree.
    List { root: PathBuf },
    /// Check every code object of a tree (sha256, target, args_signature).
    Verify { root: PathBuf },
}

#[derive(clap::Args)]
struct PackArgs {
    /// Group name; toc keys are GROUP/<code object file stem>.
    #[arg(long)]
    group: String,
    /// A GPU processor to pack for (repeat for more); each gets its own
    /// archive holding the inputs built for it.
    #[arg(long = "arch", required = true)]
    arches: Vec<String>,
    /// Root of the bundle tree to write.
    #[arg(short = 'o', long = "out")]
    out: PathBuf,
    /// Blob storage: zstd-per-kernel (default) or none.
    #[arg(long, default_value = "zstd-per-kernel")]
    compression: String,
    /// Launch geometry of a kernel, KERNEL=GX[,GY,GZ]/WX[,WY,WZ] (grid and
    /// workgroup in work-items), recorded in the manifest; repeatable.
    #[arg(long = "launch")]
    launch: Vec<String>,
    /// Code objects (ELF) or clang offload bundles.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<(), Failure> {
    match args.command {
        Command::Pack(a) => run_pack(a),
        Command::List { root } => run_list(&root),
        Command::Verify { root } => run_verify(&root),
    }
}

fn dims(text: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("{what} {text:?} needs 1-3 comma-separated sizes"));
    }
    let mut out = [1u32; 3];
    for (slot, p) in out.iter_mut().zip(&parts) {
        *slot = p
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{what} {text:?}: {p:?} is not a positive integer"))?;
    }
    Ok(out)
}

/// `KERNEL=GX[,GY,GZ]/WX[,WY,WZ]`.
fn parse_launch(text: &str) -> Result<(String, Launch), String> {
    let (kernel, geometry) = text
        .split_once('=')
        .ok_or_else(|| format!("--launch {text:?} is not KERNEL=GRID/WORKGROUP"))?;
    let (grid, workgroup) = geometry
        .split_once('/')
        .ok_or_else(|| format!("--launch {text:?} is not KERNEL=GRID/WORKGROUP"))?;
    Ok((
        kernel.to_string(),
        Launch {
            grid: dims(grid, "grid")?,
            workgroup: dims(workgroup, "workgroup")?,
        },
    ))
}

fn run_pack(a: PackArgs) -> Result<(), Failure> {
    let fail = |m: String| Failure::input(format!("bundle pack: {m}"));
    let compression = match a.compression.as_str() {
        "zstd-per-kernel" | "zstd" => Compression::ZstdPerKernel,
        "none" => Compression::None,
        other => {
            return Err(fail(format!(
                "--compression {other:?}: use zstd-per-kernel or none"
            )))
        }
    };
    let mut launch = BTreeMap::new();
    for l in &a.launch {
        let (kernel, geometry) = parse_launch(l).map_err(fail)?;
        launch.insert(kernel, geometry);
    }
    let mut inputs = Vec::new();
    for path in &a.inputs {
        let bytes = read_capped("bundle pack", path, MAX_CODE_OBJECT_FILE_BYTES)?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        inputs.push(Input { name, bytes });
    }
    let packed = pack::pack(&a.group, &a.arches, &inputs, &launch, compression)
        .map_err(|e| fail(e.to_string()))?;
    let written = pack::write_tree(&a.out, &packed).map_err(|e| fail(e.to_string()))?;
    for p in &packed {
        say!(
            "{}: {} code object{} ({}, {} bytes)",
            a.out.join(&p.arch).join(&p.manifest.kpack).display(),
            p.manifest.kernels.len(),
            if p.manifest.kernels.len() == 1 {
                ""
            } else {
                "s"
            },
            compression.name(),
            p.kpack.len()
        );
    }
    say!("wrote {} files under {}", written.len(), a.out.display());
    Ok(())
}

fn arch_dirs(root: &Path, verb: &str) -> Result<Vec<ArchDir>, Failure> {
    let fail = |m: String| Failure::input(format!("bundle {verb}: {m}"));
    let arches = ArchDir::arches(root).map_err(|e| fail(e.to_string()))?;
    if arches.is_empty() {
        return Err(fail(format!(
            "{} holds no arch directories",
            root.display()
        )));
    }
    arches
        .iter()
        .map(|arch| ArchDir::open(root, arch).map_err(|e| fail(e.to_string())))
        .collect()
}

fn run_list(root: &Path) -> Result<(), Failure> {
    for dir in arch_dirs(root, "list")? {
        say!("{}:", dir.dir().display());
        for key in dir.keys() {
            let Some(entry) = dir.entry(key) else {
                continue;
            };
            let kernels: Vec<String> = entry.args_signature["kernels"]
                .as_array()
                .map(|ks| {
                    ks.iter()
                        .filter_map(|k| k["name"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            say!(
                "  {key}  {} bytes  sha256 {}  kernels: {}",
                dir.original_size(key).unwrap_or(0),
                entry.hsaco_sha256,
                kernels.join(", ")
            );
            if let Some(launch) = &entry.launch {
                say!("    launch {launch}");
            }
        }
    }
    Ok(())
}

fn run_verify(root: &Path) -> Result<(), Failure> {
    let mut count = 0usize;
    let dirs = arch_dirs(root, "verify")?;
    for dir in &dirs {
        for key in dir.keys() {
            dir.verify(key).map_err(|e| {
                Failure::input(format!(
                    "bundle verify: {} (arch {}): {e}",
                    dir.dir().display(),
                    dir.arch()
                ))
            })?;
            count += 1;
        }
    }
    say!(
        "ok: {count} code object{} in {} arch director{} under {} verified (sha256, target, \
         args_signature)",
        if count == 1 { "" } else { "s" },
        dirs.len(),
        if dirs.len() == 1 { "y" } else { "ies" },
        root.display()
    );
    Ok(())
}
