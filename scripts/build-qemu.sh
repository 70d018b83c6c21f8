#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build qemu-system-x86_64 with the kvssd device (hw/kvssd + kvftl) and the
# kvssd qtests.
#
# Usage: scripts/build-qemu.sh [--qemu 10.0|10.2] [--qemu-tarball FILE]
#   --qemu SERIES        the QEMU series (default 10.2, or $KVSSD_QEMU); the
#                        device's API differences are in hw/kvssd/compat.h
#   --qemu-tarball FILE  an upstream qemu-SERIES.x.tar.xz (or $QEMU_TARBALL)
#
# QEMU source comes from (first match):
#   QEMU_SRC=DIR         your own QEMU tree (10.0.x or 10.2.x). It is only
#                        read: rsync copies it (without .git and build dirs)
#                        to $KVSSD_CACHE/qemu-own/HASH/src, and the copy gets
#                        our files and is built
#   --qemu-tarball FILE  unpacked into the series' cache
#   default              Debian's source package (`apt-get source` through a
#                        private sources list and apt state in the cache: the
#                        machine's own apt configuration is not touched):
#                        10.0 from trixie, 10.2 = 1:10.2.2+ds-1 from sid, from
#                        the Debian archive the machine's apt uses (or
#                        $KVSSD_DEBIAN_ARCHIVE; scripts/lib/common.sh)
# Each series has its own cache (source, build dirs, lock): $KVSSD_CACHE/qemu
# for 10.0 (where it always was), $KVSSD_CACHE/qemu-10.2 for 10.2
# ($KVSSD_CACHE: ${XDG_CACHE_HOME:-$HOME/.cache}/kvssd), outside the project
# tree, so a re-run after a change to our files rebuilds only those files.
#
# Our files are symlinked into the cached tree's hw/kvssd (device, firmware,
# include/) and tests/qtest (kvssd-*.c, kvssd-*.h). The only QEMU files
# changed are hw/meson.build, hw/Kconfig and tests/qtest/meson.build, each by
# one appended/inserted line that registers kvssd (scripts/lib/qemu-tree.sh;
# scripts/export-patches.sh makes the same change as a git patch series).
#
# KVSSD_QEMU_ASAN=1 builds a second tree (build-asan) configured with
# --enable-asan --enable-ubsan, for the randomized qtest.
# KVSSD_QEMU_TARGETS: ninja targets (default: the emulator and the qtests).
# KVSSD_QEMU_PRINT_SOURCE=1: fetch the source, print its directory (QEMU_SRC,
# or the cached tree) and stop (scripts/export-patches.sh).
#
# The last line of stdout is the path of the built qemu-system-x86_64.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/qemu-tree.sh"

usage() { sed -n '4,39p' "$0" | sed 's/^# \{0,1\}//'; }
series=${KVSSD_QEMU:-$KVSSD_QEMU_DEFAULT}
tarball=${QEMU_TARBALL:-}
while [ $# -gt 0 ]; do
    case $1 in
    --qemu) [ $# -ge 2 ] || die "--qemu needs a value: ${KVSSD_QEMU_SERIES[*]}"; series=$2; shift 2 ;;
    --qemu=*) series=${1#--qemu=}; shift ;;
    --qemu-tarball) [ $# -ge 2 ] || die "--qemu-tarball needs a file"; tarball=$2; shift 2 ;;
    --qemu-tarball=*) tarball=${1#--qemu-tarball=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
kvssd_qemu_check_series "$series"
if [ -n "$tarball" ]; then
    [ -f "$tarball" ] || die "--qemu-tarball $tarball is not a file"
    tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
fi

case $series in
10.0) cache=$KVSSD_CACHE/qemu debian_suite=trixie debian_pkg=qemu ;;
10.2) cache=$KVSSD_CACHE/qemu-10.2 debian_suite=sid debian_pkg=qemu=1:10.2.2+ds-1 ;;
esac
user_tree=
if [ -n "${QEMU_SRC:-}" ]; then
    [ -d "$QEMU_SRC" ] || die "QEMU_SRC=$QEMU_SRC is not a directory"
    user_tree=$(cd "$QEMU_SRC" && pwd -P)
    [ -f "$user_tree/VERSION" ] || die "QEMU_SRC=$QEMU_SRC is not a QEMU source tree (no VERSION file)"
    case $(cat "$user_tree/VERSION") in
    10.0.* | 10.1.* | 10.2.*) ;;
    *) log "warning: QEMU_SRC is QEMU $(cat "$user_tree/VERSION"); the device is built and tested on ${KVSSD_QEMU_SERIES[*]}" ;;
    esac
    cache=$KVSSD_CACHE/qemu-own/$(echo "$user_tree" | md5sum | cut -c1-8)
