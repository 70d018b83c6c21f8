#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The README's first command. On a Debian 12 or 13 machine: installs what is
# missing, builds QEMU with the KV-SSD (scripts/build-qemu.sh, cached), builds
# the guest (scripts/mkguest.sh, cached), boots it once and runs inside it
#   kvssd info
#   kvbench workload bandslim-m (BandSlim's mixgraph values, 4-byte keys)
#   kvbench a mixed run of 16-byte keys and 4 KiB values
# and prints the results table. See docs/guest.md.
#
# Environment:
#   KVSSD_DEMO_KEYS     keys per kvbench run (default 50000): workload M
#                       stores that many; the mixed run loads that many and
#                       then does as many reads and updates (50:50)
#   QEMU                use this qemu-system-x86_64 instead of building one
#   KVSSD_CACHE         cache directory (default ~/.cache/kvssd)
set -uo pipefail
. "$(dirname "$0")/lib/common.sh"
cd "$KVSSD_TOP"

case ${1:-} in
-h|--help) sed -n '4,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
'') ;;
*) die "unknown argument '$1': demo.sh takes no arguments (see --help)" ;;
esac

ops=${KVSSD_DEMO_KEYS:-50000}
[[ $ops =~ ^[0-9]+$ ]] && [ "$ops" -ge 1 ] && [ "$ops" -le 100000000 ] ||
    die "KVSSD_DEMO_KEYS '$ops' is not valid: give a whole number of keys from 1 to 100000000"

t0=$SECONDS
step() { log "== $* ($((SECONDS - t0)) s)"; }

step "packages"
ensure_packages "${KVSSD_BUILD_PACKAGES[@]}" busybox-static cpio nvme-cli seabios \
    qemu-system-data binutils xz-utils zstd

qemu=${QEMU:-}
if [ -z "$qemu" ]; then
    step "QEMU with -device kvssd (scripts/build-qemu.sh; cached after the first run)"
    qemu=$(scripts/build-qemu.sh | tail -n1)
    [ -n "$qemu" ] && [ -x "$qemu" ] || die "scripts/build-qemu.sh did not produce a QEMU binary (see above)"
fi
"$qemu" -device help 2>/dev/null | grep -q '"kvssd"' || die "$qemu has no -device kvssd"

step "guest kernel + initramfs (scripts/mkguest.sh; cached)"
guest=$(scripts/mkguest.sh | tail -n1)
[ -n "$guest" ] && [ "$(cat "$guest/has-tools" 2>/dev/null)" = yes ] ||
    die "the guest has no kvssd/kvbench: $(sed -n 's/^tools: //p' "$guest/manifest" 2>/dev/null)"

work=$(mktemp -d "${TMPDIR:-/tmp}/kvssd-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
# What runs inside the guest. Each kvbench report is one JSON object,
# framed by the marker lines of scripts/reproduce (its sh function rp, read
# back by its parse_output) so the host can pick it out of the console stream.
markers=scripts/reproduce/common.py
{
    echo "set -e"
    python3 "$markers" rp-function
    cat <<EOF
echo "--- kvssd -d /dev/ng0n1 info"
kvssd -d /dev/ng0n1 info
# kvbench runs outside the marked parts, so its progress and its 5-second
# interval lines reach the screen (stderr through a pipe, not the console's
# tty: a line every 2 s instead of a redrawn one the host would only see at
# the end); the part prints the JSON report it wrote, with kvbench's status.
echo "--- kvbench --preset bandslim-m ($ops keys)"
{ kvbench --device /dev/ng0n1 --preset bandslim-m --keys $ops --progress on --report-interval 5 --json 2>&1 >/tmp/M.json && echo 0 >/tmp/M.rc || echo \$? >/tmp/M.rc; } | cat
rp M 'cat /tmp/M.json; exit \$(cat /tmp/M.rc)'
echo "--- kvbench 16 B keys / 4 KiB values, read:update 50:50 ($ops keys, $ops ops)"
{ kvbench --device /dev/ng0n1 --key-size 16 --value-size 4096 --keys $ops --ops $ops --mix read=50,update=50 --progress on --report-interval 5 --json 2>&1 >/tmp/mixed.json && echo 0 >/tmp/mixed.rc || echo \$? >/tmp/mixed.rc; } | cat
rp mixed 'cat /tmp/mixed.json; exit \$(cat /tmp/mixed.rc)'
EOF
} >"$work/guest.sh"

step "boot the guest and run kvssd info + kvbench ($ops keys per run)"
scripts/run-guest.sh --qemu "$qemu" --cpus 2 --timeout 1800 --script "$work/guest.sh" |
    tee "$work/out" | python3 "$markers" console
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || die "the guest run failed (exit $rc)"

step "results"
python3 - "$work/out" <<'PY'
import sys

sys.path.insert(0, "scripts/reproduce")
import common  # noqa: E402  (the marker protocol)

parts = common.parse_output(open(sys.argv[1], errors="replace").read())
runs = [(name, parts[name]["json"]) for name in ("M", "mixed")
        if name in parts and parts[name]["rc"] == 0 and parts[name]["json"]]

def get(d, *path):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d

def fmt(v, f="{:.2f}"):
    return "-" if v is None else (f.format(v) if isinstance(v, (int, float)) else str(v))

names = {"M": "workload M (mixgraph values, 4 B keys, PUTs)",
         "mixed": "16 B keys / 4 KiB values, read:update 50:50"}
cols = ["run", "ops/s", "p50 us", "p99 us", "cmds/op", "WAF", "TAF", "mismatches"]
rows = []
for name, r in runs:
    rows.append([names.get(name, name),
                 fmt(get(r, "ops_per_s"), "{:.0f}"),
                 fmt(get(r, "latency_us", "p50"), "{:.1f}"),
                 fmt(get(r, "latency_us", "p99"), "{:.1f}"),
                 fmt(get(r, "commands_per_op")),
                 fmt(get(r, "device", "waf")),
                 fmt(get(r, "device", "taf")),
                 fmt(get(r, "mismatches"), "{}")])
w = [max(len(str(x)) for x in col) for col in zip(cols, *rows)]
line = lambda r: "  ".join(str(x).ljust(w[i]) if i == 0 else str(x).rjust(w[i]) for i, x in enumerate(r))
print(line(cols))
print("  ".join("-" * x for x in w))
for r in rows:
    print(line(r))
print("ops/s and latencies: guest wall clock (under TCG emulation they measure the emulator);")
print("WAF, TAF (PCIe bytes / user bytes) and cmds/op: the device's statistics log page.")
for name, r in runs:
    unit = get(r, "provenance", "device", "placement_unit_bytes")
    phase = (get(r, "phases") or [{}])[-1]
    if name == "M" and unit and phase.get("ops") and phase.get("user_bytes"):
        mean = phase["user_bytes"] / phase["ops"]
        print("workload M's WAF: each Store's blob takes at least one %d-byte placement unit "
              "(preset %s, as the PM983 pads a pair to 1 KiB) and its values average %.1f B: "
              "%d / %.1f = %.2f (placement-unit-bytes=1 packs them back to back)"
              % (unit, get(r, "provenance", "device", "preset"), mean, unit, mean, unit / mean))
sys.exit(0 if len(runs) == 2 else 1)
PY
prc=$?
step "done"
exit $prc
