#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build (or reuse from the cache) the kvssd guest: a Debian kernel and an
# initramfs with the NVMe driver modules, busybox, nvme-cli, our host
# tools (libkvssd, kvssd, kvbench) built from this checkout, and the block
# personality's baseline: the ext4 modules, e2fsprogs and RocksDB's
# db_bench; plus a read-only tools disk (tools.img) with fio, which
# run-guest.sh attaches only with --block (fio's libraries are 80 MB).
#
# Nothing is installed on the host to get the kernel: its Debian package is
# downloaded with `apt-get download` and unpacked with dpkg-deb -x. The guest
# is cached under $KVSSD_CACHE/guest/<hash of every input>; a change to the
# host tools (host/, include/, the meson files), to the guest init or to
# this script gives a new hash and a rebuild.
#
# The last line of standard output is the guest directory, which holds
# vmlinuz, initrd.gz, tools.img and manifest (what went in). See
# docs/guest.md.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

usage() {
    cat <<'EOF'
usage: scripts/mkguest.sh [options]

Builds the guest kernel + initramfs (cached) and prints its directory.

options:
  --debian-kernel SUITE  bookworm (Linux 6.1, default) or trixie (Linux 6.12;
                         from the Debian archive the machine's apt uses, or
                         $KVSSD_DEBIAN_ARCHIVE):
                         which Debian release's linux-image-amd64 to use
  --no-tools             build the guest without libkvssd/kvssd/kvbench
  --rebuild              ignore the cached guest and tools, build again
  --disk                 build (or reuse) the full-VM guest instead: a Debian
                         bookworm ext4 disk image with systemd, sshd, Debian's
                         kernel and this tree's tools installed by meson
                         (needs root; see docs/guest.md); prints its directory
  -h, --help             this text

environment:
  KERNEL=/path/vmlinuz MODULES=/lib/modules/<version>
                         bring your own kernel: MODULES is its module tree
                         (modules may be .ko, .ko.xz, .ko.zst or .ko.gz);
                         when the NVMe driver is built in, MODULES may be
                         omitted
  KVSSD_CACHE            cache directory (default ~/.cache/kvssd)
EOF
}

suite=bookworm
with_tools=1
rebuild=0
disk=0
while [ $# -gt 0 ]; do
    case $1 in
    --debian-kernel)
        [ $# -ge 2 ] || die "--debian-kernel needs a value: bookworm or trixie"
        suite=$2; shift ;;
    --debian-kernel=*) suite=${1#*=} ;;
    --no-tools) with_tools=0 ;;
    --rebuild) rebuild=1 ;;
    --disk) disk=1 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
    shift
done
case $suite in
bookworm|trixie) ;;
*) die "--debian-kernel '$suite' is not supported; use bookworm (Linux 6.1) or trixie (Linux 6.12)" ;;
esac

if [ $disk = 1 ]; then
    [ "$suite" = bookworm ] && [ $with_tools = 1 ] && [ -z "${KERNEL:-}" ] ||
        die "--disk builds a bookworm image with Debian's kernel and the tools; --debian-kernel, --no-tools and KERNEL do not apply"
    exec "$KVSSD_TOP/scripts/guest/disk/mkdisk.sh" $([ $rebuild = 1 ] && echo --rebuild)
fi

# e2fsprogs, fio and rocksdb-tools (db_bench; librocksdb7.8 comes with it)
# are the block personality's baseline inside the guest.
ensure_packages busybox-static cpio nvme-cli binutils xz-utils zstd gzip \
    e2fsprogs fio rocksdb-tools "${KVSSD_BUILD_PACKAGES[@]}"

gcache=$KVSSD_CACHE/guest
mkdir -p "$gcache"
# One build at a time per cache: two runs of the same tree would otherwise
# build the same tools-HASH and guest directories over each other (a .done
# left beside a half-removed destdir). A cached run holds it for a moment.
exec 9>"$gcache/.lock"
flock 9

sha_files() { # sha_files FILE... - one hash over names and contents
    local f
    for f in "$@"; do
        printf '%s\n' "$f"
        sha256sum <"$f"
    done | sha256sum | cut -c1-16
}