fi
asan=${KVSSD_QEMU_ASAN:-0}
mkdir -p "$cache"
# One build at a time: the cached tree is shared by every checkout and job
# (two ninja runs in one build directory corrupt it). The lock is released
# when this script exits.
exec 9>"$cache/.lock"
if ! flock -n 9; then
    log "another build-qemu.sh is using $cache; waiting for it"
    flock 9
fi

ensure_packages build-essential dpkg-dev ninja-build pkg-config python3 \
    libglib2.0-dev libfdt-dev libslirp-dev libxxhash-dev zlib1g-dev seabios qemu-system-data

# QEMU 10 wants meson >= 1.5 (bookworm has 1.0.1) and its tests pycotap. Its
# configure builds a venv on top of the Python it is given (--python) and
# takes meson from there. PYTHON, else a python3 that has both already (a
# development machine's own Python), else a private venv (one for every
# series) with both installed from PyPI: the system Python is never touched
# (Debian's refuses pip installs anyway, PEP 668).
python_ok() { # PYTHON - it runs and has meson >= 1.5 and pycotap
    [ -n "$1" ] && "$1" - <<'PY' >/dev/null 2>&1
import sys, mesonbuild.coredata as c, pycotap
v = tuple(int(x) for x in c.version.split('.')[:2])
sys.exit(0 if v >= (1, 5) else 1)
PY
}
venv=$KVSSD_CACHE/qemu/python
pick_python() { # sets python
    python=${PYTHON:-}
    if [ -n "$python" ]; then
        python_ok "$python" || die "PYTHON=$python has no meson >= 1.5 and pycotap; unset PYTHON to use a private venv in $venv"
        return
    fi
    python=$(command -v python3 || true)
    python_ok "$python" && return
    python=$venv/bin/python3
    python_ok "$python" && return
    ensure_packages python3-venv
    log "creating a Python venv with meson>=1.5 and pycotap in $venv (from PyPI)"
    rm -rf "$venv"
    python3 -m venv "$venv" >&2 || die "python3 -m venv $venv failed (package python3-venv)"
    "$venv/bin/python3" -m pip install -q --disable-pip-version-check 'meson>=1.5' pycotap >&2 ||
        die "pip install 'meson>=1.5' pycotap into $venv failed: PyPI unreachable? (or set PYTHON to a python3 that has both)"
    python_ok "$python" || die "$venv has no meson >= 1.5 and pycotap after pip install"
}
# configured_python DIR - the --python a configured build dir was set up with
configured_python() {
    sed -n "s/.* '--python=\([^']*\)'.*/\1/p" "$1/config.status" 2>/dev/null | head -n1 || true
}

# ---- 1. QEMU source ---------------------------------------------------------
fetch_debian_source() {
    local apt=$cache/apt list
    mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$cache/src"
    list=$apt/sources.list
    local archive
    archive=$(debian_archive) || exit 1
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $archive $debian_suite main" >"$list"
    local o=(-o "Dir::Etc::SourceList=$list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache::Archives=$apt/archives"
             -o APT::Sandbox::User=root
             # A mirror may serve a snapshot whose Release has expired (sid's
             # lives a week): the signature is still checked, and 10.2's
             # version is pinned, so an old Release cannot swap the source.
             -o Acquire::Check-Valid-Until=false)
    log "fetching QEMU source from Debian $debian_suite (apt-get source $debian_pkg)"
    apt-get "${o[@]}" update -q >&2 || die "apt-get update ($debian_suite deb-src) failed"
    (cd "$cache/src" && apt-get "${o[@]}" source -q "$debian_pkg" >&2) ||
        die "apt-get source $debian_pkg failed (Debian $debian_suite moved on? use --qemu-tarball or QEMU_SRC)"
}
# series_trees - the unpacked Debian (+ds) trees of this series in the cache,
# oldest first; nothing (and status 0) when there is none yet: under pipefail
# an empty grep must not end the script on a fresh machine.
series_trees() {
    ls -d "$cache"/src/qemu-$series.* 2>/dev/null | grep -v '\.tar' | grep -- '+ds$' | sort -V ||
        true
}

