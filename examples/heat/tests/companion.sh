#!/usr/bin/env bash
# The Python companion on a solver's sections: the solver runs with --share and --hold (and writes
# a checkpoint at its last step), heat_view.py attaches to every rank's section through gdap's IPC
# handles, draws the PNG and releases the solver; then it draws the checkpoint too. Passes when
# the solver passed its checks, the companion attached without a copy, and both PNGs were written.
# Usage: companion.sh PYTHON HEAT_VIEW WORKDIR SOLVER... (@GPUS@: see lib.sh)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
python=$1 view=$2 work=$3
shift 3
rm -rf "$work" && mkdir -p "$work"
expand "$@" --share "$work/share" --hold 120 --checkpoint-dir "$work/ck" || exit 1
echo "run: ${expanded[*]}"
"${expanded[@]}" >"$work/solver.log" 2>&1 &
solver=$!
"$python" "$view" attach "$work/share" --wait 120 --release --out "$work/attach.png"
viewed=$?
wait $solver
rc=$?
sed 's/^/  | /' "$work/solver.log"
[ $viewed -eq 0 ] || { echo "companion.sh: heat_view.py attach failed"; exit 1; }
[ $rc -eq 0 ] && passed "$(cat "$work/solver.log")" || { echo "companion.sh: the solver failed"; exit 1; }
grep -q "released by the companion" "$work/solver.log" || { echo "companion.sh: the companion never released the solver"; exit 1; }
store=$(ls -d "$work"/ck/step*.zarr 2>/dev/null | tail -1)
[ -n "$store" ] || { echo "companion.sh: the solver wrote no checkpoint"; exit 1; }
"$python" "$view" checkpoint "$store" --out "$work/checkpoint.png" || { echo "companion.sh: heat_view.py checkpoint failed"; exit 1; }
for png in attach checkpoint; do
  head -c 8 "$work/$png.png" | od -An -c | grep -q 'P   N   G' || { echo "companion.sh: $png.png is no PNG"; exit 1; }
done
echo "companion.sh: attached and drew $work/attach.png and $work/checkpoint.png"
