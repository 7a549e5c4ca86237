"""Where a GlobalArray's ranks live and how their collective calls are made.

  Controller  single controller: this process drives every rank of an in-process group, each on its
              own device (a GPU, or host memory), one worker thread per rank. The threads are the
              Controller's: a caller never sees them. Every collective step first prepares every
              rank's arguments in the caller's thread, and only then runs the ranks' C calls on the
              workers, so a bad argument fails before any rank waits for another.
  Spmd        one rank per process over MPI or NCCL: this process holds its own rank, and every
              process makes the same calls in the same order (collectively).

Both cache what does not change between calls: each rank's plans per pair of layouts, halos, GEMM
plans and the C dimension structs of each layout.
"""

from __future__ import annotations

import atexit
import collections
import inspect
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Optional, Tuple, TypeVar, Union

import numpy as np

from . import _gdap_c as _c
from ._comm import Comm, group, mark_told, tell_peers
from ._dims import Dims, dims_from_dim_data
from ._errors import CollectiveInterruptedError, CollectiveTimeoutError, InvalidArgumentError, RemoteError
from ._local import device_name, device_to_c
from ._map import GlobalMap

T = TypeVar("T")
DeviceSpec = Union[int, str, Tuple[int, int]]

_PLAN_CACHE = 32  # plans kept per context: enough for a working set of layouts, small beside the data


def device_label(spec: DeviceSpec) -> str:
    """'cpu', 'cuda:N', 'cuda_host' or 'cuda_managed:N' for a device given as an int (a CUDA
    ordinal), a string or a DLPack (type, id) pair."""
    if isinstance(spec, bool):  # an int to Python, but no device
        raise TypeError("device must be a string such as 'cuda:0' or a (type, id) pair, not %r" % (spec,))
    if isinstance(spec, (int, np.integer)):
        return "cuda:%d" % int(spec)
    if spec == "cuda":
        return "cuda:0"
    return device_name(device_to_c(spec))


def cuda_ordinal(device: str) -> Optional[int]:
    """The CUDA ordinal of 'cuda:N' / 'cuda_managed:N', None for host memory."""
    name, _, ordinal = device.partition(":")
    return int(ordinal) if name in ("cuda", "cuda_managed") and ordinal else None


class _Caches:
    """Per-context caches of C objects, keyed by the identity of the layouts they were made for
    (never by their equality: a GlobalMap compares as its handle). Each entry keeps its layouts
    alive, so that an id is never reused while it is cached."""

    def __init__(self) -> None:
        self.tables: dict[str, collections.OrderedDict] = collections.defaultdict(collections.OrderedDict)
        self.lock = threading.RLock()  # the caller's threads may share a context

    def lookup(self, table: str, layouts: tuple, extra: tuple, make: Callable[[], Any]) -> Any:
        with self.lock:
            entries = self.tables[table]
            key = tuple(id(m) for m in layouts) + extra
            hit = entries.get(key)
            if hit is not None:
                entries.move_to_end(key)
                return hit[1]
            value = make()
            entries[key] = (layouts, value)
            while len(entries) > _PLAN_CACHE:
                entries.popitem(last=False)
            return value


