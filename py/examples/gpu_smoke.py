"""The correctness gate from Python: COUNT dispatches of the counter
kernel in one retained IB, each flagged ``serialize=True`` (a
read-after-write boundary before the next one), one replay, and the
counter must read COUNT.

    python py/examples/gpu_smoke.py COUNT CODE_OBJECT [MANIFEST]

Device: $RELAUNCH_DEVICE, else GPU 0, else (no ROCm on this machine)
sim:gfx1201, said in one line. The kernel: $RELAUNCH_COUNTER_SYMBOL if set,
else ``ctr_k`` (the reference guide's counter, tests/kernels/hip/ctr_k.hip)
when the code object has it, else ``counter`` (tests/kernels/counter.cl).
"""

import os
import sys

import relaunch as rl


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(f"usage: {argv[0]} COUNT CODE_OBJECT [MANIFEST]", file=sys.stderr)
        return 2
    count = int(argv[1])
    if not 1 <= count <= 1_000_000:
        print("COUNT must be 1..1000000", file=sys.stderr)
        return 2
    manifest = open(argv[3]).read() if len(argv) > 3 else None

    gpu = rl.Gpu()
    if gpu.simulated and not os.environ.get("RELAUNCH_DEVICE"):
        print(
            f"device: {gpu.describe()} -- no ROCm GPU on this machine, running on the "
            "simulator (RELAUNCH_DEVICE picks another)"
        )
    with open(argv[2], "rb") as f:
        module = gpu.load_module(f.read(), manifest)
    symbol = os.environ.get("RELAUNCH_COUNTER_SYMBOL") or (
        "ctr_k" if "ctr_k" in module.kernels else "counter"
    )
    counter = gpu.alloc(4)
    # Only the explicit argument (the counter pointer); relaunch fills any
    # hidden arguments from the launch geometry.
    kernarg = counter.address().to_bytes(8, "little")
    dispatches = [(symbol, (1, 1, 1), (1, 1, 1), 0, kernarg, True) for _ in range(count)]
    ib = gpu.build(module, dispatches)
    print(f"ib: {ib.dispatch_count} dispatches, {ib.dwords} dwords")
    ib.replay()
    value = counter.read_u32(0)
    certified = "yes" if manifest is not None else "no"
    verdict = "PASS" if value == count else "FAIL"
    print(f"real-GPU Python gate: counter = {value} / {count} certified={certified} [{verdict}]")
    return 0 if value == count else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
