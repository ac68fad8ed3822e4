"""#15.5 for Python: every way to open a device refuses one the host
manifest denies, also when the simulator is the system HSA library (#15.3)."""

import os
import re
from pathlib import Path
from typing import Any, Callable

import pytest

import relaunch as rl
from conftest import REPO

# The facade openers Python reaches; test_python_openers_are_all_tried keeps
# this complete.
TRIED = {"open", "open_default", "open_index"}


def deny_gfx1100(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RELAUNCH_HOST", "pydeny")
    d = Path(".relaunch")
    d.mkdir(exist_ok=True)
    (d / "devices.toml").write_text('[host.pydeny]\ndeny = ["sim:gfx1100"]\n')


def expect_denied(open_it: Callable[[], Any]) -> None:
    with pytest.raises(rl.DeviceError, match="is denied"):
        open_it()


def test_python_openers_are_all_tried() -> None:
    text = "".join(p.read_text() for p in (REPO / "py" / "src").rglob("*.rs"))
    assert set(re.findall(r"facade::Gpu::(open\w*)", text)) == TRIED


def test_every_python_opener_refuses_a_denied_sim_board(monkeypatch: pytest.MonkeyPatch) -> None:
    deny_gfx1100(monkeypatch)
    assert rl.Gpu("sim:gfx1201").target == "gfx1201"
    expect_denied(lambda: rl.Gpu("sim:gfx1100"))
    monkeypatch.setenv("RELAUNCH_DEVICE", "sim:gfx1100")
    expect_denied(lambda: rl.Gpu())
    expect_denied(lambda: rl.Gpu(None))


def test_simulator_as_the_hsa_library_is_still_denied(monkeypatch: pytest.MonkeyPatch) -> None:
    library = os.environ.get("RELAUNCH_TEST_SIM_HSA_LIB", "")
    if not library or not Path(library).is_file():
        assert "CI" not in os.environ, "py/test.sh builds the simulator's HSA library under CI"
        pytest.skip("RELAUNCH_TEST_SIM_HSA_LIB is not set (py/test.sh sets it)")
    deny_gfx1100(monkeypatch)
    monkeypatch.setenv("RELAUNCH_HSA_LIB", library)
    monkeypatch.setenv("RELAUNCH_SIM_TARGETS", "gfx1100")
    for selector in ["index:0", "name:gfx1100", "bdf:1100:e0:00.0"]:
        expect_denied(lambda: rl.Gpu(selector))
    expect_denied(lambda: rl.Gpu(0))
    expect_denied(lambda: rl.Gpu())
