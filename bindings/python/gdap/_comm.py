"""Comm: one rank's handle on a group of ranks (gdap_comm), and the ways to make one.

  group(n)                   an in-process group: n communicators, one per rank; each rank is a
                             Python thread making the collective calls with its own Comm
  Comm.from_mpi(comm)        an mpi4py communicator (or its Fortran handle, an int)
  Comm.from_nccl(comm, stream)   an NCCL communicator and a CUDA stream, as addresses

Collective calls (barrier, GlobalMap.collective, redistribute) release the GIL while they wait,
so the threads of a group run them concurrently. Every rank must make the same collective calls
in the same order (ranks in different calls all raise InvalidArgumentError naming both); a rank
that never arrives makes the others fail after the group's timeout (set_timeout, 300 s by default)
with CollectiveTimeoutError.

Ctrl-C stops a waiting collective call within a tenth of a second and breaks its communicator:
a call waiting on the main thread raises KeyboardInterrupt (Python's handler runs while it
waits); a call waiting on another thread, during which a Ctrl-C came, raises
CollectiveInterruptedError (a KeyboardInterrupt). For the second, the first Comm made on the main
thread puts a handler in place of Python's default SIGINT handler that notes the Ctrl-C and then
does what the default one does; a program with a SIGINT handler of its own keeps it (its waits on
other threads then end at their timeout, or when the main thread's own wait is interrupted).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, Optional, TypeVar

from . import _gdap_c as _c
from ._args import describe, integer
from ._handle import Handle

_KIND_NAMES = {_c.GDAP_COMM_GROUP: "group", _c.GDAP_COMM_MPI: "mpi", _c.GDAP_COMM_NCCL: "nccl"}


class Comm(Handle):
    """One rank's communicator. Make one with group(), Comm.from_mpi() or Comm.from_nccl().

    Destroyed by close(), at the end of a `with` block, or when collected; the MPI or NCCL
    communicator it wraps stays the caller's. An MPI one is freed collectively: close it on every
    rank at the same point (and before MPI is finalised) rather than leaving it to the collector.
    """

    def __init__(self, handle: Any, keep: Any = None) -> None:
        # Private: `handle` is a new gdap_comm this object takes over; `keep` holds what it
        # borrows (the NCCL communicator and stream objects) for as long as it lives.
        self._keep = keep
        self._adopt(handle, _c.gdap_comm_destroy)
        _c.gdap_py_set_interrupt(handle)
        _note_ctrl_c()

    @classmethod
    def from_mpi(cls, comm: Any) -> Comm:
        """Wraps an MPI communicator: an mpi4py Comm (its py2f() handle is used) or a Fortran
        handle (int). Collective over `comm` (gdap duplicates it). libgdap must be built with the
        MPI that mpi4py uses; UnsupportedError when it was built without MPI."""
        handle = comm.py2f() if hasattr(comm, "py2f") else integer(comm, "comm (an mpi4py communicator or a Fortran handle)")
        return cls(_c.gdap_comm_from_mpi(handle))

    @classmethod
    def from_nccl(cls, nccl_comm: Any, stream: Any = None) -> Comm:
        """Wraps an NCCL communicator (an ncclComm_t address, or an object whose `comm` attribute
        is one, as CuPy's NcclCommunicator) and the CUDA stream its data moves on (see
        set_stream). Both must outlive the Comm, which keeps a reference to them.
        UnsupportedError when libgdap was built without NCCL."""
        address = _address(getattr(nccl_comm, "comm", nccl_comm), "nccl_comm")
        return cls(_c.gdap_comm_from_nccl(address, _stream_address(stream)), keep=(nccl_comm, stream))

    @property
    def rank(self) -> int:
        """This rank's number, in [0, size)."""
        return _c.gdap_comm_rank(self._h())

    @property
    def size(self) -> int:
        """The number of ranks."""
        return _c.gdap_comm_size(self._h())

    @property
    def kind(self) -> str:
        """'group' (in-process threads), 'mpi' or 'nccl'."""
        return _KIND_NAMES.get(_c.gdap_comm_kind_get(self._h()), "unknown")

    def barrier(self) -> None:
        """Collective: returns once every rank has called it."""
        _c.gdap_comm_barrier(self._h())

    def fail_next(self, error: BaseException) -> None:
        """This rank fails its next collective call on this communicator with `error`
        (gdap_comm_fail_next): that call reads none of its arguments (None is fine), fails at its
        agreement before any data moves, and every other rank raises RemoteError "rank R failed
        (STATUS): text" with this error's own status and text. A gdap.Error gives its status;
        MemoryError GDAP_ERR_NO_MEMORY, OverflowError GDAP_ERR_OVERFLOW, IndexError
        GDAP_ERR_OUT_OF_RANGE, OSError GDAP_ERR_IO; any other GDAP_ERR_INVALID_ARGUMENT, its text
        then led by the class name ("TypeError: ..."). For a rank that cannot build its arguments
        but must still make the call so that its peers do not wait for it. Not collective."""
        _c.gdap_comm_fail_next(self._h(), _status_of(error), _reason_of(error))

    def set_timeout(self, seconds: float) -> None:
        """How long (seconds, > 0) this rank of an in-process group waits for the others."""
        _c.gdap_comm_set_timeout(self._h(), float(seconds))

    def set_stream(self, stream: Any) -> None:
        """The CUDA stream this rank's device work is queued on: None (the legacy default
        stream), an address (int), or a CuPy / PyTorch stream (its .ptr / .cuda_stream). The
        stream must outlive its use; the Comm keeps a reference to it."""
        _c.gdap_comm_set_stream(self._h(), _stream_address(stream))
        self._stream = stream

    def __repr__(self) -> str:
        if self._handle is None:
            return "<gdap.Comm (closed)>"
        return "<gdap.Comm %s rank %d of %d>" % (self.kind, self.rank, self.size)


