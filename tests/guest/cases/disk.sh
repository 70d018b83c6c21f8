# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "disk": the full-VM guest (scripts/mkguest.sh --disk: Debian
# bookworm with systemd, booted by scripts/run-guest.sh --disk; this script
# arrives over ssh and runs as root). What a FEMU-style user does: log in,
# compile their own program against the installed libkvssd with
# `pkg-config libkvssd`, run it on the KV-SSD, and build the SNIA KV API
# programs (tests/snia/e2e_snia.c, test_snia_cpp.cpp, copied to /root by
# tests/guest/run.sh) against the installed kvs_api.h and `pkg-config kvapi`.
. "${KVSSD_GUEST_LIB:-/root/lib.sh}"
NG=/dev/ng0n1
W=/root/disk-case
[ -n "$KVSSD_LIST" ] || { rm -rf "$W"; mkdir -p "$W"; }

booted() {
    # --wait: the boot is over once sshd answers, but systemd may still be
    # starting units; it reports "running" only with no failed unit.
    st=$(timeout 120 systemctl is-system-running --wait 2>&1)
    [ "$st" = running ] ||
        fail "systemctl is-system-running: '$st'; failed units: $(systemctl --failed --plain --no-legend | head -n 5)"
}

device_present() {
    [ -c $NG ] || fail "$NG is not a character device: $(ls -l /dev/ng* /dev/nvme* 2>&1 | head -n 5)"
    expect_eq "serial of nvme0" "$(cat /sys/class/nvme/nvme0/serial | tr -d ' ')" kvssd0
    # A KV namespace (CSI 01h) has no block driver in Linux: its gendisk is
    # hidden, so udev makes no /dev/nvme0n1.
    [ ! -e /dev/nvme0n1 ] || fail "/dev/nvme0n1 exists: the namespace is not the KV one"
}

tools_installed() {
    for t in kvssd kvbench nvme fio db_bench cc c++ pkg-config; do
        command -v $t >/dev/null || fail "$t is not installed in the image"
    done
    v=$(pkg-config --modversion libkvssd) || fail "pkg-config libkvssd failed"
    kvssd --version >"$W/ver" 2>&1 || fail "kvssd --version failed: $(cat "$W/ver")"
    grep -qF "$v" "$W/ver" || fail "kvssd --version '$(cat "$W/ver")' does not name libkvssd's version $v"
    [ -f /usr/include/kvssd/libkvssd.h ] || fail "no /usr/include/kvssd/libkvssd.h"
    [ -f /usr/include/kvs/kvs_api.h ] || fail "no /usr/include/kvs/kvs_api.h"
    # Installed under prefix /usr: the .pc is relocatable (its -L is
    # relative to the .pc's own directory) and must name /usr's libdir.
    libs=$(pkg-config --libs libkvssd)
    expect_eq "pkg-config --libs libkvssd, its -l" "$(printf '%s\n' $libs | grep '^-l')" -lkvssd
    for d in $(printf '%s\n' $libs | sed -n 's/^-L//p'); do
        expect_eq "pkg-config --libs libkvssd, its -L $d" "$(realpath "$d")" /usr/lib/x86_64-linux-gnu
    done
    pkg-config --libs kvapi | grep -q -- -lkvapi || fail "pkg-config --libs kvapi: '$(pkg-config --libs kvapi)'"
}

