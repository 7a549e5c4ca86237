"""`gdap describe --svg` pictures, a table of cases: each case writes every rank's dim_data as JSON,
runs the tool, parses the SVG with xml.etree and checks one rule of the picture (labels, outlines
as one rectangle per block, padding, wrapping of 1-d arrays, size bounds, corners of fine layouts,
slices of 3-d arrays, owners that match the text picture). Run one case:
    svg_cases.py GDAP DATA_DIR VECTORS_DIR WORK_DIR CASE
"""
import json
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
MAX_BYTES = 200_000


def block(size, p, r, pad=None):
    start, stop = size * r // p, size * (r + 1) // p
    d = {"dist_type": "b", "size": size, "proc_grid_size": p, "proc_grid_rank": r, "start": start, "stop": stop}
    if pad:
        lo = pad if r > 0 else 0
        hi = pad if r < p - 1 else 0
        d.update(start=start - lo, stop=stop + hi, padding=[lo, hi])
    return d


def cyclic(size, p, r, bs=1):
    return {"dist_type": "c", "size": size, "proc_grid_size": p, "proc_grid_rank": r, "start": r * bs,
            "block_size": bs}


def grid2(g0, g1, dim0, dim1):
    """Every rank's dim_data of a 2-d product layout, ranks in C order."""
    return {"ranks": [[dim0(i), dim1(j)] for i in range(g0) for j in range(g1)]}


class Svg:
    def __init__(self, path, stdout):
        self.bytes = os.path.getsize(path)
        self.root = ET.parse(path).getroot()  # raises on malformed XML
        assert self.root.tag == NS + "svg", f"root element is {self.root.tag}, not svg"
        self.stdout = stdout

    def group(self, gid):
        return self.root.find(f".//{NS}g[@id='{gid}']")

    def owner_groups(self):
        return {g.get("id"): g for g in self.group("owners").findall(f"{NS}g")}

    def owner_rects(self):
        return [(int(g.get("id")[5:]) if g.get("id") != "no-owner" else -1, r)
                for g in self.group("owners").findall(f"{NS}g") for r in g.findall(f"{NS}rect")]

    def texts(self, cls=None):
        nodes = self.root.iter(NS + "text")
        return ["".join(t.itertext()) for t in nodes if cls is None or t.get("class") == cls]

    def legend(self):
        return ["".join(t.itertext()) for t in self.group_by_class("legend").iter(NS + "text")]

    def group_by_class(self, cls):
        return self.root.find(f".//{NS}g[@class='{cls}']")

    def captions(self):
        return "\n".join(self.texts("caption"))


