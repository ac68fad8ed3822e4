#!/usr/bin/env bash
# Builds the relaunch Python module (debug wheel, abi3) with maturin into a
# venv under target/py-venv, then runs its pytest suite and checks the type
# stubs against the module with mypy's stubtest. Run from anywhere; works
# from the repository root. Idempotent: the venv and tool pins are reused.
#
# Environment: PYTHON (interpreter for the venv, default python3),
# CARGO_TARGET_DIR (shared with the workspace build when set).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VENV="$ROOT/target/py-venv"
WHEELS="$ROOT/target/py-wheels"
# msgpack + zstandard: the independent .kpack writer of tests/test_catalog.py.
PINS=(maturin==1.16.0 pytest==9.2.0 mypy==2.4.1 msgpack==1.2.4 zstandard==0.25.0)
# Keep the source tree free of __pycache__ from the test run.
export PYTHONDONTWRITEBYTECODE=1

step() { printf '\n== py/test.sh: %s\n' "$*"; }

step "venv $VENV (from $("$PYTHON" --version 2>&1))"
if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$ROOT/target"
    if ! "$PYTHON" -m venv "$VENV"; then
        rm -rf "$VENV"
        echo "py/test.sh: '$PYTHON -m venv' failed; on Debian install python3-venv" \
             "(apt-get install -y python3-venv) or set PYTHON to an interpreter with venv" >&2
        exit 1
    fi
fi

step "pip install ${PINS[*]}"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}"

step "maturin build (debug, abi3-py311) -> $WHEELS"
rm -rf "$WHEELS"
# Debug keeps CI fast: the facade crates are already built in debug by the
# workspace test run, and the tests are dominated by simulator work.
"$VENV/bin/maturin" build --manifest-path py/Cargo.toml --interpreter "$VENV/bin/python" \
    --out "$WHEELS" --compatibility linux --quiet
WHEEL="$(ls "$WHEELS"/relaunch-*.whl)"

step "pip install $(basename "$WHEEL")"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --force-reinstall "$WHEEL"

# Tools run in an empty directory: `import relaunch` is then the installed
# wheel, and mypy finds no second copy of the package below its cwd.
RUN="$ROOT/target/py-run"
mkdir -p "$RUN"

step "cargo build the simulator's HSA library and the interposer (test_deny.py, test_hipgraph.py)"
cargo build --quiet -p relaunch-sim --example hsa_runtime64 -p relaunch-hipgraph --lib
export RELAUNCH_TEST_SIM_HSA_LIB="${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/libhsa_runtime64.so"
export RELAUNCH_TEST_INTERPOSER="${CARGO_TARGET_DIR:-$ROOT/target}/debug/librelaunch_hipgraph.so"

step "pytest py/tests"
(cd "$RUN" && "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    --rootdir "$ROOT/py" "$ROOT/py/tests")

step "mypy stubtest relaunch (with relaunch._native and relaunch.sim)"
(cd "$RUN" && MYPY_CACHE_DIR="$ROOT/target/py-mypy-cache" \
    "$VENV/bin/python" -m mypy.stubtest relaunch)

step "mypy --strict py/tests (the stubs as a user's type checker sees them)"
(cd "$RUN" && MYPY_CACHE_DIR="$ROOT/target/py-mypy-cache" "$VENV/bin/python" -m mypy --strict \
    --allow-untyped-defs --allow-incomplete-defs --allow-untyped-calls "$ROOT/py/tests")

step "ok"
