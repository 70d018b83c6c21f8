# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Sourced by scripts/run-guest.sh for --disk: boot the full-VM guest
# (scripts/mkguest.sh --disk, or a user's IMAGE) with the -device kvssd
# arguments run-guest.sh built ("${devargs[@]}"), QEMU user-mode networking
# with host port 127.0.0.1:$port forwarded to the guest's sshd: QEMU's own
# slirp (-netdev user, which build-qemu.sh's QEMU has) or, for a QEMU
# without slirp, passt (a separate user-mode stack QEMU reaches with
# -netdev stream; it sandboxes itself in a user namespace, which a chroot,
# a container or an AppArmor-restricted host can refuse), then either print the ssh
# command and wait for the guest to power off (--ssh), run COMMAND over ssh
# and exit with its status, or give the serial console (--shell).
# Exit statuses as run-guest.sh: 124 --timeout, 125 the guest did not come up.

# slirp when this QEMU has it (-netdev help lists "user"), else passt.
net=passt
"$qemu" -netdev help 2>/dev/null | grep -qx user && net=slirp
if [ $net = passt ]; then ensure_packages passt openssh-client; else ensure_packages openssh-client; fi

disk_dir=
if [ -z "$disk_image" ]; then
    disk_dir=$("$KVSSD_TOP/scripts/mkguest.sh" --disk | tail -n1)
    [ -n "$disk_dir" ] && [ -f "$disk_dir/disk.img" ] || die "scripts/mkguest.sh --disk did not build a disk guest"
    disk_image=$disk_dir/disk.img
else
    [ -f "$disk_image" ] || die "--disk '$disk_image' is not a file"
    disk_image=$(realpath "$disk_image")
    disk_dir=$(dirname "$disk_image")
fi
[[ $disk_image != *,* ]] || die "--disk '$disk_image' contains a comma, which QEMU's option syntax cannot carry"
key=${KVSSD_SSH_KEY:-$disk_dir/id_ed25519}
[ -f "$key" ] || die "no ssh key $key beside the image: set KVSSD_SSH_KEY=the private key its root accepts"
format=raw
case $disk_image in *.qcow2) format=qcow2 ;; esac

# A free host port for the forward (the kernel picks one; QEMU or passt
# binds it right after, a small race with other programs).
port=${KVSSD_SSH_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
number_in KVSSD_SSH_PORT "$port" 1024 65535
if [ $net = slirp ]; then
    netdev=(-netdev "user,id=net0,hostfwd=tcp:127.0.0.1:$port-:22")
else
    # passt drops root privileges to nobody: its socket lives in a directory
    # that user may write, not in the private $work.
    pdir=$(mktemp -d "${TMPDIR:-/tmp}/kvssd-passt.XXXXXX")
    [ "$(id -u)" != 0 ] || chown nobody "$pdir"
    sock=$pdir/passt.sock
    # -1: passt exits when QEMU closes the socket; runs as nobody when root.
    if ! passt -q -1 -s "$sock" -P "$pdir/passt.pid" -t "127.0.0.1/$port:22" -u none >"$work/passt.log" 2>&1; then
        why=$(tr '\n' ' ' <"$work/passt.log")
        rm -rf "$pdir"
        case $why in
        *"user namespace"*)
            die "passt could not start (port $port): it could not create its user namespace (a chroot, a container or a host that restricts user namespaces refuses it), and $qemu has no slirp (-netdev user). Use the QEMU of scripts/build-qemu.sh (built with slirp), or a QEMU configured with --enable-slirp. passt said: $why" ;;
        *) die "passt could not start (port $port): $why" ;;
        esac
    fi
    # passt ends by itself when QEMU disconnects; this covers QEMU never connecting.
    trap 'kill "$(cat "$pdir/passt.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$pdir"; cleanup' EXIT
    netdev=(-netdev "stream,id=net0,server=off,addr.type=unix,addr.path=$sock")
fi

# The kernel and initrd beside the image (mkguest.sh --disk) boot it without
# a bootloader; an image without them boots from its own bootloader.
boot=()
if [ -f "$disk_dir/vmlinuz" ] && [ -f "$disk_dir/initrd.img" ]; then
    boot=(-kernel "$disk_dir/vmlinuz" -initrd "$disk_dir/initrd.img"
          -append "root=/dev/vda rw console=ttyS0 quiet loglevel=3 systemd.show_status=0 panic=-1$kparams")
