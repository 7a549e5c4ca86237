#!/usr/bin/env bash
# Installs what building and testing gdap needs on Debian or Ubuntu, and nothing when it is there.
# As root it runs apt-get; otherwise it prints the exact apt-get line and stops. Python tools go
# into a virtual environment in .deps/venv (PEP 668 systems refuse pip outside one):
#   apache-tvm-ffi (its DLPack >= 1.0 header; Debian's libdlpack-dev is 0.6), tree-sitter and
#   tree-sitter-julia (the Julia binding's checks).
# The CUDA toolkit is used from /usr/local/cuda when present; it is not installed here.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ gcc gfortran make pkg-config binutils libgtest-dev libgmock-dev
          nlohmann-json3-dev libcli11-dev libfmt-dev abigail-tools doxygen clang libclang-rt-dev python3 python3-venv python3-pip)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "deps: missing packages; run:"
    echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
fi

python_packages=(apache-tvm-ffi tree-sitter tree-sitter-julia)
if [ ! -x .deps/venv/bin/python3 ]; then
  python3 -m venv .deps/venv
fi
if ! .deps/venv/bin/python3 -c 'import tvm_ffi, tree_sitter, tree_sitter_julia' 2>/dev/null; then
  echo "deps: installing ${python_packages[*]} into .deps/venv"
  .deps/venv/bin/python3 -m pip install -q --disable-pip-version-check "${python_packages[@]}"
fi
echo "deps: ready"