T = TypeVar("T")


@contextlib.contextmanager
def telling_peers(comm: Optional[Comm], release: Callable[[Comm], object]) -> Iterator[None]:
    """The one way a rank's own refusal reaches its peers in SPMD use. Wrap what this rank checks and
    builds before a collective call (arguments only it may have wrong, a device it cannot use, a
    file only it cannot read): where the block raises, the rank still makes the collective call the
    others are about to make, release(comm), after Comm.fail_next with the error, so that every
    other rank raises RemoteError quoting this rank's reason at once instead of waiting out the
    timeout; then the error propagates. release must be that same C call (any arguments: it fails
    at its agreement before reading them). With comm None (single controller: every rank's
    arguments are prepared before any rank starts) the block just runs."""
    try:
        yield
    except Exception as e:
        if comm is not None:
            tell_peers(comm, e, release)
        raise


_TOLD = "_gdap_peers_told"


def tell_peers(comm: Comm, error: BaseException, release: Callable[[Comm], object]) -> None:
    """Comm.fail_next(error), then release(comm), whose refusal is expected (telling_peers); once per
    error: one already told (an inner step's) is not told again, since its rank has made its call."""
    if getattr(error, _TOLD, False):
        return
    try:
        comm.fail_next(error)
        release(comm)
    except Exception:
        pass  # the expected refusal: this rank raises the error that stopped it
    mark_told(error)


def mark_told(error: BaseException) -> None:
    """Notes that `error` has reached the peers (tell_peers does not tell it again)."""
    try:
        setattr(error, _TOLD, True)
    except AttributeError:
        pass  # an exception without a __dict__: nothing nests around the few that raise one


def told(comm: Optional[Comm], step: Callable[[], T], release: Callable[[Comm], object]) -> T:
    """step()'s result, its failure told to the peers through release (telling_peers)."""
    with telling_peers(comm, release):
        return step()


def group(nranks: int) -> list[Comm]:
    """An in-process group of `nranks` ranks: a list of Comm, comms[r] for rank r. Run each
    rank's collective calls on a thread of its own (threading, concurrent.futures)."""
    return [Comm(handle) for handle in _c.gdap_comm_create_group(integer(nranks, "nranks"))]


def _note_ctrl_c() -> None:
    """Puts _on_ctrl_c in place of Python's default SIGINT handler (on the main thread, once)."""
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_ctrl_c)


def _on_ctrl_c(signum: int, frame: Optional[FrameType]) -> None:
    """Python's default SIGINT handler, which also stops the collective calls waiting meanwhile."""
    _c.gdap_py_note_interrupt()
    signal.default_int_handler(signum, frame)


def _address(value: Any, what: str) -> Optional[int]:
    if value is None:
        return None
    try:
        return integer(value, what)
    except TypeError:
        raise TypeError("%s must be an address (int) or None, not %s" % (what, describe(value))) from None


def _stream_address(stream: Any) -> Optional[int]:
    """A CUDA stream's address from None, an int, a CuPy stream (.ptr) or a PyTorch one (.cuda_stream)."""
    for attribute in ("ptr", "cuda_stream"):
        if hasattr(stream, attribute):
            return _address(getattr(stream, attribute), "stream." + attribute)
    return _address(stream, "stream")


_STATUS_OF_BUILTIN = ((MemoryError, _c.GDAP_ERR_NO_MEMORY), (OverflowError, _c.GDAP_ERR_OVERFLOW),
                      (IndexError, _c.GDAP_ERR_OUT_OF_RANGE), (OSError, _c.GDAP_ERR_IO))


def _status_of(error: BaseException) -> int:
    """The gdap_status that stands for `error` (see Comm.fail_next)."""
    status = getattr(error, "status", None)
    if isinstance(status, int) and status != _c.GDAP_SUCCESS and _c.gdap_status_string(status) != "GDAP_ERR_UNKNOWN_STATUS":
        return status
    for kind, code in _STATUS_OF_BUILTIN:
        if isinstance(error, kind):
            return code
    return _c.GDAP_ERR_INVALID_ARGUMENT


def _reason_of(error: BaseException) -> str:
    """`error`'s text as peers read it: a gdap error's own, any other led by its class name."""
    from ._errors import Error

    return str(error) if isinstance(error, Error) else "%s: %s" % (type(error).__name__, error)


def rank_arg(rank: Any) -> int:
    """A `rank` argument as an int: an int (NumPy's too), or an object whose `rank` is one (this
    rank's Comm, an mpi4py communicator), read strictly (a bool or float `.rank` is refused)."""
    if isinstance(rank, Comm):
        return rank.rank
    if hasattr(rank, "rank"):
        return integer(rank.rank, "rank (%s.rank)" % type(rank).__name__)
    return integer(rank, "rank (an int or this rank's gdap.Comm)")
