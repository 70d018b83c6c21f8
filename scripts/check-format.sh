#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Check that the C sources are formatted as .clang-format says, with
# clang-format 19 (another version formats some constructs differently).
#
# usage: scripts/check-format.sh [--tap] [--changed [BASE]]
#   (no argument)     every .c and .h file git tracks
#   --changed [BASE]  only the .c and .h files changed since BASE, committed
#                     or not, and new files git does not ignore; BASE
#                     defaults to the merge-base with the branch's upstream,
#                     else HEAD (the uncommitted change). A quick check
#                     before a commit.
#   --tap             one TAP line per file checked (scripts/test.sh)
#
# Prints one line per file that is not formatted, with the command that
# formats it, and exits 1; exits 0 when every file checked is formatted.
# Exits 2 when clang-format 19 is missing (one line naming the package; this
# script installs nothing) or on a usage error.
#
# Environment: CLANG_FORMAT  the clang-format to run (default clang-format-19,
#              else clang-format when it is version 19; the version is
#              KVSSD_CLANG_FORMAT in scripts/lib/common.sh)
set -u
. "$(dirname "$0")/lib/common.sh"
cd "$KVSSD_TOP"

usage() { sed -n '7,14{s/^# \{0,1\}//;p}' "$0"; }

tap=0 changed=0 base=
while [ $# -gt 0 ]; do
    case $1 in
    --tap) tap=1 ;;
    --changed)
        changed=1
        if [ $# -gt 1 ] && [ "${2#-}" = "$2" ]; then
            base=$2
            shift
        fi
        ;;
    -h | --help) usage; exit 0 ;;
    *) log "check-format: unknown argument '$1'"; usage >&2; exit 2 ;;
    esac
    shift
done

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
    version=${KVSSD_CLANG_FORMAT##*-}
    if command -v "$KVSSD_CLANG_FORMAT" >/dev/null; then
        cf=$KVSSD_CLANG_FORMAT
    elif clang-format --version 2>/dev/null | grep -q "version $version\."; then
        cf=clang-format
    else
        log "check-format: clang-format $version is not installed; install the Debian package $KVSSD_CLANG_FORMAT"
        exit 2
    fi
fi

git rev-parse --git-dir >/dev/null 2>&1 || {
    log "check-format: $KVSSD_TOP is not a git checkout; the files to check are the ones git tracks"
    exit 2
}

if [ $changed = 1 ]; then
    if [ -z "$base" ]; then
        base=$(git merge-base HEAD '@{upstream}' 2>/dev/null) || base=HEAD
    fi
    git rev-parse --verify -q "$base^{commit}" >/dev/null || {
        log "check-format: --changed $base: not a commit"
        exit 2
    }
    mapfile -t files < <( { git diff --name-only --diff-filter=ACMR "$base" -- '*.c' '*.h'
                            git ls-files --others --exclude-standard -- '*.c' '*.h'; } | sort -u)
else
    mapfile -t files < <(git ls-files -- '*.c' '*.h')
fi

n=0 bad=0
[ $tap = 0 ] || echo "1..${#files[@]}"
for f in "${files[@]}"; do
    n=$((n + 1))
    if out=$("$cf" --dry-run -Werror --style=file "$f" 2>&1); then
        [ $tap = 0 ] || echo "ok $n - $f"
        continue
    fi
    bad=$((bad + 1))
    # the first line that differs from the formatted text (clang-format's
    # own location is the end of the line before); a file it cannot read or
    # parse gets its message instead
    where=$(diff <("$cf" --style=file "$f" 2>/dev/null) "$f" | grep -m1 -E '^[0-9]')
    where=${where##*[acd]}
    if printf '%s\n' "$out" | grep -q 'error: code should be clang-formatted' && [ -n "$where" ]; then
        msg="$f: not formatted (first at line ${where%%,*}); fix: $cf -i $f"
    else
        msg="$f: $cf failed: $(printf '%s\n' "$out" | grep -v '^[[:space:]]' | head -n1)"
    fi
    if [ $tap = 1 ]; then
        echo "not ok $n - $msg"
    else
        echo "$msg"
    fi
done
if [ $bad -gt 0 ]; then
    log "check-format: $bad of $n files not formatted"
    exit 1
fi
if [ $tap = 0 ]; then
    if [ $changed = 1 ] && [ $n = 0 ]; then
        log "check-format: no .c or .h file changed since $base"
    else
        log "check-format: $n files formatted"
    fi
fi
exit 0
