"""python -m gdap.conformance: gdap's own producer and consumer pass every vector; a producer
written without gdap passes what it supports; broken producers and consumers fail (so the runner
can fail); rule selection, JSON output, usage errors; the MPI case on 2 processes."""
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

conformance = pytest.importorskip("gdap.conformance")
import conformance_targets as targets  # noqa: E402  (tests/python is on sys.path under pytest)

ROOT = pathlib.Path(__file__).resolve().parents[2]
VECTORS = ROOT / "conformance" / "vectors"
HERE = pathlib.Path(__file__).resolve().parent


def run(**kwargs):
    out = io.StringIO()
    code = conformance.run(VECTORS, mpi=False, out=out, **kwargs)
    return code, out.getvalue()


def summary(text):
    return text.strip().splitlines()[-1]


def test_gdap_producer_and_consumer_pass_every_vector():
    code, text = run()
    assert code == 0, text
    assert summary(text).endswith("0 failed, 0 skipped: PASSED"), text
    assert "dim.c.partial-block" in text and "global.b.tiling" in text


def test_a_producer_written_without_gdap_passes_what_it_supports():
    code, text = run(producer=targets.numpy_producer, consumer=False)
    assert code == 0, text
    assert " 0 failed," in summary(text) and "skipped: PASSED" in summary(text), text


def test_gdap_readings_are_skipped_for_other_consumers_unless_strict():
    # A consumer that ignores unknown keys follows the text (silent there), not gdap's reading.
    code, text = run(producer=False, consumer=targets.key_lenient_consumer)
    assert code == 0, text
    assert "process/common/unknown-key" not in text, text
    code, strict_text = run(producer=False, consumer=targets.key_lenient_consumer, strict=True)
    assert code == 1, strict_text
    assert "FAIL process/common/unknown-key (consumer)" in strict_text, strict_text


@pytest.mark.parametrize("producer, expected", [
    (targets.off_by_one_producer, "buffer"),
    (targets.drops_padding_producer, "dim_data"),
])
def test_a_broken_producer_fails(producer, expected):
    code, text = run(producer=producer, consumer=False)
    assert code == 1, text
    assert summary(text).endswith("FAILED") and expected in text, text


@pytest.mark.parametrize("consumer, expected", [
    (targets.lenient_consumer, "the consumer accepted an invalid distbuffer"),
    (targets.reversed_consumer, "the consumer read"),
])
def test_a_broken_consumer_fails(consumer, expected):
    code, text = run(producer=False, consumer=consumer)
    assert code == 1, text
    assert expected in text, text


def test_a_crashing_target_fails_its_vectors_and_the_run_goes_on():
    def crash(distbuffer):
        raise RuntimeError("boom")
    code, text = run(producer=False, consumer=crash)
    assert code == 1 and "RuntimeError: boom" in text, text
    assert " passed" in summary(text)  # the invalid vectors, which a crash refuses, still pass


def test_rule_selection_and_json():
    out = io.StringIO()
    code = conformance.run(VECTORS, rule="dim.u.*", mpi=False, as_json=True, out=out)
    doc = json.loads(out.getvalue())
    assert code == 0 and not doc["failed"]
    assert doc["outcomes"] and all(any(r.startswith("dim.u.") for r in o["rules"]) for o in doc["outcomes"])


def test_vectors_are_what_the_generator_writes():
    run_ = subprocess.run([sys.executable, str(ROOT / "conformance" / "generate.py"), "--check"],
                          capture_output=True, text=True)
    assert run_.returncode == 0, run_.stdout + run_.stderr


def _env():
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    env["PYTHONPATH"] = os.pathsep.join([str(HERE)] + [p for p in sys.path if p])
    return env


def test_command_line_with_a_module_target_fails_a_broken_producer():
    cmd = [sys.executable, "-m", "gdap.conformance", str(VECTORS), "--no-mpi",
           "--producer", "conformance_targets:off_by_one_producer"]
    run_ = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=120)
    assert run_.returncode == 1, run_.stdout + run_.stderr
    assert "FAIL example/" in run_.stdout


def test_command_line_usage_errors():
    for args in (["--consumer", "no_such_module_xyz:f"], ["--consumer", "nocolon"], ["/no/such/dir"]):
        run_ = subprocess.run([sys.executable, "-m", "gdap.conformance", "--no-mpi"] + args, env=_env(),
                              capture_output=True, text=True, timeout=120)
        assert run_.returncode == 2, (args, run_.stdout + run_.stderr)


LAUNCHER = shutil.which("mpiexec") or shutil.which("mpirun")
REQUIRED = bool(os.environ.get("GDAP_TEST_REQUIRE_MPI"))


@pytest.mark.parametrize("producer, code", [(None, 0), ("conformance_targets:off_by_one_producer", 1)])
def test_under_mpirun_each_rank_checks_its_part(producer, code):
    if LAUNCHER is None:
        assert not REQUIRED, "GDAP_TEST_REQUIRE_MPI is set but there is no mpiexec or mpirun on PATH"
        pytest.skip("no mpiexec or mpirun on PATH")
    if not REQUIRED:
        pytest.importorskip("mpi4py")
    cmd = [LAUNCHER, "-n", "2", sys.executable, "-m", "gdap.conformance", str(VECTORS)]
    if producer:
        cmd += ["--producer", producer]
    run_ = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=300)
    output = run_.stdout + run_.stderr
    assert run_.returncode == code, output
    assert output.count("gdap.conformance on 2 ranks") == 1, output  # rank 0 alone reports
    if code == 0:
        assert "0 failed, 0 skipped: PASSED" in output, output
        # More checks than on one process: the 2-rank examples also went through GlobalMap.collective.
        single = int(summary(run()[1]).split()[1])
        assert int(output.split("conformance: ")[1].split()[0]) > single, output
    else:
        assert "FAILED" in output, output
