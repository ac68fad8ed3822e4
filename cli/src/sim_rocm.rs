//! `relaunch sim-rocm --target T -- CMD [ARGS...]`: run CMD with the
//! system's ROCm user space (ROCr, HIP, rocminfo) over a simulated GPU.
//!
//! ROCr reaches the kernel driver only through `libhsakmt.so.1`; CMD gets
//! relaunch's thunk (`relaunch-kfd`) in its place through a private
//! library directory, plus what ROCm tools check before initialising
//! ROCr: `/dev/kfd` opening read-write (the `relaunch-kfd-shim` preload)
//! and `lsmod` listing amdgpu (a private `lsmod` first on PATH).
//! Refused up front: no ROCr, a ROCr that links the thunk into itself
//! (ROCm 6.2 and later), or a target the ROCr found does not know.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Failure;

#[derive(clap::Args)]
pub struct Args {
    /// The simulated GPU's target (e.g. gfx1030); repeat or comma-separate
    /// for several GPUs.
    #[arg(long, default_value = "gfx1030", value_delimiter = ',')]
    target: Vec<String>,
    /// Ordering violations in the runtime's GPU traffic stop the queue
    /// (default: they are listed on stderr when the process closes ROCr).
    #[arg(long)]
    strict: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

/// Where ROCm's ROCr is looked for, in order (after `LD_LIBRARY_PATH`).
const ROCR_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/opt/rocm/lib",
    "/usr/lib64",
    "/usr/lib",
];
const ROCR: &str = "libhsa-runtime64.so.1";

/// Which ROCr knows a target this one does not (for the refusal).
fn known_by(target: &str) -> &'static str {
    relaunch_facts::TargetFacts::lookup(target).map_or("no ROCr relaunch knows of", |r| {
        r.family.facts().runtime.rocr_release
    })
}

pub fn run(args: Args) -> Result<(), Failure> {
    let rocr = find_rocr().ok_or_else(|| {
        Failure::input(format!(
            "no ROCm runtime ({ROCR}) found in LD_LIBRARY_PATH or {}: on Debian, \
             apt-get install libhsa-runtime64-1 (and libamdhip64-5 libamd-comgr2 for HIP programs)",
            ROCR_DIRS.join(", ")
        ))
    })?;
    let bytes = std::fs::read(&rocr)
        .map_err(|e| Failure::input(format!("reading {}: {e}", rocr.display())))?;
    let real = std::fs::canonicalize(&rocr).unwrap_or_else(|_| rocr.clone());
    if !contains(&bytes, b"libhsakmt.so.1\0") {
        return Err(Failure::input(format!(
            "{} does not load libhsakmt.so.1 (ROCm 6.2 and later link the thunk into ROCr and \
             talk to /dev/kfd directly): sim-rocm needs a ROCr that loads the thunk, such as \
             Debian bookworm's ROCr 5.2.3",
            real.display()
        )));
    }
    for t in &args.target {
        relaunch_facts::GfxTarget::parse(t).map_err(|e| Failure::input(e.to_string()))?;
        let mut name = t.as_bytes().to_vec();
        name.push(0);
        if !contains(&bytes, &name) {
            return Err(Failure::input(format!(
                "the ROCr found ({}) does not know {t}, so it would list no GPU; {t} needs {}",
                real.display(),
                known_by(t)
            )));
        }
    }
    let libs = thunk_dir()?;
    eprintln!(
        "relaunch sim-rocm: {} over simulated {}",
        real.display(),
        args.target.join(", ")
    );
    // Before the private directory exists: a signal from then on is noted
    // and passed on, never the launcher's death with the directory left.
    catch_termination();
    let private = PrivateDir::new(&libs)?;
    let mut cmd = Command::new(&args.command[0]);
    cmd.args(&args.command[1..]);
    let join = |var: &str, first: &Path| {
        let mut parts = vec![first.to_path_buf()];
        if let Some(old) = std::env::var_os(var) {
            parts.extend(std::env::split_paths(&old));
        }
        std::env::join_paths(parts).unwrap_or_default()
    };
    cmd.env("LD_LIBRARY_PATH", join("LD_LIBRARY_PATH", &private.path));
    cmd.env("PATH", join("PATH", &private.path.join("bin")));
    let shim = libs.join("librelaunch_kfd_shim.so");
    let preload = match std::env::var("LD_PRELOAD") {
        Ok(old) if !old.is_empty() => format!("{}:{old}", shim.display()),
        _ => shim.display().to_string(),
    };
    cmd.env("LD_PRELOAD", preload);
    cmd.env("RELAUNCH_KFD_TARGETS", args.target.join(","));
    // relaunch's own default device: this ROCr, without the /dev/kfd probe.
    cmd.env("RELAUNCH_HSA_LIB", &rocr);
    if args.strict {
        cmd.env("RELAUNCH_KFD_STRICT", "1");
    }
    if let Some(sig) = pending_signal() {
        drop(private);
        return Err(Failure {
            message: format!("signal {sig} before {} started", args.command[0]),
            code: 128u8.saturating_add(sig as u8),
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| Failure::input(format!("could not run {}: {e}", args.command[0])))?;
    let status = wait_forwarding(child)
        .map_err(|e| Failure::input(format!("waiting for {}: {e}", args.command[0])))?;
    drop(private);
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(Failure {
            message: format!("{} exited with status {code}", args.command[0]),
            code: u8::try_from(code).unwrap_or(1),
        }),
        None => {
            use std::os::unix::process::ExitStatusExt;
            let sig = status.signal().unwrap_or(0);
            Err(Failure {
                message: format!("{} was killed by signal {sig}", args.command[0]),
                code: 128u8.saturating_add(sig as u8),
            })
        }
    }
}

/// The last termination signal the launcher received (0: none).
static PENDING_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn note_signal(sig: libc::c_int) {
    // Async-signal-safe: one atomic store.
    PENDING_SIGNAL.store(sig, std::sync::atomic::Ordering::Relaxed);
}

/// Note SIGTERM, SIGHUP, SIGQUIT and SIGINT instead of dying of them
/// (`timeout`, `kill` name the launcher alone), so the launcher outlives
/// the child and removes its private directory. The child starts with the
/// default actions (exec resets caught signals).
fn catch_termination() {
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGINT] {
        // SAFETY: installs a handler that only stores to an atomic.
        unsafe { libc::signal(sig, note_signal as *const () as libc::sighandler_t) };
    }
}

