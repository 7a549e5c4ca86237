#!/usr/bin/env bash
# Two runs of one problem (another driver, engine or process grid) must pass their checks and end
# with the same field, bit for bit: the same fingerprint. Usage: same.sh -- A... -- B...
set -uo pipefail
source "$(dirname "$0")/lib.sh"
a=() b=() target=none
for x in "$@"; do
  if [ "$x" = "--" ]; then
    if [ $target = none ]; then target=a; else target=b; fi
  elif [ $target = a ]; then a+=("$x")
  else b+=("$x")
  fi
done
outputs=()
for run in a b; do
  eval "cmd=(\"\${$run[@]}\")"
  expand "${cmd[@]}" || exit 1
  echo "run: ${expanded[*]}"
  out=$("${expanded[@]}" 2>&1)
  rc=$?
  echo "$out" | sed 's/^/  | /'
  [ $rc -eq 0 ] && passed "$out" || { echo "same.sh: the run failed its checks"; exit 1; }
  outputs+=("$(fingerprint "$out")")
done
echo "fingerprints: ${outputs[0]} and ${outputs[1]}"
[ -n "${outputs[0]}" ] && [ "${outputs[0]}" = "${outputs[1]}" ] || { echo "same.sh: the fields differ"; exit 1; }
echo "same.sh: both runs end with the same field, bit for bit"
