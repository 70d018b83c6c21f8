#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Boot the kvssd guest (scripts/mkguest.sh) in QEMU with `-device kvssd`
# (and with --block a second one with command-set=nvm, the same SSD as a
# block device), run a command or script inside it, stream its output, and
# exit with its exit status. The guest powers off when the command ends, which gives the
# device a controller shutdown, so an --image is checkpointed. See
# docs/guest.md for every option.
set -uo pipefail
. "$(dirname "$0")/lib/common.sh"

usage() {
    cat <<'EOF'
usage: scripts/run-guest.sh [options] [--] [COMMAND...]
       scripts/run-guest.sh [options] --script FILE
       scripts/run-guest.sh [options] --shell

Runs COMMAND (its words joined by spaces and run by the guest's sh, like
ssh does) or FILE inside a guest with a KV-SSD at /dev/ng0n1, streams its
output and exits with its status: 124 when --timeout fired, 125 when the
guest could not run it (QEMU failed, the guest did not boot, QEMU was killed).

options:
  --memory MIB        guest RAM in MiB, 128-65536 (default 1024)
  --cpus N            vCPUs, 1-64 (default 2); each gets its own NVMe queue
  --image FILE        keep the KV-SSD's NAND and checkpoint in FILE
                      (device property image=); without it the device is in
                      memory and starts empty; with --devices N the others
                      in FILE.2 ... FILE.N
  --devices N         N KV-SSDs, 1-8 (default 1): serials kvssd0 ...
                      kvssd<N-1>, each its own image, the same --prop and
                      --latency; the guest exports their namespaces, in
                      serial order, as $KVSSD_DEVICES (the first also as
                      $KVSSD_DEVICE)
  --prop NAME=VALUE   a -device kvssd property, repeatable
                      (e.g. --prop packing=backfill); see
                      `QEMU -device kvssd,help`
  --latency           hold completions until their simulated NAND time
                      (device property latency=on; with --block on both)
  --poll-queues N     give the guest's NVMe driver N poll queues per
                      controller, 1-64 (Linux's nvme.poll_queues=N on the
                      kernel command line): queues without interrupts that
                      polled I/O (kvbench --poll, fio --hipri) uses, so the
                      guest spins instead of sleeping until an interrupt;
                      with --disk only when the image boots with the kernel
                      beside it
  --block             also attach the block personality: a second
                      -device kvssd with command-set=nvm (serial
                      kvssd-nvm0; the guest exports its /dev/nvmeXn1 as
                      $KVSSD_BLOCK_DEVICE, the KV namespace as $KVSSD_DEVICE)
                      and the tools disk (fio at /opt/tools)
  --block-image FILE  keep the block device's NAND in FILE (its image=)
  --block-prop NAME=VALUE
                      a property of the block device, repeatable (e.g.
                      lba-bytes=512, preset=pm983, blocks-per-die=64)
  --tools-disk        attach the tools disk (fio) without --block
  --second-device T   attach a second device after the KV-SSD: "nvme" (QEMU's
                      stock NVMe, 1 GiB null backend, /dev/nvme1n1) or
                      "kvssd" (a second KV-SSD in memory, /dev/ng1n1;
                      not with --devices)
  --device T          the first device: kvssd (default), nvme (QEMU's stock
                      NVMe, for checking the guest without the KV-SSD) or none
  --fabrics-target SOCKET
                      export the KV-SSDs over NVMe/TCP with Linux's nvmet
                      passthru target (needs --kernel trixie: Debian's 6.1
                      has no CONFIG_NVME_TARGET_PASSTHRU) at 10.77.0.1:4420,
                      one subsystem each, NQN nqn.2026-01.org.kvssd:SERIAL
                      (kvssd0 ..., --devices N), on a virtio NIC whose
                      wire is the unix socket SOCKET (QEMU listens on it);
                      the command runs once the export is set up, e.g.
                      `kvssd-fabrics serve 600` to serve one host guest
  --fabrics-host SOCKET
                      a guest without a local device (--device none unless
                      given) whose NIC connects to the target guest's
                      SOCKET; it runs `nvme connect -t tcp -a 10.77.0.1 -s
                      4420` for each kvssd subsystem the target lists and
                      the command finds the fabrics namespaces in
                      $KVSSD_DEVICES (the first in $KVSSD_DEVICE).
                      --icount is refused with either option:
                      sleep=off jumps an idle guest's clock past the
                      NVMe/TCP keep-alive and I/O timeouts
  --script FILE       run FILE (a sh script) instead of COMMAND
  --file SRC[:DST]    copy host file SRC into the guest at DST (default
                      /root/<name of SRC>), repeatable
  --shell             an interactive shell on the console instead of a command
  --disk [IMAGE]      boot the full-VM guest instead of the initramfs one: a
                      Debian disk image with systemd and sshd (default: the
                      one scripts/mkguest.sh --disk builds and caches; IMAGE:
                      a raw or .qcow2 disk, booted with the vmlinuz and
                      initrd.img beside it, else with its own bootloader);
                      COMMAND (or --script) runs over ssh; the image is not
                      modified (snapshot=on) unless --disk-writable
  --ssh               with --disk: print the ssh command (port, key) once the
                      guest answers and keep it running until it powers off;
                      with a COMMAND, run it over ssh and exit with its status
  --disk-writable     with --disk: the guest's writes go to IMAGE
  --timeout SECONDS   kill QEMU after this long, 1-86400 (default 1800)
  --qemu PATH         qemu-system-x86_64 to use (default: $QEMU, else the
                      binary scripts/build-qemu.sh builds)
  --kernel K          guest kernel: bookworm (Debian's Linux 6.1, default),
                      trixie (Debian's Linux 6.12), or a vmlinuz path (with
                      MODULES=its module tree in the environment)
  --accel A           auto (default: KVM if a probe boot works, else TCG),
                      kvm or tcg
  --icount SHIFT      deterministic virtual time: QEMU's -icount
                      shift=SHIFT,sleep=off, 0-10 (each guest instruction
                      advances the virtual clock, which the device and the
                      guest's clocks read, by 2^SHIFT ns; idle time is
                      skipped). TCG only, one host thread for all vCPUs
                      (--accel auto chooses tcg; kvm is refused). The
                      guest's inputs are fixed too (-seed 1, the RTC at
                      2026-01-01 on the virtual clock, nokaslr), so two
                      boots of one script with one vCPU and no disk run
                      the same instructions
  --pidfile FILE      write QEMU's pid to FILE
  --log FILE          keep the whole console log (boot included) in FILE
  --verbose           also stream the boot messages
  -h, --help          this text

environment: QEMU (as --qemu), KVSSD_ACCEL (as --accel), KVSSD_CACHE
EOF
}

