#!/usr/bin/env python3
"""The exported ABI is exactly what the headers declare: the GDAP_API functions of include/gdap/,
the names listed in abi/gdap.map, and the dynamic symbols of the built libgdap.so must be one set,
and the library exports nothing else (no C++, no fmt, no nlohmann). Usage: check_abi.py LIBGDAP"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parents[2]
declared = set(subprocess.run([sys.executable, str(root / "abi" / "gen_map.py")], check=True,
                              capture_output=True, text=True).stdout.split())
listed_block = (root / "abi" / "gdap.map").read_text().split("global:", 1)[1].split("local:", 1)[0]
listed = set(re.findall(r"(gdap_\w+)\s*;", listed_block))
nm = subprocess.run(["nm", "-D", "--defined-only", sys.argv[1]], check=True, capture_output=True, text=True).stdout
exported = {line.split()[-1].split("@")[0] for line in nm.splitlines() if line.split()[-2:-1] != ["A"]}
exported.discard("")

failures = []
for name, a, b in (("declared in the headers but not in abi/gdap.map", declared, listed),
                   ("in abi/gdap.map but not declared", listed, declared),
                   ("declared but not exported by the library", declared, exported),
                   ("exported but not declared (leaked symbols)", exported, declared)):
    extra = sorted(a - b)
    if extra:
        failures.append("%s: %s" % (name, ", ".join(extra[:20])))
print("abi: %d functions declared, %d listed, %d exported" % (len(declared), len(listed), len(exported)))
for f in failures:
    print("FAIL:", f)
print("abi check: %s" % ("failed" if failures else "passed"))
sys.exit(1 if failures else 0)
