# SPDX-License-Identifier: GPL-2.0-or-later
# What the kvssd device adds to a QEMU source tree, shared by
# scripts/build-qemu.sh (a cached tree) and scripts/export-patches.sh (a patch
# series). Each function writes its result to a path it is given; none edits
# a file in place, so a source (a user's own tree) is only ever read.

# The QEMU series the device builds on: compat.h maps the API differences.
KVSSD_QEMU_SERIES=(10.0 10.2)
KVSSD_QEMU_DEFAULT=10.2
# QEMU's configure flags for the device (build-qemu.sh; docs/guest.md shows
# them for a tree patched with export-patches.sh): x86_64 only, nothing
# optional, the system libfdt (the dtc subproject would be fetched with git),
# and libslirp for `-netdev user` (the disk guest's ssh port forward: slirp
# needs no user namespace, which passt does and which chroots, containers
# and AppArmor-restricted hosts refuse).
KVSSD_QEMU_CONFIGURE_ARGS=(--target-list=x86_64-softmmu --without-default-features --enable-tcg
    --enable-kvm --enable-fdt=system --enable-slirp --disable-install-blobs --disable-docs
    --disable-werror)

# kvssd_qemu_check_series SERIES - die unless SERIES is one we build.
kvssd_qemu_check_series() {
    local s
    for s in "${KVSSD_QEMU_SERIES[@]}"; do
        [ "$1" = "$s" ] && return 0
    done
    die "--qemu is '$1'; it must be one of ${KVSSD_QEMU_SERIES[*]}"
}

# kvssd_qemu_meson OUT - hw/kvssd/meson.build for inside QEMU: our template
# with the firmware's source list and include directories filled in (meson
# has no globs, and kvftl/ grows): every kvftl/**/*.c, and every folder of
# kvftl/ that holds a header (kvftl/meson.build's kvftl_internal: a file
# includes another's header by its name, whichever folder it is in).
kvssd_qemu_meson() {
    local fw= inc= f
    for f in $(cd "$KVSSD_TOP/kvftl" && find . -name '*.c' | LC_ALL=C sort); do
        fw+="'kvftl/${f#./}', "
    done
    for f in $(cd "$KVSSD_TOP/kvftl" && find . -name '*.h' -printf '%h\n' | LC_ALL=C sort -u); do
        f=${f#.}
        inc+="'kvftl${f}', "
    done
    sed -e "s|@FIRMWARE_SOURCES@|${fw%, }|" -e "s|@FIRMWARE_INCLUDES@|${inc%, }|" \
        "$KVSSD_TOP/hw/kvssd/meson.qemu.build" >"$1"
}

# kvssd_qemu_device_files - our files of QEMU's hw/kvssd, one per line,
# relative to $KVSSD_TOP/hw/kvssd (meson.build is generated, kvftl/ and
# include/ come from the top of our tree).
kvssd_qemu_device_files() {
    local f
    for f in "$KVSSD_TOP"/hw/kvssd/*.c "$KVSSD_TOP"/hw/kvssd/*.h "$KVSSD_TOP"/hw/kvssd/*.def \
             "$KVSSD_TOP"/hw/kvssd/trace-events "$KVSSD_TOP"/hw/kvssd/Kconfig; do
        [ -e "$f" ] && basename "$f"
    done
}

# kvssd_qemu_qtest_files - tests/qtest/kvssd-*.{c,h}, one base name per line.
kvssd_qemu_qtest_files() {
    local f
    for f in "$KVSSD_TOP"/tests/qtest/kvssd-*.c "$KVSSD_TOP"/tests/qtest/kvssd-*.h; do
        [ -e "$f" ] && basename "$f"
    done
}

# kvssd_qemu_register_hw_meson IN OUT - hw/meson.build with subdir('kvssd').
kvssd_qemu_register_hw_meson() {
    { grep -vx "subdir('kvssd')" "$1"; echo "subdir('kvssd')"; } >"$2"
}

# kvssd_qemu_register_hw_kconfig IN OUT - hw/Kconfig with our Kconfig.
kvssd_qemu_register_hw_kconfig() {
    { grep -vx 'source kvssd/Kconfig' "$1"; echo 'source kvssd/Kconfig'; } >"$2"
}

# kvssd_qemu_register_qtests IN OUT - tests/qtest/meson.build with one line
# after the (possibly multi-line) qtests_x86_64 assignment that adds our
# qtests when the device is configured.
kvssd_qemu_register_qtests() {
    local qtests= f line end
    for f in "$KVSSD_TOP"/tests/qtest/kvssd-*test.c; do
        [ -e "$f" ] && qtests+="'$(basename "$f" .c)', "
    done
    local want="qtests_x86_64 += (config_all_devices.has_key('CONFIG_KVSSD') ? [${qtests%, }] : []) # kvssd"
    grep -v CONFIG_KVSSD "$1" >"$2"
    line=$(grep -n '^qtests_x86_64 = ' "$2" | head -1 | cut -d: -f1)
    [ -n "$line" ] || die "cannot find qtests_x86_64 in $1"
    # the first top-level assignment after it
    end=$(awk -v s="$line" 'NR>s && /^[a-z_0-9]+ *[+]?= / {print NR; exit}' "$2")
    [ -n "$end" ] || die "cannot find the end of qtests_x86_64 in $1"
    sed -i "${end}i $want" "$2"
}

# kvssd_qemu_replace OUT NEW - move NEW over OUT unless they are equal (an
# unchanged file keeps its mtime: no meson reconfigure, no rebuild).
kvssd_qemu_replace() {
    if cmp -s "$2" "$1"; then
        rm -f "$2"
    else
        mv -f "$2" "$1"
    fi
}