# ---- the kernel ----------------------------------------------------------
# Sets kernel_image, module_dir and kernel_id.
apt_opts=(-o APT::Sandbox::User=root)
debian_kernel() {
    if [ "$suite" = trixie ]; then
        # A second release's archive without touching the host's apt sources.
        local list=$gcache/apt-trixie/sources.list
        local archive
        archive=$(debian_archive) || exit 1
        mkdir -p "$gcache/apt-trixie/lists/partial"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $archive trixie main" >"$list"
        apt_opts+=(-o "Dir::Etc::SourceList=$list" -o Dir::Etc::SourceParts=/dev/null
                  -o "Dir::State::Lists=$gcache/apt-trixie/lists")
        if [ -z "$(ls "$gcache/apt-trixie/lists" 2>/dev/null | grep -v partial)" ] || [ $rebuild = 1 ]; then
            log "apt-get update (trixie index, cached in $gcache/apt-trixie)"
            apt-get "${apt_opts[@]}" update -q >&2 || die "apt-get update for trixie failed"
        fi
    fi
    local pkg kdir attempt
    # A stale index names a kernel the archive no longer has: refresh the
    # index once and try again.
    for attempt in 1 2; do
        pkg=$(apt-cache "${apt_opts[@]}" depends linux-image-amd64 2>/dev/null |
              sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
        kdir=$gcache/kernel-$pkg
        if [ -n "$pkg" ] && [ -f "$kdir/.done" ] && [ $rebuild = 0 ]; then
            break
        fi
        if [ -n "$pkg" ]; then
            log "downloading $pkg"
            rm -rf "$kdir"
            mkdir -p "$kdir/deb"
            if (cd "$kdir/deb" && apt-get "${apt_opts[@]}" download "$pkg" >&2); then
                dpkg-deb -x "$kdir"/deb/*.deb "$kdir/root"
                rm -rf "$kdir/deb"
                touch "$kdir/.done"
                break
            fi
            rm -rf "$kdir"
        fi
        [ $attempt = 1 ] ||
            die "cannot get the kernel package that linux-image-amd64 depends on (${pkg:-none named}) from Debian's archive"
        log "refreshing the package index ($suite) and trying again"
        apt-get "${apt_opts[@]}" update -q >&2 || die "apt-get update failed"
    done
    kernel_image=$(ls "$kdir"/root/boot/vmlinuz-* | head -n1)
    local rel=${kernel_image##*/vmlinuz-}
    module_dir=$kdir/root/lib/modules/$rel
    [ -d "$module_dir" ] || module_dir=$kdir/root/usr/lib/modules/$rel
    [ -d "$module_dir" ] || die "$pkg has no module tree for $rel"
    kernel_id=debian:$pkg
}

if [ -n "${KERNEL:-}" ]; then
    [ -f "$KERNEL" ] || die "KERNEL=$KERNEL is not a file"
    kernel_image=$(realpath "$KERNEL")
    module_dir=${MODULES:+$(realpath "$MODULES")}
    [ -z "$module_dir" ] || [ -d "$module_dir" ] || die "MODULES=$MODULES is not a directory"
    kernel_id="user:$(sha256sum <"$kernel_image" | cut -c1-16):${module_dir:-none}"
else
    [ -z "${MODULES:-}" ] || die "MODULES is only used together with KERNEL"
    debian_kernel
fi

# ---- which modules, in which order ----------------------------------------
# The NVMe driver and the crypto providers the T10-PI code asks for by
# algorithm name (not a depends= link, so we name them); ext4 for the block
# personality, with crc32c_generic, which ext4 and jbd2 ask the crypto API
# for by name (metadata_csum; no depends= link either). Dependencies come
# from each module's depends= (.modinfo, read with strings); a module built
# into the kernel (modules.builtin) is skipped. The virtio block driver is a
# second list, loaded only when the tools disk is attached; NVMe over TCP
# (the target nvmet-tcp with nvmet's configfs, the host nvme-tcp, and the
# virtio NIC between the two guests) a third, loaded only by run-guest.sh
# --fabrics-target/--fabrics-host. A module in both extra lists is in both
# (the guest's init skips one already loaded).
module_roots=(crct10dif_generic crc64_rocksoft_generic nvme crc32c_generic ext4)
disk_module_roots=(virtio_pci virtio_blk)
fabrics_module_roots=(configfs nvmet nvmet_tcp nvme_fabrics nvme_tcp virtio_pci virtio_net)