class Context:
    """The ranks of a GlobalArray: how many, which this process holds, on which devices."""

    nranks: int
    ranks: tuple[int, ...]
    spmd: bool

    def __init__(self) -> None:
        self._caches = _Caches()

    def comm(self, rank: int) -> Comm:
        raise NotImplementedError

    def device(self, rank: int) -> str:
        raise NotImplementedError

    def run(self, step: Callable[[int], T]) -> dict[int, T]:
        """Runs step(rank) for every rank held here, concurrently where there are several, and
        returns their results; re-raises a rank's error (its own before another's RemoteError)."""
        raise NotImplementedError

    # -- caches of C objects ------------------------------------------------------------------

    def dims(self, layout: GlobalMap, rank: int) -> Dims:
        """Rank `rank`'s dictionaries of `layout` as C structs (made once per layout and rank)."""
        per_rank = self._caches.lookup("dims", (layout,), (), dict)
        dims = per_rank.get(rank)
        if dims is None:
            dims = per_rank[rank] = dims_from_dim_data(layout.dim_data(rank))
        return dims

    def plans(self, src: GlobalMap, dst: GlobalMap, dtype: np.dtype) -> dict[int, Any]:
        """This process's ranks' plans from `src` to `dst` (gdap.Plan objects, kept by the cache)."""
        from ._redistribute import Plan

        return self._caches.lookup("plans", (src, dst), (np.dtype(dtype).str,),
                                   lambda: {r: Plan(src, dst, dtype, r) for r in self.ranks})

    def halos(self, layout: GlobalMap, dtype: np.dtype) -> dict[int, Any]:
        """This process's ranks' halo plans on `layout` (gdap.Halo objects)."""
        from ._halo import Halo

        return self._caches.lookup("halos", (layout,), (np.dtype(dtype).str,),
                                   lambda: {r: Halo(layout, dtype, r) for r in self.ranks})

    def gemm_plans(self, a: GlobalMap, b: GlobalMap, c: GlobalMap, dtype: np.dtype) -> dict[int, Any]:
        """This process's ranks' GEMM plans; collective (gdap_gemm_create) the first time."""
        from ._gemm import Gemm

        return self._caches.lookup("gemms", (a, b, c), (np.dtype(dtype).str,),
                                   lambda: self.run(lambda r: Gemm(self.comm(r), a, b, c, dtype)))


_ECHOES = (RemoteError, CollectiveTimeoutError, CollectiveInterruptedError)


def first_error(errors: dict[int, BaseException]) -> BaseException:
    """The error to raise for a step that failed on some ranks: the lowest rank's own error (the
    cause) rather than another rank's echo of it: a RemoteError naming it, or a timeout or
    interruption of a rank left waiting for it."""
    ordered = [errors[r] for r in sorted(errors)]
    for echo in (_ECHOES, RemoteError):  # the cause first, then a timeout, then a RemoteError
        own = [e for e in ordered if not isinstance(e, echo)]
        if own:
            return own[0]
    return ordered[0]


def _breaks_group(error: BaseException) -> bool:
    """Whether a rank's error leaves the in-process group broken (gdap's group breaks when a rank
    times out or is interrupted in a collective call; every later call then fails)."""
    return isinstance(error, (CollectiveTimeoutError, CollectiveInterruptedError)) or \
        "in-process group is broken" in str(error) or "group broke" in str(error)


class _Crew:
    """One daemon thread per rank and the two raw locks each is handed a step by: the caller releases
    a rank's `go` to start it and acquires its `done` to await it (about 30 us a step for four ranks
    on the 2-core CI machine, where two threading.Barriers took 80-135 us). Each hand-off is a new
    `round`: a thread woken without one ends. A crew that is ended lets every thread finish the round
    it was handed (so that no rank of a started step is left out) and then end."""

    def __init__(self, n: int) -> None:
        self.step: Optional[Callable[[int], Any]] = None
        self.round = 0
        self.closing = False
        self.results: list = [None] * n
        self.errors: list = [None] * n
        self.go = [_held_lock() for _ in range(n)]
        self.done = [_held_lock() for _ in range(n)]
        self.threads = [threading.Thread(target=self._work, args=(r,), name="gdap-rank-%d" % r, daemon=True)
                        for r in range(n)]
        for t in self.threads:
            t.start()

    def _work(self, rank: int) -> None:
        go, done = self.go[rank], self.done[rank]
        seen = 0
        while True:
            go.acquire()
            if self.round == seen:  # woken by end(), not by a step
                return
            seen, step = self.round, self.step
            if step is None:  # not reached: a round's step stays until every rank has read it
                return
            try:
                self.results[rank], self.errors[rank] = step(rank), None
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                self.results[rank], self.errors[rank] = None, e
            # Not kept while waiting for the next round: the step's closure holds its sections
            # and its context (whose collection ends this crew).
            step = None
            done.release()
            if self.closing:
                return

    def end(self) -> None:
        """Every thread ends: at once where it waits for a step, after its round's call where it was
        handed one (whether it has started it yet or not)."""
        self.closing = True
        for go in self.go:
            if go.locked():  # a waiting thread wakes and ends; a running one never takes it again
                go.release()


