# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the scripts: package installation and small helpers.

KVSSD_TOP=${KVSSD_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# Caches that outlive a clone (QEMU build, guest images): outside the tree.
KVSSD_CACHE=${KVSSD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvssd}

log() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# missing_packages PKG... - those of PKG that are not installed, one per line.
missing_packages() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            echo "$p"
    done
}

# ensure_packages PKG... - install the Debian packages that are missing.
# Scripts running at once take turns under a lock in $KVSSD_CACHE: run.py
# --jobs 2 starts two run-guest.sh on a fresh machine, each installing what
# mkguest.sh needs, and the second apt-get failed at apt's own lock ("Could
# not get lock /var/lib/dpkg/lock-frontend"), so its boot was lost.
ensure_packages() {
    local missing
    mapfile -t missing < <(missing_packages "$@")
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || die "packages missing (${missing[*]}) and not root; install them or run as root"
        sudo=sudo
    fi
    mkdir -p "$KVSSD_CACHE" || die "cannot create $KVSSD_CACHE"
    local lock
    exec {lock}>"$KVSSD_CACHE/.packages.lock" || die "cannot open $KVSSD_CACHE/.packages.lock"
    flock "$lock" || die "cannot lock $KVSSD_CACHE/.packages.lock"
    # what is still missing once the other script's turn is over
    mapfile -t missing < <(missing_packages "$@")
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing: ${missing[*]}"
        $sudo apt-get update -q >&2 || die "apt-get update failed"
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
            "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
    fi
    exec {lock}>&-
}