build_base=$cache/build
if [ -n "$user_tree" ]; then
    # A copy: never a write (rm, sed, symlink) inside a tree the user owns.
    # rsync keeps mtimes, so an unchanged file is not rebuilt; the files we
    # change are left out here and written from the user's below.
    ensure_packages rsync
    tree=$cache/src
    mkdir -p "$tree"
    log "copying QEMU_SRC=$user_tree to $tree (QEMU_SRC itself is only read)"
    rsync -a --delete --exclude=/.git --exclude='/build*/' --exclude=/subprojects/dtc \
        --exclude=/hw/kvssd --exclude='/tests/qtest/kvssd-*' \
        --exclude=/hw/meson.build --exclude=/hw/Kconfig --exclude=/tests/qtest/meson.build \
        "$user_tree/" "$tree/" || die "cannot copy QEMU_SRC=$user_tree to $tree"
    origin=$user_tree
else
    if [ -n "$tarball" ]; then
        stamp=$cache/src/.from-$(basename "$tarball")
        if [ ! -s "$stamp" ]; then
            mkdir -p "$cache/src"
            log "unpacking $tarball"
            # (head closes the pipe early: no pipefail here)
            top=$(set +o pipefail; tar -tf "$tarball" 2>/dev/null | head -1 | cut -d/ -f1)
            [ -n "$top" ] || die "cannot read $tarball (not a tar archive?)"
            case $top in
            qemu-$series.*) ;;
            *) die "--qemu-tarball $tarball holds '$top', not a qemu-$series.x tree (--qemu $series)" ;;
            esac
            tar -C "$cache/src" -xf "$tarball" || die "cannot unpack $tarball"
            echo "$top" >"$stamp"
        fi
        tree=$cache/src/$(cat "$stamp")
        # a tree of its own, apart from the Debian one's
        build_base=$cache/build-$(basename "$tree")
    else
        tree=$(series_trees | tail -1)
        if [ -z "$tree" ]; then
            fetch_debian_source
            tree=$(series_trees | tail -1)
            [ -n "$tree" ] || die "apt-get source $debian_pkg gave no qemu-$series.x tree in $cache/src (use --qemu-tarball or QEMU_SRC)"
        fi
    fi
    origin=$tree
fi
[ -f "$tree/VERSION" ] || die "$tree is not a QEMU source tree (no VERSION file)"
if [ -z "$user_tree" ]; then
    case $(cat "$tree/VERSION") in
    $series.*) ;;
    *) die "$tree is QEMU $(cat "$tree/VERSION"), not $series.x" ;;
    esac
fi
if [ "${KVSSD_QEMU_PRINT_SOURCE:-0}" = 1 ]; then
    echo "$origin"
    exit 0
fi
# Use the system libfdt: the dtc subproject would be fetched with git.
rm -rf "$tree/subprojects/dtc"

# ---- 2. our files into the cached tree --------------------------------------
dev=$tree/hw/kvssd
mkdir -p "$dev"
# Drop links to files that no longer exist, then link what is there now.
find "$dev" -maxdepth 1 -type l ! -exec test -e {} \; -delete
for f in $(kvssd_qemu_device_files); do
    ln -sfn "$KVSSD_TOP/hw/kvssd/$f" "$dev/$f"
done
ln -sfn "$KVSSD_TOP/include" "$dev/include"
ln -sfn "$KVSSD_TOP/kvftl" "$dev/kvftl"

# ninja compares mtimes, and the sources of another checkout can be older
# than the objects built from the last one: when the links move to another
# checkout, drop our objects from every build dir so that they are rebuilt.
if [ "$(cat "$dev/.checkout" 2>/dev/null)" != "$KVSSD_TOP" ]; then
    for b in "$cache"/build*/; do
        [ -d "$b" ] || continue
        find "$b/hw/kvssd" -type f \( -name '*.o' -o -name '*.a' \) -delete 2>/dev/null
        find "$b/libcommon.a.p" -name '*hw_kvssd_*.o' -delete 2>/dev/null
        find "$b/tests/qtest" -path '*/kvssd-*' -name '*.o' -delete 2>/dev/null
    done
    echo "$KVSSD_TOP" >"$dev/.checkout"