_release = type(threading.Lock()).release

# The threads of abandoned crews (their caller was interrupted), which may still be in a C call: at
# exit they are joined before weakref.finalize destroys the C objects those calls use (atexit runs
# the later registration first; gdap's handles registered theirs before any crew was abandoned).
_unfinished: weakref.WeakSet = weakref.WeakSet()
_unfinished_joined_at_exit: list = []  # the atexit registration, made once


# How long exit waits in all for abandoned threads: a call ends within its group's timeout, but that
# may be infinite, and a thread stuck outside a wait must not hold the interpreter's exit forever.
_EXIT_JOIN_SECONDS = 30.0


def _join_unfinished() -> None:
    deadline = time.monotonic() + _EXIT_JOIN_SECONDS
    for t in list(_unfinished):
        t.join(max(0.0, deadline - time.monotonic()))


def _finish_at_exit(crew: _Crew) -> None:
    if not _unfinished_joined_at_exit:
        _unfinished_joined_at_exit.append(atexit.register(_join_unfinished))
    _unfinished.update(crew.threads)


def _held_lock() -> Any:
    lock = threading.Lock()
    lock.acquire()
    return lock


class _Workers:
    """One thread per rank (a _Crew), each running its rank's part of a step, all started before
    the caller waits for any. If the caller is interrupted while it waits, the crew is abandoned
    (each thread ends after its call, which gdap bounds by the group's timeout); the next step waits
    for those threads to end, since each rank's communicator serves one call at a time, and then
    starts a new crew."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._crew: Optional[_Crew] = None
        self._abandoned: Optional[_Crew] = None  # its threads may still be in a call on the ranks' comms
        self.broken = False  # a step was interrupted or a rank timed out: the group refuses later calls

    def run(self, step: Callable[[int], T]) -> dict[int, T]:
        if self._abandoned is not None:
            # A rank's communicator serves one call at a time: the old threads' calls end first
            # (bounded by the group's timeout; an interrupt here leaves them abandoned).
            for t in self._abandoned.threads:
                t.join()
            self._abandoned = None
        crew = self._crew
        if crew is None:
            crew = self._crew = _Crew(self.n)
        crew.step = step
        crew.round += 1
        try:
            # Every rank or none: one C-level loop, in which no signal handler runs between releases.
            collections.deque(map(_release, crew.go), maxlen=0)
            for done in crew.done:
                done.acquire()
        except BaseException:
            self._crew = None
            self._abandoned = crew
            self.broken = True
            crew.end()
            _finish_at_exit(crew)
            raise
        crew.step = None  # every thread has read it: the step's closure (and its sections) are not kept
        errors = {r: e for r, e in enumerate(crew.errors) if e is not None}
        results = dict(enumerate(crew.results))
        crew.results = [None] * self.n  # the step's results are the caller's, not kept here
        if errors:
            crew.errors = [None] * self.n
            self.broken = self.broken or any(_breaks_group(e) for e in errors.values())
            raise first_error(errors)
        return results

    def close(self) -> None:
        if self._crew is not None:
            self._crew.end()
            self._crew = None
        self._abandoned = None


def check_devices_argument(devices: Any) -> None:
    """`devices` is a number of ranks or one device per rank: a bool is no count, and a str would be
    read one character per rank ('cuda' as 'c', 'u', ...)."""
    if isinstance(devices, bool):  # an int to Python, but no count of ranks
        raise TypeError("devices must be a number of ranks or a sequence of devices, not %r" % devices)
    if isinstance(devices, (str, bytes)):
        raise TypeError("devices=%r is one device, but devices takes one per rank: a list such as "
                        "['cuda:0', 'cuda:1'] or ['cpu'] * 4, or a number of host ranks" % (devices,))


class Controller(Context):
    """Single controller over an in-process group: `devices` is the number of ranks (each in host
    memory) or one device per rank ('cpu', 'cuda:N' or an int N for 'cuda:N'; ranks may share a
    device). Ranks run their collective calls on worker threads that this object owns; one step at a
    time (a lock), so several threads of the caller may share one Controller.

    Controller.of(devices) returns the same Controller for the same devices, so arrays made with
    the same devices can be combined; once that Controller is broken (a step timed out or was
    interrupted, after which its group refuses every call) the next of() makes a fresh one (arrays
    of the broken one stay on it)."""

    spmd = False
    _shared: dict[tuple[str, ...], Controller] = {}
    _shared_lock = threading.Lock()

    def __init__(self, devices: Union[int, Sequence[DeviceSpec]]) -> None:
        super().__init__()
        check_devices_argument(devices)
        comms = None
        if isinstance(devices, (int, np.integer)):
            if devices < 1:
                raise InvalidArgumentError("a Controller needs at least one rank, not %d" % devices)
            comms = group(int(devices))  # the group's own range check, before a list of that many devices
            devices = ["cpu"] * int(devices)
        self.devices: tuple[str, ...] = tuple(device_label(d) for d in devices)
        if not self.devices:
            raise InvalidArgumentError("a Controller needs at least one device")
        self.nranks = len(self.devices)
        self.ranks = tuple(range(self.nranks))
        self._comms = comms if comms is not None else group(self.nranks)
        self._workers = _Workers(self.nranks) if self.nranks > 1 else None
        if self._workers is not None:
            weakref.finalize(self, self._workers.close)
        self._lock = threading.Lock()

    @property
    def broken(self) -> bool:
        """Whether a step timed out or was interrupted: gdap's group then refuses every later call."""
        return self._workers is not None and self._workers.broken

    @classmethod
    def of(cls, devices: Union[int, Sequence[DeviceSpec]]) -> Controller:
        check_devices_argument(devices)
        key = ("cpu",) * int(devices) if isinstance(devices, (int, np.integer)) else tuple(
            device_label(d) for d in devices)
        with cls._shared_lock:
            ctrl = cls._shared.get(key)
            if ctrl is None or ctrl.broken:  # the broken one's threads end after their calls (_Workers)
                ctrl = cls._shared[key] = cls(key)
            return ctrl

    def comm(self, rank: int) -> Comm:
        return self._comms[rank]

    def device(self, rank: int) -> str:
        return self.devices[rank]

    def set_timeout(self, seconds: float) -> None:
        """How long each rank waits for the others at a collective step (default 300 s)."""
        for c in self._comms:
            c.set_timeout(seconds)

    def run(self, step: Callable[[int], T]) -> dict[int, T]:
        with self._lock:
            if self._workers is None:
                return {0: step(0)}
            return self._workers.run(step)

    def __repr__(self) -> str:
        return "<gdap.Controller of %d ranks on %s>" % (self.nranks, ", ".join(self.devices))


