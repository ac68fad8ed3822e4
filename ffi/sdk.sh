#!/bin/sh
# Packs relaunch's C SDK as the release contract describes it:
#
#   relaunch-c-sdk-VERSION-linux-x86_64.tar.gz
#   └── relaunch-c-sdk-VERSION-linux-x86_64/
#       ├── include/relaunch.h
#       ├── lib/librelaunch.so        (SONAME librelaunch.so)
#       ├── lib/librelaunch.a
#       ├── lib/pkgconfig/relaunch.pc, relaunch-static.pc   (relocatable)
#       ├── lib/cmake/relaunch/relaunchConfig{,Version}.cmake
#       ├── LICENSE
#       ├── NOTICE
#       └── SHA256SUMS                (sha256sum -c accepts it)
#
#   ffi/sdk.sh VERSION [ARTIFACT_DIR] [OUT_DIR]
#
# ARTIFACT_DIR holds a built librelaunch.so and librelaunch.a (default:
# build the release library with cargo); OUT_DIR receives the archive
# (default: the current directory).
set -eu

if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "usage: $0 VERSION [ARTIFACT_DIR] [OUT_DIR]" >&2
    exit 2
fi
version=$1
case $version in
    *[!0-9A-Za-z.+-]*) echo "sdk.sh: VERSION must be like 1.2.3 (got $version)" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
out=$(pwd)
if [ $# -ge 3 ] && [ -n "$3" ]; then
    mkdir -p "$3"
    out=$(cd "$3" && pwd)
fi
artifacts=${2:-}

name=relaunch-c-sdk-$version-linux-x86_64
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$name
# install.sh lays out include/, lib/ (both libraries, pkg-config, CMake);
# with prefix "/" and DESTDIR the stage, the files land in $root.
DESTDIR=$root sh "$here/install.sh" / $artifacts >/dev/null
# Relocatable pkg-config files: the prefix is found from the .pc file.
for pc in relaunch relaunch-static; do
    sed -e 's|@PREFIX@|${pcfiledir}/../..|' -e "s|@VERSION@|$version|g" \
        "$here/$pc.pc.in" >"$root/lib/pkgconfig/$pc.pc"
done
for f in relaunchConfig relaunchConfigVersion; do
    sed -e "s|@VERSION@|$version|g" "$here/cmake/$f.cmake.in" \
        >"$root/lib/cmake/relaunch/$f.cmake"
done
install -m 644 "$here/sdk/LICENSE" "$here/sdk/NOTICE" "$root/"
(cd "$root" && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | sed 's|^\./||' |
    xargs sha256sum >SHA256SUMS)
tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