fi
# snapshot=on: the guest's writes go to a temporary overlay and the image
# stays as built, unless --disk-writable.
snap=on
[ "$disk_writable" = 0 ] || snap=off
qargs=("${accel_args[@]}" -m "$memory" -smp "$cpus" -no-reboot
       -L /usr/share/seabios -L /usr/share/qemu "${boot[@]}"
       -drive "file=$disk_image,if=virtio,format=$format,snapshot=$snap"
       "${netdev[@]}"
       -device virtio-net-pci,netdev=net0,romfile=
       "${devargs[@]}")
[ -z "$pidfile" ] || qargs+=(-pidfile "$pidfile")
ssh_cmd=(ssh -i "$key" -p "$port" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
         -o LogLevel=ERROR -o ConnectTimeout=10 -o ServerAliveInterval=15 root@127.0.0.1)

if [ $shell = 1 ]; then
    log "ssh from another terminal once it has booted: ${ssh_cmd[*]}"
    exec "$qemu" "${qargs[@]}" -nographic
fi

log=${logfile:-$work/console.log}
started_at=$SECONDS
timeout -k 10 "$timeout_s" "$qemu" "${qargs[@]}" -display none -monitor none -serial "file:$log" \
    </dev/null >"$work/qemu.err" 2>&1 &
qpid=$!
# Until sshd answers, bounded by --timeout; QEMU exiting ends the wait.
up=0
while [ $((SECONDS - started_at)) -lt "$timeout_s" ] && kill -0 $qpid 2>/dev/null; do
    if "${ssh_cmd[@]}" -o BatchMode=yes true </dev/null >/dev/null 2>&1; then up=1; break; fi
    sleep 2
done
if [ $up = 0 ]; then
    if kill -0 $qpid 2>/dev/null; then
        kill $qpid 2>/dev/null; wait $qpid 2>/dev/null
        log "error: no ssh answer from the guest within --timeout $timeout_s s. Last console lines:"
        tail -n 15 "$log" 2>/dev/null | sed 's/^/  | /' >&2
        exit 124
    fi
    log "error: QEMU ended before the guest answered ssh."
    [ ! -s "$work/qemu.err" ] || sed 's/^/  | /' "$work/qemu.err" >&2
    tail -n 15 "$log" 2>/dev/null | sed 's/^/  | /' >&2
    exit 125
fi
log "guest up: ssh answered after $((SECONDS - started_at)) s"

for f in "${files[@]}"; do # --file SRC[:DST], checked by run-guest.sh
    src=${f%%:*}
    dst=/root/$(basename "$src")
    [[ $f == *:* ]] && dst=${f#*:}
    [ -f "$src" ] || { kill $qpid 2>/dev/null; die "--file '$src' is not a file"; }
    [[ $dst == /* ]] || { kill $qpid 2>/dev/null; die "--file destination '$dst' must be an absolute guest path"; }
    "${ssh_cmd[@]}" -o BatchMode=yes "mkdir -p '$(dirname "$dst")' && cat >'$dst'" <"$src" ||
        { kill $qpid 2>/dev/null; die "--file: copying $src to the guest's $dst over ssh failed"; }
done

poweroff_guest() { # a clean power-off gives the KV-SSD its controller shutdown
    "${ssh_cmd[@]}" -o BatchMode=yes 'systemctl poweroff' </dev/null >/dev/null 2>&1
    local i
    for ((i = 0; i < 120; i++)); do kill -0 $qpid 2>/dev/null || break; sleep 1; done
    kill $qpid 2>/dev/null
    wait $qpid 2>/dev/null
}
if [ $# -eq 0 ] && [ -z "$script" ]; then
    # --ssh alone: the user works in the guest; QEMU runs until it powers off.
    echo "${ssh_cmd[*]}"
    log "the guest runs until it powers off (ssh ... poweroff) or --timeout $timeout_s s"
    wait $qpid
    exit 0
fi
remaining=$((timeout_s - (SECONDS - started_at)))
[ $remaining -gt 0 ] || remaining=1
if [ -n "$script" ]; then
    timeout "$remaining" "${ssh_cmd[@]}" -o BatchMode=yes sh -s <"$script"
else
    timeout "$remaining" "${ssh_cmd[@]}" -o BatchMode=yes -- "$*" </dev/null
fi
rc=$?
poweroff_guest
exit $rc
