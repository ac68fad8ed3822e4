"""Device-local memory from Python: Buffer.read / write / bytes() go
through the runtime's copy (hsa_memory_copy), and allocations of any
length, odd ones included, come back zero-filled; and a runtime that
cannot hold IBs in executable memory is a device error."""

import os
import subprocess
import sys

import pytest

import relaunch as rl
from conftest import KERNELS, TARGET


@pytest.mark.parametrize("size", [1, 3, 7, 10, 64, 4099])
def test_device_local_buffers_are_zeroed_read_and_written_at_any_length(gpu, size):
    buf = gpu.alloc_device(size)
    assert not buf.host_visible
    assert len(buf) == size
    assert bytes(buf) == bytes(size)
    assert buf.read() == bytes(size)

    pattern = bytes((i * 7 + 1) & 0xFF for i in range(size))
    buf.write(0, pattern)
    assert bytes(buf) == pattern
    assert buf.read(0, size) == pattern
    if size > 2:
        # An odd range at an odd offset, its neighbours untouched.
        buf.write(1, b"\x5a" * (size - 2))
        assert buf.read(1, size - 2) == b"\x5a" * (size - 2)
        assert buf.read(0, 1) == pattern[:1]
        assert buf.read(size - 1) == pattern[-1:]
    if size >= 4:
        buf.write(0, b"\x01\x02\x03\x04")
        assert buf.read_u32(0) == 0x04030201


def test_device_local_accesses_outside_the_buffer_are_refused(gpu):
    buf = gpu.alloc_device(5)
    with pytest.raises(ValueError):
        buf.read(4, 2)
    with pytest.raises(rl.ReplayError, match="outside"):
        buf.write(5, b"\x01")
    with pytest.raises(rl.ReplayError, match="outside"):
        buf.read_u32(2)


OLD_RUNTIME_SCRIPT = """
import struct, sys
import relaunch as rl
gpu = rl.Gpu("sim:gfx1201")
module = gpu.load_module(open(sys.argv[1], "rb").read())
buf = gpu.alloc(4)
args = module.pack_kernargs("counter", struct.pack("<Q", buf.address()), 1, 1)
try:
    gpu.build(module, [("counter", 1, 1, 0, args, False)])
except rl.DeviceError as e:
    print("DeviceError", type(e).__name__, e)
except rl.Error as e:
    print("other", type(e).__name__, e)
else:
    print("installed")
"""


def test_an_old_runtime_refuses_ibs_with_a_device_error():
    """ROCr before 6.3 cannot map IB memory executable: building an IB is
    refused as a device error (the runtime's limit), naming the version.
    A child process: the simulator reads the scripted version once."""
    env = dict(os.environ, RELAUNCH_SIM_BUILD_VERSION="6.2.41133-old")
    env.pop("RELAUNCH_ALLOW_NONEXEC_IB", None)
    out = subprocess.run(
        [sys.executable, "-c", OLD_RUNTIME_SCRIPT, str(KERNELS / TARGET / "counter.co")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    line = out.stdout.strip()
    assert line.startswith("DeviceError DeviceError "), line
    assert '"6.2.41133-old"' in line, line
    assert "RELAUNCH_ALLOW_NONEXEC_IB=1" in line, line
