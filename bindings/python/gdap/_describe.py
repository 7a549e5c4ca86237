"""The text a GlobalArray's repr shows: its shape, dtype and ranks, then its layout axis by axis
(the blocks each grid coordinate owns, halos, cyclic block sizes, unstructured counts) and where
each rank's section lives."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._map import GlobalMap, grid_coords_to_rank

if TYPE_CHECKING:
    from ._global import GlobalArray

_SHOWN = 4  # grid coordinates listed per axis before "..."


def _axis(layout: GlobalMap, axis: int) -> str:
    grid = tuple(layout.grid_shape)
    reps = []
    for c in range(min(grid[axis], _SHOWN)):
        coords = [0] * len(grid)
        coords[axis] = c
        reps.append(grid_coords_to_rank(coords, grid))
    first = layout.dim_data(reps[0])[axis]
    kind = first["dist_type"]
    more = " ..." if grid[axis] > _SHOWN else ""
    if kind == "b":
        if grid[axis] == 1 and tuple(first.get("padding", (0, 0))) == (0, 0):
            return "whole"
        blocks = []
        for r in reps:
            runs = layout.runs(r, axis)
            blocks.append("[%d:%d)" % (runs[0][0], runs[0][0] + runs[0][1]) if runs else "[]")
        text = "block over %d: %s%s" % (grid[axis], " ".join(blocks), more)
        pads = {tuple(layout.dim_data(r)[axis].get("padding", (0, 0))) for r in reps}
        width = max(max(p) for p in pads)
        if width:
            text += ", halo %d" % width
        if first.get("periodic"):
            text += ", periodic"
        return text
    if kind == "c":
        size = first.get("block_size", 1)
        return ("cyclic over %d" % grid[axis]) if size == 1 else "block-cyclic over %d, blocks of %d" % (grid[axis],
                                                                                                         size)
    counts = [len(layout.dim_data(r)[axis]["indices"]) for r in reps]
    if all(n == first["size"] for n in counts):
        return "replicated over %d (unstructured, every index on every coordinate)" % grid[axis]
    return "unstructured over %d: %s indices%s" % (grid[axis], ", ".join(str(n) for n in counts), more)


def axes_text(layout: GlobalMap) -> str:
    """A GlobalMap's repr: each axis on one line's worth ("axis 0: block over 4: [0:3) [3:6) ...")."""
    return "; ".join("axis %d: %s" % (i, _axis(layout, i)) for i in range(len(layout.shape)))


def describe(a: GlobalArray) -> str:
    ranks = a.devices
    devices = sorted(set(ranks.values()))
    where = (("%d ranks on %s" % (len(ranks), devices[0])) if len(devices) == 1 else
             ", ".join("rank %d %s" % (r, d) for r, d in sorted(ranks.items())[:8]) + (" ..." if len(ranks) > 8 else ""))
    head = "GlobalArray(shape=%s, dtype=%s, %s, %s" % (a.shape, a.dtype, a.mode, where)
    if a.mode == "spmd":
        head += ", this process rank %d of %d" % (next(iter(ranks)), a.nranks)
    if a.pending:
        head += ", pending %s" % a.pending
    lines = [head + ")", "  grid %s" % " x ".join(str(g) for g in a.layout.grid_shape)]
    lines += ["  axis %d: %s" % (i, _axis(a.layout, i)) for i in range(a.ndim)]
    return "\n".join(lines)
