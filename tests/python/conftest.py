"""Shared pieces of the Python binding tests: the gpu marker, dimension-dict builders, and a runner
of scripts under mpiexec."""
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

# Python turns SIGINT into KeyboardInterrupt only where SIGINT was not ignored when it started, and
# a job started in the background by a non-interactive shell (nohup ... &, some CI runners) starts
# with it ignored: the interrupt tests would then never see their Ctrl-C. Installing Python's own
# handler here also gives the children these tests start the default disposition (exec resets
# handled signals), so they take Ctrl-C too.
signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device and CuPy / PyTorch / JAX (ctest label gpu)")


def block(size, start, stop, grid=1, rank=0, **optional):
    """A 'b' dimension dict."""
    return dict(dist_type="b", size=size, proc_grid_size=grid, proc_grid_rank=rank, start=start, stop=stop, **optional)


def cyclic(size, grid, rank, block_size=None):
    """A 'c' dimension dict (start = rank * block_size); block_size None leaves the key out."""
    d = dict(dist_type="c", size=size, proc_grid_size=grid, proc_grid_rank=rank, start=rank * (block_size or 1))
    if block_size is not None:
        d["block_size"] = block_size
    return d


def unstructured(size, indices, grid=1, rank=0, **optional):
    """A 'u' dimension dict."""
    return dict(dist_type="u", size=size, proc_grid_size=grid, proc_grid_rank=rank, indices=indices, **optional)


@pytest.fixture
def dims():
    """The builders, for tests that prefer a fixture to an import."""
    return {"block": block, "cyclic": cyclic, "unstructured": unstructured}


def rank_errors(n, body):
    """body(r) on n threads, one rank each; returns each rank's gdap.Error (None where it raised none)."""
    import threading
    import gdap
    errors = [None] * n

    def rank(r):
        try:
            body(r)
        except gdap.Error as e:
            errors[r] = e

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def mpi_run(script, nranks, timeout=300):
    """Runs `script` on `nranks` MPI processes and returns its output; skips where mpi4py or a
    launcher is missing unless the build has MPI (GDAP_TEST_REQUIRE_MPI: then it fails), and
    fails when the job does (the output in the message)."""
    required = bool(os.environ.get("GDAP_TEST_REQUIRE_MPI"))
    launcher = shutil.which("mpiexec") or shutil.which("mpirun")
    if launcher is None:
        assert not required, "GDAP_TEST_REQUIRE_MPI is set but there is no mpiexec or mpirun on PATH"
        pytest.skip("no mpiexec or mpirun on PATH")
    if not required:
        pytest.importorskip("mpi4py")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")  # Open MPI as root on a small machine; others ignore them
    run = subprocess.run([launcher, "-n", str(nranks), sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=timeout)
    output = run.stdout + run.stderr
    if "built without MPI" in output and not required:
        pytest.skip("libgdap was built without MPI")
    assert run.returncode == 0, output
    return output


def every_rank_ok(script, nranks, timeout):
    """Runs the rank script `script` (a file name beside this one) on `nranks` MPI processes as
    mpi_run does and asserts that each rank printed "rank R: ok"; the message names the ranks that
    did not and holds the whole output."""
    output = mpi_run(pathlib.Path(__file__).with_name(script), nranks, timeout=timeout)
    silent = [r for r in range(nranks) if "rank %d: ok" % r not in output]
    assert not silent, "%s on %d processes: no 'ok' from rank(s) %s\n%s" % (script, nranks, silent, output)