def draw(ctx, name, layout):
    """Writes `layout` (every rank's dim_data), runs describe --svg, returns the parsed picture."""
    src = os.path.join(ctx["work"], name + ".json")
    out = os.path.join(ctx["work"], name + ".svg")
    with open(src, "w") as f:
        json.dump(layout, f)
    if os.path.exists(out):
        os.remove(out)
    run = subprocess.run([ctx["gdap"], "describe", src, "--svg", out], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"{name}: gdap describe exited {run.returncode}: {run.stderr}"
    return Svg(out, run.stdout)


def check_common(pic, nranks):
    assert pic.bytes < MAX_BYTES, f"{pic.bytes} bytes, not < {MAX_BYTES}"
    legend = pic.legend()
    for r in range(min(nranks, 64)):
        assert f"rank {r}" in legend, f"rank {r} missing from the legend"
    if nranks > 64:
        assert f"+{nranks - 64} ranks" in legend, "the legend does not count the ranks it leaves out"


def text_picture(stdout):
    """The text picture of `gdap describe` (one string per row)."""
    lines = stdout.split("owner of each element", 1)[1].splitlines()[1:]
    return [line[2:] for line in lines if line.startswith("  ") and not line.startswith("  (")]


SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def owner_at_pixel(pic, x, y):
    hits = [rank for rank, r in pic.owner_rects()
            if float(r.get("x")) <= x < float(r.get("x")) + float(r.get("width"))
            and float(r.get("y")) <= y < float(r.get("y")) + float(r.get("height"))]
    assert len(hits) == 1, f"pixel ({x}, {y}) lies in {len(hits)} owner rectangles"
    return hits[0]


def check_owners_match_text(pic, shape):
    """Every element's rectangle has the owner that the text picture (gdap_map_owner) names."""
    rows = text_picture(pic.stdout)
    rects = [r for _, r in pic.owner_rects()]
    x0 = min(float(r.get("x")) for r in rects)
    y0 = min(float(r.get("y")) for r in rects)
    x1 = max(float(r.get("x")) + float(r.get("width")) for r in rects)
    y1 = max(float(r.get("y")) + float(r.get("height")) for r in rects)
    if len(shape) == 2:
        cells = [(i, j, i, j) for i in range(shape[0]) for j in range(shape[1])]
        nrows, ncols = shape
    else:
        m = re.search(r"wrapped into rows of (\d+) elements", pic.captions())
        width = int(m.group(1)) if m else shape[0]
        cells = [(0, e, e // width, e % width) for e in range(shape[0])]
        nrows, ncols = math.ceil(shape[0] / width), min(width, shape[0])
    for ti, tj, pi, pj in cells:
        x = x0 + (pj + 0.5) * (x1 - x0) / ncols
        y = y0 + (pi + 0.5) * (y1 - y0) / nrows
        got = owner_at_pixel(pic, x, y)
        want = SYMBOLS.index(rows[ti][tj])
        assert got == want, f"element {(ti, tj) if len(shape) == 2 else tj}: drawn as rank {got}, owner is {want}"


# ---- the cases: name -> (rule, function) -------------------------------------------------------

def labels_and_outlines(ctx):
    pic = draw(ctx, "bc2x2", json.load(open(os.path.join(ctx["data"], "block_cyclic_2x2.json"))))
    check_common(pic, 4)
    # 6 x 10, rows in 2 blocks, columns cyclic in blocks of 2: 2 x 5 blocks, one rectangle each.
    assert len(pic.owner_rects()) == 10, f"{len(pic.owner_rects())} owner rectangles, not 10 blocks"
    labels = pic.texts()
    for r in range(4):
        assert labels.count(str(r)) >= 2, f"rank {r}'s blocks do not carry its number"
    assert pic.group("owners").get("stroke"), "blocks are not outlined"
    assert pic.group("padding") is None, "padding drawn where the dim_data has none"
    check_owners_match_text(pic, [6, 10])


def block_512_runs(ctx):
    pic = draw(ctx, "b512", grid2(4, 4, lambda i: block(512, 4, i), lambda j: block(512, 4, j)))
    check_common(pic, 16)
    assert len(pic.owner_rects()) == 16, f"{len(pic.owner_rects())} rectangles for 16 blocks"
    assert pic.bytes < 20_000, f"{pic.bytes} bytes for 16 blocks"
    assert "showing" not in pic.captions(), "a corner drawn although every block fits"


def cyclic_512_corner(ctx):
    pic = draw(ctx, "c512", grid2(4, 4, lambda i: cyclic(512, 4, i), lambda j: cyclic(512, 4, j)))
    check_common(pic, 16)
    assert re.search(r"showing rows 0\.\.\d+ of 512 and columns 0\.\.\d+ of 512", pic.captions()), pic.captions()
    assert len(pic.owner_rects()) <= 1600


def cyclic_4096_over_16(ctx):
    pic = draw(ctx, "c4096", grid2(4, 4, lambda i: cyclic(4096, 4, i), lambda j: cyclic(4096, 4, j, 3)))
    check_common(pic, 16)
    assert re.search(r"showing rows 0\.\.\d+ of 4096 and columns 0\.\.\d+ of 4096", pic.captions()), pic.captions()
    assert "(the whole slice has 4096 x 1366 blocks)" in pic.captions(), pic.captions()


def wrap_1d_20_ranks(ctx):
    pic = draw(ctx, "blocks20", json.load(open(os.path.join(ctx["data"], "blocks_20_ranks.json"))))
    check_common(pic, 20)
    ys = {r.get("y") for _, r in pic.owner_rects()}
    assert len(ys) > 1, "a 1-d array over 20 ranks drawn as one strip"
    width, height = float(pic.root.get("width")), float(pic.root.get("height"))
    assert 0.5 < width / height < 3, f"picture {width} x {height} pixels"
    assert "wrapped into rows" in pic.captions()
    check_owners_match_text(pic, [int(re.search(r"global shape \((\d+),\)", pic.stdout).group(1))])


def wrap_1d_fine_corner(ctx):
    n = 1_000_000
    pic = draw(ctx, "c1d", {"ranks": [[cyclic(n, 16, r)] for r in range(16)]})
    check_common(pic, 16)
    assert re.search(r"showing elements 0\.\.\d+ of 1000000 at full detail: the whole array has 1000000 blocks",
                     pic.captions()), pic.captions()


def sampled_long_axis(ctx):
    n = 10_000_000
    pic = draw(ctx, "long1d", {"ranks": [[block(n, 5, r)] for r in range(5)]})
    check_common(pic, 5)
    assert re.search(r"one cell per \d+ elements", pic.captions()), pic.captions()
    assert len(pic.owner_rects()) <= 3 * 5


def many_ranks_legend(ctx):
    pic = draw(ctx, "r100", {"ranks": [[block(1000, 100, r)] for r in range(100)]})
    check_common(pic, 100)
    assert len(pic.owner_groups()) == 100, "not one group per rank"


def padding_halo_2d(ctx):
    pic = draw(ctx, "halo", grid2(2, 2, lambda i: block(8, 2, i, pad=1), lambda j: block(8, 2, j, pad=1)))
    check_common(pic, 4)
    pad = pic.group("padding")
    assert pad is not None and len(pad.findall(NS + "rect")) > 0, "halo not drawn"
    assert len(pic.group("buffers").findall(NS + "rect")) == 4, "not one dashed buffer per rank"
    assert "padding" in pic.legend()
    check_owners_match_text(pic, [8, 8])


def padded_fine_size(ctx):
    pic = draw(ctx, "padfine", grid2(8, 8, lambda i: block(2048, 8, i, pad=2), lambda j: cyclic(2048, 8, j)))
    check_common(pic, 64)
    assert len(pic.group("padding").findall(NS + "rect")) > 0, "halo not drawn in the corner"
    assert "a corner at full detail" in pic.captions(), pic.captions()


def padded_cyclic_million(ctx):
    # 1024 padded ranks beside a million cyclic columns: only the drawn corner is looked at.
    pic = draw(ctx, "padmillion", grid2(64, 16, lambda i: block(128, 64, i, pad=1), lambda j: cyclic(1_000_000, 16, j)))
    check_common(pic, 1024)
    assert len(pic.group("padding").findall(NS + "rect")) > 0, "halo not drawn in the corner"


def padding_boundary_1d(ctx):
    one = {"dist_type": "b", "size": 10, "proc_grid_size": 1, "proc_grid_rank": 0, "start": 0, "stop": 10,
           "padding": [2, 2], "periodic": True}
    pic = draw(ctx, "boundary", {"ranks": [[one]]})
    check_common(pic, 1)
    rects = pic.group("padding").findall(NS + "rect")
    assert len(rects) == 2, f"{len(rects)} padding rectangles for two boundary bands"


def slice_3d(ctx):
    pic = draw(ctx, "three_d", json.load(open(os.path.join(ctx["data"], "three_d.json"))))
    check_common(pic, 1)
    assert "the first 2-d slice [0, :, :] is drawn (dimensions 1 and 2)" in pic.captions(), pic.captions()


def empty_array(ctx):
    pic = draw(ctx, "empty", {"ranks": [[block(0, 2, r)] for r in range(2)]})
    check_common(pic, 2)
    assert "an empty array" in pic.captions()
    assert not pic.owner_rects()
    # A 3-d array with a leading axis of size 0: no slice to draw either (no "no owner" cells).
    pic = draw(ctx, "empty3d", {"ranks": [[block(0, 1, 0), block(4, 1, 0), block(4, 1, 0)]]})
    assert "an empty array" in pic.captions()
    assert not pic.owner_rects(), "cells drawn for an empty array"


def protocol_examples(ctx):
    count = 0
    for name in sorted(os.listdir(ctx["vectors"])):
        if not name.startswith("examples_"):
            continue
        for v in json.load(open(os.path.join(ctx["vectors"], name)))["vectors"]:
            layout = {"ranks": [{"dim_data": r["dim_data"], "shape": r["local_shape"]} for r in v["ranks"]]}
            label = re.sub(r"[^A-Za-z0-9]+", "_", v["id"])
            pic = draw(ctx, label, layout)
            try:
                check_common(pic, len(v["ranks"]))
                shape = v["global_shape"]
                if 1 <= len(shape) <= 2 and 0 not in shape:
                    check_owners_match_text(pic, shape)
            except AssertionError as e:
                raise AssertionError(f"{v['id']}: {e}") from None
            count += 1
    assert count >= 40, f"only {count} worked examples found"
    print(f"{count} worked examples drawn")


CASES = {
    "labels_and_outlines": ("every rank labelled, one outlined rectangle per block, owners right", labels_and_outlines),
    "block_512_runs": ("file size grows with blocks, not elements: 512 x 512 in 16 blocks", block_512_runs),
    "cyclic_512_corner": ("a fine 512 x 512 layout: a corner at full detail, < 200 KB", cyclic_512_corner),
    "cyclic_4096_over_16": ("4096 x 4096 cyclic over 16 ranks: < 200 KB, the corner named", cyclic_4096_over_16),
    "wrap_1d_20_ranks": ("a 1-d array over 20 ranks is wrapped into rows, owners right", wrap_1d_20_ranks),
    "wrap_1d_fine_corner": ("a million 1-d cyclic blocks: the first elements, named", wrap_1d_fine_corner),
    "sampled_long_axis": ("an axis longer than 2^20 is sampled and says so", sampled_long_axis),
    "many_ranks_legend": ("100 ranks: 64 in the legend, the rest counted", many_ranks_legend),
    "padding_halo_2d": ("communication padding hatched, each buffer dashed", padding_halo_2d),
    "padded_fine_size": ("halos on a fine layout: the corner hatched, < 200 KB", padded_fine_size),
    "padded_cyclic_million": ("1024 padded ranks, a million cyclic columns: drawn in time", padded_cyclic_million),
    "padding_boundary_1d": ("boundary padding hatched", padding_boundary_1d),
    "slice_3d": ("a 3-d array: the first 2-d slice, named in a caption", slice_3d),
    "empty_array": ("an empty array draws no blocks and says so", empty_array),
    "protocol_examples": ("every worked example of the protocol renders, owners right", protocol_examples),
}


def main():
    gdap, data, vectors, work, case = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    rule, fn = CASES[case]
    fn({"gdap": gdap, "data": data, "vectors": vectors, "work": work})
    print(f"svg case {case} ok: {rule}")


if __name__ == "__main__":
    main()
