#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Reproduce the KV-SSD characterization paper's and BandSlim's measurements
# in emulation: every experiment of scripts/reproduce/ in turn (each boots
# the guest with -device kvssd through scripts/run-guest.sh in icount mode,
# which builds QEMU and the guest image on first use; the KV-SSD versus
# block SSD experiments attach the block personality too, run-guest.sh
# --block). Each run is shown as it starts and ends (name, boot, elapsed).
# Results go to a results directory, --out DIR (default
# $KVSSD_CACHE/reproduce/results: results.md, results.json, figures/,
# raw/); the tracked docs/results.md, docs/results.json and docs/figures/
# change only with --update-docs (or --docs docs). Time at the default
# scale: docs/reproduce.md.
#
# usage: scripts/reproduce/all.sh [--scale S] [--out DIR] [--update-docs | --docs DIR]
#                                 [--dry-run] [--accel A] [--icount SHIFT|off] [--raw DIR]
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

ensure_packages python3 python3-matplotlib
# Debian's matplotlib belongs to Debian's Python, whatever python3 is first in PATH.
py=/usr/bin/python3
start=$(date +%s)
"$py" "$KVSSD_TOP/scripts/reproduce/run.py" "$@" all
log "scripts/reproduce/all.sh: done in $(( ($(date +%s) - start) / 60 )) min" \
    "$(printf '(%d s)' $(( $(date +%s) - start )))"