class Spmd(Context):
    """This process's one rank of `comm` (a gdap.Comm over MPI or NCCL, or an mpi4py
    communicator), its section on `device` (default: host memory over MPI, the current CUDA device
    over NCCL)."""

    spmd = True

    def __init__(self, comm: Any, device: Optional[DeviceSpec] = None) -> None:
        super().__init__()
        if not isinstance(comm, Comm):
            comm = Comm.from_mpi(comm)
        self._comm = comm
        self.nranks = comm.size
        self.ranks = (comm.rank,)
        if device is None:
            device = "cpu"
            if comm.kind == "nccl":
                from . import _cuda
                device = "cuda:%d" % _cuda.current_ordinal()
        self._device = device_label(device)

    @property
    def rank(self) -> int:
        return self.ranks[0]

    def comm(self, rank: int) -> Comm:
        return self._comm

    def device(self, rank: int) -> str:
        return self._device

    def run(self, step: Callable[[int], T]) -> dict[int, T]:
        return {self.ranks[0]: step(self.ranks[0])}

    def __repr__(self) -> str:
        return "<gdap.Spmd rank %d of %d (%s) on %s>" % (self.ranks[0], self.nranks, self._comm.kind, self._device)


def handle(obj: Any) -> Any:
    """The C handle of a gdap object, or None (gdap then fails on every rank, naming this one)."""
    return None if obj is None else obj._h()


