"""Distributed matrix product C = alpha * A * B + beta * C (gdap_gemm_*): SUMMA over a 2-d process
grid, BLAS on host sections and cuBLAS on device sections. The planning and the arithmetic are the
C library's; this module wraps the sections a rank passes as LocalArrays described by the maps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from . import _gdap_c as _c
from ._args import integer, real
from ._comm import told
from ._handle import Handle
from ._local import LocalArray, dtype_to_c, from_distarray, from_dlpack
from ._map import GlobalMap
from ._redistribute import Maker, together
from ._types import DTypeLike, SectionLike

if TYPE_CHECKING:
    from ._comm import Comm

#: Arithmetic modes (gdap_gemm_mode): exact by default; tensor-core modes only when asked.
EXACT, TF32, BF16 = 0, 1, 2
_MODES = {"exact": EXACT, "tf32": TF32, "bf16": BF16}


class Gemm(Handle):
    """Collective: one rank's plan of C = alpha * A * B + beta * C for GlobalMaps `a` (M x K),
    `b` (K x N) and `c` (M x N) over the ranks of `comm`, elements of `dtype` (float32 or
    float64). `mode` is "exact" (default), "tf32" or "bf16" (float32 on devices only);
    `panel_width` caps the k-panel of each SUMMA step (0: the default). No transposes.

    Operands whose layout does not fit SUMMA are redistributed at each call; `stats` says which
    and how many bytes move. InvalidArgumentError (on every rank) for shapes that do not chain,
    maps over another number of ranks, a dtype or mode gemm does not take.
    """

    def __init__(self, comm: Comm, a: GlobalMap, b: GlobalMap, c: GlobalMap, dtype: DTypeLike,
                 mode: Union[str, int] = "exact", panel_width: int = 0) -> None:
        comm_h = comm._h()  # no communicator: no call can be made on this rank

        def checked() -> tuple:
            for name, m in (("a", a), ("b", b), ("c", c)):
                if not isinstance(m, GlobalMap):
                    raise TypeError("%s must be a GlobalMap, not %s" % (name, type(m).__name__))
            if isinstance(mode, str) and mode not in _MODES:
                raise ValueError("mode %r is not one of %s" % (mode, sorted(_MODES)))
            options = (_MODES[mode] if isinstance(mode, str) else integer(mode, "mode"), integer(panel_width, "panel_width"))
            return (a._h(), b._h(), c._h(), dtype_to_c(dtype), options)

        # Only this rank knows: the others are told at once (telling_peers), not after the timeout.
        args = told(comm, checked, lambda comm: _c.gdap_gemm_create(comm_h, None, None, None, dtype_to_c(np.float64),
                                                                     (_MODES["exact"], 0)))
        self._adopt(_c.gdap_gemm_create(comm_h, *args), _c.gdap_gemm_destroy)
        self.a, self.b, self.c = a, b, c
        self._dtype = np.dtype(dtype)

    @property
    def stats(self) -> dict[str, int]:
        """{'rank', 'nranks', 'grid_rows', 'grid_cols', 'redistributed_a', 'redistributed_b',
        'redistributed_c', 'redistribute_bytes', 'panels', 'panel_bytes', 'local_m', 'local_n',
        'flops'}: what one call does on this rank."""
        return _c.gdap_gemm_stats_get(self._h())

    @property
    def rank(self) -> int:
        return self.stats["rank"]

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    def __repr__(self) -> str:
        if self._handle is None:
            return "<gdap.Gemm (closed)>"
        s = self.stats
        return "<gdap.Gemm rank %d of %d dtype=%s grid=%dx%d>" % (s["rank"], s["nranks"], self._dtype, s["grid_rows"],
                                                                 s["grid_cols"])


def _section(x: SectionLike, gmap: GlobalMap, rank: int) -> tuple[Optional[LocalArray], bool]:
    if x is None or isinstance(x, LocalArray):
        return x, False
    if hasattr(x, "__distarray__") or isinstance(x, Mapping):
        return from_distarray(x), True
    return from_dlpack(x, gmap.dim_data(rank)), True


def gemm(comm: Comm, plan: Gemm, a: SectionLike, b: SectionLike, c: SectionLike, alpha: float = 1.0,
         beta: float = 0.0) -> SectionLike:
    """Collective: C = alpha * A * B + beta * C with this rank's sections `a`, `b`, `c` of the
    plan's maps (LocalArrays, distbuffers, or arrays: NumPy, CuPy, PyTorch, any DLPack producer of
    the rank's local shape). Returns `c`, written in place. Device sections: queued on the
    communicator's stream. If any rank's arguments are wrong, no rank touches any data: that rank
    raises its own error and the others RemoteError naming it.
    """
    # A plan or factor only this rank cannot use: the others are told at once.
    plan_h, rank, scale = told(comm, lambda: (plan._h(), plan.rank, (real(alpha, "alpha"), real(beta, "beta"))),
                               lambda comm: _c.gdap_gemm_execute(comm._h(), None, 0.0, None, None, 0.0, None))
    makers: list[Maker] = [lambda: _section(a, plan.a, rank), lambda: _section(b, plan.b, rank),
                           lambda: _section(c, plan.c, rank)]
    together(comm, lambda ha, hb, hc: _c.gdap_gemm_execute(comm._h(), plan_h, scale[0], ha, hb, scale[1], hc), makers)
    return c
