"""File and segment names on their way to C. A C string ends at its first NUL byte, so a Python
name holding one ("out/x\\0y") would silently name another file ("out/x"); such names raise
ValueError here. Collective calls check their names before the call, inside telling_peers, so that
the other ranks fail at once with RemoteError quoting it instead of waiting for this one."""
import os


def c_name(value: object, what: str) -> str:
    """`value` (a str, bytes or os.PathLike) as the str C receives; ValueError if it holds a NUL."""
    name = os.fspath(value) if isinstance(value, (os.PathLike, bytes)) else str(value)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if "\0" in name:
        raise ValueError("%s %r holds a NUL character at position %d: a C string would end there and name "
                         "another file" % (what, name, name.index("\0")))
    return name

