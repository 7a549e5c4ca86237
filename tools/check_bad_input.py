#!/usr/bin/env python3
"""Keeps docs/bad-input.md honest: every catalogue row cites `file :: case`, the file exists in the
tree and holds the case name (a table case's rule, a TEST name, a pytest id, a check's label, a ctest
name), the catalogue has at least MIN_ROWS rows, and the protocol-fidelity refusals (issue 22, items
1-8: PROTOCOL_TEXT below) each have a row. Run as the ctest docs.bad_input."""
import pathlib
import sys

MIN_ROWS = 60

# Issue 22's items, each with a fragment that a row's message must hold: the refusal that remains
# where the text's reading now accepts (items 2 and 3), or the error itself.
PROTOCOL_TEXT = {
    "1. periodic: start >= 0, boundary padding": "start (-1) < 0 (periodic too",
    "1. periodic: stop <= size": "stop (17) > size (16) (periodic too",
    "1. periodic halo: one period": "around an interior of 1",
    "2. a missing padding is (0, 0)": "(0, 'padding' not given)",
    "3. only boundary padding may differ": "(only boundary padding may differ)",
    "4. version 0.9": "0.9.0 is older than 0.10",
    "4. dist_type 'n'": "is DAP 0.9's; 0.10 writes the empty dictionary",
    "5. int64 limits": "start (-9223372036854775808) < 0",
    "6. the rank, dimension and key": "proc_grid_size (2) != rank 0's (3)",
    "6. gaps name start and stop": "(start 5 + communication padding[0] 0)",
    "7. gdap exceptions: a key": "key 'padding' must be a sequence of 2 integers",
    "7. gdap exceptions: int64": "shape[0] (1180591620717411303424) does not fit in int64",
    "7. gdap exceptions: dtype": "cannot be shared without a copy",
    "8. one_to_one in [0, size)": "is outside [0, size (3))",
    "8. every index of [0, size) held": "is held by no rank",
}


def rows(text):
    """(line number, cells) of every catalogue row: tables before the 'What the error means' section."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## What the error means"):
            break
        if not line.startswith("| ") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if cells[0] == "bad input":  # a header
            continue
        out.append((number, cells))
    return out


def main():
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    doc = root / "docs" / "bad-input.md"
    problems = []
    found = rows(doc.read_text())
    for number, cells in found:
        if len(cells) != 4:
            problems.append(f"line {number}: {len(cells)} cells, expected 4 (input, status, message, test)")
            continue
        if " :: " not in cells[3]:
            problems.append(f"line {number}: the test cell '{cells[3]}' is not 'file :: case'")
            continue
        path, case = (part.strip() for part in cells[3].split(" :: ", 1))
        source = root / path
        if not source.is_file():
            problems.append(f"line {number}: cited file '{path}' does not exist")
        elif case not in source.read_text(errors="replace"):
            problems.append(f"line {number}: case '{case}' is not in {path}")
        if not cells[1]:
            problems.append(f"line {number}: no status")
    messages = [cells[2] for _, cells in found if len(cells) == 4]
    for item, fragment in PROTOCOL_TEXT.items():
        if not any(fragment in m for m in messages):
            problems.append(f"issue 22 item {item}: no row's message holds '{fragment}'")
    if len(found) < MIN_ROWS:
        problems.append(f"only {len(found)} rows; the catalogue needs at least {MIN_ROWS}")
    for p in problems:
        print(f"docs/bad-input.md: {p}")
    print(f"{len(found)} rows checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
