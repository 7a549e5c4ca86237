"""File and segment names on their way to C. A C string ends at its first NUL byte, so a Python
name holding one ("out/x\\0y") would silently name another file ("out/x"); such names raise
ValueError here. Collective calls still enter the collective (with no name, which C refuses), so
that the other ranks fail at once with RemoteError instead of waiting for this one."""
import os
from typing import Optional


def c_name(value: object, what: str) -> str:
    """`value` (a str, bytes or os.PathLike) as the str C receives; ValueError if it holds a NUL."""
    name = os.fspath(value) if isinstance(value, (os.PathLike, bytes)) else str(value)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if "\0" in name:
        raise ValueError("%s %r holds a NUL character at position %d: a C string would end there and name "
                         "another file" % (what, name, name.index("\0")))
    return name


def collective_name(value: object, what: str) -> tuple[Optional[str], Optional[ValueError]]:
    """(name, None) for a good name; (None, the ValueError) for a bad one, so that the caller still
    makes the collective call (with None, which every rank then sees refused) and raises after."""
    try:
        return c_name(value, what), None
    except ValueError as e:
        return None, e
