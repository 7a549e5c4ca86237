#!/usr/bin/env bash
# Run here (Debian, with network) before a GPU call: unpacks the header-only dependencies and
# GoogleTest from Debian packages into .deps/root and copies the DLPack header into .deps/tvm_ffi,
# so that the call can carry `.deps` to a GPU machine that has no package registry.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .deps/debs .deps/root
(cd .deps/debs && apt-get download libfmt-dev libfmt9 nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev googletest libzstd-dev libzstd1 \
  libblosc-dev libblosc1 liblz4-1 libsnappy1v5)
for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
if [ ! -f .deps/tvm_ffi/include/dlpack/dlpack.h ]; then
  inc=$(${PYTHON:-.deps/venv/bin/python3} -c 'import tvm_ffi,os;print(os.path.join(os.path.dirname(tvm_ffi.__file__),"include"))')
  mkdir -p .deps/tvm_ffi && cp -r "$inc" .deps/tvm_ffi/
fi
# Wheels for the GPU machines' Python 3.12 (numpy is theirs): swig for the binding, zarr for its tests,
# matplotlib for the heat example's companion (examples/heat/python/heat_view.py).
mkdir -p .whl
${PYTHON:-.deps/venv/bin/python3} -m pip download -q --only-binary=:all: --python-version 3.12 \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 -d .whl swig zarr matplotlib
rm -f .whl/numpy-*.whl
echo "ready: carry .deps/root .deps/tvm_ffi .whl"
