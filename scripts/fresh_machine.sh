#!/usr/bin/env bash
# Proves the README's promise on a bare Debian 12: makes a minimal root (debootstrap
# --variant=minbase with ca-certificates, as a real install has, bookworm, from the Debian
# mirror apt uses here; MIRROR=URL chooses another),
# copies the checkout into /root/blockdnn there, mounts /proc, /sys and /dev in it, and runs the
# README's commands in it with chroot, as root without sudo:
#   scripts/fresh_machine.sh [--head] [main] [test]      (no command: main)
#     main   bash scripts/main.sh
#     test   bash scripts/test.sh
# in the order given, in the same root (so 'main test' also checks that one runs after the
# other). The copy is the working tree's files that git tracks or would track (untracked files
# that are not ignored included, uncommitted edits included); --head copies HEAD's commit
# instead (git archive). Prints, per command, its wall time, exit status and last lines
# (TAIL=N of them, default 15); the whole output stays in LOG_DIR (default a new
# /tmp/fresh_machine.XXXXXX). Needs root.
#
# Clean-up, on every way out (an error, Ctrl-C, SIGTERM): the mounts are made in a private
# mount namespace (unshare), so the host never sees them, even if this is killed with SIGKILL
# (where unshare fails, a warning says the mounts are the host's, and only the clean-up below
# removes them); the processes left in the root are ended, the mounts unmounted, then findmnt
# must show none under the root before it is removed (rm --one-file-system, which never
# crosses a mount).
# ROOT_PARENT (default /var/tmp) is where the root is made; KEEP=1 keeps it.
set -uo pipefail

# Ends the processes whose root directory is $1 (those this script started in the chroot),
# TERM first, then KILL for those still there after 10 s.
end_root_processes() {
  local root="$1" sig p pids
  for sig in TERM KILL; do
    pids=()
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && pids+=("${p#/proc/}")
    done
    [ ${#pids[@]} -eq 0 ] && return 0
    kill -s "$sig" "${pids[@]}" 2>/dev/null
    for _ in $(seq 20); do
      sleep 0.5
      local alive=0
      for p in "${pids[@]}"; do [ -d "/proc/$p" ] && alive=1; done
      [ $alive -eq 0 ] && return 0
    done
  done
}

# Prints the mount points at or under $1.
mounts_under() { findmnt -rn -o TARGET | awk -v r="$1" '$0 == r || index($0, r "/") == 1'; }

if [ "${1:-}" = "--inner" ]; then
  # ---- Inside the mount namespace: build the root, mount, run the commands. ----
  root="$2" src="$3" logs="$4"; shift 4
  # Runs CMD in its own process group (so that clean-up can end all of it) with its output in
  # LOG, and waits for it (a wait that a signal interrupts, unlike a foreground command's).
  cmd_pid=""
  run_logged() {
    local log="$1" r=0; shift
    setsid "$@" > "$log" 2>&1 &
    cmd_pid=$!
    wait "$cmd_pid" || r=$?
    cmd_pid=""
    return $r
  }
  inner_cleanup() {
    trap - EXIT INT TERM HUP
    [ -z "$cmd_pid" ] || kill -TERM -- "-$cmd_pid" 2>/dev/null
    end_root_processes "$root"
    local m
    for m in $(mounts_under "$root" | sort -r); do umount "$m" 2>/dev/null || umount -l "$m"; done
    m=$(mounts_under "$root")
    [ -z "$m" ] || { echo "fresh_machine: still mounted: $m" >&2; exit 1; }
  }
  trap inner_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP

  mirror="${MIRROR:-}"
  if [ -z "$mirror" ]; then
    # One-line sources: 'deb [opts] URL bookworm ...'; deb822 .sources: the URIs of a
    # paragraph whose Types has deb and whose Suites has bookworm.
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '
      $1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == "bookworm") { print $i; exit } }')
  fi
  if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
      BEGIN { RS = "" }
      /(^|\n)Types:[^\n]*[ \t]deb([ \t\n]|$)/ && /(^|\n)Suites:[^\n]*[ \t]bookworm([ \t\n]|$)/ {
        n = split($0, l, "\n")
        for (k = 1; k <= n; k++) if (l[k] ~ /^URIs:/) { split(l[k], f, /[ \t]+/); print f[2]; exit } }')
  fi
  [ -n "$mirror" ] ||
    { echo "fresh_machine: no bookworm mirror in /etc/apt/sources.list{,.d/}; set MIRROR=URL" >&2; exit 1; }

  echo "== debootstrap --variant=minbase --include=ca-certificates bookworm $root $mirror"
  t0=$(date +%s)
  # ca-certificates, as a real Debian 12 install has, so an https mirror works in the root.
  if ! run_logged "$logs/debootstrap.log" debootstrap --variant=minbase --include=ca-certificates bookworm \
      "$root" "$mirror"; then
    tail -n 20 "$logs/debootstrap.log"
    echo "fresh_machine: FAILED: debootstrap (full output in $logs/debootstrap.log)" >&2
    exit 1
  fi
  echo "   $(( $(date +%s) - t0 )) s"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"

  mkdir -p "$root/root/blockdnn"
  tar -xf "$src" -C "$root/root/blockdnn" || { echo "fresh_machine: FAILED: copying the checkout in" >&2; exit 1; }

  mount -t proc proc "$root/proc" && mount --bind /sys "$root/sys" && mount --bind /dev "$root/dev" &&
    mount -t tmpfs shm "$root/dev/shm" ||
    { echo "fresh_machine: FAILED: mounting /proc, /sys, /dev in the root" >&2; exit 1; }

  rc=0
  for name in "$@"; do
    echo "== $name: bash scripts/$name.sh in the chroot (output: $logs/$name.log)"
    t0=$(date +%s)
    # env -i: the chroot sees none of this shell's environment (PATH, a pyenv, ...).
    r=0
    run_logged "$logs/$name.log" chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      bash -c "cd /root/blockdnn && bash scripts/$name.sh" || r=$?
    echo "== $name: rc=$r, $(( $(date +%s) - t0 )) s; its last lines:"
    tail -n "${TAIL:-15}" "$logs/$name.log" | sed 's/^/   | /'
    [ $r -eq 0 ] || rc=1
  done
  exit $rc