# debian_archive - the Debian archive this machine's apt uses, as a URI
# without a trailing slash: KVSSD_DEBIAN_ARCHIVE when set; else the
# repository of the Release files apt has fetched whose Label is "Debian"
# (apt-get indextargets); else the first URI of a deb or deb-src entry in
# $KVSSD_APT_ETC (default /etc/apt) sources.list, sources.list.d/*.list or
# sources.list.d/*.sources whose suite is a Debian release (the machine's
# codename, or one of bookworm trixie forky sid, with or without
# -updates/-backports). A user behind a mirror or a proxy then gets the
# archive the rest of apt uses. No archive is written into the repository.
# Dies with one sentence saying what to set when none is found.
debian_archive() {
    local uri etc=${KVSSD_APT_ETC:-/etc/apt}
    if [ -n "${KVSSD_DEBIAN_ARCHIVE:-}" ]; then
        echo "${KVSSD_DEBIAN_ARCHIVE%/}"
        return
    fi
    if [ -z "${KVSSD_APT_ETC:-}" ] && command -v apt-get >/dev/null; then
        uri=$(apt-get indextargets --format '$(REPO_URI)' 'Label: Debian' 2>/dev/null | head -n1)
        if [ -n "$uri" ]; then
            echo "${uri%/}"
            return
        fi
    fi
    local codename
    codename=$(sed -n 's/^VERSION_CODENAME=//p' "${KVSSD_OS_RELEASE:-/etc/os-release}" 2>/dev/null)
    uri=$(cat "$etc"/sources.list "$etc"/sources.list.d/*.list 2>/dev/null |
          awk -v cn="${codename:-bookworm}" '
              function debian(s) {
                  sub(/-(updates|backports)$/, "", s)
                  return s == cn || s ~ /^(bookworm|trixie|forky|sid)$/
              }
              $1 == "deb" || $1 == "deb-src" {
                  i = 2
                  if ($i ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }
                  if (debian($(i + 1))) { print $i; exit }
              }')
    if [ -z "$uri" ]; then
        uri=$(cat "$etc"/sources.list.d/*.sources 2>/dev/null |
              awk -v cn="${codename:-bookworm}" '
                  function debian(s) {
                      sub(/-(updates|backports)$/, "", s)
                      return s == cn || s ~ /^(bookworm|trixie|forky|sid)$/
                  }
                  function stanza(   n, k, s, u) {
                      if (!done && types ~ /deb/ && uris != "") {
                          n = split(suites, s, " ")
                          for (k = 1; k <= n; k++)
                              if (debian(s[k])) { split(uris, u, " "); print u[1]; done = 1; exit }
                      }
                      types = uris = suites = ""
                  }
                  /^[ \t]*$/ { stanza(); next }
                  /^[ \t]*#/ { next }
                  tolower($1) == "types:" { $1 = ""; types = $0 }
                  tolower($1) == "uris:" { $1 = ""; uris = $0 }
                  tolower($1) == "suites:" { $1 = ""; suites = $0 }
                  END { stanza() }')
    fi
    [ -n "$uri" ] || die "no Debian archive found in $etc's sources; set KVSSD_DEBIAN_ARCHIVE to the archive's URI (the one your apt uses for Debian, e.g. a local mirror)"
    echo "${uri%/}"
}

# The packages every build needs. librocksdb-dev: kvbench's rocksdb engine
# (host/meson.build builds kvbench without it when it is missing); a guest
# running that kvbench needs its runtime library, librocksdb7.8 on bookworm,
# which the guest image copies as one of the libraries ldd names.
# libjson-c-dev: the kvssd CLI's JSON (libnvme's libjson-c5 at run time);
# python3-jsonschema: the host suite validates the CLI's JSON against
# tests/host/schemas/ (host-cli-json).
KVSSD_BUILD_PACKAGES=(build-essential meson ninja-build pkg-config python3
    libglib2.0-dev libcunit1-dev libxxhash-dev libnvme-dev liburing-dev librocksdb-dev
    libjson-c-dev python3-jsonschema python3-matplotlib)

# The clang-format that .clang-format is written for, as Debian's package and
# binary name (scripts/check-format.sh, the format phase of scripts/test.sh):
# another version formats some constructs differently.
KVSSD_CLANG_FORMAT=clang-format-19

# clang_rt_package - the Debian package that holds the installed clang's
# sanitizer and libFuzzer runtimes (libclang_rt.*.a): libclang-rt-N-dev for
# clang N, a mere recommendation of clang that --no-install-recommends skips.
# PATH: a runtime path (/usr/lib/llvm-N/...) to take N from instead.
clang_rt_package() {
    local major
    major=$(echo "${1:-}" | sed -n 's|.*/llvm-\([0-9][0-9]*\)/.*|\1|p')
    [ -n "$major" ] || major=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
    [ -n "$major" ] || major=$(dpkg-query -W -f='${Depends}' clang 2>/dev/null |
                               sed -n 's/^clang-\([0-9]*\).*/\1/p')
    echo "libclang-rt-${major:-N}-dev"
}

# setup_failure LOG... - why a setup step failed and what fixes it, in one
# line, from what its logs say; else the first error line they hold (the
# caller names the log if it outlives the run). Give meson's
# meson-logs/meson-log.txt too: a failed compiler check is explained only there.
setup_failure() {
    local hit name pkg
    hit=$(grep -ho 'cannot find [^ ]*libclang_rt\.[a-z_]*' "$@" 2>/dev/null | head -n1)
    if [ -n "$hit" ]; then
        echo "clang's sanitizer runtime libclang_rt.${hit##*libclang_rt.} is missing; install $(clang_rt_package "$hit")"
        return
    fi
    name=$(grep -ho -m1 -E 'Dependency "[^"]+" not found|dependency "[^"]+" not found' "$@" 2>/dev/null |
           head -n1 | cut -d'"' -f2)
    if [ -n "$name" ]; then
        case $name in
        glib-2.0|gio-2.0|gmodule-2.0|gthread-2.0) pkg=libglib2.0-dev ;;
        cunit) pkg=libcunit1-dev ;;
        libxxhash) pkg=libxxhash-dev ;;
        libnvme) pkg=libnvme-dev ;;
        liburing) pkg=liburing-dev ;;
        json-c) pkg=libjson-c-dev ;;
        rocksdb) pkg=librocksdb-dev ;;
        fdt|libfdt) pkg=libfdt-dev ;;
        slirp) pkg=libslirp-dev ;;
        zlib) pkg=zlib1g-dev ;;
        *) pkg="the package that provides $name.pc" ;;
        esac
        echo "the library $name (pkg-config) is missing; install $pkg"
        return
    fi
    if grep -q 'ensurepip is not available' "$@" 2>/dev/null; then
        echo "python3 -m venv cannot install pip; install python3-venv"
        return
    fi
    # ours (die: a sentence with the fix) unless it points "above", then
    # meson's/configure's/apt's, the compiler's, ours, the last line
    hit=$(grep -h '^error: ' "$@" 2>/dev/null | grep -v -m1 'see above' | head -n1)
    [ -n "$hit" ] || hit=$(grep -h -m1 -E '(^|: )ERROR: |^E: ' "$@" 2>/dev/null | head -n1)
    [ -n "$hit" ] || hit=$(grep -h -m1 -E ': (fatal )?error: ' "$@" 2>/dev/null | head -n1)
    [ -n "$hit" ] || hit=$(grep -h -m1 '^error: ' "$@" 2>/dev/null | head -n1)
    [ -n "$hit" ] || hit=$(grep -hv '^[[:space:]]*$' "$@" 2>/dev/null | tail -n1)
    hit=${hit#error: }
    echo "${hit:-its log is empty}"
}

# guest_boot_panic CONSOLE - the kernel's panic line when the guest's
# console log CONSOLE (run-guest.sh --log) shows its kernel panicking
# before the guest's command started (no KVSSD-GUEST-START line ahead of
# it): a boot that never reached the device's users. Status 1, no output,
# otherwise: a panic after the start may be the device's doing.
guest_boot_panic() {
    [ -f "$1" ] || return 1
    awk '/^KVSSD-GUEST-START\r?$/ { exit }
         /Kernel panic - not syncing/ { sub(/\r$/, ""); sub(/^.*Kernel panic/, "Kernel panic"); print; hit = 1; exit }
         END { exit !hit }' "$1"
}

# guest_boot_stateless [run-guest.sh options...] - whether a boot with these
# options keeps nothing for a later boot or a peer (no image, no fabrics
# wire), so that booting it again is the same test.
guest_boot_stateless() {
    case " $* " in
    *" --image "* | *" --block-image "* | *" --fabrics-host "* | *" --fabrics-target "*) return 1 ;;
    esac
}
