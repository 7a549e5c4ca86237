#!/usr/bin/env bash
# Runs one solver case and passes when it exits 0 and printed "heat: checks passed" (the ranks
# agree on the verdict; rank 0 prints it). Usage: check.sh COMMAND [ARGS...] (@GPUS@: see lib.sh)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
expand "$@" || exit 1
out=$("${expanded[@]}" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ]; then echo "check.sh: exit status $rc"; exit 1; fi
passed "$out" || { echo "check.sh: no 'heat: checks passed' line"; exit 1; }
