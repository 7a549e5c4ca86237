#!/usr/bin/env bash
# Run here (a machine with gfortran and the CUDA toolkit): builds the Fortran driver for GPU
# machines, which have no Fortran compiler. gdap is built with CUDA, NCCL, MPI and Fortran (or
# GDAP_CUDA_BUILD names such a build), installed into a scratch prefix, and heat_f built against
# it with its CUDA kernels; heat_f goes to build-heat-fortran-bundle/bin, without a run path, so
# that on the GPU machine it loads that machine's own libgdap (the ABI is the same), and the
# Fortran runtime libraries it needs go to build-heat-fortran-bundle/fallback, for a machine that
# lacks them (run_fortran.sh uses only those it cannot find). Carry build-heat-fortran-bundle.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
work=$root/build-heat-fortran
bundle=$root/build-heat-fortran-bundle
gdap_build=${GDAP_CUDA_BUILD:-$work/gdap}
mkdir -p "$work"
launch=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
command -v ccache >/dev/null || launch=()
if [ -z "${GDAP_CUDA_BUILD:-}" ]; then
  cmake -S . -B "$gdap_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGDAP_WITH_CUDA=ON -DGDAP_WITH_NCCL=ON \
    -DGDAP_WITH_MPI=ON -DGDAP_WITH_FORTRAN=ON -DGDAP_WITH_PYTHON=OFF -DGDAP_BUILD_TESTS=OFF -DGDAP_CHECK_ABI=OFF "${launch[@]}" >/dev/null
  cmake --build "$gdap_build" -j"$(nproc)"
fi
rm -rf "$work/prefix" && cmake --install "$gdap_build" --prefix "$work/prefix" >/dev/null
cmake -S examples/heat -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DHEAT_WITH_FORTRAN=ON -DCMAKE_SKIP_RPATH=ON "${launch[@]}" | grep -E 'Fortran|CUDA' || true
cmake --build "$work/example" -j"$(nproc)" --target heat_f
readelf -d "$work/example/heat_f" | grep -q 'libcudart' ||
  { echo "bundle_fortran.sh: heat_f has no CUDA kernels: $gdap_build must be a build with CUDA"; exit 1; }
rm -rf "$bundle" && mkdir -p "$bundle/bin" "$bundle/fallback"
cp "$work/example/heat_f" "$bundle/bin/"
# The libraries a GPU machine may lack: the Fortran runtime, OpenMP's, Open MPI's Fortran layers.
for lib in libgfortran.so.5 libquadmath.so.0 libgomp.so.1 libmpi_mpifh.so.40 libmpi_usempif08.so.40 \
           libmpi_usempi_ignore_tkr.so.40; do
  path=$(LD_LIBRARY_PATH=$work/prefix/lib ldd "$bundle/bin/heat_f" | awk -v l=$lib '$1 == l { print $3 }')
  if [ -n "$path" ]; then cp -L "$path" "$bundle/fallback/"; fi
done
ls -la "$bundle/bin" "$bundle/fallback"
du -sh "$bundle"
echo "bundle_fortran.sh: carry build-heat-fortran-bundle; on the GPU machine bench/gpu/heat.sh checks runs it"
