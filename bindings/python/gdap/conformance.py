"""The protocol conformance runner for Python producers and consumers: python -m gdap.conformance.

Checks any object with __distarray__ (a producer) and any function that reads a distbuffer (a
consumer) against the protocol vectors (format: conformance/README.md), by default those installed
with the package (gdap/vectors, a copy of the source tree's conformance/vectors):

  producer   FACTORY(global_array, dim_data) -> an object with __distarray__, for each rank of each
             worked example. Its dicts must validate (per process, and all ranks' together) and
             mean what the vector's dicts mean, and its buffer must hold the expected elements.
             global_array is a NumPy array. Raise NotImplementedError for a vector the producer
             does not support: it is counted as skipped.
  consumer   CONSUMER(distbuffer) -> the elements it read (anything np.asarray takes, the buffer's
             shape). It must read each example's buffer right, accept every valid per-process
             distbuffer and raise on every invalid one.

Without --producer or --consumer, gdap's own producer (LocalArray) and consumer (from_distarray)
are checked, and the global sets go through gdap.GlobalMap. Vectors marked "reading": "gdap"
(gdap's reading where the protocol text is silent) are skipped for other targets unless
--strict is given. Under mpirun each MPI rank checks the
example ranks r with r % size == its rank (and a share of the other vectors); results are reduced
to rank 0, which prints one pass/fail table per rule; examples with as many ranks as MPI has are
also checked collectively over MPI (gdap.GlobalMap.collective on the producer's dicts). Exit code 0 if everything passed, 1 if any
vector failed, 2 for bad usage or unreadable vectors.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import json
import os
import pathlib
import sys
from typing import IO, Any, Callable, Optional, Sequence, Union

import numpy as np

# A vector, an outcome: JSON objects (conformance/README.md). A part: (vector index, mode, message
# or None or "skip", produced {rank: (dim_data, shape)}). A target: a producer or consumer callable.
Vector = dict[str, Any]
Outcome = dict[str, Any]
Part = list[tuple[int, str, Optional[str], dict[int, Any]]]
Target = Callable[..., Any]

PROTOCOL_VERSION = "0.10.0"
_MPI_ENV = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


# ---- vectors -----------------------------------------------------------------------------------

VECTORS = pathlib.Path(__file__).resolve().parent / "vectors"  # installed with the package

def load_vectors(path: Union[str, os.PathLike[str]], rule: Optional[str] = None) -> list[Vector]:
    """Every vector in a directory of vector files (or one file), in file order, those with a rule
    matching `rule` (a shell pattern, or a prefix without wildcards) when given."""
    where = pathlib.Path(path)
    files = [where] if where.is_file() else sorted(where.glob("*.json"))
    if not files:
        raise FileNotFoundError("%s holds no .json vector files" % where)
    vectors: list[Vector] = []
    for f in files:
        vectors.extend(json.loads(f.read_text())["vectors"])
    if rule:
        pattern = rule if any(ch in rule for ch in "*?[") else rule + "*"
        vectors = [v for v in vectors if any(fnmatch.fnmatchcase(r, pattern) for r in v["rules"])]
    return vectors


def value_at(values: dict[str, Any], shape: Sequence[int], index: Sequence[int]) -> Any:
    """The global array's value at a global index (a linear formula or an explicit C-order list)."""
    if "linear" in values:
        f = values["linear"]
        return f["offset"] + sum(k * g for k, g in zip(f["coefficients"], index))
    flat = 0
    for extent, g in zip(shape, index):
        flat = flat * extent + g
    return values["explicit"][flat]


def global_array(vector: Vector) -> np.ndarray:
    """The example's global array, as NumPy."""
    shape = tuple(vector["global_shape"])
    out = np.empty(shape, dtype=vector["dtype"])
    for index in np.ndindex(*shape):
        out[index] = value_at(vector["values"], shape, index)
    return out


def expected_buffer(vector: Vector, rank: int) -> np.ndarray:
    r = vector["ranks"][rank]
    return np.array(r["buffer"], dtype=vector["dtype"]).reshape(r["local_shape"])


