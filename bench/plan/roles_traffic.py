#!/usr/bin/env python3
"""What relabeling the destination ranks saves on the conformance layouts (issue 25).

For every ordered pair of valid layouts among conformance/vectors/global.json that describe the
same global shape on the same number of ranks, runs `gdap plan FROM TO --keep-roles` and reads the
bytes that cross between ranks without and with the keeping roles (plan::Planner::keeping_roles:
rank r holds destination rank roles[r]'s section). Prints a markdown table of the pairs where
relabeling saves anything, and the totals over all pairs. Counts, not timings: the planner moves
nothing.

Usage: roles_traffic.py GDAP_TOOL [--vectors conformance/vectors/global.json]
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

CROSS = re.compile(r"between ranks: (\d+) bytes in (\d+) messages")
RELABELED = re.compile(r"roles = \(([^)]*)\)\): between ranks (\d+) bytes in (\d+) messages")


def layouts(path):
    """Valid vectors without aliases as (id, global shape, rank count, {"ranks": [dim_data, ...]})."""
    out = []
    for v in json.loads(pathlib.Path(path).read_text())["vectors"]:
        if not v["expect"].get("valid"):
            continue
        ranks = [r["dim_data"] for r in v["ranks"]]
        if any(not d for dims in ranks for d in dims):
            continue  # the empty alias {} needs the buffer's shape, which the plan files do not carry
        shape = tuple(d["size"] for d in ranks[0])
        out.append((v["id"], shape, len(ranks), {"ranks": ranks}))
    return out


def counts(tool, src, dst):
    """(bytes crossing without roles, with the keeping roles, the roles) for one pair."""
    text = subprocess.run([tool, "plan", src, dst, "--keep-roles"], check=True, capture_output=True, text=True).stdout
    plain = CROSS.search(text)
    relabeled = RELABELED.search(text)
    if not plain or not relabeled:
        sys.exit(f"unexpected output of gdap plan {src} {dst}:\n{text}")
    return int(plain.group(1)), int(relabeled.group(2)), relabeled.group(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tool", help="the gdap command-line tool (build/src/cli/gdap)")
    parser.add_argument("--vectors", default=str(pathlib.Path(__file__).resolve().parents[2] / "conformance/vectors/global.json"))
    args = parser.parse_args()
    found = layouts(args.vectors)
    rows, pairs, total_plain, total_relabeled = [], 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for ident, _, _, doc in found:
            files[ident] = str(pathlib.Path(tmp) / (ident.replace("/", "_") + ".json"))
            pathlib.Path(files[ident]).write_text(json.dumps(doc))
        for a, shape_a, n_a, _ in found:
            for b, shape_b, n_b, _ in found:
                if shape_a != shape_b or n_a != n_b:
                    continue
                plain, relabeled, roles = counts(args.tool, files[a], files[b])
                pairs += 1
                total_plain += plain
                total_relabeled += relabeled
                if relabeled < plain:
                    rows.append((a, b, plain, relabeled, roles))
    print(f"{len(found)} valid layouts, {pairs} ordered pairs of one global shape and rank count")
    print(f"bytes crossing ranks in all pairs (float64): {total_plain} without roles, {total_relabeled} with the keeping roles"
          f" ({100.0 * (total_plain - total_relabeled) / max(total_plain, 1):.1f}% less)\n")
    print("| from | to | bytes crossing | with keeping roles | roles |")
    print("|---|---|---|---|---|")
    for a, b, plain, relabeled, roles in rows:
        print(f"| {a} | {b} | {plain} | {relabeled} | ({roles}) |")


if __name__ == "__main__":
    main()
