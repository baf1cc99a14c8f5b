#!/usr/bin/env bash
# A rank that exits with an error while its peer waits in a collective makes
# the mpirun job fail within seconds, not after the collective's timeout.
# Usage: mpi_early_exit.sh MPIRUN_COMMAND... -- WORKER
set -u
mpirun=()
while [ "$1" != "--" ]; do mpirun+=("$1"); shift; done
shift
worker="$1"
start=$(date +%s)
timeout 120 "${mpirun[@]}" -np 2 "$worker"
status=$?
elapsed=$(( $(date +%s) - start ))
if [ "$status" -eq 0 ]; then echo "the job succeeded although rank 1 failed"; exit 1; fi
if [ "$status" -eq 124 ]; then echo "the job hung (killed after 120 s)"; exit 1; fi
if [ "$elapsed" -gt 60 ]; then echo "the job took ${elapsed} s to fail"; exit 1; fi
echo "the job failed with status $status after ${elapsed} s, as it should"
