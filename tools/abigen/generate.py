#!/usr/bin/env python3
"""Writes the bindings' C-level layers from the public headers (the one description of the ABI):

  bindings/fortran/gdap_c_api.f90       Fortran constants, bind(C) types and interfaces
  bindings/julia/GDAP/src/capi.jl       Julia constants, struct mirrors and ccall wrappers
  bindings/python/gdap_c_generated.i    SWIG typemaps for handles and statistics, calls without the GIL

  tools/abigen/generate.py            print what would change
  tools/abigen/generate.py --write    write the files
  tools/abigen/generate.py --check    fail, showing the difference, unless the files are current

Needs tree-sitter and tree-sitter-c (tools/deps.sh installs them into .deps/venv)."""
import difflib
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import fortran  # noqa: E402
import header  # noqa: E402
import julia  # noqa: E402
import swig  # noqa: E402

OUTPUTS = {
    "bindings/fortran/gdap_c_api.f90": fortran.generate,
    "bindings/julia/GDAP/src/capi.jl": julia.generate,
    "bindings/python/gdap_c_generated.i": swig.generate,
}


def main():
    api = header.read()
    stale = []
    for relative, make in OUTPUTS.items():
        path = header.ROOT / relative
        fresh = make(api)
        old = path.read_text() if path.exists() else ""
        if old == fresh:
            continue
        stale.append(relative)
        if "--write" in sys.argv:
            path.write_text(fresh)
            print("abigen: wrote", relative)
        else:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), fresh.splitlines(True),
                                                       "a/" + relative, "b/" + relative))
    if "--check" in sys.argv:
        if stale:
            print("abigen: FAIL: %s differ from what the headers generate; run tools/abigen/generate.py --write"
                  % ", ".join(stale))
        print("abigen check: %s" % ("failed" if stale else "passed"))
        return 1 if stale else 0
    if not stale:
        print("abigen: every generated file is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
