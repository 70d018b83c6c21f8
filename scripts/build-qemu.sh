#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build qemu-system-x86_64 with the kvssd device (hw/kvssd + kvftl) and the
# kvssd qtests.
#
# QEMU 10.0.x source comes from (first match):
#   QEMU_SRC=DIR        an unpacked QEMU source tree (used in place)
#   QEMU_TARBALL=FILE   a qemu-10.0.x.tar.xz (unpacked into the cache)
#   default             Debian trixie's source package (`apt-get source qemu`
#                       through a private sources list: the machine's own apt
#                       configuration is not touched)
# The source and build live in KVSSD_CACHE/qemu (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/kvssd/qemu), outside the project tree, so a
# re-run after a change to our files rebuilds only those files.
#
# Our files are symlinked into QEMU_TREE/hw/kvssd (device, firmware,
# include/) and QEMU_TREE/tests/qtest (kvssd-test.c, kvssd-*-test.c). The only QEMU files
# changed are hw/meson.build, hw/Kconfig and tests/qtest/meson.build, each by
# one appended/inserted line that registers kvssd.
#
# KVSSD_QEMU_ASAN=1 builds a second tree (build-asan) configured with
# --enable-asan --enable-ubsan, for the randomized qtest.
# KVSSD_QEMU_TARGETS: ninja targets (default: the emulator and the qtests).
#
# The last line of stdout is the path of the built qemu-system-x86_64.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

QEMU_WANT_SERIES=10.0
cache=$KVSSD_CACHE/qemu
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
    libglib2.0-dev libfdt-dev libxxhash-dev zlib1g-dev seabios qemu-system-data

# QEMU 10 wants meson >= 1.5 (bookworm has 1.0.1) and its tests pycotap. Its
# configure builds a venv on top of the Python it is given (--python) and
# takes meson from there. PYTHON, else a python3 that has both already (a
# development machine's own Python), else a private venv in the cache with
# both installed from PyPI: the system Python is never touched (Debian's
# refuses pip installs anyway, PEP 668).
python_ok() { # PYTHON - it runs and has meson >= 1.5 and pycotap
    [ -n "$1" ] && "$1" - <<'PY' >/dev/null 2>&1
import sys, mesonbuild.coredata as c, pycotap
v = tuple(int(x) for x in c.version.split('.')[:2])
sys.exit(0 if v >= (1, 5) else 1)
PY
}
venv=$cache/python
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
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$list"
    local o=(-o "Dir::Etc::SourceList=$list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache::Archives=$apt/archives"
             -o APT::Sandbox::User=root)
    log "fetching QEMU source from Debian trixie (apt-get source qemu)"
    apt-get "${o[@]}" update -q >&2 || die "apt-get update (trixie deb-src) failed"
    (cd "$cache/src" && apt-get "${o[@]}" source -q qemu >&2) || die "apt-get source qemu failed"
}

if [ -n "${QEMU_SRC:-}" ]; then
    tree=$(cd "$QEMU_SRC" && pwd)
    build_base=$cache/build-$(echo "$tree" | md5sum | cut -c1-8)
else
    if [ -n "${QEMU_TARBALL:-}" ]; then
        stamp=$cache/src/.from-$(basename "$QEMU_TARBALL")
        if [ ! -e "$stamp" ]; then
            mkdir -p "$cache/src"
            log "unpacking $QEMU_TARBALL"
            tar -C "$cache/src" -xf "$QEMU_TARBALL" || die "cannot unpack $QEMU_TARBALL"
            touch "$stamp"
        fi
    fi
    tree=$(ls -d "$cache"/src/qemu-$QEMU_WANT_SERIES* 2>/dev/null | grep -v '\.tar' | sort -V | tail -1 || true)
    if [ -z "$tree" ]; then
        [ -z "${QEMU_TARBALL:-}" ] || die "$QEMU_TARBALL did not unpack to a qemu-$QEMU_WANT_SERIES.x directory"
        fetch_debian_source
        tree=$(ls -d "$cache"/src/qemu-$QEMU_WANT_SERIES* 2>/dev/null | grep -v '\.tar' | sort -V | tail -1 || true)
        [ -n "$tree" ] || die "apt-get source qemu gave no qemu-$QEMU_WANT_SERIES.x tree in $cache/src (trixie moved on? use QEMU_SRC or QEMU_TARBALL)"
    fi
    build_base=$cache/build
fi
[ -f "$tree/VERSION" ] || die "$tree is not a QEMU source tree (no VERSION file)"
case $(cat "$tree/VERSION") in
$QEMU_WANT_SERIES.*) ;;
*) log "warning: $tree is QEMU $(cat "$tree/VERSION"), the device is written for $QEMU_WANT_SERIES.x" ;;
esac
# Use the system libfdt: the dtc subproject would be fetched with git.
rm -rf "$tree/subprojects/dtc"

