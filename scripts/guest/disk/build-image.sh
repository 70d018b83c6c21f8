#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The full-VM disk guest (scripts/mkguest.sh --disk, through mkdisk.sh): a
# copy of the base root file system (build-base.sh) with this tree's tools:
# the source is copied to /usr/src/kvssd and built in the chroot with the
# image's own compiler (Debian bookworm's gcc 12), then `meson install`ed to
# /usr (libkvssd + libkvssd.pc + headers, libkvapi + kvapi.pc + kvs_api.h,
# kvftl, kvssd, kvbench, man pages). A fresh ssh key pair for root. The root
# file system becomes an ext4 file system in a raw file (mke2fs -d: no loop
# device, no mount of the image); run-guest.sh boots it with -kernel and
# -initrd (no bootloader), root=/dev/vda.
#
# usage: build-image.sh OUT_DIR SOURCE_TREE BASE_DIR
# Leaves OUT_DIR/{disk.img,vmlinuz,initrd.img,id_ed25519,id_ed25519.pub,manifest}.
set -euo pipefail
out=$1 src=$2 base=$3
root=$out/root
. "$(dirname "${BASH_SOURCE[0]}")/chroot.sh"
[ "$(id -u)" = 0 ] || die "building the disk image needs root (chroot)"
t0=$SECONDS

log "copying the base system from $base"
cp -a "$base/root" "$root"
mount_chroot
# ---- our tools: built in the chroot with the image's compiler ------------
mkdir -p "$root/usr/src/kvssd"
(cd "$src" && { git ls-files -co --exclude-standard 2>/dev/null || find . -type f ! -path './.git/*'; } |
    while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
    tar -cf - -T -) | tar -xf - -C "$root/usr/src/kvssd"
chroot "$root" sh -c 'cd /usr/src/kvssd &&
    meson setup /usr/src/kvssd-build --prefix=/usr --buildtype=release -Dwerror=false -Dtests=disabled &&
    ninja -C /usr/src/kvssd-build && meson install -C /usr/src/kvssd-build --no-rebuild' \
    >"$out/tools.log" 2>&1 || { tail -30 "$out/tools.log" >&2; die "building this tree's tools in the chroot failed (log: $out/tools.log)"; }
rm -rf "$root/usr/src/kvssd-build"
chroot "$root" ldconfig
log "tools built and installed: $((SECONDS - t0)) s"

# Root logs in with the generated key only (Debian's default
# PermitRootLogin prohibit-password); the NVMe passthrough ioctls need root
# on Linux 6.1. No password is set.
ssh-keygen -q -t ed25519 -N '' -C kvssd-disk-guest -f "$out/id_ed25519"
install -d -m 0700 "$root/root/.ssh"
install -m 0600 "$out/id_ed25519.pub" "$root/root/.ssh/authorized_keys"

kver=$(ls "$root/boot" | sed -n 's/^vmlinuz-//p' | head -n1)
[ -n "$kver" ] && [ -f "$root/boot/initrd.img-$kver" ] || die "the chroot has no kernel and initrd in /boot"
cp "$root/boot/vmlinuz-$kver" "$out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$out/initrd.img"
{
    echo "debian: bookworm, base $(basename "$base") (built in $(cat "$base/build-seconds") s)"
    echo "kernel: $kver"
    echo "tools: built in the chroot from $src, installed with meson install (prefix /usr)"
    chroot "$root" dpkg-query -W nvme-cli fio rocksdb-tools gcc libnvme-dev liburing-dev openssh-server systemd
} >"$out/manifest"
unmount_chroot

# ---- the ext4 image ---------------------------------------------------------
# The files plus 2 GiB of room for the user's builds and data; sparse.
used_kib=$(du -sk "$root" | cut -f1)
size_kib=$((used_kib * 12 / 10 + 2 * 1024 * 1024))
PATH=/usr/sbin:/sbin:$PATH mke2fs -q -F -t ext4 -L kvssd-root -d "$root" "$out/disk.img" "${size_kib}k" ||
    die "mke2fs could not build $out/disk.img"
rm -rf "$root"
log "image: $(du -h --apparent-size "$out/disk.img" | cut -f1) ($(du -h "$out/disk.img" | cut -f1) allocated), built in $((SECONDS - t0)) s"
echo "build seconds: $((SECONDS - t0))" >>"$out/manifest"
