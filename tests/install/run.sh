#!/usr/bin/env bash
# Installs a built gdap into a scratch prefix and checks every way in that the README gives, against
# the installed tree only, with no LD_LIBRARY_PATH and from outside the source tree:
#   cmake      a C-only CMake project: find_package(gdap) with gdap::gdap and gdap::gdap_static
#              (and gdap::mpi when built with MPI)
#   fortran    a Fortran-only CMake project (no C, no MPI asked): gdap::fortran
#   pkg-config the C example built with `pkg-config --cflags --libs gdap`, and with --static
#   f90 line   the Fortran example built with the line written in its own file
#   python     the installed package: the threads example and python -m gdap.conformance
#   tools      gdap conformance (the installed vectors) and gdap-demo
#   files      the license installed, named by the CMake package and gdap.pc; no NEEDED CUDA library
# Usage: run.sh BUILD_DIR SCRATCH_DIR PYTHON
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
build=$1
scratch=$2
python=$3
prefix=$scratch/prefix
unset LD_LIBRARY_PATH PYTHONPATH
rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -1)
libdir=${libdir%/}
cd "$scratch"
on() { grep -q "^$1:STRING=ON" "$build/CMakeCache.txt"; }

# The components the build had on must be in the installed package.
require=""
for c in MPI Fortran Python; do
  if on "GDAP_WITH_$(echo $c | tr a-z A-Z)"; then require="$require;$c"; fi
done
cmake -S "$here/consumer" -B "$scratch/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "-DGDAP_REQUIRE=${require#;}" \
  -DGDAP_EXAMPLE="$source_dir/docs/examples/hello_gdap.c" | grep "gdap components"
cmake --build "$scratch/cmake" >/dev/null
echo "cmake consumer: $("$scratch/cmake/consumer")"
echo "cmake static consumer: $("$scratch/cmake/consumer_static")"
if [ -x "$scratch/cmake/consumer_mpi" ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$scratch/cmake/consumer_mpi"
fi

export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -std=c99 -Wall -Werror "$source_dir/docs/examples/hello_gdap.c" $(pkg-config --cflags --libs gdap) -o "$scratch/pc"
echo "pkg-config consumer: $("$scratch/pc")"
# --static with libgdap.a named instead of -lgdap (which picks libgdap.so when both are there).
cc -std=c99 -Wall -Werror "$source_dir/docs/examples/hello_gdap.c" \
  $(pkg-config --static --cflags --libs gdap | sed "s|-lgdap|$libdir/libgdap.a|") -o "$scratch/pc_static"
readelf -d "$scratch/pc_static" | grep -q "libgdap.so" && { echo "pkg-config --static linked libgdap.so"; exit 1; }
echo "pkg-config static consumer: $("$scratch/pc_static")"

if [ -f "$prefix/include/gdap/fortran/gdap.mod" ]; then
  cmake -S "$here/fortran" -B "$scratch/fortran" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$scratch/fortran" >/dev/null
  echo "fortran-only cmake consumer: $("$scratch/fortran/consumer_fortran" | tail -1)"
  # The build line the example states, with its <prefix> filled in.
  line=$(sed -n 's/^! Build: //p' "$source_dir/docs/examples/hello_gdap.f90" | sed "s|<prefix>|$prefix|g")
  (cd "$source_dir/docs/examples" && eval "${line/hello_gdap.f90 /hello_gdap.f90 -o $scratch/hello_f90 }")
  echo "fortran example's build line: $("$scratch/hello_f90" | tail -1)"
else
  echo "fortran consumer: no Fortran module installed (built without Fortran)"
fi

if grep -q 'set(gdap_HAVE_Python ON)' "$libdir/cmake/gdap/gdapConfig.cmake"; then
  pydir=$(sed -n 's/^set(gdap_PYTHON_DIR "\${PACKAGE_PREFIX_DIR}\/\(.*\)")$/\1/p' "$libdir/cmake/gdap/gdapConfig.cmake")
  export PYTHONPATH=$prefix/$pydir
  where=$("$python" -c 'import gdap; print(gdap.__file__)')
  case "$where" in "$prefix"/*) ;; *) echo "python imported gdap from $where, not the installed tree"; exit 1 ;; esac
  test -f "$prefix/$pydir/gdap/py.typed" || { echo "the installed package has no py.typed"; exit 1; }
  "$python" "$source_dir/docs/examples/redistribute_threads.py" >/dev/null
  echo "python from the installed tree: $("$python" -m gdap.conformance --no-mpi | tail -1)"
  unset PYTHONPATH
fi

if [ -x "$prefix/bin/gdap" ]; then
  echo "gdap conformance: $("$prefix/bin/gdap" conformance | tail -1)"
  echo "gdap-demo: $("$prefix/bin/gdap-demo" | tail -1)"
fi

grep -q "BSD 3-Clause" "$prefix/share/doc/gdap/LICENSE"
grep -q '^License: BSD-3-Clause' "$libdir/pkgconfig/gdap.pc"
grep -q 'set(gdap_LICENSE "BSD-3-Clause")' "$libdir/cmake/gdap/gdapConfig.cmake"
echo "installed files: license named"
# A build with CUDA installs a libgdap and tools that load where CUDA is absent: no NEEDED CUDA library
# (the runtime is linked statically, cuBLAS and NCCL are loaded on first use).
for f in "$libdir"/libgdap.so "$prefix"/bin/gdap "$prefix"/bin/gdap-demo; do
  [ -e "$f" ] || continue
  if readelf -d "$f" | grep NEEDED | grep -E 'lib(cudart|cublas|cublasLt|nccl)\.so'; then
    echo "installed $f links a CUDA library"; exit 1
  fi
done
echo "install consumers: all built and ran"
