"""The life cycle every gdap handle shares in Python: destroyed by close(), at the end of a `with`
block, or when the object is collected, exactly once; never while a handle that borrows it lives;
and never reached through once closed.

Some C objects keep pointers to others (a persistent halo exchange borrows its communicator, halo
and section). The Python object of such a borrower names what it borrows (_adopt's `borrows`): the
C destroy of a borrowed handle then waits until every borrower's C object is destroyed, whatever
order the objects are closed or collected in, and a borrower whose borrowed object was closed
raises before any C call.
"""
import threading
import weakref

from ._errors import InvalidArgumentError

_lock = threading.Lock()


class _Life:
    """One C handle and how many hold it: its Python object until closed or collected, and each
    live borrower. The last to let go destroys it."""

    def __init__(self, destroy, handle):
        self.destroy, self.handle, self.holders = destroy, handle, 1

    def hold(self):
        with _lock:
            self.holders += 1

    def release(self):
        with _lock:
            self.holders -= 1
            last = self.holders == 0
        if last:
            self.destroy(self.handle)


def _end(life, borrowed):
    """A handle's end: its own C object first (it points into the borrowed ones), then theirs."""
    life.release()
    for other in borrowed:
        other.release()


class Handle:
    """Owns one C handle; subclasses call _adopt(handle, destroy) once they have it."""

    _handle = None
    _borrowed = ()

    def _adopt(self, handle, destroy, borrows=()):
        """Takes over `handle` (destroyed with `destroy`); `borrows` are the Handle objects whose C
        objects this handle's C object keeps pointers to (every one open)."""
        borrows = tuple(borrows)
        for other in borrows:
            other._h()
        life = _Life(destroy, handle)
        for other in borrows:
            other._life.hold()
        self._handle, self._life, self._borrowed = handle, life, borrows
        self._finalizer = weakref.finalize(self, _end, life, tuple(other._life for other in borrows))

    def close(self):
        """Destroys the handle now, or once the handles that borrow it are gone (idempotent). Any
        later use raises InvalidArgumentError."""
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()
        self._handle = None

    @property
    def closed(self):
        return self._handle is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _h(self):
        """The C handle, or InvalidArgumentError if this object or one it borrows is closed."""
        if self._handle is None:
            raise InvalidArgumentError("the %s is closed" % type(self).__name__)
        for other in self._borrowed:
            if other._handle is None:
                raise InvalidArgumentError("the %s that this %s uses was closed; close the %s first"
                                           % (type(other).__name__, type(self).__name__, type(self).__name__))
        return self._handle
