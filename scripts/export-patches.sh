#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Export the kvssd device as a `git format-patch` series for your own QEMU
# tree: `git am OUTDIR/*.patch` on a clean v10.0.x or v10.2.x tree.
#
# Usage: scripts/export-patches.sh [--qemu 10.0|10.2] OUTDIR
#   --qemu SERIES  the series whose tree the patches apply to (default 10.2,
#                  or $KVSSD_QEMU): the context lines of hw/meson.build,
#                  hw/Kconfig and tests/qtest/meson.build are that series'
#                  (Debian's source package of it, fetched and cached by
#                  scripts/build-qemu.sh)
#   OUTDIR         created if missing; must hold no *.patch yet
#
# The series (the same change scripts/build-qemu.sh makes to its cached
# tree, with copies instead of symlinks):
#   0001 hw/kvssd: the device, its kvftl firmware in hw/kvssd/kvftl and our
#        headers in hw/kvssd/include (copied files, no symlinks), the
#        generated hw/kvssd/meson.build and Kconfig
#   0002 hw/meson.build, hw/Kconfig: build the device
#   0003 tests/qtest: the kvssd qtests and their registration for x86_64
# Each patch is signed off by this checkout's git identity. Nothing is
# written outside OUTDIR and a temporary directory.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/qemu-tree.sh"

usage() { sed -n '4,24p' "$0" | sed 's/^# \{0,1\}//'; }
series=${KVSSD_QEMU:-$KVSSD_QEMU_DEFAULT}
out=
while [ $# -gt 0 ]; do
    case $1 in
    --qemu) [ $# -ge 2 ] || die "--qemu needs a value: ${KVSSD_QEMU_SERIES[*]}"; series=$2; shift 2 ;;
    --qemu=*) series=${1#--qemu=}; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [ -z "$out" ] || die "one OUTDIR only ('$out' and '$1')"; out=$1; shift ;;
    esac
done
kvssd_qemu_check_series "$series"
[ -n "$out" ] || die "no OUTDIR (usage: scripts/export-patches.sh [--qemu 10.0|10.2] OUTDIR)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
if compgen -G "$out/*.patch" >/dev/null; then
    die "$out already holds *.patch files; give an empty directory"
fi
command -v git >/dev/null || ensure_packages git

# The pristine registration files of the series: the cached Debian tree's,
# with our lines taken out again (build-qemu.sh only ever adds them).
src=$(KVSSD_QEMU_PRINT_SOURCE=1 QEMU_SRC= QEMU_TARBALL= "$KVSSD_TOP/scripts/build-qemu.sh" --qemu "$series" | tail -n1)
[ -f "$src/VERSION" ] || die "scripts/build-qemu.sh --qemu $series gave no QEMU source tree"
version=$(cat "$src/VERSION")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$work/qemu
mkdir -p "$repo/hw" "$repo/tests/qtest"
grep -vx "subdir('kvssd')" "$src/hw/meson.build" >"$repo/hw/meson.build"
grep -vx 'source kvssd/Kconfig' "$src/hw/Kconfig" >"$repo/hw/Kconfig"
grep -v CONFIG_KVSSD "$src/tests/qtest/meson.build" >"$repo/tests/qtest/meson.build"

name=$(git -C "$KVSSD_TOP" config user.name || echo kvssd)
email=$(git -C "$KVSSD_TOP" config user.email || echo kvssd@localhost)
rev=$(git -C "$KVSSD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
export GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email
g() { git -C "$repo" -c core.autocrlf=false -c commit.gpgsign=false "$@"; }
g init -q
g add -A
g commit -q -m "QEMU $version (the files the series changes)"
base=$(g rev-parse HEAD)

# 0001: the device, with the firmware and headers copied in.
dev=$repo/hw/kvssd
mkdir -p "$dev/kvftl" "$dev/include"
for f in $(kvssd_qemu_device_files); do
    cp -L "$KVSSD_TOP/hw/kvssd/$f" "$dev/$f"
done
kvssd_qemu_meson "$dev/meson.build"
(cd "$KVSSD_TOP/kvftl" && find . -type f \( -name '*.c' -o -name '*.h' \) \
    -exec cp -L --parents -t "$dev/kvftl/" {} +) || die "cannot copy kvftl/"
(cd "$KVSSD_TOP/include" && find . -type f \( -name '*.h' -o -name '*.def' \) -print0 |
    cpio -0 -pdm --quiet "$dev/include") || die "cannot copy include/"
g add hw/kvssd
g commit -q -s -F - <<EOF
hw/kvssd: add kvssd, an emulated NVMe Key-Value SSD

kvssd is a PCIe NVMe controller with the NVMe Key Value command set
(Store, Retrieve, Delete, Exist, List) on a simulated flash translation
layer (kvftl, in hw/kvssd/kvftl), and, with command-set=nvm, the NVM
command set on the same flash (a conventional block SSD). Properties:
-device kvssd,help.

The firmware and the headers it shares with the host tools are copies of
the kvssd project's kvftl/ and include/ (kvssd $rev); hw/kvssd/compat.h
maps the QEMU API differences between 10.0 and 10.2.
EOF

# 0002: build it.
kvssd_qemu_register_hw_meson "$repo/hw/meson.build" "$work/m" && mv "$work/m" "$repo/hw/meson.build"
kvssd_qemu_register_hw_kconfig "$repo/hw/Kconfig" "$work/k" && mv "$work/k" "$repo/hw/Kconfig"
g add hw/meson.build hw/Kconfig
g commit -q -s -m "hw: build the kvssd device" -m \
    "CONFIG_KVSSD is on by default where PCI devices are (hw/kvssd/Kconfig)."

# 0003: the qtests.
for f in $(kvssd_qemu_qtest_files); do
    cp -L "$KVSSD_TOP/tests/qtest/$f" "$repo/tests/qtest/$f"
done
kvssd_qemu_register_qtests "$repo/tests/qtest/meson.build" "$work/q" && mv "$work/q" "$repo/tests/qtest/meson.build"
g add tests/qtest
g commit -q -s -F - <<EOF
tests/qtest: add the kvssd qtests

The device's register, admin, KV and NVM command, DMA, fuzz, image and
crash tests, built for x86_64 when CONFIG_KVSSD is set. Run one with
QTEST_QEMU_BINARY=./qemu-system-x86_64 ./tests/qtest/kvssd-test --tap -k
(build dir).
EOF

g format-patch -q -o "$out" --subject-prefix="PATCH kvssd-$series" "$base..HEAD"
ls "$out"/*.patch
