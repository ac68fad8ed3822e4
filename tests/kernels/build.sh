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
#   tests/kernels/bundles/<target>/relaunch_demo_<target>.{kpack,json}
#                                               the decode kernels as a bundle tree
#                                               (relaunch bundle pack; relaunch demo
#                                               loads them through its catalog)
# Usage: tests/kernels/build.sh [OUT_DIR [BUNDLE_DIR]]
#   (defaults: tests/kernels/build and tests/kernels/bundles; with an OUT_DIR
#   and no BUNDLE_DIR no bundle tree is written). The bundle step runs
#   $RELAUNCH (default: cargo run --bin relaunch from this checkout).
# Needs Debian's clang-19 (which brings ld.lld-19) and, for hip/, Debian's
# HIP headers (libamdhip64-dev). No ROCm device libraries: the kernels use
# clang builtins only (see common.h and hip/common.h).
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
        relaunch=(cargo run --quiet --manifest-path "$here/../../Cargo.toml" --bin relaunch --)
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
