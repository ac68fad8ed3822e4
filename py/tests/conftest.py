"""Shared fixtures: the simulated GPU, the test kernels built under
tests/kernels/build/<gfx>/, and a Python twin for the counter kernel."""

import struct
from pathlib import Path
from typing import Union

import pytest

import relaunch as rl

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "kernels" / "build"
SYSFS = REPO / "tests" / "fixtures" / "sysfs"
TARGET = "gfx1201"


def kernel_bytes(name: str, target: str = TARGET) -> bytes:
    path = KERNELS / target / f"{name}.co"
    assert path.is_file(), f"missing kernel fixture {path}"
    return path.read_bytes()


class CounterTwin:
    """counter(uint *counter): every work-item adds 1 (one atomic per
    workgroup); records the workgroups it ran."""

    def __init__(self):
        self.calls = []

    def __call__(self, wg):
        ptr = wg.arg_u64(0)
        x, y, z = wg.workgroup_size
        self.calls.append((wg.workgroup_id, wg.grid_size))
        wg.atomic_add_u32(ptr, x * y * z)


@pytest.fixture(autouse=True)
def isolated_host(tmp_path_factory, monkeypatch):
    """No host manifest or device choice leaks in from the machine."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("RELAUNCH_DEVICE", raising=False)
    monkeypatch.delenv("RELAUNCH_HOST", raising=False)
    monkeypatch.setenv("RELAUNCH_SYSFS_ROOT", str(SYSFS / "nogpu"))
    monkeypatch.chdir(home)


@pytest.fixture
def gpu():
    return rl.Gpu(f"sim:{TARGET}")


@pytest.fixture
def counter_twin():
    twin = CounterTwin()
    rl.sim.register_kernel("counter", twin)
    return twin


@pytest.fixture
def counter(gpu, counter_twin):
    return gpu.load_module(kernel_bytes("counter"))


Dims = Union[int, tuple[int, ...]]


def counter_args(module: rl.Module, buf: rl.Buffer, grid: Dims = 1, block: Dims = 1) -> bytes:
    return module.pack_kernargs("counter", struct.pack("<Q", buf.address()), grid, block)
