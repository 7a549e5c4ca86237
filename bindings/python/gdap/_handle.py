"""The life cycle every gdap handle shares in Python: destroyed by close(), at the end of a
`with` block, or when the object is collected, exactly once."""
import weakref


class Handle:
    """Owns one C handle; subclasses call _adopt(handle, destroy) once they have it."""

    _handle = None

    def _adopt(self, handle, destroy):
        self._handle = handle
        self._finalizer = weakref.finalize(self, destroy, handle)

    def close(self):
        """Destroys the handle now (idempotent)."""
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
        if self._handle is None:
            raise ValueError("the %s is closed" % type(self).__name__)
        return self._handle
