#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# usage: tests/snia/guest.sh [BUILD_DIR]
#
# The SNIA-API programs in a guest, against the real device and the guest
# kernel's NVMe passthrough (ioctl and io_uring): builds tests/snia/e2e_snia.c
# and tests/snia/test_snia_cpp.cpp against a `meson install --destdir` of
# BUILD_DIR (default $BUILD_DIR, else ./build) with `pkg-config kvapi` - the
# installed header and library, as a user would - copies them with
# libkvapi.so, libkvssd.so (and libstdc++/libgcc_s for the C++ one: the
# initramfs guest has no C++ runtime) into a guest booted by
# scripts/run-guest.sh, runs both on /dev/ng0n1 and prints one TAP stream.
# $QEMU picks the QEMU binary as for run-guest.sh. Exit status 0 when every
# check passed. Both programs erase the guest's (in-memory) namespace first.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${BUILD_DIR:-$top/build}}
work=$(mktemp -d "${TMPDIR:-/tmp}/snia-guest.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

bail() {
    echo "Bail out! $*"
    exit 1
}

[ -d "$build" ] || bail "no build directory $build (run meson setup first)"
meson install -C "$build" --destdir "$work/dest" --no-rebuild >"$work/install.log" 2>&1 ||
    bail "meson install -C $build failed: $(tail -n 3 "$work/install.log")"
pc=$(find "$work/dest" -name kvapi.pc | head -n 1)
[ -n "$pc" ] || bail "$build installs no kvapi.pc (host_tools=false?)"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
prefix=$(sed -n 's/^prefix=//p' "$pc")
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --define-variable=prefix="$work/dest$prefix" \
    --cflags --libs kvapi) || bail "pkg-config kvapi failed"

mkdir "$work/snia"
# shellcheck disable=SC2086 # $flags is a list of compiler words
cc -O2 -o "$work/snia/e2e_snia" "$top/tests/snia/e2e_snia.c" $flags -Wl,-rpath,'$ORIGIN' \
    2>"$work/cc.log" || bail "cc e2e_snia.c: $(head -n 5 "$work/cc.log")"
progs="e2e_snia"
if command -v c++ >/dev/null; then
    # shellcheck disable=SC2086
    c++ -O2 -o "$work/snia/e2e_snia_cpp" "$top/tests/snia/test_snia_cpp.cpp" $flags \
        -Wl,-rpath,'$ORIGIN' 2>"$work/cxx.log" || bail "c++ test_snia_cpp.cpp: $(head -n 5 "$work/cxx.log")"
    progs="$progs e2e_snia_cpp"
    for lib in libstdc++.so.6 libgcc_s.so.1; do
        cp -L "$(c++ -print-file-name=$lib)" "$work/snia/" || bail "no $lib to copy"
    done
fi
cp -L "$libdir/libkvapi.so.0" "$libdir/libkvssd.so.0" "$work/snia/" || bail "libraries not installed"

files=""
for f in "$work"/snia/*; do
    files="$files --file $f:/root/snia/$(basename "$f")"
done
script="cd /root/snia && chmod +x $progs"
for p in $progs; do
    script="$script; echo @@snia $p; LD_LIBRARY_PATH=/root/snia ./$p /dev/ng0n1; echo @@exit \$?"
done
# shellcheck disable=SC2086 # $files is a list of --file options
"$top/scripts/run-guest.sh" ${QEMU:+--qemu "$QEMU"} --timeout 1200 $files -- "$script" \
    >"$work/guest.out" 2>"$work/guest.err"
rc=$?
[ $rc -eq 0 ] || [ -s "$work/guest.out" ] || bail "the guest did not run (run-guest.sh exit $rc): $(tail -n 3 "$work/guest.err")"

# One TAP stream: each program's checks renumbered and named after it.
awk -v rc="$rc" -v progs="$progs" '
    /^@@snia / { prog = $2; next }
    /^@@exit / {
        if ($2 != 0) { n++; printf "not ok %d - %s: exit status %s\n", n, prog, $2; bad = 1 }
        ran[prog] = 1; next
    }
    /^(not )?ok [0-9]+/ {
        ok = ($1 == "ok"); sub(/^(not )?ok [0-9]+ *-? */, "")
        n++; printf "%s %d - %s: %s\n", ok ? "ok" : "not ok", n, prog, $0
        if (!ok) bad = 1
    }
    END {
        np = split(progs, want, " ")
        for (i = 1; i <= np; i++) {
            if (!(want[i] in ran)) { n++; printf "not ok %d - %s: did not run\n", n, want[i]; bad = 1 }
        }
        if (rc != 0) { n++; printf "not ok %d - run-guest.sh exit status %d\n", n, rc; bad = 1 }
        printf "1..%d\n", n
        exit bad
    }' "$work/guest.out"
