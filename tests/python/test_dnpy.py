"""gdap.save_dnpy / load_dnpy on in-process groups: every rank's section (block, cyclic, unstructured,
padding) written to <prefix>_<rank>.dnpy and read back with its dim_data and dtype; the file is
DistArray's format (magic, 16-byte alignment, a .npy payload NumPy reads); any __distarray__
producer can be saved; a malformed or missing file on one rank fails every rank. DistArray itself,
both ways, is tests/distarray (ctest distarray.cross)."""
import os
import threading

import numpy as np
import pytest

import gdap


def run(n, body):
    """body(comm) on n threads, one rank each; returns each rank's result, re-raising a failure."""
    comms, out, errors = gdap.group(n), [None] * n, [None] * n
    for c in comms:
        c.set_timeout(30)

    def rank(r):
        try:
            out[r] = body(comms[r])
        except Exception as e:
            errors[r] = e

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out, errors


def layouts(r, n):
    return {
        "block": [dict(dist_type="b", size=10, proc_grid_size=n, proc_grid_rank=r, start=10 * r // n, stop=10 * (r + 1) // n)],
        "cyclic": [dict(dist_type="c", size=10, proc_grid_size=n, proc_grid_rank=r, start=2 * r, block_size=2)],
        "unstructured": [dict(dist_type="u", size=3 * n, proc_grid_size=n, proc_grid_rank=r,
                              indices=np.array([(r + k * n) for k in range(3)][::-1]))],
        "padded": [dict(dist_type="b", size=8, proc_grid_size=n, proc_grid_rank=r, start=max(0, 8 * r // n - 1),
                        stop=8 * (r + 1) // n, padding=(0 if r == 0 else 1, 0))],
    }


@pytest.mark.parametrize("layout", ["block", "cyclic", "unstructured", "padded"])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64, np.bool_])
def test_round_trip(tmp_path, layout, dtype):
    n = 3
    prefix = str(tmp_path / "a")

    def body(comm):
        g = gdap.empty(layouts(comm.rank, n)[layout], dtype)
        a = np.asarray(g)
        a[...] = (np.arange(a.size) + 10 * comm.rank).astype(dtype).reshape(a.shape)
        gdap.save_dnpy(comm, g, prefix)
        back = gdap.load_dnpy(comm, prefix)
        assert np.asarray(back).dtype == np.dtype(dtype)
        assert (np.asarray(back) == a).all()
        for mine, theirs in zip(g.dim_data, back.dim_data):
            assert set(mine) == set(theirs)
            for k in mine:
                assert np.array_equal(mine[k], theirs[k]), (k, mine[k], theirs[k])
        return open("%s_%d.dnpy" % (prefix, comm.rank), "rb").read()

    files, errors = run(n, body)
    assert errors == [None] * n, errors
    for r, b in enumerate(files):
        assert b[:8] == b"\x93DARRY\x01\x00"
        hlen = int.from_bytes(b[8:10], "little")
        assert (10 + hlen) % 16 == 0 and b[10 + hlen - 1:10 + hlen] == b"\n"
        assert b[10 + hlen:16 + hlen] == b"\x93NUMPY"
        import io
        payload = np.load(io.BytesIO(b[10 + hlen:]))  # the payload is a .npy file NumPy reads
        assert payload.dtype == np.dtype(dtype)


def test_saves_any_distarray_producer(tmp_path):
    buf = np.arange(6.0).reshape(2, 3)
    prefix = str(tmp_path / "p")

    def body(comm):
        gdap.save_dnpy(comm, {"__version__": "0.10.0", "buffer": buf, "dim_data": ({}, {})}, prefix)
        return np.asarray(gdap.load_dnpy(comm, prefix)).copy()

    out, errors = run(1, body)
    assert errors == [None] and (out[0] == buf).all()


def test_bad_file_on_one_rank_fails_every_rank(tmp_path):
    prefix = str(tmp_path / "b")
    n = 2

    def save(comm):
        gdap.save_dnpy(comm, gdap.empty(layouts(comm.rank, n)["block"], np.float64), prefix)

    assert run(n, save)[1] == [None, None]
    path = "%s_1.dnpy" % prefix
    data = bytearray(open(path, "rb").read())
    data[1:6] = b"XXXXX"
    open(path, "wb").write(bytes(data))
    _, errors = run(n, lambda comm: gdap.load_dnpy(comm, prefix))
    assert isinstance(errors[1], gdap.FileIOError) and "bad magic at byte 0" in str(errors[1]), errors[1]
    assert path in str(errors[1])
    assert isinstance(errors[0], gdap.RemoteError), errors[0]
    _, errors = run(1, lambda comm: gdap.load_dnpy(comm, str(tmp_path / "none")))
    assert isinstance(errors[0], gdap.FileIOError) and "none_0.dnpy" in str(errors[0])


def test_plain_array_is_refused_with_a_hint(tmp_path):
    def body(comm):
        whole = [dict(dist_type="b", size=3, proc_grid_size=1, proc_grid_rank=0, start=0, stop=3)]
        section = np.zeros(3) if comm.rank == 1 else gdap.empty(whole, np.float64)
        gdap.save_dnpy(comm, section, str(tmp_path / "x"))

    _, errors = run(2, body)
    assert isinstance(errors[1], TypeError) and "from_dlpack" in str(errors[1]), errors[1]
    assert isinstance(errors[0], gdap.RemoteError), errors[0]  # not left waiting for rank 1


def test_nul_in_a_prefix_raises_and_writes_nothing(tmp_path):
    """Issue 27, item 4: "out/x\\0y" named out/x_0.dnpy in C (the string ended at the NUL)."""
    def body(comm):
        block = layouts(comm.rank, 2)["block"]
        prefix = str(tmp_path / "x") + ("\0y" if comm.rank == 1 else "")
        gdap.save_dnpy(comm, gdap.empty(block, np.float64), prefix)

    _, errors = run(2, body)
    assert isinstance(errors[1], ValueError) and "NUL character at position" in str(errors[1]), errors[1]
    assert isinstance(errors[0], gdap.RemoteError), errors[0]  # not left waiting for rank 1
    assert not (tmp_path / "x_1.dnpy").exists()  # what the truncated prefix named
    _, errors = run(1, lambda comm: gdap.load_dnpy(comm, str(tmp_path / "x\0y")))
    assert isinstance(errors[0], ValueError) and "prefix" in str(errors[0]), errors[0]


def test_a_fifo_is_refused_without_blocking(tmp_path):
    """Issue 27, item 10: a FIFO as a rank's file blocked that rank forever."""
    os.mkfifo(tmp_path / "f_0.dnpy")
    _, errors = run(1, lambda comm: gdap.load_dnpy(comm, str(tmp_path / "f")))
    assert isinstance(errors[0], gdap.FileIOError) and "is a FIFO" in str(errors[0]), errors[0]
