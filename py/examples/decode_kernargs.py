"""Build once, patch per token: one add_scalar dispatch (acc[i] += value)
is built once; each token patches the 4-byte ``value`` in place with
``ib.set_kernargs(dispatch_index, bytes, byte_offset=...)`` and replays.
The same tokens are also run by rebuilding the IB every token. Both
accumulators must equal sum(1..T); the speedup of patching over
rebuilding is printed.

    python py/examples/decode_kernargs.py [T] [CODE_OBJECT]

T defaults to 20; CODE_OBJECT to the repository's add_scalar fixture for
the device's target. Device: $RELAUNCH_DEVICE, else GPU 0, else (no ROCm
on this machine) sim:gfx1201, said in one line.
"""

import os
import struct
import sys
import time
from pathlib import Path

import relaunch as rl

N = 64  # work-items (accumulator elements)
BLOCK = 32  # work-items per workgroup
VALUE_OFFSET = 8  # byte offset of `value` in add_scalar(acc, value)
SYMBOL = "add_scalar"


def explicit(acc: rl.Buffer, value: int) -> bytes:
    # The explicit arguments as a C struct {uint *acc; uint value;} packs
    # them (16 bytes): relaunch fills the hidden ones from the geometry.
    return struct.pack("<QII", acc.address(), value, 0)


def build(gpu: rl.Gpu, module: rl.Module, acc: rl.Buffer, value: int) -> rl.Pm4Ib:
    return gpu.build(module, [(SYMBOL, N, BLOCK, 0, explicit(acc, value), False)])


def main(argv: list[str]) -> int:
    tokens = int(argv[1]) if len(argv) > 1 else 20
    if not 1 <= tokens <= 90000:
        print("T must be 1..90000 (the sum must fit in 32 bits)", file=sys.stderr)
        return 2
    gpu = rl.Gpu()
    if gpu.simulated and not os.environ.get("RELAUNCH_DEVICE"):
        print(
            f"device: {gpu.describe()} -- no ROCm GPU on this machine, running on the "
            "simulator (RELAUNCH_DEVICE picks another)"
        )
    if len(argv) > 2:
        path = Path(argv[2])
    else:
        repo = Path(__file__).resolve().parents[2]
        path = repo / "tests" / "kernels" / "build" / gpu.target / "add_scalar.co"
    module = gpu.load_module(path.read_bytes())
    patched, rebuilt = gpu.alloc(4 * N), gpu.alloc(4 * N)

    start = time.perf_counter()
    ib = build(gpu, module, patched, 0)
    for t in range(1, tokens + 1):
        ib.set_kernargs(0, struct.pack("<I", t), byte_offset=VALUE_OFFSET)
        ib.replay()
    patch_us = (time.perf_counter() - start) * 1e6 / tokens

    start = time.perf_counter()
    for t in range(1, tokens + 1):
        build(gpu, module, rebuilt, t).replay()
    rebuild_us = (time.perf_counter() - start) * 1e6 / tokens

    expected = tokens * (tokens + 1) // 2
    ok = patched.read_u32s(0, N) == [expected] * N and rebuilt.read_u32s(0, N) == [expected] * N
    print(
        f"patch+replay: {patch_us:.1f} us/token, rebuild+replay: {rebuild_us:.1f} us/token, "
        f"speedup {rebuild_us / patch_us:.2f}x"
    )
    verdict = "PASS" if ok else "FAIL"
    print(f"decode kernargs: T={tokens} sum = {expected} (patched and rebuilt) [{verdict}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
