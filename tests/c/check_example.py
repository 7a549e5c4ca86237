#!/usr/bin/env python3
"""Each document shows the example file verbatim, as one fenced block of its language (```c for .c,
```python for .py, ```fortran for .f90), so what readers copy is what the test suite compiles and runs.
Usage: check_example.py EXAMPLE DOC.md..."""
import pathlib
import re
import sys

example = pathlib.Path(sys.argv[1]).read_text().strip("\n")
language = {".c": "c", ".py": "python", ".f90": "fortran"}[pathlib.Path(sys.argv[1]).suffix]
failures = []
for doc in sys.argv[2:]:
    blocks = [b.strip("\n") for b in re.findall(r"```" + language + r"\n(.*?)```", pathlib.Path(doc).read_text(), flags=re.S)]
    if example not in blocks:
        failures.append(doc)
        print("FAIL: %s has no ```%s block equal to %s; copy it in verbatim" % (doc, language, sys.argv[1]))
print("example check: %s" % ("failed" if failures else "passed"))
sys.exit(1 if failures else 0)
