#!/bin/sh
# Installs relaunch's C SDK: include/relaunch.h, lib/librelaunch.so,
# lib/librelaunch.a, lib/pkgconfig/relaunch.pc, lib/pkgconfig/relaunch-static.pc
# (static linking: the shared module's -lrelaunch would pick the .so) and
# lib/cmake/relaunch/relaunchConfig{,Version}.cmake.
#
#   ffi/install.sh PREFIX [ARTIFACT_DIR]
#
# ARTIFACT_DIR holds an already built librelaunch.so and librelaunch.a;
# without it the release library is built first with cargo. DESTDIR, if
# set, is prepended to every installed path (staged installs).
set -eu

if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "usage: $0 PREFIX [ARTIFACT_DIR]" >&2
    exit 2
fi
prefix=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
case $prefix in
    /*) ;;
    *) echo "install.sh: PREFIX must be an absolute path (got $prefix)" >&2; exit 2 ;;
esac

if [ $# -ge 2 ] && [ -n "$2" ]; then
    artifacts=$2
else
    (cd "$root" && cargo build --release -p relaunch-capi)
    target=${CARGO_TARGET_DIR:-target}
    case $target in
        /*) ;;
        *) target=$root/$target ;;
    esac
    artifacts=$target/release
fi
for f in librelaunch.so librelaunch.a; do
    if [ ! -f "$artifacts/$f" ]; then
        echo "install.sh: $artifacts/$f not found; build with cargo build --release -p relaunch-capi" >&2
        exit 1
    fi
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
dest=${DESTDIR:-}$prefix

install -d "$dest/include" "$dest/lib/pkgconfig" "$dest/lib/cmake/relaunch"
install -m 644 "$here/include/relaunch.h" "$dest/include/relaunch.h"
install -m 755 "$artifacts/librelaunch.so" "$dest/lib/librelaunch.so"
install -m 644 "$artifacts/librelaunch.a" "$dest/lib/librelaunch.a"
for pc in relaunch relaunch-static; do
    sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" \
        "$here/$pc.pc.in" >"$dest/lib/pkgconfig/$pc.pc"
done
for f in relaunchConfig relaunchConfigVersion; do
    sed -e "s|@VERSION@|$version|g" "$here/cmake/$f.cmake.in" >"$dest/lib/cmake/relaunch/$f.cmake"
done
echo "installed relaunch $version C SDK into $dest"
