#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/mkguest.sh --disk: the full-VM guest, cached in two layers under
# $KVSSD_CACHE/disk: base-<hash> (build-base.sh: the Debian system; inputs
# the mirror, build-base.sh and chroot.sh) and <hash> (build-image.sh: the
# base plus this tree's tools; inputs the base, build-image.sh, chroot.sh
# and the files of this tree that the meson build compiles or installs:
# meson files, include/, host/, kvftl/, tools/, tests/common/, docs/man/).
# A change to the tools rebuilds only the second layer (minutes); the base
# is built once. The last line of standard output is the directory:
# disk.img (raw ext4, root=/dev/vda), vmlinuz, initrd.img, id_ed25519 (the
# ssh key for root@guest), manifest.
set -euo pipefail
. "$(dirname "$0")/../../lib/common.sh"
rebuild=0
[ "${1:-}" != --rebuild ] || rebuild=1

ensure_packages debootstrap e2fsprogs openssh-client

# The Debian archive the host's apt uses (debian_archive), so the image
# comes from the same place, a local mirror included.
mirror=$(debian_archive) || exit 1

mapfile -t inputs < <(cd "$KVSSD_TOP" && {
        git ls-files -co --exclude-standard 2>/dev/null || find . -type f ! -path './.git/*' | sed 's|^\./||'
    } | grep -E '(^|/)meson(\.build|_options\.txt)$|^(include|host|kvftl|tools|tests/common|docs/man)/|^scripts/guest/disk/(build-image|chroot)\.sh$' |
    while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done | LC_ALL=C sort)
dcache=$KVSSD_CACHE/disk
bhash=$( {
    echo "$mirror"
    cat "$KVSSD_TOP/scripts/guest/disk/build-base.sh" "$KVSSD_TOP/scripts/guest/disk/chroot.sh" | sha256sum
} | sha256sum | cut -c1-16)
base=$dcache/base-$bhash
hash=$( {
    echo "$bhash"
    cd "$KVSSD_TOP" && for f in "${inputs[@]}"; do printf '%s\n' "$f"; sha256sum <"$f"; done
} | sha256sum | cut -c1-16)
out=$dcache/$hash
if [ -f "$out/.done" ] && [ $rebuild = 0 ]; then
    log "disk guest: cached ($out)"
    echo "$out"
    exit 0
fi
mkdir -p "$dcache"
# One build at a time per cache (a second caller waits, then finds it done).
exec 9>"$dcache/.lock"
flock 9
if [ -f "$out/.done" ] && [ $rebuild = 0 ]; then
    echo "$out"
    exit 0
fi
# fresh_dir DIR - empty DIR. A build killed midway may leave the chroot's
# bind mounts of the host's /dev, /proc and /sys: unmount them before
# deleting anything under it.
fresh_dir() {
    local m
    for m in dev/pts dev sys proc; do
        ! mountpoint -q "$1/root/$m" 2>/dev/null || umount "$1/root/$m" ||
            die "$1/root/$m is still mounted and cannot be unmounted; unmount it by hand"
    done
    rm -rf "$1"
    mkdir -p "$1"
}
if [ ! -f "$base/.done" ] || [ $rebuild = 1 ]; then
    fresh_dir "$base.tmp"
    log "building the disk guest's base system in $base (debootstrap from $mirror; 2-5 min)"
    "$KVSSD_TOP/scripts/guest/disk/build-base.sh" "$base.tmp" "$mirror" ||
        die "the disk guest's base system build failed (logs in $base.tmp)"
    rm -rf "$base"
    mv "$base.tmp" "$base"
    touch "$base/.done"
fi
tmp=$dcache/.build-$hash
fresh_dir "$tmp"
rm -rf "$out"
log "building the disk guest in $out (this tree's tools on $base)"
"$KVSSD_TOP/scripts/guest/disk/build-image.sh" "$tmp" "$KVSSD_TOP" "$base" ||
    die "the disk guest build failed (logs in $tmp)"
mv "$tmp" "$out"
touch "$out/.done"
# Keep the cache bounded: the two most recent images and the newest base.
# (Image directories are 16 hex digits; the base's name starts with
# "base-", which a looser pattern such as [0-9a-f]* would match.)
hex16=$(printf '[0-9a-f]%.0s' {1..16})
# shellcheck disable=SC2086 # $hex16 is a glob
ls -dt "$dcache"/$hex16 2>/dev/null | tail -n +3 | xargs -r rm -rf || true
# shellcheck disable=SC2086
ls -dt "$dcache"/base-$hex16 2>/dev/null | tail -n +2 | xargs -r rm -rf || true
log "disk guest: $out/disk.img; ssh key $out/id_ed25519"
echo "$out"
