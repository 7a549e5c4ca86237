"""The type names of the package's annotations (checked by mypy; see py.typed).

Shapes, indices and grid coordinates are C-order tuples of ints; one index may also be given as an
int (1-d). A dimension dictionary is the protocol's dict of keys; a dim_data is one per dimension.
"""

from typing import Any, Mapping, Sequence, Tuple, Union

import numpy.typing as npt

Shape = Tuple[int, ...]
Index = Union[int, Sequence[int]]
DimDict = Mapping[str, Any]
DimData = Sequence[DimDict]
# (global_start, length, local_start): global [g, g + n) lives at local [l, l + n)
Run = Tuple[int, int, int]
DTypeLike = npt.DTypeLike
# 'cpu', 'cuda', 'cuda:1', 'cuda_host', 'cuda_managed:0', or a DLPack (type, id) pair
DeviceLike = Union[str, Tuple[int, int]]
# What a collective takes as one rank's section: a LocalArray, a distbuffer or __distarray__
# producer, or an array (NumPy, CuPy, PyTorch, any DLPack producer); None where the rank has none.
SectionLike = Any