module_file() { # module_file NAME - path of NAME's .ko[.xz|.zst|.gz], or nothing
    local n=$1 alt
    alt=$(echo "$n" | tr '_-' '-_')
    find "$module_dir" \( -name "$n.ko" -o -name "$n.ko.*" -o -name "$alt.ko" -o -name "$alt.ko.*" \) \
        -print -quit 2>/dev/null
}
module_builtin() {
    local n=${1//_/-}
    [ -f "$module_dir/modules.builtin" ] &&
        sed 's|.*/||; s|\.ko$||; s|_|-|g' "$module_dir/modules.builtin" | grep -qx -- "$n"
}
module_modinfo() { # module_modinfo FILE - the module's strings (decompressed)
    case $1 in
    *.xz) xz -dc "$1" | strings ;;
    *.zst) zstd -dqc "$1" | strings ;;
    *.gz) gzip -dc "$1" | strings ;;
    *) strings "$1" ;;
    esac
}
declare -A seen=()
load_order=()
declare -A module_path=()
visit_module() {
    local n=${1//-/_} f dep
    [ -n "${seen[$n]:-}" ] && return 0
    seen[$n]=1
    f=$(module_file "$1")
    if [ -z "$f" ]; then
        module_builtin "$1" && return 0
        # A crypto provider may simply not exist in another kernel build.
        case $1 in
        nvme) die "no nvme module in $module_dir and not built in" ;;
        ext4|virtio_blk|virtio_pci)
            log "warning: no $1 module in $module_dir and not built in: run-guest.sh --block needs it (ext4 on the block personality, virtio for the tools disk)"
            return 0 ;;
        nvmet|nvmet_tcp|nvme_fabrics|nvme_tcp|virtio_net|configfs)
            log "warning: no $1 module in $module_dir and not built in: run-guest.sh --fabrics-target/--fabrics-host need it"
            return 0 ;;
        esac
        log "note: module $1 not found in $module_dir (built in or not needed)"
        return 0
    fi
    for dep in $(module_modinfo "$f" | sed -n 's/^depends=//p' | head -n1 | tr ',' ' '); do
        visit_module "$dep"
    done
    load_order+=("$n")
    module_path[$n]=$f
}
disk_load_order=()
fabrics_load_order=()
if [ -n "$module_dir" ]; then
    for r in "${module_roots[@]}"; do visit_module "$r"; done
    # Each extra list after the boot list (seen[] keeps a module shared
    # with the boot list, e.g. nvme-core for nvme-tcp, in the boot list
    # only); seen[] is reset to the boot list's between the two.
    boot_count=${#load_order[@]}
    declare -A boot_seen=()
    for m in "${!seen[@]}"; do boot_seen[$m]=1; done
    for r in "${disk_module_roots[@]}"; do visit_module "$r"; done
    disk_load_order=("${load_order[@]:$boot_count}")
    load_order=("${load_order[@]:0:$boot_count}")
    seen=()
    for m in "${!boot_seen[@]}"; do seen[$m]=1; done
    for r in "${fabrics_module_roots[@]}"; do visit_module "$r"; done
    fabrics_load_order=("${load_order[@]:$boot_count}")
    load_order=("${load_order[@]:0:$boot_count}")
fi

# ---- the host tools (built from this checkout) -----------------------------
tools_dir=
tools_note="not included (--no-tools)"
if [ $with_tools = 1 ]; then
    if [ ! -f "$KVSSD_TOP/host/meson.build" ]; then
        log "warning: host/meson.build does not exist yet: the guest has no kvssd/kvbench"
        tools_note="not included (host/ has no meson.build in this checkout)"
    else
        mapfile -t tool_inputs < <(cd "$KVSSD_TOP" &&
            find meson.build meson_options.txt include host tests/common -type f \
                 ! -name '*~' ! -name '*.swp' 2>/dev/null | LC_ALL=C sort)
        tools_hash=$(cd "$KVSSD_TOP" && sha_files "${tool_inputs[@]}")
        tools_dir=$gcache/tools-$tools_hash
        if [ ! -f "$tools_dir/.done" ] || [ $rebuild = 1 ]; then
            log "building the host tools with meson into $tools_dir"
            rm -rf "$tools_dir"
            mkdir -p "$tools_dir"
            meson setup "$tools_dir/build" "$KVSSD_TOP" --prefix=/usr --libdir=lib/x86_64-linux-gnu \
                -Dbuildtype=release -Dhost_tools=true -Dwerror=false >"$tools_dir/setup.log" 2>&1 ||
                { tail -30 "$tools_dir/setup.log" >&2; die "meson setup of the host tools failed (log: $tools_dir/setup.log)"; }
            # Build only what gets installed: a broken test elsewhere in the
            # tree must not keep the guest from being built.
            mapfile -t targets < <(meson introspect "$tools_dir/build" --targets |
                python3 -c 'import json,sys,os
for t in json.load(sys.stdin):
    if t.get("installed"):
        for f in t["filename"]: print(os.path.relpath(f, sys.argv[1]))' "$tools_dir/build")
            [ ${#targets[@]} -gt 0 ] || die "the meson project installs nothing: no host tools to put in the guest"
            ninja -C "$tools_dir/build" "${targets[@]}" >"$tools_dir/build.log" 2>&1 ||
                { tail -30 "$tools_dir/build.log" >&2; die "building the host tools failed (log: $tools_dir/build.log)"; }
            DESTDIR="$tools_dir/destdir" meson install -C "$tools_dir/build" --no-rebuild --quiet \
                >"$tools_dir/install.log" 2>&1 ||
                { tail -30 "$tools_dir/install.log" >&2; die "meson install of the host tools failed"; }
            touch "$tools_dir/.done"
        fi
        tools_note="built from $KVSSD_TOP ($tools_hash)"
    fi
fi

# ---- the guest ------------------------------------------------------------
busybox=$(command -v busybox)
nvme=$(command -v nvme)
# The block personality's baseline: e2fsprogs (mkfs.ext4 is mke2fs, fsck.ext4
# is e2fsck), RocksDB's db_bench in the initramfs; fio on the tools disk.
sbin_path=/usr/sbin:/sbin:$PATH
e2fs_tools=()
for t in mke2fs e2fsck tune2fs dumpe2fs; do
    p=$(PATH=$sbin_path command -v $t) || die "e2fsprogs is installed but has no $t"
    e2fs_tools+=("$p")
done
db_bench=$(command -v db_bench) || die "rocksdb-tools has no db_bench"
fio=$(command -v fio) || die "the fio package has no fio"
mapfile -t me_inputs < <(find "$KVSSD_TOP/scripts/mkguest.sh" "$KVSSD_TOP/scripts/guest" -maxdepth 1 -type f |
    LC_ALL=C sort)
guest_hash=$( {
    echo "$kernel_id"
    printf '%s\n' "${load_order[@]}" -- "${disk_load_order[@]}" -- "${fabrics_load_order[@]}"
    sha_files "$busybox" "$nvme" "${e2fs_tools[@]}" "$db_bench" "$fio" "${me_inputs[@]}"
    # Their libraries are not hashed one by one: the packages' versions are.
    dpkg-query -W e2fsprogs fio rocksdb-tools librocksdb7.8 2>/dev/null
    echo "${tools_dir:-none}"
} | sha256sum | cut -c1-16)
guest=$gcache/$guest_hash
if [ -f "$guest/.done" ] && [ $rebuild = 0 ]; then
    log "guest: cached ($guest)"
    echo "$guest"
    exit 0
fi

log "building the guest initramfs in $guest"
rm -rf "$guest"
mkdir -p "$guest"
root=$guest/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib/modules,proc,sys,dev,tmp,run,root,etc,mnt}

install -m 0755 "$busybox" "$root/bin/busybox"
for a in $("$busybox" --list); do
    [ "$a" = busybox ] || ln -sf busybox "$root/bin/$a"
done
install -m 0755 "$KVSSD_TOP/scripts/guest/init" "$root/init"
install -m 0755 "$KVSSD_TOP/scripts/guest/kvssd-dev" "$root/usr/bin/kvssd-dev"
install -m 0755 "$KVSSD_TOP/scripts/guest/kvssd-fabrics" "$root/usr/bin/kvssd-fabrics"

# Modules, decompressed (busybox insmod reads plain .ko only): load-order at
# every boot, load-order.disk when the tools disk is attached,
# load-order.fabrics for NVMe over TCP.
put_modules() { # put_modules LISTFILE NAME...
    local list=$1 n f out
    shift
    : >"$list"
    for n in "$@"; do
        f=${module_path[$n]}
        out=$root/lib/modules/$n.ko
        case $f in
        *.xz) xz -dc "$f" >"$out" ;;
        *.zst) zstd -dqc "$f" >"$out" ;;
        *.gz) gzip -dc "$f" >"$out" ;;
        *) cp "$f" "$out" ;;
        esac
        echo "$n" >>"$list"
    done
}
put_modules "$root/lib/modules/load-order" "${load_order[@]}"
put_modules "$root/lib/modules/load-order.disk" "${disk_load_order[@]}"
put_modules "$root/lib/modules/load-order.fabrics" "${fabrics_load_order[@]}"

