#!/usr/bin/env bash
# Compiles against a BUILD tree, not installed, the two ways README's "Where everything lands" gives:
#   pkg-config  PKG_CONFIG_PATH=<build>: the C example, run without LD_LIBRARY_PATH
#   cmake       -Dgdap_DIR=<build>: the C-only consumer project against gdap::gdap (and gdap::mpi,
#               gdap::fortran's presence and the Python directory, when the build has them)
# Usage: build_tree.sh BUILD_DIR SCRATCH_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
build=$(cd "$1" && pwd)
scratch=$2
unset LD_LIBRARY_PATH PYTHONPATH
rm -rf "$scratch" && mkdir -p "$scratch"
cd "$scratch"
on() { grep -q "^$1:STRING=ON" "$build/CMakeCache.txt"; }

cc -std=c99 -Wall -Werror "$source_dir/docs/examples/hello_gdap.c" \
  $(PKG_CONFIG_PATH=$build pkg-config --cflags --libs gdap) -o "$scratch/pc"
echo "build-tree pkg-config consumer: $("$scratch/pc")"

require=""
for c in MPI Fortran Python; do
  if on "GDAP_WITH_$(echo $c | tr a-z A-Z)"; then require="$require;$c"; fi
done
components=$(cmake -S "$here/consumer" -B "$scratch/cmake" -G Ninja -Dgdap_DIR="$build" "-DGDAP_REQUIRE=${require#;}" \
  -DGDAP_CONSUMER_STATIC=OFF -DGDAP_EXAMPLE="$source_dir/docs/examples/hello_gdap.c" | grep "gdap components")
echo "$components"
# The package's gdap_PYTHON_DIR must be the build tree's package (PYTHONPATH=build/bindings/python).
if on GDAP_WITH_PYTHON; then
  pydir=$(echo "$components" | sed -n 's/.*(\(.*\))$/\1/p')
  test -f "$pydir/gdap/__init__.py" || { echo "gdap_PYTHON_DIR ($pydir) holds no gdap package"; exit 1; }
fi
cmake --build "$scratch/cmake" >/dev/null
echo "build-tree cmake consumer: $("$scratch/cmake/consumer")"
if [ -x "$scratch/cmake/consumer_mpi" ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$scratch/cmake/consumer_mpi"
fi
echo "build-tree consumers: all built and ran"