def _dim_data(dims: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """A fresh copy of a vector's dim_data as a tuple of dicts (so a target cannot change the vector)."""
    return tuple(json.loads(json.dumps(d)) for d in dims)


# ---- gdap's own targets ------------------------------------------------------------------------

def gdap_producer(global_array_: np.ndarray, dim_data: Sequence[dict[str, Any]]) -> Any:
    """gdap as a producer: a LocalArray gdap allocates, filled through its own index map."""
    import gdap
    local = gdap.empty(dim_data, global_array_.dtype)
    view = np.asarray(local)
    for index in np.ndindex(*view.shape):
        view[index] = global_array_[tuple(local.local_to_global(index))]
    return local


def gdap_consumer(distbuffer: Any) -> np.ndarray:
    """gdap as a consumer: from_distarray (which validates), then the elements through NumPy."""
    import gdap
    with gdap.from_distarray(distbuffer) as local:
        return np.array(local, copy=True)


# ---- checks ------------------------------------------------------------------------------------

class Failure(Exception):
    """A vector's check failed; the message says how."""


class Skipped(Exception):
    """The target declined the vector (NotImplementedError)."""


_DEFAULTS: dict[str, dict[str, Any]] = {"b": {"padding": [0, 0], "periodic": False}, "c": {"block_size": 1}, "u": {"one_to_one": False}}


def normalized(d: dict[str, Any], extent: Optional[int] = None) -> dict[str, Any]:
    """A dict with plain Python values and every optional key at its value, {} resolved: two dicts
    meaning the same dimension compare equal."""
    if len(d) == 0:
        d = {"dist_type": "b", "size": extent, "proc_grid_size": 1, "proc_grid_rank": 0, "start": 0, "stop": extent}
    out: dict[str, Any] = dict(_DEFAULTS.get(str(d.get("dist_type")), {}))
    for key, value in d.items():
        if key == "indices":
            value = [int(g) for g in np.asarray(value).ravel()]
        elif key == "padding":
            value = [int(p) for p in value]
        elif isinstance(value, (bool, np.bool_)):
            value = bool(value)
        elif isinstance(value, (int, np.integer)):
            value = int(value)
        out[key] = value
    return out


def _host_view(buffer: Any) -> np.ndarray:
    """The distbuffer's buffer as NumPy, host memory only (a device buffer is read through gdap)."""
    if hasattr(buffer, "__cuda_array_interface__") and not hasattr(buffer, "__array_interface__"):
        import gdap
        with gdap.from_dlpack(buffer) as local:
            raise Failure("device buffers are not read by the runner (local section on %s)" % local.device)
    return np.asarray(buffer)


def check_produced(vector: Vector, rank: int, obj: Any) -> tuple[Any, list[int]]:
    """One producer rank: keys, version, per-process validity, meaning of the dicts, elements.
    Returns the produced dim_data (normalized) for the collective check."""
    import gdap
    if not hasattr(obj, "__distarray__"):
        raise Failure("rank %d: the producer returned %s, which has no __distarray__" % (rank, type(obj).__name__))
    d = obj.__distarray__()
    if set(d) != {"__version__", "buffer", "dim_data"}:
        raise Failure("rank %d: distbuffer keys %s, expected __version__, buffer, dim_data" % (rank, sorted(d)))
    gdap.protocol_version_check(d["__version__"])
    buffer = _host_view(d["buffer"])
    dims = list(d["dim_data"])
    try:
        gdap.validate(dims, buffer.shape)
    except gdap.Error as e:
        raise Failure("rank %d: the producer's dim_data is invalid: %s" % (rank, e)) from None
    got = [normalized(x, e) for x, e in zip(dims, buffer.shape)]
    want = [normalized(x) for x in vector["ranks"][rank]["dim_data"]]
    if got != want:
        raise Failure("rank %d: dim_data %s, expected %s" % (rank, got, want))
    expected = expected_buffer(vector, rank)
    if buffer.shape != expected.shape or not np.array_equal(buffer, expected):
        raise Failure("rank %d: buffer %s, expected %s" % (rank, buffer.tolist(), expected.tolist()))
    return got, list(buffer.shape)


def check_collective(vector: Vector, produced: Sequence[Any]) -> None:
    """Every rank's produced dim_data together: one valid distribution (gdap.GlobalMap)."""
    import gdap
    ranks = [p[0] for p in produced]
    try:
        gdap.GlobalMap(ranks, [p[1] for p in produced]).close()
    except gdap.Error as e:
        raise Failure("the producer's ranks do not form one distribution: %s" % e) from None


def check_consumed(vector: Vector, rank: int, consumer: Target) -> None:
    r = vector["ranks"][rank]
    expected = expected_buffer(vector, rank)
    distbuffer = {"__version__": PROTOCOL_VERSION, "buffer": expected.copy(), "dim_data": _dim_data(r["dim_data"])}
    got = np.asarray(consumer(distbuffer))
    if got.shape != expected.shape or not np.array_equal(got, expected):
        raise Failure("rank %d: the consumer read %s, expected %s" % (rank, got.tolist(), expected.tolist()))


def check_process_consumer(vector: Vector, consumer: Target) -> None:
    """A per-process distbuffer: a valid one is read, an invalid one refused (any exception)."""
    buffer = vector["distbuffer"]
    distbuffer = {"__version__": buffer["__version__"], "buffer": np.zeros(buffer["shape"]),
                  "dim_data": _dim_data(buffer["dim_data"])}
    valid = vector["expect"]["valid"]
    try:
        consumer(distbuffer)
    except Exception as e:  # noqa: BLE001 -- any refusal counts; the message is reported
        if valid:
            raise Failure("the consumer refused a valid distbuffer: %s: %s" % (type(e).__name__, e)) from None
        return
    if not valid:
        raise Failure("the consumer accepted an invalid distbuffer (expected %s)" % vector["expect"])


def check_global_gdap(vector: Vector) -> None:
    """A global set through gdap.GlobalMap: valid or refused, owned shapes as expected."""
    import gdap
    ranks = [r["dim_data"] for r in vector["ranks"]]
    shapes = [r["shape"] for r in vector["ranks"]]
    expect = vector["expect"]
    try:
        m = gdap.GlobalMap(ranks, shapes)
    except gdap.Error as e:
        if expect["valid"]:
            raise Failure("gdap.GlobalMap refused a valid set: %s" % e) from None
        return
    with m:
        if not expect["valid"]:
            raise Failure("gdap.GlobalMap accepted an invalid set (expected %s)" % expect)
        got = [list(m.owned_shape(r)) for r in range(len(ranks))]
        if got != expect["owned_shapes"]:
            raise Failure("owned shapes %s, expected %s" % (got, expect["owned_shapes"]))


# ---- running -----------------------------------------------------------------------------------

def _attempt(check: Callable[..., object], *args: Any) -> Optional[str]:
    """None if the check passed, "skip" if the target declined, else the failure message."""
    try:
        check(*args)
        return None
    except Skipped:
        return "skip"
    except NotImplementedError:
        return "skip"
    except Failure as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 -- a target that crashes fails the vector, the run goes on
        return "%s: %s" % (type(e).__name__, e)


def _produce(vector: Vector, rank: int, producer: Target) -> tuple[Any, list[int]]:
    try:
        obj = producer(global_array(vector), _dim_data(vector["ranks"][rank]["dim_data"]))
    except NotImplementedError:
        raise Skipped() from None
    return check_produced(vector, rank, obj)


def run_part(vectors: Sequence[Vector], producer: Optional[Target] = None, consumer: Optional[Target] = None,
             global_gdap: bool = False, me: int = 0, size: int = 1, strict: bool = True) -> Part:
    """This process's share of the checks: a list of (vector index, mode, message or None or
    "skip", produced parts {rank: (dim_data, shape)}). Without `strict`, vectors that follow
    gdap's reading where the protocol text is silent ("reading": "gdap") are skipped."""
    results: Part = []
    for k, v in enumerate(vectors):
        if not strict and v.get("reading") == "gdap":
            if me == 0 and _applicable(v, producer, consumer, global_gdap):
                results.append((k, "gdap-reading", "skip", {}))
        elif v["kind"] == "example":
            ranks = range(me, len(v["ranks"]), size)
            if producer is not None:
                produced: dict[int, Any] = {}
                messages: list[Optional[str]] = []
                for r in ranks:
                    box: dict[str, Any] = {}
                    message = _attempt(lambda: box.setdefault("p", _produce(v, r, producer)))
                    if message is None:
                        produced[r] = box["p"]
                    else:
                        messages.append(message)
                results.append((k, "producer", _merge(messages), produced))
            if consumer is not None:
                messages = [_attempt(check_consumed, v, r, consumer) for r in ranks]
                results.append((k, "consumer", _merge(messages), {}))
        elif k % size != me:
            continue
        elif v["kind"] == "process" and consumer is not None and v["distbuffer"]["shape"] is not None:
            results.append((k, "consumer", _attempt(check_process_consumer, v, consumer), {}))
        elif v["kind"] == "global" and global_gdap:
            results.append((k, "global", _attempt(check_global_gdap, v), {}))
    return results


def run_collective_mpi(vectors: Sequence[Vector], part: Part, comm: Any) -> Part:
    """For each example with as many ranks as MPI has: the producer's dicts checked collectively
    over MPI (gdap.GlobalMap.collective), every rank its own. Returns this rank's results."""
    import gdap
    try:
        gcomm = gdap.Comm.from_mpi(comm)
    except gdap.UnsupportedError:
        return []  # libgdap built without MPI: the gathered check on rank 0 still runs
    produced = {k: p for k, mode, message, p in part if mode == "producer" and message is None}
    results: Part = []
    with gcomm:
        for k, v in enumerate(vectors):
            if v["kind"] != "example" or len(v["ranks"]) != comm.Get_size():
                continue
            mine = produced.get(k, {}).get(comm.Get_rank())
            if not comm.allreduce(mine is not None, op=_mpi_land()):
                continue  # some rank's producer failed or declined: reported by run_part
            results.append((k, "producer-mpi", _attempt(_collective_map, gcomm, mine), {}))
    return results


def _collective_map(gcomm: Any, produced: tuple[Any, Any]) -> None:
    import gdap
    dims, shape = produced
    try:
        gdap.GlobalMap.collective(gcomm, dims, shape).close()
    except gdap.Error as e:
        raise Failure("the producer's ranks do not form one distribution over MPI: %s" % e) from None


def _mpi_land() -> Any:
    from mpi4py import MPI
    return MPI.LAND


def _applicable(v: Vector, producer: Optional[Target], consumer: Optional[Target], global_gdap: bool) -> bool:
    """Whether any of the modes run checks this vector."""
    if v["kind"] == "example":
        return producer is not None or consumer is not None
    if v["kind"] == "process":
        return consumer is not None and v["distbuffer"]["shape"] is not None
    return global_gdap


def _merge(messages: Sequence[Optional[str]]) -> Optional[str]:
    failures = [m for m in messages if m is not None and m != "skip"]
    if failures:
        return "; ".join(failures)
    return "skip" if messages and all(m == "skip" for m in messages) else None


def reduce_results(vectors: Sequence[Vector], parts: Sequence[Part]) -> list[Outcome]:
    """Rank 0's view: one outcome per (vector, mode), the collective producer check done here."""
    merged: dict[tuple[int, str], dict[str, Any]] = {}
    for part in parts:
        for k, mode, message, produced in part:
            entry = merged.setdefault((k, mode), {"messages": [], "produced": {}})
            entry["messages"].append(message)
            entry["produced"].update(produced)
    outcomes: list[Outcome] = []
    for (k, mode), entry in sorted(merged.items()):
        v = vectors[k]
        message = _merge(entry["messages"])
        if mode == "producer" and message is None:
            if len(entry["produced"]) != len(v["ranks"]):
                message = "only ranks %s were produced" % sorted(entry["produced"])
            else:
                message = _attempt(check_collective, v, [entry["produced"][r] for r in range(len(v["ranks"]))])
        outcomes.append({"id": v["id"], "mode": mode, "rules": v["rules"], "message": message})
    return outcomes


def table(outcomes: Sequence[Outcome]) -> str:
    """The pass/fail table per rule, the failures, and a summary line."""
    tally: dict[str, list[int]] = {}
    for o in outcomes:
        for rule in o["rules"]:
            t = tally.setdefault(rule, [0, 0, 0])
            t[0 if o["message"] is None else 2 if o["message"] == "skip" else 1] += 1
    lines = ["%-34s %6s %6s %7s" % ("rule", "passed", "failed", "skipped")]
    for rule in sorted(tally):
        p, f, s = tally[rule]
        lines.append("%-34s %6d %6d %7d  %s" % (rule, p, f, s, "FAIL" if f else "ok"))
    failed = [o for o in outcomes if o["message"] not in (None, "skip")]
    for o in failed:
        lines.append("FAIL %s (%s) [%s]: %s" % (o["id"], o["mode"], ", ".join(o["rules"]), o["message"]))
    skipped = sum(o["message"] == "skip" for o in outcomes)
    lines.append("conformance: %d checks, %d passed, %d failed, %d skipped: %s" % (
        len(outcomes), len(outcomes) - len(failed) - skipped, len(failed), skipped, "FAILED" if failed else "PASSED"))
    return "\n".join(lines)


def load_target(spec: Optional[str]) -> Optional[Target]:
    """'module:function' -> the function ('gdap' for gdap's own target: None here)."""
    if spec in (None, "gdap"):
        return None
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError("a target is 'module:function', not %r" % spec)
    target: Any = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    return target


def _mpi_comm(flag: Optional[bool]) -> Any:
    if flag is False or (flag is None and not any(k in os.environ for k in _MPI_ENV)):
        return None
    from mpi4py import MPI
    return MPI.COMM_WORLD


def run(vectors_dir: Union[str, os.PathLike[str]] = VECTORS, producer: Union[None, bool, Target] = None,
        consumer: Union[None, bool, Target] = None, rule: Optional[str] = None, mpi: Optional[bool] = None,
        as_json: bool = False, out: IO[str] = sys.stdout, strict: Optional[bool] = None) -> int:
    """Runs the checks and prints the report (on rank 0 under MPI); returns the exit code.
    producer / consumer: callables, or None for gdap's own; pass producer=False or consumer=False
    to leave a mode out. The global sets are checked against gdap only when both are gdap's.
    strict: also check the vectors of gdap's own readings (default: only when checking gdap)."""
    global_gdap = producer is None and consumer is None
    if strict is None:
        strict = producer in (None, False, gdap_producer) and consumer in (None, False, gdap_consumer)
    producing = gdap_producer if producer is None else producer if callable(producer) else None
    consuming = gdap_consumer if consumer is None else consumer if callable(consumer) else None
    vectors = load_vectors(vectors_dir, rule)
    comm = _mpi_comm(mpi)
    me, size = (comm.Get_rank(), comm.Get_size()) if comm is not None else (0, 1)
    part = run_part(vectors, producing, consuming, global_gdap, me, size, strict)
    if comm is not None and producing is not None:
        part += run_collective_mpi(vectors, part, comm)
    parts = comm.gather(part, root=0) if comm is not None else [part]
    code = 0
    if me == 0:
        outcomes = reduce_results(vectors, parts)
        failed = any(o["message"] not in (None, "skip") for o in outcomes)
        code = 1 if failed or not outcomes else 0
        if as_json:
            out.write(json.dumps({"ranks": size, "outcomes": outcomes, "failed": failed}, indent=1) + "\n")
        else:
            out.write("gdap.conformance on %d rank%s\n%s\n" % (size, "" if size == 1 else "s", table(outcomes)))
        out.flush()
    return int(comm.bcast(code, root=0)) if comm is not None else code


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gdap.conformance", description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", default=VECTORS,
                        help="vector directory or file (default: the vectors installed with gdap)")
    parser.add_argument("--producer", help="module:function making a producer object (gdap: gdap's own)")
    parser.add_argument("--consumer", help="module:function reading a distbuffer (gdap: gdap's own)")
    parser.add_argument("--rule", help="only vectors with a rule matching this shell pattern or prefix")
    parser.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    parser.add_argument("--strict", action="store_true", default=None,
                        help="also check vectors of gdap's readings where the text is silent (default for gdap)")
    parser.add_argument("--mpi", dest="mpi", action="store_true", default=None, help="use mpi4py's COMM_WORLD")
    parser.add_argument("--no-mpi", dest="mpi", action="store_false", help="never use MPI")
    args = parser.parse_args(argv)
    try:
        producer: Union[None, bool, Target] = (load_target(args.producer) if args.producer
                                               else (None if args.consumer is None else False))
        consumer: Union[None, bool, Target] = (load_target(args.consumer) if args.consumer
                                               else (None if args.producer is None else False))
        if args.producer == "gdap":
            producer = gdap_producer
        if args.consumer == "gdap":
            consumer = gdap_consumer
        return run(args.dir, producer, consumer, args.rule, args.mpi, args.json, strict=args.strict)
    except (OSError, ValueError, ImportError, AttributeError, KeyError) as e:
        print("python -m gdap.conformance: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
