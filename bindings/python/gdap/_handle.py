"""The life cycle every gdap handle shares in Python: destroyed by close(), at the end of a `with`
block, or when the object is collected, exactly once; never while a handle that borrows it lives;
and never reached through once closed.

Some C objects keep pointers to others (a persistent halo exchange borrows its communicator, halo
and section). The Python object of such a borrower names what it borrows (_adopt's `borrows`): the
C destroy of a borrowed handle then waits until every borrower's C object is destroyed, whatever
order the objects are closed or collected in, and a borrower whose borrowed object was closed
raises before any C call.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from typing import Any, Callable, Optional, TypeVar

_Self = TypeVar("_Self", bound="Handle")

from ._errors import InvalidArgumentError

_lock = threading.Lock()


class _Life:
    """One C handle and how many hold it: its Python object until closed or collected, and each
    live borrower. The last to let go destroys it."""

    def __init__(self, destroy: Callable[[Any], object], handle: Any) -> None:
        self.destroy, self.handle, self.holders = destroy, handle, 1

    def hold(self) -> None:
        with _lock:
            self.holders += 1

    def release(self) -> None:
        with _lock:
            self.holders -= 1
            last = self.holders == 0
        if last:
            self.destroy(self.handle)


def _end(life: _Life, borrowed: tuple[_Life, ...]) -> None:
    """A handle's end: its own C object first (it points into the borrowed ones), then theirs."""
    life.release()
    for other in borrowed:
        other.release()


class Handle:
    """Owns one C handle; subclasses call _adopt(handle, destroy) once they have it."""

    _handle: Any = None
    _borrowed: tuple[Handle, ...] = ()
    _life: _Life
    _finalizer: Optional[weakref.finalize] = None

    def _adopt(self, handle: Any, destroy: Callable[[Any], object], borrows: Iterable[Handle] = ()) -> None:
        """Takes over `handle` (destroyed with `destroy`); `borrows` are the Handle objects whose C
        objects this handle's C object keeps pointers to (every one open)."""
        borrowed = tuple(borrows)
        for other in borrowed:
            other._h()
        life = _Life(destroy, handle)
        for other in borrowed:
            other._life.hold()
        self._handle, self._life, self._borrowed = handle, life, borrowed
        self._finalizer = weakref.finalize(self, _end, life, tuple(other._life for other in borrowed))

    def close(self) -> None:
        """Destroys the handle now, or once the handles that borrow it are gone (idempotent). Any
        later use raises InvalidArgumentError."""
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()
        self._handle = None

    @property
    def closed(self) -> bool:
        return self._handle is None

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _h(self) -> Any:
        """The C handle, or InvalidArgumentError if this object or one it borrows is closed."""
        if self._handle is None:
            raise InvalidArgumentError("the %s is closed" % type(self).__name__)
        for other in self._borrowed:
            if other._handle is None:
                raise InvalidArgumentError("the %s that this %s uses was closed; close the %s first"
                                           % (type(other).__name__, type(self).__name__, type(self).__name__))
        return self._handle
