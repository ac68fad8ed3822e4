"""Opening devices: selectors, the default, the deny list, and devices()."""

import pytest

import relaunch as rl
from conftest import SYSFS


def write_manifest(host: str, body: str):
    """A project manifest in the working directory (.relaunch/devices.toml)."""
    from pathlib import Path

    d = Path(".relaunch")
    d.mkdir(exist_ok=True)
    (d / "devices.toml").write_text(f"[host.{host}]\n{body}\n")


def test_sim_selector_opens_the_simulated_device():
    gpu = rl.Gpu("sim:gfx1100")
    assert gpu.target == "gfx1100"
    assert gpu.simulated
    assert "sim:gfx1100" in gpu.describe()


def test_default_uses_relaunch_device(monkeypatch):
    monkeypatch.setenv("RELAUNCH_DEVICE", "sim:gfx1030")
    assert rl.Gpu().target == "gfx1030"
    assert rl.Gpu(None).target == "gfx1030"


def test_default_without_a_gpu_is_the_fallback_sim():
    gpu = rl.Gpu()
    if not gpu.simulated:
        pytest.skip(f"a real GPU is present: {gpu.describe()}")
    assert rl.FALLBACK_SELECTOR == "sim:gfx1201"
    assert gpu.target == "gfx1201"
    assert "sim:gfx1201" in gpu.describe()


@pytest.mark.parametrize("selector", ["gfx1201", "sim:gfx9999", "uuid:", "bogus:1", ""])
def test_bad_selectors_are_device_errors(selector):
    with pytest.raises(rl.DeviceError) as info:
        rl.Gpu(selector)
    assert str(info.value)


def test_negative_ordinal_is_a_device_error():
    with pytest.raises(rl.DeviceError, match="negative"):
        rl.Gpu(-1)


@pytest.mark.parametrize("arg", [1.5, b"sim:gfx1201", True, ["sim:gfx1201"]])
def test_selector_of_the_wrong_type_is_a_type_error(arg):
    with pytest.raises(TypeError, match="selector"):
        rl.Gpu(arg)


def test_denied_sim_target_quotes_the_reason(monkeypatch):
    monkeypatch.setenv("RELAUNCH_HOST", "pyhost")
    write_manifest("pyhost", 'deny = ["sim:gfx1100 # kept for the soak run"]')
    with pytest.raises(rl.DeviceError, match="kept for the soak run"):
        rl.Gpu("sim:gfx1100")
    # Other targets and aliases to them still open.
    assert rl.Gpu("sim:gfx1201").target == "gfx1201"


def test_alias_from_the_host_manifest(monkeypatch):
    monkeypatch.setenv("RELAUNCH_HOST", "pyhost")
    write_manifest("pyhost", 'mysim = "sim:gfx1151"')
    assert rl.Gpu("@mysim").target == "gfx1151"
    with pytest.raises(rl.DeviceError, match="not defined"):
        rl.Gpu("@nosuch")


def test_denied_real_device_from_fixture_sysfs(monkeypatch):
    monkeypatch.setenv("RELAUNCH_SYSFS_ROOT", str(SYSFS / "hipx"))
    monkeypatch.setenv("RELAUNCH_HOST", "hipx")
    write_manifest("hipx", 'deny = ["bdf:0000:bf:00.0 # device reset takes the host down"]')
    with pytest.raises(rl.DeviceError, match="device reset takes the host down"):
        rl.Gpu("bdf:0000:bf:00.0")


def test_devices_without_gpus_is_empty():
    assert rl.devices() == []


def test_ordinal_without_a_real_gpu_is_a_device_error(monkeypatch):
    monkeypatch.delenv("RELAUNCH_SYSFS_ROOT")
    if rl.devices():
        pytest.skip("this machine has an AMD GPU")
    with pytest.raises(rl.DeviceError, match="sim:"):
        rl.Gpu(0)


def test_version():
    assert rl.__version__.count(".") == 2


def test_devices_lists_stable_anchors_and_deny_marks(monkeypatch):
    monkeypatch.setenv("RELAUNCH_SYSFS_ROOT", str(SYSFS / "hipx"))
    monkeypatch.setenv("RELAUNCH_HOST", "hipx")
    write_manifest("hipx", 'deny = ["bdf:0000:bf:00.0 # reset takes the host down"]')
    devices = rl.devices()
    assert len(devices) >= 2
    keys = {"index", "name", "product", "anchor", "uuid", "bdf", "slot", "describe", "denied"}
    for d in devices:
        assert set(d) == keys
        assert d["name"].startswith("gfx")
        assert d["anchor"] is None or d["anchor"].split(":", 1)[0] in ("uuid", "bdf")
        if d["anchor"]:
            assert f"[{d['anchor']}]" in d["describe"]
    assert [d["index"] for d in devices] == sorted(d["index"] for d in devices)
    denied = [d for d in devices if d["denied"]]
    assert [d["bdf"] for d in denied] == ["0000:bf:00.0"]
    reason = denied[0]["denied"]
    assert reason is not None and "reset takes the host down" in reason
    assert any(d["anchor"] == "uuid:GPU-43390a851e296ee5" for d in devices)


def test_pm4_queue_count(gpu):
    assert gpu.pm4_queue_count(1) == 1
    assert gpu.pm4_queue_count(8) == 2  # gfx12: two queues held up on hardware
    assert gpu.pm4_queue_count(8, "auto") == 2
    assert gpu.pm4_queue_count(8, 3) == 3
    assert gpu.pm4_queue_count(2, 4) == 2
    assert rl.Gpu("sim:gfx1030").pm4_queue_count(8) == 1
    with pytest.raises(ValueError, match="auto"):
        gpu.pm4_queue_count(2, "wide")
    with pytest.raises(ValueError):
        gpu.pm4_queue_count(2, 5)
    with pytest.raises(TypeError):
        gpu.pm4_queue_count("2")


def test_exception_hierarchy():
    for cls in (
        rl.RecordError,
        rl.CompileError,
        rl.ReplayError,
        rl.HandleError,
        rl.CertificationError,
        rl.DeviceError,
    ):
        assert issubclass(cls, rl.Error)
        assert cls.__module__ == "relaunch"
    assert issubclass(rl.Error, Exception)
