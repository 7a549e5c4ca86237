#!/usr/bin/env bash
# Installs what building and testing gdap needs on Debian or Ubuntu, and does nothing when it is
# all there (so repeated runs take a second). As root it runs apt-get; as another user it prints
# the exact apt-get line and exits 1.
# Usage: tools/deps.sh [--demo]. With --demo only what tools/demo.sh builds: a C++ compiler, CMake,
# Ninja, the header-only libraries and the DLPack header (the apache-tvm-ffi wheel); nothing else.
# Python packages go into a virtual environment, .deps/venv (PEP 668 systems refuse pip outside
# one): apache-tvm-ffi for its DLPack >= 1.0 header (Debian's libdlpack-dev is 0.6, older than
# DLManagedTensorVersioned; see docs/dependencies.md), numpy and pytest for the Python binding, jax
# (CPU; about two minutes and 400 MB) for the JAX bridge's host tests on four CPU devices,
# tree-sitter and tree-sitter-julia for the Julia binding's checks (no Julia runtime needed), tree-sitter-c
# for tools/abigen, which generates the bindings' C layers from the headers, mypy for the Python package's
# type annotations, matplotlib
# for the heat example's companion (examples/heat/python/heat_view.py draws PNG plots), mpi4py
# for the Python MPI tests, built from source against the system's Open MPI (a binary wheel may
# carry another MPI, which libgdap, linked with Open MPI, cannot share communicators with).
# The CUDA toolkit is used from /usr/local/cuda when present; it is never installed here.
set -euo pipefail
cd "$(dirname "$0")/.."
demo=false
case "${1:-}" in
  --demo) demo=true ;;
  "") ;;
  *) echo "usage: tools/deps.sh [--demo]" >&2; exit 2 ;;
esac

demo_packages=(cmake ninja-build g++ nlohmann-json3-dev libcli11-dev libfmt-dev python3 python3-venv)
packages=(cmake ninja-build g++ gcc gfortran make pkg-config binutils libgtest-dev libgmock-dev libopenmpi-dev openmpi-bin
          nlohmann-json3-dev libcli11-dev libfmt-dev abigail-tools doxygen swig clang libclang-rt-dev libzstd-dev libblosc-dev zlib1g-dev
          libopenblas-dev
          python3 python3-dev python3-venv python3-pip)
if $demo; then packages=("${demo_packages[@]}"); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # One line per package downloaded and set up, so that a long install shows its progress. dpkg's
    # fsync after every file is a third of a fresh install's time (measured: 99 s -> 67 s for the
    # demo's packages); --force-unsafe-io skips it, as Debian's container images do: only a power
    # cut during the install could leave a file of these packages empty.
    apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "${missing[@]}" | { grep --line-buffered -E '^(Get:|Setting up )' || true; }
  else
    echo "deps: these Debian packages are missing: ${missing[*]}"
    echo "deps: install them as root, then run this again:"
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
fi

python_packages=(apache-tvm-ffi jax matplotlib numpy pytest swig tensorstore tree-sitter tree-sitter-c tree-sitter-julia zarr mypy)
python_modules=tvm_ffi,jax,matplotlib,numpy,pytest,swig,tensorstore,tree_sitter,tree_sitter_c,tree_sitter_julia,zarr,mypy
if $demo; then python_packages=(apache-tvm-ffi); python_modules=tvm_ffi; fi
if ! .deps/venv/bin/python3 -c 'import sys' 2>/dev/null; then
  rm -rf .deps/venv
  python3 -m venv .deps/venv
fi
if ! .deps/venv/bin/python3 -c "import $python_modules" 2>/dev/null; then
  echo "deps: installing ${python_packages[*]} into .deps/venv"
  .deps/venv/bin/python3 -m pip install -q --disable-pip-version-check "${python_packages[@]}"
fi
if $demo; then
  echo "deps: ready for the demo"
  exit 0
fi
# mpi4py is built from source once, into a wheel in .deps/wheels that both virtual environments
# install (same Python); the build is most of this script's time on a fresh machine.
mpi4py_wheel() {
  if ! ls .deps/wheels/mpi4py-*.whl >/dev/null 2>&1; then
    # to stderr: the caller reads the wheel's path from this function's stdout
    echo "deps: building mpi4py against the system MPI (a few minutes)" >&2
    .deps/venv/bin/python3 -m pip wheel -q --disable-pip-version-check --no-deps --no-binary mpi4py mpi4py -w .deps/wheels >&2
  fi
  ls .deps/wheels/mpi4py-*.whl | tail -1
}
if ! .deps/venv/bin/python3 -c 'import mpi4py' 2>/dev/null; then
  .deps/venv/bin/python3 -m pip install -q --disable-pip-version-check "$(mpi4py_wheel)"
fi

# DistArray 0.6 (the protocol's reference implementation, 2014), for the cross tests in tests/distarray:
# its own virtual environment, .deps/distarray-venv, as it needs NumPy < 1.24 (it uses the aliases
# np.bool / np.int / np.float that 1.24 removed). It is pure Python; installed without its dependency
# ipyparallel (only its client-side globalapi needs it; the tests use localapi), with mpi4py built
# against the system's Open MPI, and with tools/distarray_compat.py loaded at start-up so that it
# imports on Python >= 3.10 (collections.Mapping) and reads .dnpy headers with NumPy >= 1.10 (bytes
# given to safe_eval). tests/distarray fails, never skips,
# when this environment is missing.
dvenv=.deps/distarray-venv
if ! $dvenv/bin/python3 -c 'import distarray, mpi4py, numpy' 2>/dev/null; then
  echo "deps: installing distarray==0.6 with numpy<1.24 and mpi4py into $dvenv"
  rm -rf $dvenv
  python3 -m venv $dvenv
  $dvenv/bin/python3 -m pip install -q --disable-pip-version-check "numpy<1.24"
  $dvenv/bin/python3 -m pip install -q --disable-pip-version-check "$(mpi4py_wheel)"
  $dvenv/bin/python3 -m pip install -q --disable-pip-version-check --no-deps distarray==0.6
fi
# The compatibility shim, refreshed every time (cheap) so that a change to it reaches the venv.
site=$($dvenv/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp tools/distarray_compat.py "$site/"
echo "import distarray_compat" > "$site/distarray_compat.pth"
$dvenv/bin/python3 -c 'import distarray.localapi, mpi4py, numpy'

if [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "deps: CUDA toolkit: $(/usr/local/cuda/bin/nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') at /usr/local/cuda"
else
  echo "deps: no CUDA toolkit at /usr/local/cuda: building the host-only library"
fi
echo "deps: ready"
