#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The bash completion (host/completions/kvssd.bash) driven the way bash
# drives it: COMP_LINE and COMP_POINT set, _kvssd_complete called, COMPREPLY
# compared, sorted, with the exact words expected. Then the options it
# offers are those each tool's --help (kvssd help COMMAND) lists.
#
# usage: completion.sh SCRIPT KVSSD [KVBENCH]      (TAP on stdout)
set -u
script=$(realpath "$1") kvssd=$(realpath "$2") kvbench=${3:+$(realpath "$3")}
# shellcheck source=/dev/null
source "$script" || exit 1
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:' # bash's default
n=0 failed=0

# the sorted completions of LINE (the cursor at its end), one line
completions()
{
    COMP_LINE=$1 COMP_POINT=${#1} COMPREPLY=()
    _kvssd_complete
    printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | paste -sd' '
}

# expect LINE WORDS: LINE<TAB> completes to exactly WORDS
expect()
{
    local got
    got=$(completions "$1")
    n=$((n + 1))
    if [[ $got == "$2" ]]; then
        echo "ok $n - '$1<TAB>' completes to: $2"
    else
        echo "not ok $n - '$1<TAB>' completes to \"$got\", expected \"$2\""
        failed=$((failed + 1))
    fi
}

# same_options WHAT HELP_TEXT LINE: LINE<TAB> offers exactly the options of HELP_TEXT
same_options()
{
    local want got
    want=$(grep -oE '^ +(-[a-zA-Z], )?--[a-z0-9-]+' <<< "$2" | tr -d ',' | tr ' ' '\n' |
        grep -v -e '^$' -e '^--help-' | LC_ALL=C sort -u | paste -sd' ')
    got=$(completions "$3" | tr ' ' '\n' | grep -v '^--list-presets$' | paste -sd' ')
    [[ $2 == *--list-presets* ]] && want=$(tr ' ' '\n' <<< "$want" | grep -v '^--list-presets$' |
        paste -sd' ')
    n=$((n + 1))
    if [[ -n $want && $got == "$want" ]]; then
        echo "ok $n - '$3<TAB>' offers the options of $1"
    else
        echo "not ok $n - '$3<TAB>' offers \"$got\", $1 lists \"$want\""
        failed=$((failed + 1))
    fi
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/images" && touch "$tmp/kv.img" "$tmp/kv2.img" "$tmp/images/a.img"
cd "$tmp" || exit 1

expect "$kvssd fl" "flush"
expect "$kvssd re" "reset-stats"
expect "$kvssd help fo" "format"
expect "$kvssd -j fl" "flush"
expect "$kvssd -d sim:kv.img fl" "flush"
expect "$kvssd get --m" "--max-bytes --mode"
expect "$kvssd put --if" "--if-absent --if-exists"
expect "$kvssd format --y" "--yes"
expect "$kvssd get -m " "adaptive hybrid inline prp"
expect "$kvssd get --mode=hy" "hybrid"
expect "$kvssd info -o " "json normal"
expect "$kvssd info --output-format j" "json"
expect "$kvssd info si" "sim:"
expect "$kvssd info sim:kv" "kv.img kv2.img"
expect "$kvssd get sim:im" "images"
expect "$kvssd get sim:images/" "images/a.img"
expect "$kvssd get -d sim:kv2" "kv2.img"
expect "$kvssd get --device=sim:kv2" "kv2.img"
expect "$kvssd get sim:kv.img " ""
expect "$kvssd put -f kv2" "kv2.img"
commands=$("$kvssd" --help | sed -n '/^commands:/,/^options:/s/^  \([a-z][a-z-]*\) .*/\1/p' |
    LC_ALL=C sort | paste -sd' ')
[[ -n $commands ]] || commands="(none: kvssd --help lists no command)"
expect "$kvssd " "$commands"
for c in $(completions "$kvssd "); do
    same_options "kvssd help $c" "$("$kvssd" help "$c")" "$kvssd $c -"
done
if [[ -n $kvbench ]]; then
    commands=$("$kvbench" --help | sed -n '/^commands:/,/^options:/s/^  \([a-z][a-z-]*\) .*/\1/p' |
        LC_ALL=C sort | paste -sd' ')
    [[ -n $commands ]] || commands="(none: kvbench --help lists no command)"
    expect "$kvbench " "$commands"
    expect "$kvbench c" "calibrate"
    expect "$kvbench --preset yc" "ycsb-a ycsb-b ycsb-c ycsb-d ycsb-e ycsb-f"
    expect "$kvbench run -p char-read-" "char-read-seq char-read-uniform char-read-zipfian"
    expect "$kvbench --preset=fill" "fillrandom fillseq"
    expect "$kvbench --io " "async sync"
    expect "$kvbench --mode a" "adaptive"
    expect "$kvbench --order z" "zipfian"
    expect "$kvbench --rocksdb-compression lz" "lz4 lz4hc"
    expect "$kvbench --rocksdb-wal " "false true"
    expect "$kvbench --engine kvssd,r" "kvssd,rawhash kvssd,rocksdb"
    expect "$kvbench --device sim:kv.i" "kv.img"
    expect "$kvbench --rocksdb-w" "--rocksdb-wal --rocksdb-write-buffer"
    same_options "kvbench --help" "$("$kvbench" --help)" "$kvbench -"
fi
echo "1..$n"
exit $((failed > 0))