# number_in NAME VALUE MIN MAX - VALUE if it is an integer in [MIN, MAX].
number_in() {
    [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] ||
        die "$1 '$2' is not valid: give a whole number from $3 to $4"
}

memory=1024
cpus=2
image=
devices=1
props=()
latency=0
poll_queues=
block=0
block_image=
block_props=()
tools_disk=0
second=
first=kvssd
script=
files=()
shell=0
timeout_s=1800
qemu=${QEMU:-}
kernel=bookworm
accel=${KVSSD_ACCEL:-auto}
icount=
pidfile=
logfile=
verbose=0
disk=0
disk_image=
disk_writable=0
ssh_mode=0
fabrics_role=
fabrics_socket=
device_given=0

need() { [ "$2" -ge 2 ] || die "$1 needs a value (see --help)"; }
while [ $# -gt 0 ]; do
    case $1 in
    --memory) need "$1" $#; memory=$2; shift ;;
    --cpus) need "$1" $#; cpus=$2; shift ;;
    --image) need "$1" $#; image=$2; shift ;;
    --devices) need "$1" $#; devices=$2; shift ;;
    --prop) need "$1" $#; props+=("$2"); shift ;;
    --latency) latency=1 ;;
    --poll-queues) need "$1" $#; poll_queues=$2; shift ;;
    --block) block=1 ;;
    --block-image) need "$1" $#; block_image=$2; shift ;;
    --block-prop) need "$1" $#; block_props+=("$2"); shift ;;
    --tools-disk) tools_disk=1 ;;
    --second-device) need "$1" $#; second=$2; shift ;;
    --device) need "$1" $#; first=$2; device_given=1; shift ;;
    --fabrics-target) need "$1" $#; fabrics_role=target; fabrics_socket=$2; shift ;;
    --fabrics-host) need "$1" $#; fabrics_role=host; fabrics_socket=$2; shift ;;
    --script) need "$1" $#; script=$2; shift ;;
    --file) need "$1" $#; files+=("$2"); shift ;;
    --shell) shell=1 ;;
    --disk)
        disk=1
        # An optional IMAGE: the next word when it names an existing file.
        if [ $# -ge 2 ] && [ -f "$2" ]; then disk_image=$2; shift; fi ;;
    --disk=*) disk=1; disk_image=${1#*=} ;;
    --disk-writable) disk_writable=1 ;;
    --ssh) ssh_mode=1 ;;
    --timeout) need "$1" $#; timeout_s=$2; shift ;;
    --qemu) need "$1" $#; qemu=$2; shift ;;
    --kernel) need "$1" $#; kernel=$2; shift ;;
    --accel) need "$1" $#; accel=$2; shift ;;
    --icount) need "$1" $#; icount=$2; shift ;;
    --pidfile) need "$1" $#; pidfile=$2; shift ;;
    --log) need "$1" $#; logfile=$2; shift ;;
    --verbose) verbose=1 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) break ;;
    esac
    shift
