#!/usr/bin/env bash
# run.sh PYTHON MPIEXEC [FLAGS...]: cross.py (or $GDAP_DISTARRAY_SCRIPT) on 4 MPI ranks with DistArray's interpreter; passes
# only if every rank printed "rank R: ok". A missing DistArray environment is a failure.
set -uo pipefail
python=$1
shift
if ! "$python" -c 'import distarray.localapi, mpi4py' 2>/dev/null; then
  echo "FAILED: DistArray 0.6 is not importable by $python: run tools/deps.sh (it makes .deps/distarray-venv)"
  exit 1
fi
out=$("$@" -n 4 "$python" "$(dirname "$0")/${GDAP_DISTARRAY_SCRIPT:-cross.py}" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || exit $rc
for r in 0 1 2 3; do
  grep -q "rank $r: ok" <<<"$out" || { echo "FAILED: rank $r did not finish"; exit 1; }
done
