#!/usr/bin/env bash
# The Python package of a build with CUDA on a machine where the CUDA libraries cannot be loaded.
# In a private mount namespace (unshare), every libcuda, libcudart, libcublas, libcublasLt and libnccl
# that the dynamic loader could find (ldconfig's cache, the toolkit's directory, LD_LIBRARY_PATH) is
# covered by /dev/null, so that loading it fails ("file too short"); that each named library is now
# unloadable is checked first. Then gdap imports, refuses NCCL (when built with it, GDAP_HAVE_NCCL=1)
# with UnsupportedError naming libnccl, a CUDA allocation says that no driver was found, and the host
# tests of the Python suite pass against the build tree. unshare and mount need root (CAP_SYS_ADMIN), as CI has: where they are refused the test fails.
# Usage: without_cuda.sh PYTHON PACKAGE_DIR TESTS_DIR TOOLKIT_LIB_DIR SONAME...
set -euo pipefail
if [ "${GDAP_CUDA_HIDDEN:-}" != 1 ]; then
  unshare --mount --propagation private env GDAP_CUDA_HIDDEN=1 "$0" "$@" && exit 0
  rc=$?
  echo "python.without_cuda: FAILED (exit $rc): it needs a private mount namespace (unshare --mount, as root)" >&2
  exit "$rc"
fi
python=$1 package=$2 tests=$3 toolkit=$4
shift 4
candidates=$( { ldconfig -p | sed -n 's/.* => //p'
                ld_path=${LD_LIBRARY_PATH:-}
                for d in "$toolkit" ${ld_path//:/ }; do ls "$d"/lib* 2>/dev/null || true; done; } |
              grep -E '/lib(cuda|cudart|cublas|cublasLt|nccl)\.so' | xargs -r -n1 readlink -f | sort -u)
for f in $candidates; do mount --bind /dev/null "$f"; done
echo "hidden: $(echo $candidates | wc -w) files"
"$python" - "$@" <<'PY'
import ctypes, sys
for name in sys.argv[1:]:
    try:
        ctypes.CDLL(name)
    except OSError as e:
        print("unloadable: %s (%s)" % (name, e))
    else:
        sys.exit("%s still loads: the CUDA libraries are not hidden" % name)
PY
export PYTHONPATH=$package PYTHONDONTWRITEBYTECODE=1
if [ "${GDAP_HAVE_NCCL:-0}" = 1 ]; then
"$python" - <<'PY'
import gdap
try:
    gdap.Comm.from_nccl(1)
except gdap.UnsupportedError as e:
    text = str(e)
    assert "libnccl.so" in text and "could not be loaded" in text and "gdap_comm_from_nccl needs it" in text, text
    print("NCCL refused: %s" % text)
else:
    raise SystemExit("gdap_comm_from_nccl did not refuse a missing NCCL")
PY
fi
# No driver: a device allocation says so, not the runtime's "driver version is insufficient".
"$python" - <<'PY'
import gdap
try:
    gdap.empty((10,), "float64", device="cuda")
except gdap.DeviceError as e:
    text = str(e)
    assert "no NVIDIA driver was found" in text and "insufficient" not in text, text
    print("no driver: %s" % text)
else:
    raise SystemExit("a CUDA allocation succeeded with the driver hidden")
PY
"$python" -m pytest -p no:cacheprovider -q -m "not gpu" "$tests"
