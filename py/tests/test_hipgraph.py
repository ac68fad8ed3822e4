"""relaunch.hipgraph: a Python process running under the interposer lists
its graph execs, which relaunch replays and why the others run on HIP,
and switches replay off and on. The HIP side is the interposer tests'
fake HIP (preload/tests/fakehip) over the simulator's HSA library; the
graphs are those of preload/tests/app/inspect_graphs.c, built as a
library the child process calls through ctypes."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from relaunch import hipgraph
from conftest import REPO

PRELOAD = REPO / "preload" / "tests"

CHILD = r"""
import ctypes, json, sys
from relaunch import hipgraph
app = ctypes.CDLL(sys.argv[1])
app.inspect_build.argtypes = [ctypes.c_char_p]
assert app.inspect_build(sys.argv[2].encode()) == 0
report = {"version": hipgraph.api_version(), "before": [], "off": None}
for e in hipgraph.execs():
    report["before"].append([e.replayed, e.reason.name, e.text, e.launches_replayed,
                             e.launches_on_hip, e.lanes])
chain = next(e.exec for e in hipgraph.execs() if e.replayed)
report["was"] = hipgraph.set_replay(False)
assert app.inspect_launch_again() == 0
off = hipgraph.exec_info(chain)
report["off"] = [off.replayed, off.reason.name, off.launches_on_hip]
hipgraph.set_replay(True)
assert app.inspect_launch_again() == 0
report["counters"] = list(hipgraph.counters())
try:
    hipgraph.exec_info(0x1234)
except LookupError as e:
    report["unknown"] = str(e)
print(json.dumps(report))
"""


def artifacts() -> tuple[str, str]:
    interposer = os.environ.get("RELAUNCH_TEST_INTERPOSER", "")
    sim = os.environ.get("RELAUNCH_TEST_SIM_HSA_LIB", "")
    if not (Path(interposer).is_file() and Path(sim).is_file()) or not shutil.which("cc"):
        assert "CI" not in os.environ, "py/test.sh builds the interposer and the HSA library"
        pytest.skip("RELAUNCH_TEST_INTERPOSER / RELAUNCH_TEST_SIM_HSA_LIB unset or no cc")
    return interposer, sim


def cc(*args: str) -> None:
    flags = ["-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror"]
    include = f"-I{PRELOAD / 'include'}"
    subprocess.run(["cc", *flags, include, *args, "-ldl"], check=True)


def test_without_the_interposer_nothing_is_found() -> None:
    assert not hipgraph.available()
    with pytest.raises(hipgraph.InterposerNotLoaded, match="LD_PRELOAD"):
        hipgraph.execs()


def test_a_process_under_the_interposer_inspects_its_execs(tmp_path: Path) -> None:
    interposer, sim = artifacts()
    fake = tmp_path / "libamdhip64.so"
    cc("-shared", "-fPIC", "-o", str(fake), str(PRELOAD / "fakehip" / "fakehip.c"))
    app = tmp_path / "libinspect_graphs.so"
    cc(
        "-shared", "-fPIC", "-DINSPECT_LIBRARY", "-o", str(app),
        str(PRELOAD / "app" / "inspect_graphs.c"),
        f"-L{tmp_path}", "-lamdhip64", f"-Wl,-rpath,{tmp_path}",
    )
    counter = REPO / "tests" / "kernels" / "build" / "gfx1201" / "counter.co"
    env = dict(os.environ)
    env.pop("RELAUNCH_LOG", None)
    env.update(
        LD_PRELOAD=interposer,
        RELAUNCH_HSA_LIB=sim,
        RELAUNCH_SIM_TARGETS="gfx1201",
        RELAUNCH_DEVICE="name:gfx1201",
    )
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(app), str(counter)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["version"] == 1
    assert report["before"] == [
        [True, "REPLAYED", "replayed as retained PM4", 2, 0, 1],
        [False, "GRAPH", "a host node (a host callback inside the graph) is not replayed",
         0, 2, 0],
    ]
    assert report["was"] is True
    assert report["off"] == [False, "DISABLED", 1]
    # execs 1/1; launches: 3 replayed, 2 + 1 on HIP, none failed; on again.
    assert report["counters"] == [1, 1, 3, 3, 0, True]
    assert "not an exec instantiated under the interposer" in report["unknown"]
