#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The base of the full-VM disk guest (scripts/mkguest.sh --disk, through
# mkdisk.sh): a Debian bookworm root file system from the mirror the host's
# apt uses (debootstrap --variant=minbase, then apt-get inside the chroot):
# Debian's kernel linux-image-amd64 with its initramfs-tools initrd,
# systemd, openssh-server, the packages a user needs to build a program
# against libkvssd (build-essential, pkg-config, meson, the -dev packages),
# nvme-cli, fio and rocksdb-tools; networkd for DHCP; boot-time services a
# test VM does not need masked. It is cached on its own (this file and the
# mirror are its inputs): a change to this tree's tools rebuilds only the
# layer build-image.sh adds on top.
#
# usage: build-base.sh OUT_DIR MIRROR    (leaves OUT_DIR/root)
set -euo pipefail
out=$1 mirror=$2
root=$out/root
. "$(dirname "${BASH_SOURCE[0]}")/chroot.sh"
[ "$(id -u)" = 0 ] || die "building the disk image needs root (debootstrap, chroot)"
t0=$SECONDS

# Packages, beyond minbase. systemd-sysv gives /sbin/init; udev creates
# /dev/ng0n1; systemd-networkd (in systemd) takes the DHCP lease; the -dev
# packages are what `meson setup` of this tree and a user's program against
# libkvssd need (Requires.private: liburing, libnvme; the tools JSON: json-c).
packages=(systemd-sysv udev dbus openssh-server linux-image-amd64 initramfs-tools
    kmod procps iproute2 less nano
    nvme-cli fio rocksdb-tools e2fsprogs
    build-essential pkg-config meson ninja-build python3
    libnvme-dev liburing-dev libxxhash-dev libcunit1-dev libglib2.0-dev librocksdb-dev
    libjson-c-dev)

log "debootstrap bookworm (minbase) from $mirror"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$out/debootstrap.log" 2>&1 ||
    { tail -20 "$out/debootstrap.log" >&2; die "debootstrap failed (log: $out/debootstrap.log)"; }
log "debootstrap: $((SECONDS - t0)) s"

mount_chroot
echo "deb $mirror bookworm main" >"$root/etc/apt/sources.list"
# No daemon may start inside the chroot during installation.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
chroot "$root" apt-get update -q >"$out/apt.log" 2>&1 || { tail -20 "$out/apt.log" >&2; die "apt-get update in the chroot failed"; }
chroot "$root" apt-get install -y -q --no-install-recommends "${packages[@]}" >>"$out/apt.log" 2>&1 ||
    { tail -30 "$out/apt.log" >&2; die "apt-get install in the chroot failed (log: $out/apt.log)"; }
log "packages installed: $((SECONDS - t0)) s"

# ---- system configuration -------------------------------------------------
echo kvssd-vm >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 kvssd-vm\n' >"$root/etc/hosts"
echo "/dev/vda / ext4 rw,relatime,errors=remount-ro 0 1" >"$root/etc/fstab"
mkdir -p "$root/etc/systemd/network"
cat >"$root/etc/systemd/network/10-eth.network" <<'NET'
[Match]
Name=en* eth*
[Network]
DHCP=ipv4
NET
chroot "$root" systemctl enable systemd-networkd.service ssh.service >/dev/null 2>&1
# Trim the boot: under TCG every unit costs seconds. Nothing here needs the
# wait for "network online", timers that run apt/man-db/e2scrub, or the
# getty on the VGA console (the serial console keeps its getty).
for u in systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer \
    man-db.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer getty@tty1.service \
    systemd-timesyncd.service systemd-journal-flush.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$u"
done
printf 'UseDNS no\n' >"$root/etc/ssh/sshd_config.d/kvssd.conf"
rm -f "$root/usr/sbin/policy-rc.d"
chroot "$root" apt-get clean
unmount_chroot
log "base system: $((SECONDS - t0)) s"
echo "$((SECONDS - t0))" >"$out/build-seconds"
