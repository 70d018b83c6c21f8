# SPDX-License-Identifier: GPL-2.0-or-later
#
# writer.sh CPU PREFIX N (guest side, started by cases/bench.sh under
# taskset): checks that it runs on CPU, stores N values of 0-8999 bytes under
# PREFIX-0 .. PREFIX-(N-1) in alternating transfer modes, then reads each
# back and compares it byte for byte. Exit 0 only when all N match.
. /root/lib.sh
. /root/kvcli.sh
cpu=$1 prefix=$2 n=$3
on=$(awk '{ print $39 }' /proc/self/stat)
[ "$on" = "$cpu" ] || fail "writer $prefix runs on CPU $on, not $cpu"
# value i: (i * 523) % 9000 bytes from pool offset i * 97
i=0
while [ $i -lt "$n" ]; do
    m=$(echo "prp inline hybrid adaptive" | cut -d' ' -f$((i % 4 + 1)))
    mkdata "$T/$prefix.v" $((i * 523 % 9000)) $((i * 97))
    kv_put "$m" "$prefix-$i" "$T/$prefix.v" || fail "$prefix: put $i ($m) failed"
    i=$((i + 1))
done
i=0
while [ $i -lt "$n" ]; do
    mkdata "$T/$prefix.v" $((i * 523 % 9000)) $((i * 97))
    rm -f "$T/$prefix.got"
    kv_get "$prefix-$i" "$T/$prefix.got" || fail "$prefix: get $i failed"
    cmp -s "$T/$prefix.v" "$T/$prefix.got" || fail "$prefix: value $i differs"
    i=$((i + 1))
done
echo "$prefix: $n values stored and verified on CPU $cpu"
