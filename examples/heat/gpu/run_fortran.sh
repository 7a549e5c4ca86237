#!/usr/bin/env bash
# Run on a GPU machine: the Fortran driver of the heat example, built elsewhere (bundle_fortran.sh),
# against this machine's libgdap (a CUDA build: the same ABI), on device memory: ranks as OpenMP
# threads of an in-process group and as MPI processes over NCCL, a restart of a Fortran checkpoint
# by the C driver (bit for bit), and the C and Fortran drivers giving one field.
# Usage: run_fortran.sh BUNDLE_DIR GDAP_LIBDIR HEAT_C_BINARY
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=$(cd "$1" && pwd) libdir=$(cd "$2" && pwd) heat=$3
f=$bundle/bin/heat_f
# Only the bundled libraries this machine cannot resolve itself.
missing=$bundle/missing
rm -rf "$missing" && mkdir -p "$missing"
export LD_LIBRARY_PATH=$libdir:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for lib in $(ldd "$f" | awk '/not found/ { print $1 }'); do
  if [ -f "$bundle/fallback/$lib" ]; then ln -s "$bundle/fallback/$lib" "$missing/$lib"; echo "run_fortran.sh: using the bundled $lib"; fi
done
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$missing
ldd "$f" | grep -E 'gdap|gfortran|cudart|nccl|mpi' | sed 's/^/  /'
if ldd "$f" | grep -q 'not found'; then ldd "$f" | grep 'not found'; exit 1; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
mpi=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x OMP_WAIT_POLICY)
t=$here/../tests
rc=0
run_case() { echo "== $1"; shift; "$@" || rc=1; }
run_case "fortran, OpenMP threads, in-process group on GPUs, 2-d" \
  "$t/check.sh" "$f" --device cuda --ranks @GPUS@ --dims 96x80 --periodic 0 --steps 200
run_case "fortran, OpenMP threads, in-process group on GPUs, 3-d float32" \
  "$t/check.sh" "$f" --device cuda --ranks 4 --dims 24x20x18 --periodic 2 --dtype float32 --steps 40
run_case "fortran, MPI processes over NCCL, one GPU each, 2-d" \
  "$t/check.sh" "${mpi[@]}" -np @GPUS@ "$f" --comm mpi --device cuda --dims 96x80 --periodic 0,1 --steps 200
run_case "fortran, MPI over NCCL, 3-d, checkpoint; restarted by the C driver on another grid" \
  "$t/restart.sh" "$bundle/restart" -- "$heat" --device cuda --ranks 2 --dims 40x36x32 --periodic 1 --steps 100 -- \
  "${mpi[@]}" -np @GPUS@ "$f" --comm mpi --device cuda --dims 40x36x32 --periodic 1 --steps 60 --checkpoint-every 60 \
  --checkpoint-dir @DIR@ -- "$heat" --device cuda --ranks 3 --restart @STORE@ --steps 100
run_case "the C and Fortran drivers on GPUs: one field, bit for bit" \
  "$t/same.sh" -- "$heat" --device cuda --comm nccl --ranks @GPUS@ --dims 64x48 --steps 150 -- \
  "$f" --device cuda --ranks @GPUS@ --dims 64x48 --steps 150
echo "run_fortran.sh: $([ $rc = 0 ] && echo 'every Fortran case passed' || echo 'a Fortran case FAILED')"
exit $rc
