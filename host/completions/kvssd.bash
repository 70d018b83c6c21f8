# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for kvssd and kvbench, installed by meson into
# bash-completion's completionsdir as `kvssd` and `kvbench`.
#
# The commands, options and option values come from the tool being
# completed, `TOOL --list-completions` (host/cli/kvssd.c,
# host/kvbench/kvbench.c: their command, option, preset and name tables),
# so this file names none of them. Its lines: "options OPT...", "argument
# OPT..." (options taking a value), "command NAME [OPT...]", "first NAME
# DEVICE|COMMAND" (a command's first argument), "values OPT WORD..." and
# "list OPT WORD..." (a comma-separated list of WORDs).
#
# Device arguments: /dev/ng*n* and /dev/nvme*n* that exist, pci: (then the
# NVMe controllers in /sys) and sim: (then files). Needs no bash-completion
# helpers: the current word is taken from COMP_LINE, ':' and '=' included.

# Words of the current word's candidates matching it: COMPREPLY, relative
# to what bash calls the word (the part after the last ':' or '=' in
# COMP_WORDBREAKS).
_kvssd_reply()
{
    local cur=$1 w
    shift
    local strip=${cur%"${cur##*[:=]}"}
    [[ $strip == *:* && $COMP_WORDBREAKS != *:* ]] && strip=
    [[ $strip == *=* && $COMP_WORDBREAKS != *=* ]] && strip=
    for w in "$@"; do
        [[ $w == "$cur"* ]] && COMPREPLY+=("${w#"$strip"}")
    done
}

_kvssd_devices()
{
    local cur=$1 d c
    local -a devs=()
    case $cur in
    sim:*)
        # sim:IMAGE[,prop=value...]: files (the part after a comma is free)
        [[ $cur == *,* ]] && return
        compopt -o filenames 2>/dev/null
        local keep= # bash's word: what follows the ':', unless ':' breaks no word
        [[ $COMP_WORDBREAKS != *:* ]] && keep=sim:
        while IFS= read -r d; do
            COMPREPLY+=("$keep$d")
        done < <(compgen -f -- "${cur#sim:}")
        return
        ;;
    pci:*)
        for d in /sys/bus/pci/devices/*; do
            [[ -r $d/class ]] && read -r c < "$d/class" && [[ $c == 0x010802 ]] &&
                devs+=("pci:${d##*/}")
        done
        for d in /sys/class/nvme/nvme*; do
            [[ -e $d ]] && devs+=("pci:${d##*/}")
        done
        ;;
    *)
        for d in /dev/ng*n* /dev/nvme*n*; do
            [[ -e $d && ${d##*/} != *n*p* ]] && devs+=("$d")
        done
        devs+=(pci: sim:)
        ;;
    esac
    _kvssd_reply "$cur" "${devs[@]}"
    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]]; then
        compopt -o nospace 2>/dev/null
    fi
}

_kvssd_complete()
{
    COMPREPLY=()
    local line=${COMP_LINE:0:COMP_POINT}
    local -a words
    read -ra words <<< "$line"
    [[ $line == *[[:space:]] || ${#words[@]} -eq 0 ]] && words+=("")
    local tool=${words[0]} cur=${words[${#words[@]} - 1]} kind first rest w
    local -A options=() argument=() values=() list=() commands=() firsts=()
    while read -r kind first rest; do
        case $kind in
        options) for w in $first $rest; do options[$w]=1; done ;;
        argument) for w in $first $rest; do argument[$w]=1; done ;;
        command) commands[$first]=" $rest " ;;
        first) firsts[$first]=$rest ;;
        values) values[$first]=$rest ;;
        list) list[$first]=$rest ;;
        esac
    done < <("${tool/#\~/$HOME}" --list-completions 2>/dev/null)
    [[ ${#commands[@]} -eq 0 ]] && return

    # The command and the positional arguments before the current word.
    local i cmd= npos=0 prev=
    for ((i = 1; i < ${#words[@]} - 1; i++)); do
        w=${words[i]}
        if [[ -n $prev ]]; then
            prev=
        elif [[ $w == -* ]]; then
            [[ $w != *=* && -n ${argument[$w]-} ]] && prev=$w
        elif [[ -z $cmd ]]; then
            cmd=$w
        else
            npos=$((npos + 1))
        fi
    done

    local opt= val=$cur
    if [[ -n $prev ]]; then
        opt=$prev
    elif [[ $cur == -*=* && -n ${argument[${cur%%=*}]-} ]]; then
        opt=${cur%%=*} val=${cur#*=}
    fi
    if [[ -n $opt ]]; then
        local strip=${cur%"$val"} done=
        local -a cand=()
        if [[ -n ${values[$opt]-} ]]; then
            for w in ${values[$opt]-}; do cand+=("$strip$w"); done
            _kvssd_reply "$cur" "${cand[@]}"
        elif [[ -n ${list[$opt]-} ]]; then
            done=${val%"${val##*,}"} # the list's words before the last comma
            for w in ${list[$opt]-}; do cand+=("$strip$done$w"); done
            _kvssd_reply "$cur" "${cand[@]}"
            compopt -o nospace 2>/dev/null
        elif [[ $opt == --device || $opt == -d ]]; then
            _kvssd_devices "$val"
        else
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$val")
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        local opts=
        [[ -n $cmd ]] && opts=${commands[$cmd]-}
        [[ -z ${opts// /} ]] && opts=${!options[*]}
        _kvssd_reply "$cur" $opts
    elif [[ -z $cmd ]]; then
        _kvssd_reply "$cur" "${!commands[@]}"
    elif [[ $npos -ne 0 ]]; then
        return
    elif [[ ${firsts[$cmd]-} == DEVICE ]]; then
        _kvssd_devices "$cur"
    elif [[ ${firsts[$cmd]-} == COMMAND ]]; then
        _kvssd_reply "$cur" "${!commands[@]}"
    fi
}

complete -F _kvssd_complete kvssd kvbench
