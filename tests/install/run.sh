#!/usr/bin/env bash
# Installs a built gdap into a scratch prefix and builds three consumers against the installed tree
# only: a CMake project (find_package), a C program through pkg-config, and a Fortran program.
# Usage: run.sh BUILD_DIR SCRATCH_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
scratch=$2
prefix=$scratch/prefix
rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -1)
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The components the build had on must be in the installed package.
require=""
for c in MPI Fortran Python; do
  if grep -q "^GDAP_WITH_$(echo $c | tr a-z A-Z):STRING=ON" "$build/CMakeCache.txt"; then require="$require;$c"; fi
done
cmake -S "$here/consumer" -B "$scratch/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "-DGDAP_REQUIRE=${require#;}" \
  -DGDAP_EXAMPLE="$here/../../docs/examples/hello_gdap.c" | grep "gdap components"
cmake --build "$scratch/cmake" >/dev/null
echo "cmake consumer: $("$scratch/cmake/consumer")"
if [ -x "$scratch/cmake/consumer_mpi" ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$scratch/cmake/consumer_mpi"
fi

export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -std=c99 -Wall -Werror "$here/../../docs/examples/hello_gdap.c" $(pkg-config --cflags --libs gdap) -o "$scratch/pc"
echo "pkg-config consumer: $("$scratch/pc")"

if [ -f "$prefix/include/gdap/fortran/gdap.mod" ]; then
  gfortran -std=f2018 "$here/consumer.f90" -I"$prefix/include/gdap/fortran" -L"$libdir" -lgdap_fortran -lgdap \
    -o "$scratch/fortran"
  "$scratch/fortran"
else
  echo "fortran consumer: no Fortran module installed (built without Fortran)"
fi
echo "install consumers: all built and ran"
