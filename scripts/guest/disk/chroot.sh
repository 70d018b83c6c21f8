# SPDX-License-Identifier: GPL-2.0-or-later
#
# Sourced by build-base.sh and build-image.sh, after they set $root (the
# root file system being built): log/die, and the host's /proc, /sys, /dev
# and /dev/pts mounted in the chroot (mount_chroot) and unmounted again
# (unmount_chroot, or on any exit). mkdisk.sh hashes this file into both
# cache layers, as it does the two scripts.
log() { printf '%s\n' "mkguest --disk: $*" >&2; }
die() { log "error: $*"; exit 1; }

mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" 2>/dev/null || true; done
    mounted=()
}
trap cleanup EXIT
mount_chroot() {
    local m
    for m in proc sys dev dev/pts; do
        mkdir -p "$root/$m"
        case $m in
        proc) mount -t proc proc "$root/proc" ;;
        sys) mount -t sysfs sys "$root/sys" ;;
        *) mount --bind "/$m" "$root/$m" ;;
        esac
        mounted+=("$root/$m")
    done
}
# unmount_chroot - and make sure: nothing may ever delete through a bind
# mount of the host's /dev.
unmount_chroot() {
    local m
    cleanup
    for m in dev/pts dev sys proc; do
        ! mountpoint -q "$root/$m" || die "$root/$m is still mounted; not touching it"
    done
}
export DEBIAN_FRONTEND=noninteractive LC_ALL=C
