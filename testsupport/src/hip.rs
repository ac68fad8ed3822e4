//! Building HIP sources with Debian's clang-19 for tests: single kernels
//! to code objects (code object v4 with the HIP headers, `-O0` with and
//! without them) and whole programs linked with HIP. Each returns None (or
//! an error naming what failed) when a tool is missing, which
//! [`crate::missing`] makes a failure under CI.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A temporary path no other build of this process or another one uses:
/// `relaunch-<pid>-<n>-<name>` (tests build in parallel).
fn scratch(name: &str) -> std::path::PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("relaunch-{}-{n}-{name}", std::process::id()))
}

/// `tests/kernels/hip/dims_v4.hip` built now for gfx1100 as code object v4
/// with clang-19 (a HIP kernel that reads blockDim/gridDim through the
/// dispatch packet). None when clang-19, lld-19 or the HIP headers are
/// missing, which [`crate::missing`] makes a failure under CI.
pub fn dims_v4() -> Option<Vec<u8>> {
    const HIP_HINT: &str = "Debian clang-19, lld-19 and libamdhip64-dev";
    if !crate::require_tool("clang-19", HIP_HINT) {
        return None;
    }
    let src = crate::workspace().join("tests/kernels/hip/dims_v4.hip");
    let out = scratch("dims-v4.co");
    let run = Command::new("clang-19")
        .args([
            "-x",
            "hip",
            "-nogpulib",
            "--offload-arch=gfx1100",
            "-mcode-object-version=4",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
            "-O2",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run clang-19");
    if !run.status.success() {
        crate::missing(
            &format!(
                "a clang-19 that builds {} ({})",
                src.display(),
                String::from_utf8_lossy(&run.stderr)
            ),
            HIP_HINT,
        );
        return None;
    }
    let bytes = std::fs::read(&out).expect("read the built code object");
    let _ = std::fs::remove_file(&out);
    Some(bytes)
}

/// Where Debian's `rocm-device-libs` puts the device library bitcode.
pub const DEVICE_LIBS: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";

/// `tests/hip/<name>.hip`, an unmodified HIP program, built by clang++-19
/// for gfx1030 as code object v4 (HIP 5.2.3 refuses v5) and linked with
/// `-lamdhip64` into `out_dir/<name>`, unless that is newer than the
/// source. The error names what failed; the caller decides whether a
/// missing tool is a skip.
pub fn hip_program(name: &str, out_dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let source = crate::workspace().join(format!("tests/hip/{name}.hip"));
    let exe = out_dir.join(name);
    let modified = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&exe).is_some() && modified(&exe) >= modified(&source) {
        return Ok(exe);
    }
    std::fs::create_dir_all(out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    // Built beside and renamed into place: test processes (nextest runs one
    // per test) building the same program never see a half-written file.
    let partial = out_dir.join(format!("{name}.partial-{}", std::process::id()));
    let out = Command::new("clang++-19")
        .args([
            "-x",
            "hip",
            "--offload-arch=gfx1030",
            "-mcode-object-version=4",
        ])
        .arg(format!("--rocm-device-lib-path={DEVICE_LIBS}"))
        .arg("-O2")
        .arg(&source)
        .arg("-o")
        .arg(&partial)
        .arg("-lamdhip64")
        .output()
        .map_err(|e| {
            format!("cannot run clang++-19 ({e}): apt-get install clang-19 libamdhip64-dev")
        })?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(format!(
            "building {}: {}",
            source.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::rename(&partial, &exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    Ok(exe)
}

/// `tests/kernels/hip/<name>` built at -O0 for `arch` as a code object v4:
/// clang++-19 `-O0` (with `-disable-O0-optnone`, so the IR stays -O0 but
/// may be analysed), then `opt-19 -passes=amdgpu-attributor` (LLVM's own
/// inference of which implicit inputs the code reads, which clang runs at
/// -O1 and above; plain -O0 enables the queue pointer and dispatch id
/// SGPRs whatever the code reads, and the PM4 path cannot deliver those),
/// then `llc-19 -O0` and `ld.lld-19`. The machine code is -O0's: every
/// local in scratch. Device-only, no HIP headers (`-nogpuinc`). None when
/// a tool is missing, which [`crate::missing`] makes a failure under CI.
pub fn hip_o0(name: &str, arch: &str) -> Option<Vec<u8>> {
    hip_o0_with(name, arch, &[])
}

/// [`hip_o0`] with more clang++-19 flags (e.g. `-mwavefrontsize64`).
pub fn hip_o0_with(name: &str, arch: &str, flags: &[&str]) -> Option<Vec<u8>> {
    const HINT: &str = "Debian clang-19, llvm-19 and lld-19";
    for tool in ["clang++-19", "opt-19", "llc-19", "ld.lld-19"] {
        if !crate::require_tool(tool, HINT) {
            return None;
        }
    }
    let src = crate::workspace().join("tests/kernels/hip").join(name);
    let dir = scratch("hip-o0");
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let (bc, inferred, obj, co) = (
        dir.join("k.bc"),
        dir.join("k2.bc"),
        dir.join("k.o"),
        dir.join("k.co"),
    );
    let triple = "-mtriple=amdgcn-amd-amdhsa";
    let cpu = format!("-mcpu={arch}");
    let steps: [(&str, Vec<std::ffi::OsString>); 4] = [
        (
            "clang++-19",
            [
                "-x",
                "hip",
                "-nogpulib",
                "-nogpuinc",
                &format!("--offload-arch={arch}"),
                "-mcode-object-version=4",
                "-O0",
                "-Xclang",
                "-disable-O0-optnone",
                "--cuda-device-only",
                "-emit-llvm",
                "-c",
            ]
            .iter()
            .chain(flags)
            .map(Into::into)
            .chain([src.clone().into(), "-o".into(), bc.clone().into()])
            .collect(),
        ),
        (
            "opt-19",
            [triple, &cpu, "-passes=amdgpu-attributor"]
                .iter()
                .map(Into::into)
                .chain([bc.into(), "-o".into(), inferred.clone().into()])
                .collect(),
        ),
        (
            "llc-19",
            ["-O0", triple, &cpu, "-filetype=obj"]
                .iter()
                .map(Into::into)
                .chain([inferred.into(), "-o".into(), obj.clone().into()])
                .collect(),
        ),
        (
            "ld.lld-19",
            vec!["-shared".into(), obj.into(), "-o".into(), co.clone().into()],
        ),
    ];
    for (tool, args) in steps {
        if !run_tool(tool, &args, &src, arch, HINT) {
            let _ = std::fs::remove_dir_all(&dir);
            return None;
        }
    }
    let bytes = std::fs::read(&co).expect("read the built code object");
    let _ = std::fs::remove_dir_all(&dir);
    Some(bytes)
}

/// Run one build step of `src` for `arch`; a failure is reported through
/// [`crate::missing`] (naming the tool, the source and its stderr) and
/// gives false.
fn run_tool(
    tool: &str,
    args: &[std::ffi::OsString],
    src: &std::path::Path,
    arch: &str,
    hint: &str,
) -> bool {
    let out = Command::new(tool)
        .args(args)
        .output()
        .expect("run the tool");
    if !out.status.success() {
        crate::missing(
            &format!(
                "a {tool} that builds {} for {arch} ({})",
                src.display(),
                String::from_utf8_lossy(&out.stderr)
            ),
            hint,
        );
    }
    out.status.success()
}

/// `tests/kernels/hip/<name>`, built by clang++-19 for `arch` at `-O2` as
/// code object v4 with the HIP headers and without the device libraries,
/// as a plain ELF (`--no-gpu-bundle-output`). None when clang++-19 or the
/// HIP headers are missing, which [`crate::missing`] makes a failure
/// under CI.
pub fn hip_o2_plain(name: &str, arch: &str) -> Option<Vec<u8>> {
    const HINT: &str = "Debian clang-19, lld-19 and libamdhip64-dev";
    if !crate::require_tool("clang++-19", HINT) {
        return None;
    }
    let args = [
        "-nogpulib",
        "-mcode-object-version=4",
        "-O2",
        "--no-gpu-bundle-output",
    ];
    clang_hip(name, arch, "o2-plain", &args, HINT)
}

/// `tests/kernels/hip/<name>` built for `arch` exactly as `clang++-19 -O0`
/// builds it: no attributor, so the queue pointer, the dispatch id and the
/// hostcall buffer stay enabled whatever the code reads (what the reader's
/// `unread` proof is for). Device-only, no HIP headers, code object v4, an
/// offload bundle as clang writes it. None when clang++-19 is missing,
/// which [`crate::missing`] makes a failure under CI.
pub fn hip_o0_plain(name: &str, arch: &str) -> Option<Vec<u8>> {
    const HINT: &str = "Debian clang-19 and lld-19";
    if !crate::require_tool("clang++-19", HINT) {
        return None;
    }
    let args = ["-nogpulib", "-nogpuinc", "-mcode-object-version=4", "-O0"];
    clang_hip(name, arch, "o0-plain", &args, HINT)
}

/// `tests/kernels/hip/<name>` compiled device-only by clang++-19 for
/// `arch` with `flags` into a temporary file (named with `tag`), read
/// back; None after [`crate::missing`] when clang++-19 fails.
fn clang_hip(name: &str, arch: &str, tag: &str, flags: &[&str], hint: &str) -> Option<Vec<u8>> {
    let src = crate::workspace().join("tests/kernels/hip").join(name);
    let out = scratch(&format!("hip-{tag}.co"));
    let args: Vec<std::ffi::OsString> = ["-x", "hip", "--cuda-device-only"]
        .into_iter()
        .map(Into::into)
        .chain([format!("--offload-arch={arch}").into()])
        .chain(flags.iter().map(Into::into))
        .chain([src.clone().into(), "-o".into(), out.clone().into()])
        .collect();
    if !run_tool("clang++-19", &args, &src, arch, hint) {
        return None;
    }
    let bytes = std::fs::read(&out).expect("read the built code object");
    let _ = std::fs::remove_file(&out);
    Some(bytes)
}

/// `tests/kernels/hip/<name>` built now by clang++-19 for `arch` as code
/// object v4 against the ROCm device libraries, as an engine's hipcc build
/// would (an offload bundle, as clang writes it). None when clang++-19, the
/// HIP headers or the device libraries are missing, which
/// [`crate::missing`] makes a failure under CI.
pub fn hip_v4(name: &str, arch: &str) -> Option<Vec<u8>> {
    const HINT: &str = "Debian clang-19, lld-19, libamdhip64-dev and rocm-device-libs";
    if !crate::require_tool("clang++-19", HINT) {
        return None;
    }
    if !std::path::Path::new(DEVICE_LIBS).join("ockl.bc").is_file() {
        crate::missing(&format!("the ROCm device libraries ({DEVICE_LIBS})"), HINT);
        return None;
    }
    let libs = format!("--rocm-device-lib-path={DEVICE_LIBS}");
    let args = ["-mcode-object-version=4", "-O2", libs.as_str()];
    clang_hip(name, arch, "v4", &args, HINT)
}

/// `tests/hip/<name>.hip`'s kernels for `arch` as code object v4 against
/// the device libraries, with `hidden_none` where clang-19 lists
/// `hidden_default_queue` and `hidden_completion_action`, as LLVM's older
/// metadata streamer wrote them for every kernel that does not enqueue.
/// Those two are OpenCL device enqueue's; ROCclr before ROCm 5.7 (ROCm/clr
/// c585aefdb) reads `hidden_completion_action` as "run the device-enqueue
/// scheduler after the kernel", which dereferences a device queue HIP never
/// creates (`VirtualGPU::submitKernelInternal` -> `getVQVirtualAddress`: a
/// SIGSEGV in hipLaunchKernel). clang-19 lists them whenever it cannot
/// prove the kernel leaves them unread, which for any hostcall user it
/// cannot (ockl's `__ockl_hostcall_internal` is optnone). So: clang++-19
/// to optimised IR, the two `amdgpu-no-*` attributes added to each
/// kernel's attribute group (the code reads neither), then `llc-19` and
/// `ld.lld-19`; the machine code is clang's. None when a tool is missing,
/// which [`crate::missing`] makes a failure under CI.
pub fn hip_v4_without_enqueue_args(name: &str, arch: &str) -> Option<Vec<u8>> {
    const HINT: &str = "Debian clang-19, llvm-19, lld-19, libamdhip64-dev and rocm-device-libs";
    for tool in ["clang++-19", "llc-19", "ld.lld-19"] {
        if !crate::require_tool(tool, HINT) {
            return None;
        }
    }
    if !std::path::Path::new(DEVICE_LIBS).join("ockl.bc").is_file() {
        crate::missing(&format!("the ROCm device libraries ({DEVICE_LIBS})"), HINT);
        return None;
    }
    let src = crate::workspace().join(format!("tests/hip/{name}.hip"));
    let dir = scratch("hip-no-enqueue");
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let (ll, marked, obj, co) = (
        dir.join("k.ll"),
        dir.join("k2.ll"),
        dir.join("k.o"),
        dir.join("k.co"),
    );
    let run = |tool: &str, args: Vec<std::ffi::OsString>| run_tool(tool, &args, &src, arch, HINT);
    let clang: Vec<std::ffi::OsString> = [
        "-x",
        "hip",
        &format!("--offload-arch={arch}"),
        "-mcode-object-version=4",
        &format!("--rocm-device-lib-path={DEVICE_LIBS}"),
        "-O2",
        "--cuda-device-only",
        "-emit-llvm",
        "-S",
    ]
    .iter()
    .map(Into::into)
    .chain([src.clone().into(), "-o".into(), ll.clone().into()])
    .collect();
    let built = run("clang++-19", clang) && {
        let ir = std::fs::read_to_string(&ll).expect("read clang's IR");
        std::fs::write(&marked, without_enqueue_args(&ir)).expect("write the IR");
        let llc = [
            "-O2",
            "-mtriple=amdgcn-amd-amdhsa",
            &format!("-mcpu={arch}"),
        ]
        .iter()
        .map(Into::into)
        .chain(["-filetype=obj".into(), marked.clone().into()])
        .chain(["-o".into(), obj.clone().into()])
        .collect();
        run("llc-19", llc)
            && run(
                "ld.lld-19",
                vec!["-shared".into(), obj.into(), "-o".into(), co.clone().into()],
            )
    };
    let bytes = built.then(|| std::fs::read(&co).expect("read the built code object"));
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

/// `ir` (textual LLVM IR) with `"amdgpu-no-default-queue"` and
/// `"amdgpu-no-completion-action"` in the attribute group of every
/// `amdgpu_kernel` definition. Panics when a kernel has no group, which
/// clang always gives it.
fn without_enqueue_args(ir: &str) -> String {
    let groups: std::collections::BTreeSet<&str> = ir
        .lines()
        .filter(|l| l.starts_with("define ") && l.contains(" amdgpu_kernel "))
        .map(|l| {
            l.split_whitespace()
                .rev()
                .find(|t| {
                    t.strip_prefix('#')
                        .is_some_and(|n| n.parse::<u32>().is_ok())
                })
                .unwrap_or_else(|| panic!("a kernel without an attribute group: {l}"))
        })
        .collect();
    assert!(!groups.is_empty(), "no amdgpu_kernel in the IR");
    let mut out = String::with_capacity(ir.len() + 64 * groups.len());
    for line in ir.lines() {
        let group = line
            .strip_prefix("attributes ")
            .and_then(|rest| rest.split_once(" = { "));
        match group {
            Some((id, attrs)) if groups.contains(id) => out.push_str(&format!(
                "attributes {id} = {{ \"amdgpu-no-default-queue\" \"amdgpu-no-completion-action\" \
                 {attrs}"
            )),
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_kernels_groups_gain_the_attributes() {
        let ir = "define protected amdgpu_kernel void @k(ptr %0) local_unnamed_addr #1 {\n\
                  define internal void @f() #2 {\n\
                  attributes #1 = { convergent nounwind }\n\
                  attributes #2 = { nounwind }\n";
        let out = super::without_enqueue_args(ir);
        assert!(out.contains(
            "attributes #1 = { \"amdgpu-no-default-queue\" \"amdgpu-no-completion-action\" \
             convergent nounwind }"
        ));
        assert!(out.contains("attributes #2 = { nounwind }\n"), "{out}");
    }
}