/// A termination signal noted so far (SIGINT is not one: see below).
fn pending_signal() -> Option<i32> {
    match PENDING_SIGNAL.load(std::sync::atomic::Ordering::Relaxed) {
        0 | libc::SIGINT => None,
        sig => Some(sig),
    }
}

/// Wait for the child, passing on the termination signals noted (before
/// or while it runs). SIGINT is only noted: a terminal's Ctrl-C already
/// reaches the whole process group, the child included.
fn wait_forwarding(mut child: std::process::Child) -> std::io::Result<std::process::ExitStatus> {
    use std::sync::atomic::Ordering;
    let pid = child.id() as libc::pid_t;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        match PENDING_SIGNAL.swap(0, Ordering::Relaxed) {
            0 | libc::SIGINT => {}
            sig => {
                // SAFETY: signals our own child, still unreaped (try_wait above).
                unsafe { libc::kill(pid, sig) };
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Remove private directories of earlier launchers that no longer run
/// (killed with SIGKILL, which no cleanup survives).
fn remove_stale_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("relaunch-sim-rocm-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let ours = e.metadata().is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            // SAFETY: geteuid has no preconditions.
            m.uid() == unsafe { libc::geteuid() }
        });
        if ours && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn find_rocr() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    dirs.extend(ROCR_DIRS.iter().map(PathBuf::from));
    dirs.into_iter().map(|d| d.join(ROCR)).find(|p| p.is_file())
}

/// The directory holding the thunk and the shim: next to this executable
/// (cargo's target directory), or `../lib/relaunch` of an install.
fn thunk_dir() -> Result<PathBuf, Failure> {
    let exe = std::env::current_exe().map_err(|e| Failure::input(e.to_string()))?;
    let here = exe.parent().unwrap_or(Path::new("."));
    let candidates = [here.to_path_buf(), here.join("../lib/relaunch")];
    candidates
        .iter()
        .find(|d| d.join("libhsakmt.so").is_file() && d.join("librelaunch_kfd_shim.so").is_file())
        .cloned()
        .ok_or_else(|| {
            Failure::input(format!(
                "the simulated GPU's thunk (libhsakmt.so, librelaunch_kfd_shim.so) is not next to \
                 {}: build it with `cargo build{} -p relaunch-kfd -p relaunch-kfd-shim`",
                exe.display(),
                if cfg!(debug_assertions) {
                    ""
                } else {
                    " --release"
                }
            ))
        })
}

/// A private directory with `libhsakmt.so.1` (the thunk) and `bin/lsmod`;
/// removed when dropped.
struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    fn new(libs: &Path) -> Result<Self, Failure> {
        let io = |e: std::io::Error| {
            Failure::input(format!("preparing the private library directory: {e}"))
        };
        remove_stale_dirs();
        let base = std::env::temp_dir().join(format!("relaunch-sim-rocm-{}", std::process::id()));
        std::fs::create_dir_all(base.join("bin")).map_err(io)?;
        let dir = PrivateDir { path: base };
        let thunk = std::fs::canonicalize(libs.join("libhsakmt.so")).map_err(io)?;
        std::os::unix::fs::symlink(thunk, dir.path.join("libhsakmt.so.1")).map_err(io)?;
        // rocminfo runs `lsmod | grep amdgpu` before it initialises ROCr.
        let lsmod = dir.path.join("bin/lsmod");
        std::fs::write(
            &lsmod,
            "#!/bin/sh\n# relaunch sim-rocm: the simulated GPU's driver, as lsmod lists it\n\
             echo 'Module                  Size  Used by'\necho 'amdgpu                     1  0'\n",
        )
        .map_err(io)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&lsmod, std::fs::Permissions::from_mode(0o755)).map_err(io)?;
        Ok(dir)
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
