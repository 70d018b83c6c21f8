#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# debian_archive (scripts/lib/common.sh): the Debian archive the scripts
# write into their private apt lists (build-qemu.sh's deb-src, mkguest.sh's
# trixie kernel, mkdisk.sh's debootstrap) is the one the machine's apt uses,
# read from fixture apt directories here. TAP.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
check() { # NAME EXPECTED GOT
    n=$((n + 1))
    if [ "$2" = "$3" ]; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1: expected '$2', got '$3'"
        failed=$((failed + 1))
    fi
}
# archive ETC [ENV...] - debian_archive's stdout with apt's etc dir ETC
archive() {
    local etc=$1
    shift
    (env -u KVSSD_DEBIAN_ARCHIVE KVSSD_APT_ETC="$etc" KVSSD_OS_RELEASE="$tmp/os-release" "$@" \
        bash -c ". '$top/scripts/lib/common.sh'; debian_archive" 2>"$tmp/err")
}
echo 'VERSION_CODENAME=bookworm' >"$tmp/os-release"

# deb822: a third-party repository sorts first (nodesource); Debian's
# stanza comes after a comment and a security stanza in the same file.
e=$tmp/a/sources.list.d
mkdir -p "$e"
cat >"$e/a-nodesource.sources" <<'S'
Types: deb
URIs: https://deb.nodesource.com/node_20.x
Suites: nodistro
Components: main
S
cat >"$e/debian.sources" <<'S'
Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

# the main archive
Types: deb deb-src
URIs: http://mirror.example/debian/ http://other.example/debian
Suites: bookworm bookworm-updates
Components: main
S
check "deb822: the first URI of the stanza whose suite is a release, not nodistro or -security" \
    "http://mirror.example/debian" "$(archive "$tmp/a")"

# one-line format with options, a look-alike suite (cloud-sdk-bookworm)
# first; a deb822 file too, which the one-line sources win over.
e=$tmp/b
mkdir -p "$e/sources.list.d"
printf '%s\n' '# local mirror' \
    'deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main' \
    'deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://proxy.lan:3142/debian/ bookworm-updates main' \
    >"$e/sources.list"
cp "$tmp/a/sources.list.d/debian.sources" "$e/sources.list.d/"
check "one-line sources: options skipped, look-alike suite refused, -updates accepted" \
    "http://proxy.lan:3142/debian" "$(archive "$e")"

check "KVSSD_DEBIAN_ARCHIVE overrides the sources (trailing slash dropped)" \
    "http://override.example/debian" "$(archive "$tmp/a" KVSSD_DEBIAN_ARCHIVE=http://override.example/debian/)"

mkdir -p "$tmp/none/sources.list.d"
cp "$tmp/a/sources.list.d/a-nodesource.sources" "$tmp/none/sources.list.d/"
out=$(archive "$tmp/none")
rc=$?
check "no Debian entry: exit status 1, nothing on stdout" "1:" "$rc:$out"
check "no Debian entry: one sentence naming KVSSD_DEBIAN_ARCHIVE" \
    "error: no Debian archive found in $tmp/none's sources; set KVSSD_DEBIAN_ARCHIVE to the archive's URI (the one your apt uses for Debian, e.g. a local mirror)" \
    "$(cat "$tmp/err")"

# No script writes a Debian archive address of its own.
hits=$(grep -rnE 'https?://[^ "]*(debian\.org|debian/)' "$top/scripts" --include='*.sh' || true)
check "no Debian archive address in scripts/*.sh" "" "$hits"

echo "1..$n"
[ $failed -eq 0 ]
