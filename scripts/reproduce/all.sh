#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Reproduce the KV-SSD characterization paper's and BandSlim's measurements
# in emulation: every experiment of scripts/reproduce/ in turn (each boots
# the guest with -device kvssd through scripts/run-guest.sh, which builds
# QEMU and the guest image on first use; the KV-SSD versus block SSD
# experiments attach the block personality too, run-guest.sh --block), then
# docs/results.md, docs/results.json and docs/figures/*.png. About 16
# minutes on a shared 2-core machine at the default scale (7 of them the
# eight KV-SSD versus block SSD experiments). See docs/reproduce.md.
#
# usage: scripts/reproduce/all.sh [--scale S] [--dry-run] [--accel A] [--raw DIR] [--docs DIR]
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

ensure_packages python3 python3-matplotlib
# Debian's matplotlib belongs to Debian's Python, whatever python3 is first in PATH.
py=/usr/bin/python3
start=$(date +%s)
"$py" "$KVSSD_TOP/scripts/reproduce/run.py" "$@" all
log "scripts/reproduce/all.sh: done in $(( ($(date +%s) - start) / 60 )) min" \
    "$(printf '(%d s)' $(( $(date +%s) - start )))"
