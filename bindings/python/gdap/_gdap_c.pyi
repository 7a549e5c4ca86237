# The SWIG extension (bindings/python/gdap_c.i over gdap.h): the pure-Python modules translate its
# results into typed values, so each of its names is Any here.
from typing import Any

def __getattr__(name: str) -> Any: ...
