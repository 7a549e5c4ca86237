#!/usr/bin/env python3
"""The exported ABI is exactly what the headers declare: the GDAP_API functions of include/gdap/
(abi/gen_map.py), the names in abi/gdap.map's global lists, and the dynamic symbols the built
libgdap.so defines must be one set, each exported symbol carries the GDAP_ version node the map
lists it under (a program linked against 0.1 asks for gdap_save_dnpy@GDAP_0.1), and the library
exports nothing else (no C++, fmt or nlohmann symbols). Prints every difference.
Usage: check_abi.py LIBGDAP"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parents[2]


def declared():
    out = subprocess.run([sys.executable, str(root / "abi" / "gen_map.py")], check=True,
                         capture_output=True, text=True).stdout
    return set(out.split())


def listed():
    """name -> the version node abi/gdap.map lists it under."""
    text = re.sub(r"/\*.*?\*/|#[^\n]*", "", (root / "abi" / "gdap.map").read_text(), flags=re.S)
    names = {}
    for node, block in re.findall(r"(GDAP_[\w.]+)\s*{\s*global:(.*?)(?:local:|})", text, flags=re.S):
        names.update((name, node) for name in re.findall(r"([A-Za-z_]\w*)\s*;", block))
    return names


def exported(library):
    nm = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                        text=True).stdout
    symbols = {}
    for line in nm.splitlines():
        fields = line.split()
        if len(fields) < 2 or fields[-2] == "A":  # version nodes themselves (GDAP_0.1)
            continue
        name, _, version = fields[-1].partition("@")
        symbols[name] = version.lstrip("@")
    return symbols


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    headers, mapfile = declared(), listed()
    versions = exported(sys.argv[1])
    library = set(versions)
    failures = []
    for what, a, b in (("declared in include/gdap/ but missing from abi/gdap.map", headers, set(mapfile)),
                       ("listed in abi/gdap.map but declared in no header", set(mapfile), headers),
                       ("declared but not exported by " + sys.argv[1], headers, library),
                       ("exported but not declared (leaked symbols)", library, headers)):
        extra = sorted(a - b)
        if extra:
            failures.append(what + ":\n" + "\n".join("    " + name for name in extra))
    misversioned = sorted("%s@%s (abi/gdap.map: %s)" % (name, versions[name] or "no version", mapfile[name])
                          for name in library & set(mapfile) if versions[name] != mapfile[name])
    if misversioned:
        failures.append("exported without the version node abi/gdap.map lists it under:\n"
                        + "\n".join("    " + s for s in misversioned))
    print("abi: %d functions declared, %d listed in abi/gdap.map, %d exported"
          % (len(headers), len(mapfile), len(library)))
    for f in failures:
        print("FAIL:", f)
    print("abi check: %s" % ("failed" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
