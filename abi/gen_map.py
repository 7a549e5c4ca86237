#!/usr/bin/env python3
"""Prints the exported-function names declared with GDAP_API in the public headers, sorted.
Used by tests/c/check_abi.py (ctest c.abi_symbols) to check that abi/gdap.map lists exactly these."""
import pathlib, re, sys
root = pathlib.Path(__file__).resolve().parent.parent
names = set()
for header in sorted((root / "include" / "gdap").glob("*.h")):
    text = header.read_text()
    for m in re.finditer(r"GDAP_API\s+[^;{]*?\b(gdap_\w+)\s*\(", text):
        names.add(m.group(1))
print("\n".join(sorted(names)))
