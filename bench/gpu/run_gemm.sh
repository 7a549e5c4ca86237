#!/usr/bin/env bash
# The distributed GEMM benchmark on a lent GPU machine: builds gdap (Release, CUDA, NCCL) and runs
# bench/gpu/gemm_gpu.cu on every GPU present, gdap beside single-GPU cuBLAS in the same run
# (float64 and float32, 16384^3 and 32768^3); the table goes to $OUT/gemm_gpu.md.
# Usage: bench/gpu/run_gemm.sh
set -uo pipefail
exec "$(dirname "$0")/run.sh" gemm
