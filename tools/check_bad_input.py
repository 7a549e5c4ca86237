#!/usr/bin/env python3
"""Keeps docs/bad-input.md honest: every catalogue row cites `file :: case`, the file exists in the
tree and holds the case name (a table case's rule, a TEST name, a pytest id, a check's label, a ctest
name), and the catalogue has at least MIN_ROWS rows. Run as the ctest docs.bad_input."""
import pathlib
import sys

MIN_ROWS = 60


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
    if len(found) < MIN_ROWS:
        problems.append(f"only {len(found)} rows; the catalogue needs at least {MIN_ROWS}")
    for p in problems:
        print(f"docs/bad-input.md: {p}")
    print(f"{len(found)} rows checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