done

number_in --memory "$memory" 128 65536
number_in --cpus "$cpus" 1 64
number_in --devices "$devices" 1 8
[ -z "$poll_queues" ] || number_in --poll-queues "$poll_queues" 1 64
# kernel parameters for the guest's drivers, on either kind of guest
kparams=
[ -z "$poll_queues" ] || kparams+=" nvme.poll_queues=$poll_queues"
number_in --timeout "$timeout_s" 1 86400
case $second in ''|nvme|kvssd) ;; *) die "--second-device '$second' is not valid: use nvme or kvssd" ;; esac
case $first in kvssd|nvme|none) ;; *) die "--device '$first' is not valid: use kvssd, nvme or none" ;; esac
case $accel in auto|kvm|tcg) ;; *) die "--accel '$accel' is not valid: use auto, kvm or tcg" ;; esac
if [ -n "$fabrics_role" ]; then
    [ -z "$icount" ] ||
        die "--icount cannot be used with --fabrics-$fabrics_role: its sleep=off jumps an idle guest's clock to the next timer, which fires NVMe/TCP's keep-alive and I/O timeouts while the other guest is still answering"
    [ $disk = 0 ] || die "--fabrics-$fabrics_role applies to the initramfs guest, not --disk"
    [[ $fabrics_socket != *,* ]] ||
        die "--fabrics-$fabrics_role '$fabrics_socket' contains a comma, which QEMU's option syntax cannot carry"
    [ ${#fabrics_socket} -le 107 ] ||
        die "--fabrics-$fabrics_role '$fabrics_socket' is ${#fabrics_socket} characters long; a unix socket path holds at most 107"
    if [ $fabrics_role = target ]; then
        [ "$first" = kvssd ] || die "--fabrics-target exports the KV-SSD: it cannot be used with --device $first"
        [ "$kernel" != bookworm ] ||
            die "--fabrics-target needs --kernel trixie: Debian's 6.1 kernel is built without CONFIG_NVME_TARGET_PASSTHRU (its nvmet has no passthru/ in configfs)"
        mkdir -p "$(dirname "$fabrics_socket")" || die "cannot create the directory of --fabrics-target '$fabrics_socket'"
        # QEMU's listener cannot bind over a stale socket of an earlier run.
        [ ! -S "$fabrics_socket" ] || rm -f "$fabrics_socket"
        [ ! -e "$fabrics_socket" ] || die "--fabrics-target '$fabrics_socket' exists and is not a socket"
    else
        [ $device_given = 1 ] || first=none
    fi
fi
if [ -n "$icount" ]; then
    number_in --icount "$icount" 0 10
    [ "$accel" != kvm ] ||
        die "--icount counts instructions that TCG emulates; it cannot be used with --accel kvm (use --accel tcg or auto)"
    accel=tcg
fi
for p in "${props[@]}"; do
    [[ $p =~ ^[a-z][a-z0-9_-]*=[^,]*$ ]] ||
        die "--prop '$p' is not valid: write NAME=VALUE (a kvssd property name; no commas in VALUE)"
    case $p in command-set=*) die "--prop '$p': the first device is the KV-SSD; attach the block personality with --block" ;; esac
done
for p in "${block_props[@]}"; do
    [[ $p =~ ^[a-z][a-z0-9_-]*=[^,]*$ ]] ||
        die "--block-prop '$p' is not valid: write NAME=VALUE (a kvssd property name; no commas in VALUE)"
    case $p in
    command-set=*|image=*|serial=*|latency=*)
        die "--block-prop '$p' is not valid: command-set, serial, image and latency are set by --block, --block-image and --latency" ;;
    esac