# A user's program: 64 keys of 16 bytes with values of 1 to 6000 bytes
# (inline and PRP transfers), each retrieved and compared, then deleted and
# looked up again. It prints one summary line the case compares exactly.
user_program() {
    cat >"$W/kvapp.c" <<'C'
#include <kvssd/libkvssd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    struct kvssd_dev *dev;
    static unsigned char val[6000], back[6000];
    int stored = 0, equal = 0, gone = 0, err;
    if (argc != 2)
        return 2;
    if ((err = kvssd_open(argv[1], &dev)) != 0) {
        printf("open %s: %s\n", argv[1], kvssd_strerror(err));
        return 1;
    }
    for (int i = 0; i < 64; i++) {
        char key[17];
        uint32_t len = 1 + (uint32_t)i * 93, got = 0;
        snprintf(key, sizeof key, "user-prog-%06d", i);
        for (uint32_t j = 0; j < len; j++)
            val[j] = (unsigned char)(i * 31 + j * 7);
        if ((err = kvssd_store(dev, key, 16, val, len, 0, NULL)) != 0) {
            printf("store %s: %s\n", key, kvssd_strerror(err));
            continue;
        }
        stored++;
        memset(back, 0, sizeof back);
        if ((err = kvssd_retrieve(dev, key, 16, back, sizeof back, &got, NULL)) != 0)
            printf("retrieve %s: %s\n", key, kvssd_strerror(err));
        else if (got == len && memcmp(val, back, len) == 0)
            equal++;
        else
            printf("retrieve %s: %u bytes, differ from the %u stored\n", key, got, len);
        if (kvssd_delete(dev, key, 16, NULL) == 0 &&
            kvssd_retrieve(dev, key, 16, back, sizeof back, &got, NULL) == -KVSSD_ERR_KEY_NOT_FOUND)
            gone++;
    }
    printf("stored %d equal %d deleted %d\n", stored, equal, gone);
    kvssd_close(dev);
    return stored == 64 && equal == 64 && gone == 64 ? 0 : 1;
}
C
    # shellcheck disable=SC2046 # pkg-config prints a list of words
    cc -O2 -Wall -Werror -o "$W/kvapp" "$W/kvapp.c" $(pkg-config --cflags --libs libkvssd) >"$W/cc.log" 2>&1 ||
        fail "cc kvapp.c \$(pkg-config --cflags --libs libkvssd): $(head -c 600 "$W/cc.log")"
    "$W/kvapp" $NG >"$W/out" 2>&1
    rc=$?
    expect_eq "kvapp's summary" "$(tail -n 1 "$W/out")" "stored 64 equal 64 deleted 64"
    expect_eq "kvapp's exit status" $rc 0
}

# snia COMPILER SOURCE - build SOURCE against the installed SNIA API and run
# it on the device: exit 0, a TAP plan 1..N with N > 0, exactly N "ok"
# lines numbered 1..N, no "not ok", no "Bail out!".
snia() {
    cc=$1 src=/root/$2
    [ -f "$src" ] || fail "$src was not copied into the guest"
    # shellcheck disable=SC2046
    $cc -O2 -o "$W/snia-$2" "$src" $(pkg-config --cflags --libs kvapi) >"$W/snia-cc.log" 2>&1 ||
        fail "$cc $2 \$(pkg-config --cflags --libs kvapi): $(head -c 600 "$W/snia-cc.log")"
    "$W/snia-$2" $NG >"$W/snia.out" 2>&1
    rc=$?
    plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$W/snia.out")
    oks=$(grep -c '^ok [0-9]' "$W/snia.out")
    bad=$(grep -c -e '^not ok' -e '^Bail out!' "$W/snia.out")
    [ "$bad" = 0 ] || fail "$2: $(grep -e '^not ok' -e '^Bail out!' "$W/snia.out" | head -n 8)"
    [ -n "$plan" ] && [ "$plan" -gt 0 ] || fail "$2 printed no plan; output: $(tail -c 400 "$W/snia.out")"
    expect_eq "$2: ok lines against the plan" "$oks" "$plan"
    expect_eq "$2: numbering" "$(grep '^ok [0-9]' "$W/snia.out" | awk '{ if ($2 != NR) { print "ok " $2 " at line " NR; exit } } END { }')" ""
    expect_eq "$2: exit status" $rc 0
    echo "$2: $oks/$plan"
}

check "boot: systemd is running with no failed unit" booted
check "device: $NG is the KV-SSD (serial kvssd0, no block device)" device_present
check "tools: kvssd, kvbench, nvme-cli, fio, db_bench, compilers, pkg-config files installed" tools_installed
check "user program built with pkg-config libkvssd: 64 values stored, retrieved equal, deleted" user_program
check "SNIA C program e2e_snia.c built against kvs_api.h and kvapi.pc passes on $NG" snia cc e2e_snia.c
check "SNIA C++ program test_snia_cpp.cpp built against kvs_api.h and kvapi.pc passes on $NG" snia c++ test_snia_cpp.cpp
done_group
