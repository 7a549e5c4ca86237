"""docs/python.md, run: its ```python blocks in order in one namespace (on the host: four ranks in
host memory; on a GPU machine the tutorial itself picks one rank per GPU), its ```python gpu blocks
after them on a GPU machine only (marked gpu), and its ```python spmd block as a script under
mpiexec -n 4. A block that fails names its line in the tutorial."""
import pathlib
import re

import pytest

from conftest import mpi_run

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks(kind):
    """(line, code) of every block whose fence says `kind` ('' for plain python blocks)."""
    text = DOC.read_text()
    return [(text[:m.start()].count("\n") + 1, m.group(2)) for m in FENCE.finditer(text)
            if m.group(1).strip() == kind]


def run(selected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "tutorial"}
    for line, code in selected:
        try:
            exec(compile(code, "%s:%d" % (DOC, line), "exec"), namespace)
        except Exception as e:
            raise AssertionError("docs/python.md, the block at line %d failed: %r" % (line, e)) from e
    return namespace


def test_the_tutorial_has_its_blocks():
    assert len(blocks("")) >= 7 and len(blocks("gpu")) >= 1 and len(blocks("spmd")) == 1


def test_tutorial_blocks_run(tmp_path, monkeypatch):
    ns = run(blocks(""), tmp_path, monkeypatch)
    assert ns["a"].nranks == 4 and ns["b"].layout is ns["cols"]


@pytest.mark.gpu
def test_tutorial_gpu_blocks_run(tmp_path, monkeypatch):
    cupy = pytest.importorskip("cupy")
    pytest.importorskip("cupyx.distributed.array")
    if cupy.cuda.runtime.getDeviceCount() < 4:
        pytest.skip("the tutorial's GPU part needs 4 GPUs")
    ns = run(blocks("") + blocks("gpu"), tmp_path, monkeypatch)
    assert ns["devices"] == ["cuda:%d" % d for d in range(4)]


def test_tutorial_spmd_script_runs_on_four_mpi_processes(tmp_path):
    (line, code), = blocks("spmd")
    script = tmp_path / "spmd.py"
    script.write_text(code)
    output = mpi_run(script, 4)
    for r in range(4):
        assert "rank %d holds" % r in output, "docs/python.md, the SPMD block at line %d:\n%s" % (line, output)
