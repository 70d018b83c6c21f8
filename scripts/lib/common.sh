# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the scripts: package installation and small helpers.

KVSSD_TOP=${KVSSD_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# Caches that outlive a clone (QEMU build, guest images): outside the tree.
KVSSD_CACHE=${KVSSD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvssd}

log() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# ensure_packages PKG... - install the Debian packages that are missing.
ensure_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || die "packages missing (${missing[*]}) and not root; install them or run as root"
        sudo=sudo
    fi
    log "installing: ${missing[*]}"
    $sudo apt-get update -q >&2 || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
        "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
}

# The packages every build needs.
KVSSD_BUILD_PACKAGES=(build-essential meson ninja-build pkg-config python3
    libglib2.0-dev libcunit1-dev libxxhash-dev libnvme-dev liburing-dev)
