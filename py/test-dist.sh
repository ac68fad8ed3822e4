#!/usr/bin/env bash
# Tests the Python distributions as a user gets them: builds the release
# manylinux wheel and the sdist once (scripts/build-python-dist) into
# target/py-dist, checks the wheel's tags (manylinux_2_28 or older, abi3,
# x86_64) and the sdist's contents, installs the wheel into a fresh venv
# with pip, no index, and imports it there and replays the counter kernel on
# sim:gfx1100 (py/README.md's first example). Run from anywhere.
#
# Under CI (CI set) a missing tool fails the test; elsewhere a missing venv
# module or unreachable PyPI skips it with a note.
#
# Environment: PYTHON (interpreter for the venvs, default python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
DIST="$ROOT/target/py-dist"
VENV="$ROOT/target/py-dist-venv"
export PYTHONDONTWRITEBYTECODE=1

step() { printf '\n== py/test-dist.sh: %s\n' "$*"; }
fail() { echo "py/test-dist.sh: $*" >&2; exit 1; }
missing() {
    if [ -n "${CI:-}" ]; then
        fail "$1 is missing under CI ($2); the test must not pass without it"
    fi
    echo "note: skipping py/test-dist.sh: $1 is missing ($2)"
    exit 0
}

"$PYTHON" -m venv --help >/dev/null 2>&1 ||
    missing "'$PYTHON -m venv'" "apt-get install -y python3-venv, or set PYTHON"
"$PYTHON" -m pip download --help >/dev/null 2>&1 ||
    missing "pip for $PYTHON" "apt-get install -y python3-pip"

step "scripts/build-python-dist $DIST"
rc=0
bash scripts/build-python-dist "$DIST" || rc=$?
if [ "$rc" -eq 3 ]; then
    missing "maturin or ziglang" "scripts/build-python-dist installs them from PyPI"
elif [ "$rc" -ne 0 ]; then
    fail "scripts/build-python-dist failed (exit $rc)"
fi

shopt -s nullglob
wheels=("$DIST"/relaunch-*.whl)
sdists=("$DIST"/relaunch-*.tar.gz)
[ "${#wheels[@]}" -eq 1 ] || fail "expected one wheel in $DIST, found ${#wheels[@]}"
[ "${#sdists[@]}" -eq 1 ] || fail "expected one sdist in $DIST, found ${#sdists[@]}"
WHEEL="${wheels[0]}"
SDIST="${sdists[0]}"

step "tags of $(basename "$WHEEL")"
# The file name's platform tag and the WHEEL metadata's Tag lines must both
# be manylinux_2_N with N <= 28 (or manylinux2014/manylinux_2_17), never
# linux_x86_64; the ABI tag abi3 with the cp311 floor.
"$PYTHON" - "$WHEEL" <<'EOF'
import re, sys, zipfile
path = sys.argv[1]
name = path.rsplit("/", 1)[-1]
dist, version, python, abi, platforms = name[: -len(".whl")].split("-")
errors = []
if (python, abi) != ("cp311", "abi3"):
    errors.append(f"python/abi tag is {python}-{abi}, expected cp311-abi3")
def manylinux_ok(tag):
    if tag == "manylinux2014_x86_64":
        return True
    m = re.fullmatch(r"manylinux_2_(\d+)_x86_64", tag)
    return m is not None and int(m.group(1)) <= 28
for tag in platforms.split("."):
    if not manylinux_ok(tag):
        errors.append(f"platform tag {tag!r} in the file name is not manylinux_2_28 or older")
with zipfile.ZipFile(path) as z:
    wheel_meta = z.read(f"{dist}-{version}.dist-info/WHEEL").decode()
    names = z.namelist()
tags = [l.split(":", 1)[1].strip() for l in wheel_meta.splitlines() if l.startswith("Tag:")]
if not tags:
    errors.append("WHEEL metadata has no Tag line")
for tag in tags:
    if not manylinux_ok(tag.split("-")[2]):
        errors.append(f"WHEEL metadata tag {tag!r} is not manylinux_2_28 or older")
for want in ("relaunch/__init__.py", "relaunch/_native.pyi", "relaunch/py.typed"):
    if want not in names:
        errors.append(f"the wheel lacks {want}")
if not any(re.fullmatch(r"relaunch/_native\.abi3\.so", n) for n in names):
    errors.append("the wheel lacks relaunch/_native.abi3.so")
if errors:
    sys.exit("py/test-dist.sh: " + "; ".join(errors))
print(f"ok: {python}-{abi}-{platforms}; WHEEL tags {', '.join(tags)}")
EOF

step "contents of $(basename "$SDIST")"
# The sdist builds the module from source: it must carry the module's crate,
# the Python package and the workspace crates the facade depends on.
"$PYTHON" - "$SDIST" <<'EOF'
import sys, tarfile
path = sys.argv[1]
with tarfile.open(path) as t:
    names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
want = ["pyproject.toml", "PKG-INFO", "python/relaunch/__init__.py", "python/relaunch/py.typed"]
missing = [w for w in want if w not in names]
crates = [n for n in names if n.endswith("Cargo.toml")]
for crate in ("facts", "device", "encoders", "lanes", "sched", "sim"):
    if not any(c.endswith(f"{crate}/Cargo.toml") for c in crates):
        missing.append(f"{crate}/Cargo.toml")
if missing:
    sys.exit(f"py/test-dist.sh: the sdist lacks {', '.join(missing)}")
print(f"ok: {len(names)} files, {len(crates)} Cargo.toml")
EOF

step "fresh venv $VENV, pip install $(basename "$WHEEL") (no index)"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-index \
    "$WHEEL"

step "import relaunch and replay the counter kernel on sim:gfx1100"
# From an empty directory, so `import relaunch` can only be the installed wheel.
RUN="$ROOT/target/py-dist-run"
mkdir -p "$RUN"
(cd "$RUN" && "$VENV/bin/python" - "$ROOT/tests/kernels/build/gfx1100/counter.co" <<'EOF'
import struct, sys
import relaunch as rl

assert rl.__file__.startswith(sys.prefix), f"imported {rl.__file__}, not the venv's wheel"
gpu = rl.Gpu("sim:gfx1100")
assert gpu.simulated and gpu.target == "gfx1100", gpu.describe()
module = gpu.load_module(open(sys.argv[1], "rb").read())
assert "counter" in module.kernels, module.kernels
out = gpu.alloc(4)
args = module.pack_kernargs("counter", struct.pack("<Q", out.address()), grid=1, block=1)
ib = gpu.build(module, [("counter", 1, 1, 0, args, False)] * 8)
ib.replay()
assert out.read_u32(0) == 8, out.read_u32(0)
print(f"ok: relaunch {rl.__version__} from the wheel: {gpu.describe()}; counter replayed 8 times")
EOF
)

step "ok: $(basename "$WHEEL") ($(du -k "$WHEEL" | cut -f1) KiB), $(basename "$SDIST")"