# copy_libs FILE... - FILE's shared libraries (ldd), at their own paths.
copy_libs() {
    local lib
    for lib in $(LD_LIBRARY_PATH=${tools_libpath:-} ldd "$@" 2>/dev/null |
                 sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | sort -u); do
        # Our own libraries come from the install tree, not from ldd.
        [ -n "$tools_dir" ] && case $lib in "$tools_dir"/*) continue ;; esac
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}
install -m 0755 "$nvme" "$root/usr/sbin/nvme"
copy_libs "$nvme"

# e2fsprogs in /usr/sbin; busybox's own mke2fs applet (ext2 only) is on /bin,
# which the guest's PATH searches first, so that link is removed.
for t in "${e2fs_tools[@]}"; do
    install -m 0755 "$t" "$root/usr/sbin/${t##*/}"
    rm -f "$root/bin/${t##*/}"
done
ln -sf mke2fs "$root/usr/sbin/mkfs.ext4"
ln -sf e2fsck "$root/usr/sbin/fsck.ext4"
copy_libs "${e2fs_tools[@]}"
[ ! -f /etc/mke2fs.conf ] || cp /etc/mke2fs.conf "$root/etc/mke2fs.conf"
# e2fsck and mke2fs ask /etc/mtab whether a device is mounted.
ln -sf /proc/mounts "$root/etc/mtab"
# db_bench and librocksdb (which kvbench's RocksDB engine links too).
install -m 0755 "$db_bench" "$root/usr/bin/db_bench"
copy_libs "$db_bench"

