# One step of the README's scripts, sourced by them (deps.sh, main.sh, test.sh) so that a step
# that fails says which one it was, even when its output is hidden.
#   step NAME CMD...         runs CMD with its output in a log file: nothing is printed when it
#                            succeeds (the log is removed); when it fails, the log's last
#                            $STEP_TAIL lines (default 30), then 'SCRIPT: FAILED: NAME (exit N)'
#                            and where the full log is.
#   step --show NAME CMD...  runs CMD with its output on the terminal (a build's progress), and
#                            prints the same FAILED line when it fails.
# Both return CMD's exit status, so under set -e a failed step ends the script.
step() {
  local show=0 name log rc=0
  if [ "$1" = "--show" ]; then show=1; shift; fi
  name="$1"; shift
  if [ $show -eq 1 ]; then
    "$@" || rc=$?
    [ $rc -eq 0 ] || echo "${0##*/}: FAILED: $name (exit $rc; its output is above): $*" >&2
    return $rc
  fi
  log=$(mktemp "${TMPDIR:-/tmp}/blockdnn-step.XXXXXX")
  "$@" >"$log" 2>&1 || rc=$?
  if [ $rc -eq 0 ]; then rm -f "$log"; return 0; fi
  echo "---- the last lines of: $*" >&2
  tail -n "${STEP_TAIL:-30}" "$log" >&2
  echo "${0##*/}: FAILED: $name (exit $rc); full output in $log" >&2
  return $rc
}
