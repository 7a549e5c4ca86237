"""Lets DistArray 0.6 (2014, written for Python 2.7 and 3.4 with NumPy of its day) run on Python
3.11 with NumPy 1.23, changing none of its behaviour. tools/deps.sh copies this file into the
DistArray virtual environment (.deps/distarray-venv) with a .pth line that imports it at start-up.

1. Python >= 3.10 keeps the ABCs `Mapping`, `Sequence`, ... only in `collections.abc`;
   DistArray's localarray.py and metadata_utils.py import them from `collections`.
2. DistArray's load_dnpy hands the header's *bytes* to `numpy.lib.utils.safe_eval`, which since
   NumPy 1.10 is `ast.literal_eval` and takes only str (on Python 2 bytes were str), so without
   this DistArray reads no .dnpy file at all, not even its own. The header is ASCII by the format;
   it is decoded before the same safe_eval."""
import collections
import collections.abc

for _name in ("Mapping", "MutableMapping", "Sequence", "MutableSequence", "Iterable", "Callable"):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))


def _install_safe_eval_shim():
    import numpy.lib.utils as utils

    original = utils.safe_eval
    if getattr(original, "_gdap_shim", False):
        return

    def safe_eval(source):
        if isinstance(source, bytes):
            source = source.decode("latin1")
        return original(source)

    safe_eval._gdap_shim = True
    utils.safe_eval = safe_eval


try:
    _install_safe_eval_shim()
except ImportError:  # NumPy not installed yet (tools/deps.sh installs it next)
    pass