if [ -n "$tools_dir" ]; then
    cp -a "$tools_dir/destdir/." "$root/"
    rm -rf "$root/usr/include" "$root/usr/lib/x86_64-linux-gnu/pkgconfig"
    find "$root/usr/lib" -name '*.a' -delete 2>/dev/null || true
    tools_libpath=$tools_dir/destdir/usr/lib/x86_64-linux-gnu
    mapfile -t elfs < <(find "$tools_dir/destdir" -type f -exec sh -c \
        'head -c4 "$1" | grep -q "ELF" && echo "$1"' _ {} \;)
    [ ${#elfs[@]} -eq 0 ] || copy_libs "${elfs[@]}"
fi
# The dynamic loader itself.
copy_libs "$busybox" 2>/dev/null || true
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || {
    mkdir -p "$root/lib64"; cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"; }

echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"

(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) |
    gzip -6 >"$guest/initrd.gz"
cp "$kernel_image" "$guest/vmlinuz"

# ---- the tools disk: fio, attached by run-guest.sh --block -----------------
# Debian's fio links every engine's library (Ceph's librados and librbd,
# GlusterFS, RDMA, PMDK, libnbd): 80 MB with their dependencies, ICU's 30 MB
# of data among them. In the initramfs that is 33 MB of gzip unpacked at
# every boot (seconds under TCG) and 80 MB of guest RAM; on a read-only ext4
# disk the guest's loader reads only the pages it touches, and only the
# boots that run fio attach it. The guest (init, kvssd.disk=1) mounts it at
# /opt/tools; /opt/tools/usr/bin/fio sets the library path and runs fio.
disk=$guest/disk
mkdir -p "$disk/usr/bin" "$disk/libexec"
install -m 0755 "$fio" "$disk/libexec/fio"
declare -A disk_lib_dirs=()
for lib in $(ldd "$fio" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' | sort -u); do
    [ -e "$root$lib" ] && continue # the initramfs has it (libc, libz, ...)
    mkdir -p "$disk$(dirname "$lib")"
    cp -L "$lib" "$disk$lib"
    disk_lib_dirs[/opt/tools$(dirname "$lib")]=1
done
libpath=$(printf '%s\n' "${!disk_lib_dirs[@]}" | LC_ALL=C sort | paste -sd:)
cat >"$disk/usr/bin/fio" <<EOF2
#!/bin/sh
# fio from the tools disk (scripts/mkguest.sh): its libraries are on the disk.
LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}$libpath exec /opt/tools/libexec/fio "\$@"
EOF2
chmod 0755 "$disk/usr/bin/fio"
# Room for the files, their inodes and the file system's own metadata.
disk_kib=$(( $(du -sk "$disk" | cut -f1) * 11 / 10 + 8192 ))
PATH=$sbin_path mke2fs -q -F -t ext4 -O ^has_journal -L kvssd-tools -E root_owner=0:0 \
    -d "$disk" "$guest/tools.img" "${disk_kib}k" >&2 ||
    die "mke2fs could not build the tools disk $guest/tools.img from $disk"
{
    echo "kernel: $kernel_id ($(basename "$kernel_image"))"
    echo "modules: ${load_order[*]:-(none: built in)}"
    echo "tools disk modules: ${disk_load_order[*]:-(none: built in)}"
    echo "NVMe/TCP modules: ${fabrics_load_order[*]:-(none: built in)}"
    echo "busybox: $("$busybox" 2>&1 | head -n1)"
    echo "nvme-cli: $("$nvme" version 2>/dev/null | head -n1)"
    echo "e2fsprogs: $(PATH=$sbin_path mke2fs -V 2>&1 | head -n1)"
    echo "db_bench: rocksdb $(dpkg-query -W -f='${Version}' librocksdb7.8 2>/dev/null)"
    echo "tools disk (tools.img, /opt/tools): $("$fio" --version), $(du -sh "$disk" | cut -f1)"
    echo "tools: $tools_note"
    [ -z "$tools_dir" ] || (cd "$tools_dir/destdir" && find . -type f | sed 's/^\./  /' | LC_ALL=C sort)
} >"$guest/manifest"
# The end-to-end suite needs both programs; say plainly whether they are in.
if [ -n "$tools_dir" ] && [ -x "$root/usr/bin/kvssd" ] && [ -x "$root/usr/bin/kvbench" ]; then
    echo yes >"$guest/has-tools"
else
    echo no >"$guest/has-tools"
    [ -z "$tools_dir" ] ||
        sed -i 's|^tools: .*|& - but it has no usr/bin/kvssd and usr/bin/kvbench yet|' "$guest/manifest"
fi
rm -rf "$root" "$disk"
touch "$guest/.done"
# Keep the cache bounded: the four most recent guests and tool builds.
ls -dt "$gcache"/[0-9a-f][0-9a-f][0-9a-f][0-9a-f]*[0-9a-f] 2>/dev/null | tail -n +5 | xargs -r rm -rf
ls -dt "$gcache"/tools-* 2>/dev/null | tail -n +5 | xargs -r rm -rf
log "guest: $(du -h "$guest/initrd.gz" | cut -f1) initramfs, $(sed -n 's/^modules: //p' "$guest/manifest"); tools disk $(du -h --apparent-size "$guest/tools.img" | cut -f1)"
echo "$guest"
