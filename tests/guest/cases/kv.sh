# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "kv": the kvssd CLI (libkvssd through Linux passthrough) against the
# KV-SSD: round trips in every transfer mode, status codes, iterators.
. "${KVSSD_GUEST_LIB:-/root/lib.sh}"
. "$(dirname "${KVSSD_GUEST_LIB:-/root/lib.sh}")/kvcli.sh"

MODES="prp inline hybrid adaptive"
VALUES="0 1 31 32 33 4095 4096 4097 65536 2097152"
KEYS="1 16 17 255"


for m in $MODES; do
    for k in $KEYS; do
        for v in $VALUES; do
            check "round trip mode=$m key=${k}B value=${v}B: put/exist/list/get byte-identical/del" \
                kv_roundtrip rt "$m" "$k" "$v"
        done
    done
done

# An overwrite replaces the value (a later, shorter value does not keep the
# old tail).
overwrite() {
    mkdata "$T/long" 10000 11
    mkdata "$T/short" 33 12
    kv_put "$1" ow-key "$T/long" || fail "first put failed"
    kv_put "$1" ow-key "$T/short" || fail "overwrite failed"
    kv_get ow-key "$T/got" || fail "get failed"
    cmp "$T/short" "$T/got" || fail "the overwritten value is not the second one"
    kv_del ow-key
}
for m in $MODES; do
    check "overwrite mode=$m: 10000 B then 33 B reads back 33 B" overwrite "$m"
done

# ---- status codes -----------------------------------------------------------
key_256() {
    printf x >"$T/v1"
    expect_status fail "256" kv_put prp "$(mkkey 256 k256)" "$T/v1"
    expect_status fail "1-255" kv_put prp "$(mkkey 256 k256)" "$T/v1"
}
check "a 256-byte key is refused with a sentence naming 256 and 1-255" key_256

value_over_max() {
    mkdata "$T/big" 2097153 0
    expect_status fail "2097152" kv_put "$1" too-big "$T/big"
    expect_status fail "does not exist" kv_exist too-big
}
for m in $MODES; do
    check "mode=$m: a value of 2 MiB + 1 is refused (max 2097152) and nothing is stored" value_over_max "$m"
done

missing_key() {
    expect_status fail "does not exist" kv_get never-stored "$T/got"
    expect_status fail "does not exist" kv_del never-stored
}
check "get and del of a missing key: KV Key Does Not Exist" missing_key

only_if_absent() {
    mkdata "$T/a" 100 21
    mkdata "$T/b" 5000 22
    kv_put "$1" "absent-$1" "$T/a" || fail "first put failed"
    expect_status fail "already exists" kv_put "$1" "absent-$1" "$T/b" --if-absent
    kv_get "absent-$1" "$T/got" || fail "get failed"
    cmp "$T/a" "$T/got" || fail "the refused store changed the value"
    kv_del "absent-$1"
}
only_if_exists() {
    mkdata "$T/a" 100 23
    expect_status fail "does not exist" kv_put "$1" "exists-$1" "$T/a" --if-exists
    expect_status fail "does not exist" kv_exist "exists-$1"
    # and on a present key it stores
    kv_put "$1" "exists-$1" "$T/a" || fail "put failed"
    mkdata "$T/b" 4097 24
    kv_put "$1" "exists-$1" "$T/b" --if-exists || fail "only-if-exists on a present key failed"
    kv_get "exists-$1" "$T/got" && cmp "$T/b" "$T/got" || fail "only-if-exists did not store"
    kv_del "exists-$1"
}
for m in $MODES; do
    check "mode=$m: only-if-absent on an existing key: KV Key Exists, value unchanged" only_if_absent "$m"
    check "mode=$m: only-if-exists on a missing key: KV Key Does Not Exist, nothing stored" only_if_exists "$m"
done

# ---- iterators ---------------------------------------------------------------
# 20 keys under "itA0", 7 under "itB0", 5 under "itA1" (same first 3 bytes as
# itA0): an iterator over "itA0" returns exactly the 20.
iter_setup() {
    printf v >"$T/v1"
    for i in $(seq 1 20); do kv_put prp "itA0-$i" "$T/v1" || fail "put itA0-$i"; done
    for i in $(seq 1 7); do kv_put inline "itB0-long-key-over-16-bytes-$i" "$T/v1" || fail "put itB0-$i"; done
    for i in $(seq 1 5); do kv_put prp "itA1-$i" "$T/v1" || fail "put itA1-$i"; done
}
iter_prefix() { # PREFIX COUNT STEM
    kv_iter "$1" >"$T/iter.raw" || fail "iter $1 failed: $(head -c 300 "$T/iter.raw")"
    LC_ALL=C sort "$T/iter.raw" >"$T/iter.got"
    for i in $(seq 1 "$2"); do echo "$3$i"; done | LC_ALL=C sort >"$T/iter.want"
    cmp -s "$T/iter.want" "$T/iter.got" ||
        fail "iter $1: got $(wc -l <"$T/iter.got") keys ($(head -n 5 "$T/iter.got" | tr '\n' ' ')...), expected the $2 keys $3*"
}
iter_none() {
    kv_iter itZ9 >"$T/iter.raw" || fail "iter itZ9 failed: $(head -c 300 "$T/iter.raw")"
    expect_eq "keys under itZ9" "$(wc -l <"$T/iter.raw")" 0
}
iter_after_delete() {
    for i in 1 2 3; do kv_del "itA0-$i" || fail "del itA0-$i"; done
    kv_iter itA0 >"$T/iter.raw" || fail "iter itA0 failed: $(head -c 300 "$T/iter.raw")"
    LC_ALL=C sort "$T/iter.raw" >"$T/iter.got"
    for i in $(seq 4 20); do echo "itA0-$i"; done | LC_ALL=C sort >"$T/iter.want"
    cmp -s "$T/iter.want" "$T/iter.got" || fail "after deleting 3, iter itA0 gave $(wc -l <"$T/iter.got") keys"
}
check "iterators: store 32 keys under three 4-byte prefixes" iter_setup
check "iterator over itA0 returns exactly its 20 keys" iter_prefix itA0 20 itA0-
check "iterator over itB0 returns exactly its 7 long keys" iter_prefix itB0 7 itB0-long-key-over-16-bytes-
check "iterator over itA1 returns exactly its 5 keys" iter_prefix itA1 5 itA1-
check "iterator over an unused prefix returns no key" iter_none
check "iterator after deleting 3 keys returns the other 17" iter_after_delete

done_group
