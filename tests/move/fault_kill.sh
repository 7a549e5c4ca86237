#!/usr/bin/env bash
# A rank killed (SIGKILL) during a redistribution over MPI must not leave the job hanging: mpirun
# ends the other rank. Passes when the job ends by itself, with a failure status, well within the
# bound given here (a hang would be stopped by `timeout`, status 124; mpirun itself reports the
# killed rank's 137).
# Usage: fault_kill.sh SECONDS MPIEXEC [MPIEXEC FLAGS...] FAULT_MPI_EXECUTABLE
set -uo pipefail
bound=$1
shift
start=$(date +%s)
timeout "$bound" "$@" kill >/dev/null 2>&1
rc=$?
took=$(($(date +%s) - start))
if [ "$rc" -eq 124 ]; then
  echo "fault kill: FAILED: the job still ran after ${bound} s (rc $rc)"
  exit 1
fi
if [ "$rc" -eq 0 ]; then
  echo "fault kill: FAILED: the job reported success although rank 1 was killed"
  exit 1
fi
echo "fault kill: the job ended by itself in ${took} s with status $rc"
