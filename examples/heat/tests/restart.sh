#!/usr/bin/env bash
# Restart check: a run interrupted by a checkpoint and restarted from it (on another process grid,
# engine or driver) must end with the same field, bit for bit, as the run that went straight
# through (the same fingerprint: heat_share summed over every unknown), and every part must pass
# its own checks. In the commands @DIR@ becomes the checkpoint directory and @STORE@ the last
# checkpoint written there (@GPUS@: see lib.sh).
# Usage: restart.sh WORKDIR -- STRAIGHT... -- FIRST... -- SECOND...
set -uo pipefail
source "$(dirname "$0")/lib.sh"
work=$1
shift 2
straight=() first=() second=() target=straight
for x in "$@"; do
  if [ "$x" = "--" ]; then
    if [ $target = straight ]; then target=first; else target=second; fi
  else
    eval "$target+=(\"\$x\")"
  fi
done
rm -rf "$work" && mkdir -p "$work"
run() {  # runs "$@" with the placeholders filled; prints its output; fails unless it passed
  local cmd=() x out rc
  for x in "$@"; do x=${x//@DIR@/$work}; cmd+=("${x//@STORE@/${store:-}}"); done
  expand "${cmd[@]}" || return 1
  echo "run: ${expanded[*]}" >&2
  out=$("${expanded[@]}" 2>&1)
  rc=$?
  echo "$out" | sed 's/^/  | /' >&2
  [ $rc -eq 0 ] && passed "$out" || { echo "restart.sh: the run failed its checks" >&2; return 1; }
  echo "$out"
}
a=$(run "${straight[@]}") || exit 1
run "${first[@]}" >/dev/null || exit 1
store=$(ls -d "$work"/step*.zarr 2>/dev/null | tail -1)
[ -n "$store" ] || { echo "restart.sh: the first part wrote no checkpoint in $work"; exit 1; }
b=$(run "${second[@]}") || exit 1
grep -q "^heat: restarted from $store" <<<"$b" || { echo "restart.sh: the second part did not restart from $store"; exit 1; }
fa=$(fingerprint "$a")
fb=$(fingerprint "$b")
echo "fingerprints: straight through $fa, restarted $fb"
[ -n "$fa" ] && [ "$fa" = "$fb" ] || { echo "restart.sh: the restarted run differs from the straight one"; exit 1; }
echo "restart.sh: the restarted run ends bit for bit where the straight one does"