def _cupy_writes_done(ctx: Context) -> None:
    """Waits for the work CuPy has queued on its current stream of each CUDA device the context's
    ranks use: the Python layer writes device sections through CuPy (candidates, element-wise
    results, assignments), and gdap's engines read them on their own streams, which do not wait for
    CuPy's (an argmax on two GPUs read a rank's candidate before CuPy had written it)."""
    cupy = sys.modules.get("cupy")
    if cupy is None:
        return
    for device in sorted({ctx.device(r) for r in ctx.ranks}):
        if device.startswith("cuda:"):
            with cupy.cuda.Device(int(device[5:])):
                cupy.cuda.get_current_stream().synchronize()


def run_c(ctx: Context, objects: Callable[[int], Sequence[Any]], call: Callable[..., T],
          values: Callable[[int], Sequence[Any]] = lambda r: (),
          placeholders: Optional[Sequence[Any]] = None) -> dict[int, T]:
    """Collective: call(comm, *handles, *values(r)) on every held rank, with the C handles of its
    communicator and of objects(r) (gdap objects, None for NULL), then the plain arguments values(r)
    (a device, a path), all taken in the caller's thread before any rank starts. A closed object
    raises InvalidArgumentError naming its rank, and no collective call starts (single controller).
    In SPMD mode, where only this rank knows, the rank still makes the call after Comm.fail_next
    with its error, so that every rank fails at once (not after the timeout), the others with
    RemoteError quoting that error, and then raises its own error (any exception, not only
    InvalidArgumentError): with NULL for each object and its values(r); or, where objects(r) or
    values(r) itself raised, with `placeholders` for every argument after the communicator (default:
    None for each parameter of `call` after the first, read from its signature; a C function has
    none to read, so its callers pass them). Every call made so reaches its agreement before it
    reads an argument (gdap_comm_fail_next), so any placeholder of the right type will do; it
    must only get through the extension's conversion (a device is a (type, id) pair, not None)."""
    _cupy_writes_done(ctx)
    # Each rank's objects stay with their handles: the step's closure keeps them alive while a rank
    # thread is in its call, even where the caller has given up on the step (an interrupt).
    handles: dict[int, tuple[tuple, list]] = {}
    for r in ctx.ranks:
        try:
            comm = ctx.comm(r)._h()  # a closed communicator: no call can be made on this rank
        except InvalidArgumentError as e:
            raise InvalidArgumentError("rank %d: %s" % (r, e)) from None
        held: tuple = ()
        plain: Optional[list] = None
        try:
            held = (ctx.comm(r),) + tuple(objects(r))
            plain = list(values(r))
            handles[r] = (held, [comm] + [None if x is None else x._h() for x in held[1:]] + plain)
        except Exception as e:
            error = InvalidArgumentError("rank %d: %s" % (r, e)) if isinstance(e, InvalidArgumentError) else e
            if ctx.spmd:  # objects(r) and values(r) each taken once: what they gave, else placeholders
                taken = [None] * (len(held) - 1) + plain if held and plain is not None else None
                if _fail_call(ctx.comm(r), e, call, comm, taken if taken is not None else placeholders):
                    mark_told(error)  # the error raised here, where it is not e itself
            raise error from None
    return ctx.run(lambda r: call(*handles[r][1]))


def _fail_call(comm: Comm, error: BaseException, call: Callable[..., Any], handle: Any,
               arguments: Optional[Sequence[Any]]) -> bool:
    """This rank's part of a collective call it cannot make (see run_c): Comm.fail_next with
    `error`, then call(handle, *arguments), which fails at its agreement on every rank (tell_peers);
    whether it was made. Without `arguments`, None for each parameter of `call` after the first;
    where its signature says nothing (a C function), no call is made, and the peers wait out their
    timeout."""
    if arguments is None:
        try:
            arguments = [None] * (len(inspect.signature(call).parameters) - 1)
        except (TypeError, ValueError):
            return False
    given = arguments
    tell_peers(comm, error, lambda comm: call(handle, *given))
    return True


def redistribute_step(ctx: Context, plans: dict[int, Any], src: dict, dst: dict) -> None:
    """Collective: every held rank's gdap_redistribute of src[r] into dst[r] (LocalArrays)."""
    run_c(ctx, lambda r: (plans[r], src.get(r), dst.get(r)), _c.gdap_redistribute, placeholders=(None,) * 3)
