#!/usr/bin/env bash
# Build the decode-step kernels (decode.cl and the files it includes) into
# one code object per target: OUT/<target>/decode.co (code object V5).
# Usage: tests/kernels/decode/build.sh [OUT_DIR] [TARGET...]
#   OUT_DIR defaults to tests/kernels/build; TARGETs default to the five
#   bundled ones. Any RDNA target clang-19 knows works, e.g.
#   tests/kernels/decode/build.sh /tmp/k gfx1102   (then: relaunch demo
#   --device ... --code-object /tmp/k/gfx1102/decode.co)
# Needs Debian's clang-19 and lld-19; no ROCm device libraries (-nogpulib).
# -cl-fp32-correctly-rounded-divide-sqrt: / and sqrt round like the CPU
# oracle's (OpenCL would otherwise allow 2.5-3 ulp).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../build}"
shift || true
clang="${CLANG:-clang-19}"
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    targets=(gfx1010 gfx1030 gfx1100 gfx1151 gfx1201)
fi

if ! command -v "$clang" >/dev/null 2>&1; then
    echo "decode/build.sh: $clang not found (apt-get install clang-19 lld-19)" >&2
    exit 1
fi

for target in "${targets[@]}"; do
    mkdir -p "$out/$target"
    "$clang" -x cl -Xclang -finclude-default-header -nogpulib \
        -target amdgcn-amd-amdhsa -mcpu="$target" -O2 -cl-kernel-arg-info \
        -cl-fp32-correctly-rounded-divide-sqrt -I"$here" \
        "$here/decode.cl" -o "$out/$target/decode.co"
done
