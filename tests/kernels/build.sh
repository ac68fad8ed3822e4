#!/usr/bin/env bash
# Build the test kernels into committed code-object fixtures:
#   tests/kernels/build/<target>/<name>.co      code object V5 (clang-19 default)
#   tests/kernels/build/<target>/<name>-v4.co   code object V4 (v4_targets x v4_kernels)
#   tests/kernels/build/gfx90a/counter.co       a target outside RDNA (refused by family)
#   tests/kernels/build/<target>/decode.co      the decode-step kernels (decode/build.sh)
#   tests/kernels/build/<target>/<name>.co      also the HIP kernels of hip/ (hip_kernels)
#   tests/kernels/build/<target>/<name>-w64.co  HIP kernels built for wave64 (w64_*)
#   tests/kernels/build/<target>/dot_math.co    HIP dot products (dot_targets: not
#                                               gfx1010, which has no dot instructions)
#   tests/kernels/build/gfx1100/hip_printf.co   HIP device printf (hostcall), code object
#                                               V4, against the ROCm device libraries
#   tests/kernels/bundles/<target>/relaunch_demo_<target>.{kpack,json}
#                                               the decode kernels as a bundle tree
#                                               (relaunch bundle pack; relaunch demo
#                                               loads them through its catalog)
# Usage: tests/kernels/build.sh [OUT_DIR [BUNDLE_DIR]]
#   (defaults: tests/kernels/build and tests/kernels/bundles; with an OUT_DIR
#   and no BUNDLE_DIR no bundle tree is written). The bundle step runs
#   $RELAUNCH (default: cargo run -p relaunch-cli from this checkout).
# Needs Debian's clang-19 (which brings ld.lld-19) and, for hip/, Debian's
# HIP headers (libamdhip64-dev). No ROCm device libraries, except for the
# printf kernel (hostcall_kernels: printf is ockl code), which needs
# Debian's rocm-device-libs and llvm-as-19 (llvm-19); the others use clang
# builtins only (see common.h and hip/common.h).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/build}"
if [ "$#" -ge 1 ]; then bundles="${2:-}"; else bundles="$here/bundles"; fi
clang="${CLANG:-clang-19}"
targets=(gfx1010 gfx1030 gfx1100 gfx1151 gfx1201)
kernels=(counter add_scalar axpy produce_consume lds_reverse scratch_hog scratch_huge uses_printf
    reduce_lds divergent atomics)
hip_kernels=(wave_scan half_math int64_math ctr_k)
w64_targets=(gfx1100 gfx1151 gfx1201)
w64_kernels=(wave_scan)
dot_targets=(gfx1030 gfx1100 gfx1151 gfx1201)
dot_kernels=(dot_math)
v4_targets=(gfx1030 gfx1100)
v4_kernels=(counter add_scalar)
hostcall_targets=(gfx1100)
hostcall_kernels=(hip_printf)
device_libs="${ROCM_DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}"

if ! command -v "$clang" >/dev/null 2>&1; then
    echo "build.sh: $clang not found (apt-get install clang-19 lld-19)" >&2
    exit 1
fi

compile() { # target source output [extra flags...]
    local target="$1" src="$2" dst="$3"
    shift 3
    "$clang" -x cl -Xclang -finclude-default-header -nogpulib \
        -target amdgcn-amd-amdhsa -mcpu="$target" -O2 -cl-kernel-arg-info -I"$here" \
        "$@" "$here/$src.cl" -o "$dst"
}

# HIP device code only, as an ELF code object. -fuse-cuid=none: otherwise
# the compilation-unit id hashes the output path into the object, and a
# build elsewhere (device/tests/codeobj_rebuild.rs) would differ.
compile_hip() { # target source output [extra flags...]
    local target="$1" src="$2" dst="$3"
    shift 3
    "$clang" -x hip -nogpulib --offload-arch="$target" --cuda-device-only \
        --no-gpu-bundle-output -fuse-cuid=none -O2 -I"$here/hip" \
        "$@" "$here/hip/$src.hip" -o "$dst"
}

for target in "${targets[@]}"; do
    mkdir -p "$out/$target"
    for k in "${kernels[@]}"; do
        compile "$target" "$k" "$out/$target/$k.co"
    done
    for k in "${hip_kernels[@]}"; do
        compile_hip "$target" "$k" "$out/$target/$k.co"
    done
done
for target in "${w64_targets[@]}"; do
    for k in "${w64_kernels[@]}"; do
        compile_hip "$target" "$k" "$out/$target/$k-w64.co" -mwavefrontsize64
    done
done
for target in "${dot_targets[@]}"; do
    for k in "${dot_kernels[@]}"; do
        compile_hip "$target" "$k" "$out/$target/$k.co"
    done
done
for target in "${v4_targets[@]}"; do
    for k in "${v4_kernels[@]}"; do
        compile "$target" "$k" "$out/$target/$k-v4.co" -mcode-object-version=4
    done
done
if [ ! -f "$device_libs/ockl.bc" ]; then
    echo "build.sh: no ROCm device libraries at $device_libs (apt-get install" \
        "rocm-device-libs, or set ROCM_DEVICE_LIBS)" >&2
    exit 1
fi
# HIP device printf goes through ockl's hostcall code, so these link the
# ROCm device libraries, as code object v4 (hidden_hostcall_buffer at
# implicit argument 3). Debian's libraries (ROCm 5.2.3) predate gfx11 and
# have no oclc_isa_version_1100.bc: that file only defines the constant
# __oclc_ISA_version (11000 for gfx1100, as later releases define it), so
# it is assembled here beside links to the rest.
libs="$(mktemp -d)"
trap 'rm -rf "$libs"' EXIT
for f in "$device_libs"/*.bc; do ln -s "$f" "$libs/"; done
for target in "${hostcall_targets[@]}"; do
    n="${target#gfx}"
    if [ ! -e "$libs/oclc_isa_version_$n.bc" ]; then
        printf '%s\n' \
            'target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"' \
            'target triple = "amdgcn-amd-amdhsa"' \
            "@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 ${n}0, align 4" |
            "${LLVM_AS:-llvm-as-19}" - -o "$libs/oclc_isa_version_$n.bc"
    fi
    for k in "${hostcall_kernels[@]}"; do
        "$clang" -x hip --offload-arch="$target" -mcode-object-version=4 \
            --rocm-device-lib-path="$libs" --cuda-device-only --no-gpu-bundle-output \
            -fuse-cuid=none -O2 "$here/hip/$k.hip" -o "$out/$target/$k.co"
    done
done
# The decode-step kernels (relaunch demo): one decode.co per target.
bash "$here/decode/build.sh" "$out" "${targets[@]}"
# CDNA2: reads fine, refused as an unsupported target family.
mkdir -p "$out/gfx90a"
compile gfx90a counter "$out/gfx90a/counter.co"
echo "built $(find "$out" -name '*.co' | wc -l) code objects under $out"
if [ -n "$bundles" ]; then
    # Same command as tests/it/demo_bundle.rs checks the committed tree against.
    if [ -n "${RELAUNCH:-}" ]; then
        relaunch=("$RELAUNCH")
    else
        relaunch=(cargo run --quiet --manifest-path "$here/../../Cargo.toml" -p relaunch-cli --)
    fi
    rm -rf "$bundles"
    arch_args=()
    inputs=()
    for target in "${targets[@]}"; do
        arch_args+=(--arch "$target")
        inputs+=("$out/$target/decode.co")
    done
    "${relaunch[@]}" bundle pack --group demo "${arch_args[@]}" -o "$bundles" "${inputs[@]}"
fi
