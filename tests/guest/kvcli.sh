# SPDX-License-Identifier: GPL-2.0-or-later
#
# The kvssd CLI as the guest cases use it (sourced after lib.sh). Every case
# goes through these few functions, so the suite follows the CLI's
# documented usage (docs/host.md) in one place.

# kv ARGS... - the CLI on the KV-SSD under test.
kv() { kvssd --device "$DEV" "$@"; }

# kv_put MODE KEY FILE [--only-if-absent|--only-if-exists]
kv_put() {
    _m=$1 _k=$2 _f=$3
    shift 3
    kv --mode "$_m" put "$@" --file "$_f" -- "$_k"
}
# kv_get KEY OUTFILE
kv_get() { kv get --output "$2" -- "$1"; }
# kv_exist KEY - exit 0 when the key exists
kv_exist() { kv exist -- "$1"; }
kv_del() { kv del -- "$1"; }
# kv_list START - keys from START on, one a line
kv_list() { kv list -- "$1"; }
# kv_iter PREFIX - the keys with PREFIX (iterator), one a line
kv_iter() { kv iter -- "$1"; }
# kv_flush - Flush: everything stored so far is durable
kv_flush() { kv flush; }

# kvb ARGS... - kvbench on the KV-SSD under test, JSON report on stdout.
kvb() { kvbench --device "$DEV" --json "$@"; }
# kvb_mixed SECONDS KEY-PREFIX SEED - a mixed insert/update/read run for
# SECONDS with every read verified (self-checking payloads), keys under
# KEY-PREFIX so that two runs at once never touch each other's keys.
kvb_mixed() {
    kvb --workload mixed --duration "$1" --key-prefix "$2" --seed "$3" --verify
}