fi

# ---- Outside: the root directory, the copy of the checkout, the namespace. ----
[ "$(id -u)" -eq 0 ] || { echo "fresh_machine: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
# Relative LOG_DIR and ROOT_PARENT are the caller's, so resolved before the cd below.
[ -z "${LOG_DIR:-}" ] || LOG_DIR=$(realpath -m "$LOG_DIR")
[ -z "${ROOT_PARENT:-}" ] || ROOT_PARENT=$(realpath -m "$ROOT_PARENT")
cd "$(dirname "$0")/.."
head=0; cmds=()
for a in "$@"; do
  case "$a" in
    --head) head=1 ;;
    main|test) cmds+=("$a") ;;
    *) echo "usage: scripts/fresh_machine.sh [--head] [main] [test]" >&2; exit 2 ;;
  esac
done
[ ${#cmds[@]} -gt 0 ] || cmds=(main)
if ! command -v debootstrap >/dev/null; then
  echo "fresh_machine: installing debootstrap"
  source scripts/step.sh
  step "apt-get update" apt-get update && step "apt-get install debootstrap" \
    env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap || exit 1
fi

# Absolute paths, checked: an empty or relative root would put the chroot's tree elsewhere
# (/root, say) and defeat the /proc/*/root and findmnt comparisons of the clean-up.
logs="${LOG_DIR:-$(mktemp -d /tmp/fresh_machine.XXXXXX)}" && mkdir -p "$logs" && logs=$(realpath "$logs") ||
  { echo "fresh_machine: cannot make the log directory ${LOG_DIR:-under /tmp}" >&2; exit 1; }
parent=$(realpath -m "${ROOT_PARENT:-/var/tmp}")
work=$(mktemp -d "$parent/fresh_machine.XXXXXX") && [ -d "$work" ] ||
  { echo "fresh_machine: cannot make a directory under $parent (ROOT_PARENT)" >&2; exit 1; }
root="$work/root"
inner_pid=""
outer_cleanup() {
  trap - EXIT INT TERM HUP
  if [ -n "$inner_pid" ]; then kill -TERM "$inner_pid" 2>/dev/null; wait "$inner_pid" 2>/dev/null; fi
  end_root_processes "$root"
  local left; left=$(mounts_under "$work")
  if [ -n "$left" ]; then
    echo "fresh_machine: still mounted, so $work is kept: $left" >&2
  elif [ "${KEEP:-0}" = 1 ]; then
    echo "fresh_machine: kept $root"
  else
    rm -rf --one-file-system "$work"
  fi
}
trap outer_cleanup EXIT
trap 'echo "fresh_machine: interrupted, cleaning up" >&2; exit 130' INT
trap 'echo "fresh_machine: terminated, cleaning up" >&2; exit 143' TERM HUP

if [ $head -eq 1 ]; then
  echo "== copying HEAD ($(git rev-parse --short HEAD)) in"
  git archive --format=tar HEAD > "$work/src.tar" || exit 1
else
  edits=""; [ -z "$(git status --porcelain)" ] || edits=" + edits"
  echo "== copying the working tree's tracked and unignored files in ($(git rev-parse --short HEAD)$edits)"
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi; done |
    tar -cf "$work/src.tar" --null -T - || exit 1
fi

ns=(unshare --mount --propagation private)
if ! "${ns[@]}" true 2>/dev/null; then
  echo "fresh_machine: warning: no private mount namespace (unshare failed); the mounts are made" \
    "on the host and unmounted on exit, but not if this is killed with SIGKILL" >&2
  ns=()
fi
start=$(date +%s)
"${ns[@]}" bash "$self" --inner "$root" "$work/src.tar" "$logs" "${cmds[@]}" &
inner_pid=$!
wait "$inner_pid"; rc=$?
inner_pid=""
echo "== fresh_machine ${cmds[*]}: rc=$rc, $(( $(date +%s) - start )) s in all (logs in $logs)"
exit $rc
