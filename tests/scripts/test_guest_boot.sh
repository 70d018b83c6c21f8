#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# guest_boot_panic and guest_boot_stateless (scripts/lib/common.sh): which
# guest boots tests/guest/run.sh boots again. Only a kernel that panicked
# before the guest's command started, in a boot that keeps no state, is
# retried: a panic after the start may be the device's doing. TAP.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
check() { # NAME EXPECTED GOT
    n=$((n + 1))
    if [ "$2" = "$3" ]; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1: expected '$2', got '$3'"
        failed=$((failed + 1))
    fi
}
# panic FILE - guest_boot_panic's output and status, as "OUTPUT|STATUS"
panic() {
    local out rc
    out=$(guest_boot_panic "$1")
    rc=$?
    echo "$out|$rc"
}
# stateless ARGS... - guest_boot_stateless's status
stateless() {
    guest_boot_stateless "$@"
    echo $?
}

# The console of the boot that failed a CI run (Linux 6.12 under TCG,
# serial lines end in CR LF): an Oops in a timer interrupt, 1.76 s in,
# before the init started the group.
printf '%s\r\n' \
    '[    1.757204] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI' \
    '[    1.758010] RIP: 0010:hrtimer_start_range_ns+0x1c5/0x3a0' \
    '[    1.761911] Kernel panic - not syncing: Fatal exception in interrupt' \
    '[    1.762371] Kernel Offset: disabled' >"$tmp/boot-panic"
check "a panic before the command started: the panic line, status 0" \
    "Kernel panic - not syncing: Fatal exception in interrupt|0" "$(panic "$tmp/boot-panic")"

# The same panic once the command ran: not a boot failure.
printf '%s\n' 'KVSSD-GUEST-START' 'GUEST-CASE ok list' \
    '[   41.000001] Kernel panic - not syncing: Fatal exception' >"$tmp/late-panic"
check "a panic after KVSSD-GUEST-START is not retried" "|1" "$(panic "$tmp/late-panic")"

# A boot that ended without a panic (QEMU killed, say), and no log at all.
printf '%s\n' '[    0.000000] Linux version 6.12.0' 'Run /init as init process' >"$tmp/no-panic"
check "a console without a panic line" "|1" "$(panic "$tmp/no-panic")"
check "no console log" "|1" "$(panic "$tmp/absent")"

# Which boots keep state (tests/guest/run.sh's options).
check "a boot with its own fresh device is stateless" 0 \
    "$(stateless --kernel trixie --cpus 2 --prop index=pm983 -- PHASE=x)"
check "a boot on an image is not" 1 "$(stateless --image /tmp/p.img -- PHASE=store)"
check "a block-image boot is not" 1 "$(stateless --block --block-image /tmp/b.img --block-prop plp=off)"
check "a fabrics host is not" 1 "$(stateless --kernel trixie --fabrics-host /tmp/s -- ROLE=host)"
check "a fabrics target is not" 1 "$(stateless --devices 2 --fabrics-target /tmp/s -- ROLE=target)"

echo "1..$n"
[ "$failed" -eq 0 ]