done
if [ $block = 0 ]; then
    [ -z "$block_image" ] && [ ${#block_props[@]} -eq 0 ] ||
        die "--block-image and --block-prop configure the block personality: add --block"
fi
[ $block = 0 ] || tools_disk=1
[ -z "$script" ] || [ -f "$script" ] || die "--script '$script' is not a file"
if [ $disk = 0 ]; then
    [ $ssh_mode = 0 ] && [ $disk_writable = 0 ] && [ -z "$disk_image" ] ||
        die "--ssh and --disk-writable apply to the full-VM guest: add --disk"
else
    [ "$kernel" = bookworm ] && [ $tools_disk = 0 ] || [ $block = 1 ] ||
        die "--kernel and --tools-disk apply to the initramfs guest: the --disk image boots its own kernel and has fio installed"
    [ "$kernel" = bookworm ] ||
        die "--kernel '$kernel' applies to the initramfs guest: the --disk image boots its own kernel"
fi
if [ $shell = 1 ]; then
    [ -z "$script" ] && [ $# -eq 0 ] || die "--shell takes no COMMAND or --script"
elif [ $ssh_mode = 1 ]; then
    [ -z "$script" ] || [ $# -eq 0 ] || die "give either a COMMAND or --script, not both"
else
    [ -n "$script" ] || [ $# -gt 0 ] || die "nothing to run: give a COMMAND, --script FILE or --shell (see --help)"
    [ -z "$script" ] || [ $# -eq 0 ] || die "give either a COMMAND or --script, not both"
fi
if [ "$first" != kvssd ]; then
    [ -z "$image" ] && { [ $latency = 0 ] || [ $block = 1 ]; } && [ ${#props[@]} -eq 0 ] &&
        [ "$devices" = 1 ] ||
        die "--image, --latency, --prop and --devices apply to the KV-SSD; they cannot be used with --device $first"
fi
[ "$devices" = 1 ] || [ "$second" != kvssd ] ||
    die "--second-device kvssd adds a second KV-SSD; with --devices $devices use --devices $((devices + 1)) instead"
for p in "${props[@]}"; do
    case $p in
    serial=*|image=*) [ "$devices" = 1 ] ||
        die "--prop '$p': with --devices $devices each KV-SSD has its own serial and image (--image FILE names them)" ;;
    esac
done
if [ -n "$image" ]; then
    mkdir -p "$(dirname "$image")" || die "cannot create the directory of --image '$image'"
    image=$(realpath "$image")
    [[ $image != *,* ]] || die "--image '$image' contains a comma, which QEMU's option syntax cannot carry"
fi
if [ -n "$block_image" ]; then
    mkdir -p "$(dirname "$block_image")" || die "cannot create the directory of --block-image '$block_image'"
    block_image=$(realpath "$block_image")
    [[ $block_image != *,* ]] || die "--block-image '$block_image' contains a comma, which QEMU's option syntax cannot carry"
    [ "$block_image" != "$image" ] || die "--block-image and --image name the same file '$image'; each device needs its own"
    i=2
    while [ -n "$image" ] && [ $i -le "$devices" ]; do
        [ "$block_image" != "$image.$i" ] ||
            die "--block-image '$block_image' is the image of KV-SSD $i (--image FILE.$i); each device needs its own"
        i=$((i + 1))
    done
fi

ensure_packages seabios qemu-system-data cpio gzip

# ---- QEMU --------------------------------------------------------------
if [ -z "$qemu" ]; then
    [ -x "$KVSSD_TOP/scripts/build-qemu.sh" ] ||
        die "scripts/build-qemu.sh is not in this checkout yet; give --qemu PATH or QEMU=PATH"
    bq_log=$(mktemp)
    qemu=$("$KVSSD_TOP/scripts/build-qemu.sh" 2>"$bq_log" | tail -n1)
    if [ -z "$qemu" ] || [ ! -x "$qemu" ]; then
        tail -30 "$bq_log" >&2
        rm -f "$bq_log"
        die "scripts/build-qemu.sh did not produce a QEMU binary (its output is above)"
    fi
    rm -f "$bq_log"
fi
[ -x "$qemu" ] || qemu=$(command -v "$qemu" 2>/dev/null) || true
[ -n "$qemu" ] && [ -x "$qemu" ] || die "QEMU '${QEMU:-$qemu}' is not an executable"

# ---- the guest ---------------------------------------------------------
# (--disk: the full VM needs no initramfs guest; its tools disk is not
# attached, fio is installed in the image.)
[ $disk = 0 ] || tools_disk=0
if [ $disk = 1 ]; then :; else
case $kernel in
bookworm|trixie) guest=$("$KVSSD_TOP/scripts/mkguest.sh" --debian-kernel "$kernel" | tail -n1) ;;
*)
    [ -f "$kernel" ] || die "--kernel '$kernel' is not valid: use bookworm, trixie or the path of a vmlinuz"
    guest=$(KERNEL=$kernel "$KVSSD_TOP/scripts/mkguest.sh" | tail -n1) ;;
esac
[ -n "$guest" ] && [ -f "$guest/initrd.gz" ] || die "scripts/mkguest.sh did not build a guest"
[ $tools_disk = 0 ] || [ -f "$guest/tools.img" ] ||
    die "the guest $guest has no tools.img (fio): rebuild it with scripts/mkguest.sh --rebuild"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kvssd-run.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

# ---- the per-run archive: /run.sh and --file files -----------------------
[ $disk = 1 ] || {
mkdir -p "$work/run/root"
if [ $shell = 0 ]; then
    if [ -n "$script" ]; then
        cp "$script" "$work/run/run.sh"
    else
        printf '%s\n' "$*" >"$work/run/run.sh"
    fi
fi
for f in "${files[@]}"; do
    src=${f%%:*}
    dst=/root/$(basename "$src")
    [[ $f == *:* ]] && dst=${f#*:}
    [ -f "$src" ] || die "--file '$src' is not a file"
    [[ $dst == /* ]] || die "--file destination '$dst' must be an absolute guest path"
    mkdir -p "$work/run$(dirname "$dst")"
    cp "$src" "$work/run$dst"
done
# the same bytes for the same files: no times, inode numbers or order from
# the host (an icount boot then runs the same instructions, docs/reproduce.md)
find "$work/run" -exec touch -h -d @0 {} +
(cd "$work/run" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 --reproducible) |
    gzip -1 -n >"$work/run.cpio.gz"
cat "$guest/initrd.gz" "$work/run.cpio.gz" >"$work/initrd.gz"
}

# ---- the command line ---------------------------------------------------
wait_nodes=()
devargs=()
kv_opts() { # kv_opts ID [extra properties] - the -device kvssd argument
    local a="kvssd,id=$1,serial=$1"
    shift
    local p
    for p in "$@"; do a+=",$p"; done
    echo "$a"
}
serials=()
case $first in
kvssd)
    extra=()
    [ -z "$image" ] || extra+=("image=$image")
    [ $latency = 0 ] || extra+=("latency=on")
    devargs+=(-device "$(kv_opts kvssd0 "${extra[@]}" "${props[@]}")")
    # KV-SSDs 2..N (--devices): the same properties, image FILE.i
    for ((i = 2; i <= devices; i++)); do
        extra=()
        [ -z "$image" ] || extra+=("image=$image.$i")
        [ $latency = 0 ] || extra+=("latency=on")
        devargs+=(-device "$(kv_opts "kvssd$((i - 1))" "${extra[@]}" "${props[@]}")")
    done
    # With two controllers the driver's asynchronous probe decides which is
    # nvme0: the guest finds the KV-SSDs by their serials instead (init).
    if [ $block = 1 ] || [ "$devices" -gt 1 ]; then
        for ((i = 0; i < devices; i++)); do serials+=("kvssd$i:kv"); done
    else
        wait_nodes+=(ng0n1)
    fi ;;
nvme)
    devargs+=(-blockdev "driver=null-co,node-name=stock0,size=1073741824,read-zeroes=on"
              -device "nvme,serial=stock0,drive=stock0")
    wait_nodes+=(nvme0n1) ;;
esac
ctrl=$([ "$first" = none ] && echo 0 || echo "$devices")
if [ $block = 1 ]; then
    extra=(command-set=nvm)
    [ -z "$block_image" ] || extra+=("image=$block_image")
    [ $latency = 0 ] || extra+=("latency=on")
    devargs+=(-device "$(kv_opts kvssd-nvm0 "${extra[@]}" "${block_props[@]}")")
    serials+=(kvssd-nvm0:block)
    ctrl=$((ctrl + 1))
fi
case $second in
nvme)
    devargs+=(-blockdev "driver=null-co,node-name=stock1,size=1073741824,read-zeroes=on"
              -device "nvme,serial=stock1,drive=stock1")
    wait_nodes+=("nvme${ctrl}n1") ;;
kvssd)
    devargs+=(-device "$(kv_opts kvssd1)")
    wait_nodes+=("ng${ctrl}n1") ;;
esac

# The tools disk last, so that the NVMe controllers keep their PCI slots.
[ $tools_disk = 0 ] ||
    devargs+=(-drive "file=$guest/tools.img,if=none,id=tools,format=raw,readonly=on"
              -device virtio-blk-pci,drive=tools)

# The NVMe/TCP wire: a virtio NIC on a -netdev stream over a unix socket,
# the target's QEMU listening, the host's connecting (and reconnecting
# after the target restarts, or before it has started). Each NIC its own
# MAC: both would default to 52:54:00:12:34:56. Last, so that the NVMe
# controllers and the tools disk keep their PCI slots.
netargs=(-net none)
if [ -n "$fabrics_role" ]; then
    if [ $fabrics_role = target ]; then
        netargs=(-netdev "stream,id=fab0,server=on,addr.type=unix,addr.path=$fabrics_socket"
                 -device virtio-net-pci,netdev=fab0,mac=52:54:00:4b:56:01,romfile=)
    else
        netargs=(-netdev "stream,id=fab0,server=off,addr.type=unix,addr.path=$fabrics_socket,reconnect-ms=1000"
                 -device virtio-net-pci,netdev=fab0,mac=52:54:00:4b:56:02,romfile=)
    fi
fi

append="console=ttyS0 quiet loglevel=3 panic=-1$kparams"
[ -z "$fabrics_role" ] || append+=" kvssd.fabrics=$fabrics_role"
[ ${#wait_nodes[@]} -eq 0 ] || append+=" kvssd.wait=$(IFS=,; echo "${wait_nodes[*]}")"
[ ${#serials[@]} -eq 0 ] || append+=" kvssd.serial=$(IFS=,; echo "${serials[*]}")"
[ $tools_disk = 0 ] || append+=" kvssd.disk=1"
[ $shell = 0 ] || append+=" kvssd.shell=1"

# ---- accelerator: KVM only where a probe boot works ---------------------
kvm_usable() {
    [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
    local key verdict dir=$KVSSD_CACHE/kvm-probe
    key=$( { echo "$qemu"; uname -r; cat /proc/sys/kernel/random/boot_id 2>/dev/null; } | sha256sum | cut -c1-16)
    if [ -f "$dir/$key" ]; then
        verdict=$(cat "$dir/$key")
    else
        # KVM hangs at "Booting from ROM" on some hosts: a short bounded boot
        # decides, and the verdict is cached per QEMU path and host boot
        # kernel.
        log "probing KVM with a short boot (${KVSSD_KVM_PROBE_TIMEOUT:-30}s at most; cached in $dir)"
        verdict=no
        if "$0" --qemu "$qemu" --accel kvm --device none --memory 256 --cpus 1 \
               --timeout "${KVSSD_KVM_PROBE_TIMEOUT:-30}" -- echo kvm-probe-ok 2>/dev/null |
               grep -q '^kvm-probe-ok$'; then
            verdict=yes
        fi
        mkdir -p "$dir" && echo $verdict >"$dir/$key"
        log "KVM probe: $([ $verdict = yes ] && echo works || echo 'did not boot; using TCG')"
    fi
    [ "$verdict" = yes ]
}
if [ "$accel" = auto ]; then
    if kvm_usable; then accel=kvm; else accel=tcg; fi
fi
accel_args=(-accel "$accel")
[ "$accel" = tcg ] && accel_args=(-accel tcg,thread=multi)
# icount: one thread runs every vCPU in turn (QEMU refuses multi-threaded
# TCG with icount); sleep=off: idle time is skipped, not waited for
# and the guest's other inputs from the host fixed, so that a boot of the
# same script runs the same instructions (docs/reproduce.md, "Same answer
# twice"): RDRAND's bytes (-seed), the RTC (a fixed date, following the
# virtual clock), the kernel's address layout (nokaslr)
if [ -n "$icount" ]; then
    accel_args=(-accel tcg,thread=single -icount "shift=$icount,sleep=off"
                -seed 1 -rtc base=2026-01-01T00:00:00,clock=vm)
    append+=" nokaslr"
fi
# shellcheck source=guest/disk/run-disk.sh
[ $disk = 0 ] || . "$KVSSD_TOP/scripts/guest/disk/run-disk.sh"

qargs=("${accel_args[@]}" -m "$memory" -smp "$cpus" -no-reboot
       -L /usr/share/seabios -L /usr/share/qemu
       -kernel "$guest/vmlinuz" -initrd "$work/initrd.gz" -append "$append"
       "${devargs[@]}" "${netargs[@]}")
[ -z "$pidfile" ] || qargs+=(-pidfile "$pidfile")

if [ $shell = 1 ]; then
    # Interactive: the console is this terminal (Ctrl-A X quits QEMU).
    exec "$qemu" "${qargs[@]}" -nographic
fi

# ---- run, stream, and collect the status --------------------------------
log=${logfile:-$work/console.log}
status_file=$work/status
qemu_err=$work/qemu.err
: >"$log"
started_at=$SECONDS
# stream_console - QEMU's serial console on stdin: every line into $log;
# the command's output (between the START and EXIT markers) to stdout as it
# arrives; the exit status into $status_file. A bash read loop, because awk
# implementations (mawk) and tr buffer a pipe and would hold lines back.
stream_console() {
    local line started=0
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line%$'\r'}
        printf '%s\n' "$line" >>"$log"
        case $line in
        *"KVSSD-GUEST-EXIT "*)
            # The marker ends a line of its own, or the command's last
            # output when that did not end with a newline: print that part.
            if [[ ${line##*KVSSD-GUEST-EXIT } =~ ^[0-9]+$ ]]; then
                local head=${line%KVSSD-GUEST-EXIT *}
                [ -z "$head" ] || { [ $started = 0 ] && [ $verbose = 0 ]; } || printf '%s\n' "$head"
                echo "${line##*KVSSD-GUEST-EXIT }" >"$status_file"
                started=0
                continue
            fi ;;
        KVSSD-GUEST-START) started=1; continue ;;
        "KVSSD-GUEST-WARNING "*) printf 'guest warning: %s\n' "${line#KVSSD-GUEST-WARNING }" >&2; continue ;;
        esac
        [ $started = 0 ] && [ $verbose = 0 ] || printf '%s\n' "$line"
    done
}
timeout -k 10 "$timeout_s" "$qemu" "${qargs[@]}" -display none -monitor none -serial stdio \
    </dev/null 2>"$qemu_err" | stream_console
rcs=("${PIPESTATUS[@]}")
qemu_rc=${rcs[0]}

if [ -s "$status_file" ]; then
    exit "$(cat "$status_file")"
fi
if [ "$qemu_rc" = 124 ] || { [ "$qemu_rc" = 137 ] && [ $((SECONDS - started_at)) -ge "$timeout_s" ]; }; then
    log "error: the guest did not finish within --timeout $timeout_s s; QEMU was stopped. Last console lines:"
    tail -n 15 "$log" | sed 's/^/  | /' >&2
    exit 124
fi
if [ ! -s "$log" ] && [ "$qemu_rc" != 0 ]; then
    log "error: QEMU exited with status $qemu_rc before the guest started."
else
    log "error: the guest ended without reporting the command's status (QEMU exit status $qemu_rc)."
fi
[ ! -s "$qemu_err" ] || { log "QEMU said:"; sed 's/^/  | /' "$qemu_err" >&2; }
[ ! -s "$log" ] || { log "last console lines:"; tail -n 15 "$log" | sed 's/^/  | /' >&2; }
exit 125
