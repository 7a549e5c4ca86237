"""The Python side of tests/ipc/ipc_solver.c: a separate process that opens one rank's IPC handle,
checks the distribution it carries, and changes the section in place (x -> 2 x + 1) with NumPy
(host) or CuPy (cuda). It writes "ADDRESS PATH INODE" to the result file: its own address of the
section and, for host sections, the /dev/shm file and inode its mapping comes from (read from
/proc/self/maps), so that the solver can check they are its segment's.

    python ipc_worker.py host|cuda HANDLE_FILE RANK RESULT_FILE
"""

import os
import sys

import numpy as np

import gdap


def mapping_of(address):
    """(path, inode) of the mapping of this process that holds `address`."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                return (fields[5].strip() if len(fields) > 5 else ""), int(fields[4])
    raise AssertionError("no mapping holds %#x" % address)


def main():
    mode, handle_path, rank, result_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(handle_path, "rb") as f:
        handle = f.read()
    assert len(handle) == gdap.IPC_HANDLE_SIZE, len(handle)
    section = gdap.ipc_open(handle)
    rows, cols = section.shape
    assert (rows, cols) == (2, 6), section.shape
    dim0 = section.dim_data[0]
    assert dim0["dist_type"] == "b" and dim0["start"] == 2 * rank and dim0["stop"] == 2 * rank + 2, dim0
    assert section.global_to_local((2 * rank + 1, 5)) == (1, 5)
    expected = 100.0 * rank + np.arange(12.0).reshape(2, 6)
    if mode == "host":
        assert section.device == "cpu", section.device
        x = np.asarray(section)
        assert x.ctypes.data == section.data_ptr, "NumPy made a copy"
        np.testing.assert_array_equal(x, expected)
        x *= 2
        x += 1
        path, inode = mapping_of(section.data_ptr)
    else:
        import cupy as cp
        assert section.device.startswith("cuda:"), section.device
        x = cp.from_dlpack(section)
        assert x.data.ptr == section.data_ptr, "CuPy made a copy"
        cp.testing.assert_array_equal(x, cp.asarray(expected))
        x *= 2
        x += 1
        cp.cuda.runtime.deviceSynchronize()  # the solver reads after this process exits
        path, inode = "cuda", 0
    with open(result_path, "w") as out:
        out.write("%x %s %d\n" % (section.data_ptr, path.replace(" ", "_") or "anonymous", inode))
    del x
    section.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
