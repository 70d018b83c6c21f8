#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Commit subjects since BASE against the convention of CONTRIBUTING.md:
# at most 72 characters. TAP on stdout, one line a commit; exit status 1
# when a subject is longer (or BASE is not a commit of a full clone).
#
#   scripts/check-commits.sh [BASE]
#
# BASE: the argument, else $KVSSD_COMMITS_BASE, else fc40735 (the last
# commit before the convention). A shallow clone that lacks BASE cannot
# say which commits follow it: the check is skipped with "1..0 # SKIP" and
# a sentence on stderr (git fetch --unshallow makes it run).
set -u
export LC_ALL=C.UTF-8 # ${#subject} counts characters, not bytes
base=${1:-${KVSSD_COMMITS_BASE:-fc40735}}
max=72
cd "$(dirname "$0")/.."

if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
    if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
        echo "commits: base $base is not in this shallow clone; run git fetch --unshallow to check subjects" >&2
        echo "1..0 # SKIP base $base not in this shallow clone"
        exit 0
    fi
    echo "commits: base $base is not a commit of this repository; pass an existing one (scripts/check-commits.sh BASE)" >&2
    echo "1..1"
    echo "not ok 1 - base $base is not a commit of this repository"
    exit 1
fi

mapfile -t commits < <(git rev-list --reverse "$base..HEAD")
if [ ${#commits[@]} -eq 0 ]; then
    echo "1..0 # SKIP no commits since $base"
    exit 0
fi
echo "1..${#commits[@]}"
n=0 rc=0
for c in "${commits[@]}"; do
    n=$((n + 1))
    subject=$(git log -1 --format=%s "$c")
    if [ ${#subject} -le $max ]; then
        echo "ok $n - ${c:0:12} subject ≤ $max"
    else
        echo "not ok $n - ${c:0:12} subject is ${#subject} characters, over $max: $subject"
        rc=1
    fi
done
exit $rc