fi

# hw/kvssd/meson.build and the three registrations, each written only when
# its content changes (an unchanged file keeps its mtime: no reconfigure).
kvssd_qemu_meson "$dev/meson.build.new"
kvssd_qemu_replace "$dev/meson.build" "$dev/meson.build.new"
kvssd_qemu_register_hw_meson "$origin/hw/meson.build" "$tree/hw/meson.build.new"
kvssd_qemu_replace "$tree/hw/meson.build" "$tree/hw/meson.build.new"
kvssd_qemu_register_hw_kconfig "$origin/hw/Kconfig" "$tree/hw/Kconfig.new"
kvssd_qemu_replace "$tree/hw/Kconfig" "$tree/hw/Kconfig.new"
kvssd_qemu_register_qtests "$origin/tests/qtest/meson.build" "$tree/tests/qtest/meson.build.new"
kvssd_qemu_replace "$tree/tests/qtest/meson.build" "$tree/tests/qtest/meson.build.new"

# qtests: link the sources (registered above for x86_64).
find "$tree/tests/qtest" -maxdepth 1 -name 'kvssd-*' -type l ! -exec test -e {} \; -delete
for f in $(kvssd_qemu_qtest_files); do
    ln -sfn "$KVSSD_TOP/tests/qtest/$f" "$tree/tests/qtest/$f"
done

# ---- 3. configure and build -------------------------------------------------
configure_args=("${KVSSD_QEMU_CONFIGURE_ARGS[@]}")

qtest_targets() {
    local f
    # kvssd-test.c and every kvssd-*-test.c
    for f in "$KVSSD_TOP"/tests/qtest/kvssd-*test.c; do
        [ -e "$f" ] && printf 'tests/qtest/%s ' "$(basename "$f" .c)"
    done
}

build_one() { # DIR EXTRA-CONFIGURE-ARGS...
    local b=$1
    shift
    # A build dir keeps the Python it was configured with (its meson reruns
    # with it): reconfigure only when that Python is gone or lost meson.
    local py
    py=$(configured_python "$b")
    if [ -f "$b/build.ninja" ] && [ -n "$py" ] && ! python_ok "$py"; then
        log "$b was configured with $py, which no longer runs or has no meson >= 1.5: reconfiguring"
        rm -f "$b/build.ninja"
    fi
    # The flags a build dir was configured with are kept beside it; when
    # ours change (a feature added), configure runs again in the same dir
    # (QEMU's configure starts meson afresh there; ninja rebuilds what the
    # new config-host.h touches).
    local want
    want="${configure_args[*]} $*"
    if [ -f "$b/build.ninja" ] && [ "$(cat "$b/.kvssd-configure" 2>/dev/null)" != "$want" ]; then
        log "$b was configured with other flags than ($want): reconfiguring"
        rm -f "$b/build.ninja"
    fi
    if [ ! -f "$b/build.ninja" ]; then
        [ -n "$python" ] || pick_python
        mkdir -p "$b"
        log "configuring QEMU in $b (Python: $python)"
        (cd "$b" && "$tree/configure" "${configure_args[@]}" "--python=$python" "$@" >&2) || {
            rm -f "$b/build.ninja"
            die "QEMU configure failed (see above)"
        }
        echo "$want" >"$b/.kvssd-configure"
    fi
    # Default: the emulator and every qtest (tests/qtest/kvssd-*test.c).
    local targets=${KVSSD_QEMU_TARGETS:-qemu-system-x86_64 $(qtest_targets)}
    local have=() t
    for t in $targets; do
        case $t in
        tests/qtest/kvssd-*) [ -e "$KVSSD_TOP/tests/qtest/$(basename "$t").c" ] || continue ;;
        esac
        have+=("$t")
    done
    log "building ${have[*]} in $b"
    ninja -C "$b" "${have[@]}" >&2 || die "QEMU build failed in $b (see above)"
}

python=
build_one "$build_base"
if [ "$asan" = 1 ]; then
    build_one "$build_base-asan" --enable-asan --enable-ubsan
fi
echo "$build_base/qemu-system-x86_64"