# ---- 2. our files into QEMU's tree ------------------------------------------
dev=$tree/hw/kvssd
mkdir -p "$dev"
# Drop links to files that no longer exist, then link what is there now.
find "$dev" -maxdepth 1 -type l ! -exec test -e {} \; -delete
for f in "$KVSSD_TOP"/hw/kvssd/*.c "$KVSSD_TOP"/hw/kvssd/*.h "$KVSSD_TOP"/hw/kvssd/*.def \
         "$KVSSD_TOP"/hw/kvssd/trace-events \
         "$KVSSD_TOP"/hw/kvssd/Kconfig; do
    [ -e "$f" ] && ln -sfn "$f" "$dev/$(basename "$f")"
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

# hw/kvssd/meson.build inside QEMU: our template with the file lists filled
# in (firmware sources change as kvftl grows; QEMU-free command-set files are
# linked only once they exist).
list_files() { # DIR GLOB... -> "'a.c', 'b.c'"
    local d=$1 out= f
    shift
    for f in "$@"; do
        [ -e "$d/$f" ] && out+="'$f', "
    done
    echo "${out%, }"
}
fw_files=$(cd "$KVSSD_TOP/kvftl" 2>/dev/null && list_files . *.c | sed "s/'\\([^']*\\)'/'kvftl\\/\\1'/g" || true)
cmdset_files=$(list_files "$KVSSD_TOP/hw/kvssd" kv.c inline.c admin.c)
tmp=$(mktemp)
sed -e "s|@FIRMWARE_SOURCES@|$fw_files|" -e "s|@CMDSET_SOURCES@|$cmdset_files|" \
    "$KVSSD_TOP/hw/kvssd/meson.qemu.build" >"$tmp"
cmp -s "$tmp" "$dev/meson.build" 2>/dev/null && rm -f "$tmp" || mv "$tmp" "$dev/meson.build"

grep -q "subdir('kvssd')" "$tree/hw/meson.build" || echo "subdir('kvssd')" >>"$tree/hw/meson.build"
grep -q 'source kvssd/Kconfig' "$tree/hw/Kconfig" || echo 'source kvssd/Kconfig' >>"$tree/hw/Kconfig"

# qtests: link the sources and register them for x86_64 (one inserted line
# after the qtests_x86_64 assignment, rewritten when the set of tests changes).
qtests=
for f in "$KVSSD_TOP"/tests/qtest/kvssd-*.h; do
    ln -sfn "$f" "$tree/tests/qtest/$(basename "$f")"
done
for f in "$KVSSD_TOP"/tests/qtest/kvssd-*.c; do
    [ -e "$f" ] || continue
    ln -sfn "$f" "$tree/tests/qtest/$(basename "$f")"
    qtests+="'$(basename "$f" .c)', "
done
qtm=$tree/tests/qtest/meson.build
want="qtests_x86_64 += (config_all_devices.has_key('CONFIG_KVSSD') ? [${qtests%, }] : []) # kvssd"
if ! grep -qxF "$want" "$qtm" || [ "$(grep -c CONFIG_KVSSD "$qtm")" != 1 ]; then
    sed -i '/CONFIG_KVSSD/d' "$qtm"
    line=$(grep -n '^qtests_x86_64 = ' "$qtm" | head -1 | cut -d: -f1)
    [ -n "$line" ] || die "cannot find qtests_x86_64 in $qtm"
    # the first top-level assignment after the (possibly multi-line) qtests_x86_64
    end=$(awk -v s="$line" 'NR>s && /^[a-z_0-9]+ *[+]?= / {print NR; exit}' "$qtm")
    [ -n "$end" ] || die "cannot find the end of qtests_x86_64 in $qtm"
    sed -i "${end}i $want" "$qtm"
fi

# ---- 3. configure and build -------------------------------------------------
configure_args=(--target-list=x86_64-softmmu --without-default-features --enable-tcg
    --enable-kvm --enable-fdt=system --disable-install-blobs --disable-docs
    --disable-werror)

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
    if [ ! -f "$b/build.ninja" ]; then
        [ -n "$python" ] || pick_python
        mkdir -p "$b"
        log "configuring QEMU in $b (Python: $python)"
        (cd "$b" && "$tree/configure" "${configure_args[@]}" "--python=$python" "$@" >&2) || {
            rm -f "$b/build.ninja"
            die "QEMU configure failed (see above)"
        }
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
