# SPDX-License-Identifier: GPL-2.0-or-later
#
# Sourced by the guest-side case scripts (tests/guest/cases/*.sh), which run
# inside the guest under busybox sh. Each case is a shell function run by
# `check NAME FUNCTION [ARGS...]`; it passes when the function returns 0.
# The protocol with tests/guest/run.sh on the host is two line kinds:
#   GUEST-CASE ok NAME        / GUEST-CASE fail NAME
#   GUEST-DIAG text           (why the previous case failed)
# With KVSSD_LIST=1 (run on the host), `check` only prints each NAME, so the
# host knows every case of a group before booting and reports a case the
# guest never reached as "not ok", never silently.

KVSSD_LIST=${KVSSD_LIST:-}
DEV=${DEV:-/dev/ng0n1}       # the KV namespace (generic char device)
CTRL=${CTRL:-/dev/nvme0}     # its controller
T=${TMPDIR:-/tmp}/kvtest
[ -n "$KVSSD_LIST" ] || mkdir -p "$T"

check() {
    _name=$1
    shift
    if [ -n "$KVSSD_LIST" ]; then
        echo "$_name"
        return 0
    fi
    _out=$("$@" 2>&1)
    _rc=$?
    if [ $_rc -eq 0 ]; then
        echo "GUEST-CASE ok $_name"
    else
        echo "GUEST-CASE fail $_name"
        printf '%s\n' "$_out" | tail -n 12 | sed 's/^/GUEST-DIAG /'
    fi
    return 0
}

# A group script ends with `done_group`: the host treats output without it
# as a guest that stopped early.
done_group() {
    [ -n "$KVSSD_LIST" ] || echo "GUEST-GROUP-DONE"
}

# fail MESSAGE - end the case (check runs it in a subshell) as failed.
fail() { echo "$*"; exit 1; }

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() {
    [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

# expect_status WANT_RC WANT_TEXT CMD... - CMD exits WANT_RC ("fail": any
# non-zero status) and its output (stdout+stderr) contains WANT_TEXT
# (case-insensitive).
expect_status() {
    _want=$1
    _text=$2
    shift 2
    _o=$("$@" 2>&1)
    _r=$?
    if [ "$_want" = fail ]; then
        [ "$_r" != 0 ] || fail "'$(echo "$*" | head -c 200)' succeeded; expected an error; output: $(echo "$_o" | head -c 400)"
    else
        [ "$_r" = "$_want" ] || fail "'$(echo "$*" | head -c 200)' exited $_r (expected $_want); output: $(echo "$_o" | head -c 400)"
    fi
    [ -z "$_text" ] || echo "$_o" | grep -qi -- "$_text" ||
        fail "'$*' output lacks '$_text'; output: $(echo "$_o" | head -c 400)"
}

# json_get FILE PATH - a value from a JSON object, PATH like .a.b[0].c
# (busybox has no jq; the JSON our tools print is one object.)
json_get() {
    awk -v path="$2" '
    BEGIN { RS = "\001" }
    {
        s = $0; n = split(substr(path, 2), parts, ".")
        for (i = 1; i <= n; i++) {
            k = parts[i]
            p = index(s, "\"" k "\"")
            if (p == 0) { exit 1 }
            s = substr(s, p + length(k) + 2)
            sub(/^[ \t\r\n]*:[ \t\r\n]*/, "", s)
        }
        if (substr(s, 1, 1) == "\"") { s = substr(s, 2); sub(/".*/, "", s); print s; exit 0 }
        # a number, true/false/null: up to the next separator
        for (i = 1; i <= length(s); i++)
            if (index(",}] \t\r\n", substr(s, i, 1))) break
        print substr(s, 1, i - 1)
    }' "$1"
}

# mkdata FILE BYTES OFFSET - BYTES bytes of the random pool that
# tests/guest/run.sh generates with a fixed seed and copies into every boot
# (/root/pool.bin, 2 MiB + 64 KiB): the same bytes on every boot, so a value
# stored in one boot is checked in the next, and never periodic, so a
# misplaced page or fragment cannot compare equal.
POOL=${POOL:-/root/pool.bin}
mkdata() {
    tail -c +$(($3 + 1)) "$POOL" | head -c "$2" >"$1"
    [ "$(wc -c <"$1")" -eq "$2" ] || fail "mkdata: the pool has fewer than $(($3 + $2)) bytes"
}

# mkkey LEN SEED - a printable key of LEN bytes (its first bytes distinguish
# it from other seeds' keys).
mkkey() {
    _k="$2-"
    while [ ${#_k} -lt "$1" ]; do _k="$_k$2."; done
    printf '%s' "$_k" | head -c "$1"
}
