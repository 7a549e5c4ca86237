#!/usr/bin/env python3
"""Checks the Fortran binding's C level (bindings/fortran/gdap_c_api.f90) against the C compiler's view
of the ABI (tests/bindings/c_view.py), with the Fortran compiler's own view of the module:

1. Interfaces: gfortran -fc-prototypes prints every bind(C) interface as the C prototype gfortran
   calls; each must be the header's: same result, as many parameters, each of the same width (long for
   int64_t, int for int and enums, signed char for 8 bits, short for 16), a pointer where C has one,
   const exactly where C reads through it, the struct by name. gfortran prints every type(c_ptr) as
   `void *`, by value or not, so for those the module's declarations must say `value` for a C pointer
   (a handle, an address) and not for a C pointer to a pointer (a handle or string a call writes).
2. Layout: a Fortran program compiled with the module prints, for every struct, c_sizeof and each
   component's offset (c_loc difference) and size, each component's default (the _INIT macro) and every
   constant's value; all must be the C compiler's.
Prints "fortran abi: N passed, M failed".

  check_fortran_abi.py --cc CC --fc FC"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "bindings"))

import c_view  # noqa: E402

MODULE = ROOT / "bindings" / "fortran" / "gdap_c_api.f90"
# gfortran's C spelling of an interoperable kind -> (canonical name, size).
FORTRAN_C = {"long": 8, "int": 4, "short": 2, "signed char": 1, "double": 8, "char": 1, "void": 0}
C_SIZES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int": 4,
           "int64_t": 8, "uint64_t": 8, "size_t": 8, "double": 8, "char": 1, "void": 0}


def run(command, where):
    result = subprocess.run(command, capture_output=True, text=True, cwd=where)
    if result.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(command), (result.stderr or result.stdout)[-4000:]))
    return result.stdout


# ---------------------------------------------------------------------------------------------
# 1. Interfaces, as gfortran sees them
# ---------------------------------------------------------------------------------------------

def fortran_prototypes(fc, workdir):
    """name -> (result, [(type, const, pointers)]) from gfortran -fc-prototypes."""
    text = run([fc, "-fc-prototypes", "-fsyntax-only", str(MODULE)], workdir)
    out = {}
    for m in re.finditer(r"^(.+?)\b(gdap_\w+) \((.*)\);$", text, flags=re.M):
        params = []
        for p in [p.strip() for p in m.group(3).split(",") if p.strip()]:
            if re.fullmatch(r"[\w ]+\(\*\w+\)\(.*\)", p):  # type(c_funptr), value: "int (*check)()"
                params.append(("function pointer", False, 0))
                continue
            pointers = p.count("*")
            words = p.replace("*", " ").split()[:-1]
            const = "const" in words
            params.append((" ".join(w for w in words if w != "const"), const, pointers))
        out[m.group(2)] = (m.group(1).strip(), params)
    return out


def c_ptr_dummies(text):
    """function name -> {dummy: True if declared type(c_ptr), value} from the module source."""
    out = {}
    for m in re.finditer(r"^\s*function (gdap_\w+)\(.*?^\s*end function", text, flags=re.M | re.S):
        out[m.group(1)] = {d.group(2): d.group(1) is not None
                           for d in re.finditer(r"^\s*type\(c_ptr\)(, value)?[^:]*:: (\w+)", m.group(0), flags=re.M)}
    return out


def matches(api, ctype, fortran, by_value_c_ptr):
    """Why a gfortran parameter (type, const, pointers) is not the C type, or None when it is."""
    ftype, const, pointers = fortran
    if api.is_callback(ctype) or ftype == "function pointer":
        return None if api.is_callback(ctype) and ftype == "function pointer" else "%s in Fortran for C %s" % (
            ftype, ctype.spelling())
    if ftype == "void" and pointers == 1:  # a type(c_ptr), or an integer(c_int8_t) array printed so
        if not ctype.pointers:
            return "a pointer in Fortran, not in C"
        if by_value_c_ptr is None:
            return None if ctype.base == "void" else "void* in Fortran for a typed C pointer"
        wanted = 1 if by_value_c_ptr else 2
        return None if ctype.pointers == wanted else "type(c_ptr)%s for a C pointer of depth %d" % (
            ", value" if by_value_c_ptr else " by reference", ctype.pointers)
    if pointers != ctype.pointers:
        return "pointer depth %d in Fortran, %d in C" % (pointers, ctype.pointers)
    if pointers and const != ctype.const:
        return "const %s in Fortran (intent(in)), %s in C" % (const, ctype.const)
    if api.struct(ctype.base) or ftype.startswith("gdap_"):
        return None if ftype == ctype.base else "%s in Fortran" % ftype
    if ctype.base == "void" and ftype == "signed char":
        return None  # bytes: integer(c_int8_t) :: handle(*)
    size = 4 if ctype.base in api.enums else C_SIZES.get(ctype.base)
    if FORTRAN_C.get(ftype) != size:
        return "%s (%s bytes) in Fortran, %d bytes in C" % (ftype, FORTRAN_C.get(ftype), size)
    if ctype.base == "double" and ftype != "double":
        return "an integer in Fortran, double in C"
    return None


def check_interfaces(checker, api, fc, workdir):
    protos = fortran_prototypes(fc, workdir)
    dummies = c_ptr_dummies(MODULE.read_text())
    for fn in api.functions:
        if fn.replacement:
            checker.check(fn.name not in protos, "rule: a deprecated name has no interface: %s (use %s)"
                          % (fn.name, fn.replacement))
            continue
        if not checker.check(fn.name in protos, "rule: every C function has a bind(C) interface: %s" % fn.name):
            continue
        result, params = protos[fn.name]
        wanted = "void *" if fn.ret.pointers else "int"
        checker.check(result == wanted, "rule: the result is C's: %s returns %s in C, %s in Fortran"
                      % (fn.name, fn.ret.spelling(), result))
        if not checker.check(len(params) == len(fn.params), "rule: as many parameters as C: %s has %d in C, %d in "
                             "Fortran" % (fn.name, len(fn.params), len(params))):
            continue
        for p, fortran in zip(fn.params, params):
            by_value = dummies.get(fn.name, {}).get(p.name)
            why = matches(api, p.type, fortran, by_value)
            checker.check(why is None, "rule: a parameter is the C parameter: %s '%s' (%s in C): %s"
                          % (fn.name, p.name, p.type.spelling(), why))


# ---------------------------------------------------------------------------------------------
# 2. Layout, defaults and constants, as a Fortran program sees them
# ---------------------------------------------------------------------------------------------

def layout_program(api):
    out = ["program fortran_view", "  use, intrinsic :: iso_c_binding", "  use gdap_c_api", "  implicit none"]
    for s in api.structs:
        out.append("  type(%s), target :: v_%s" % (s.name, s.name))
    out.append("  integer(c_intptr_t) :: base")
    for s in api.structs:
        v = "v_" + s.name
        out += ["  base = transfer(c_loc(%s), base)" % v,
                "  print '(a,1x,i0)', 'struct %s', c_sizeof(%s)" % (s.name, v)]
        for f in s.fields:
            out.append("  print '(a,2(1x,i0))', 'field %s %s', &\n    transfer(c_loc(%s%%%s), base) - base, &\n"
                       "    c_sizeof(%s%%%s)" % (s.name, f.name, v, f.name, v, f.name))
            if s.init:
                for i in range(f.type.extents[0] if f.type.extents else 1):
                    item = "%s%%%s%s" % (v, f.name, "(%d)" % (i + 1) if f.type.extents else "")
                    value = "merge(1, 0, c_associated(%s))" % item if f.type.pointers else "int(%s, c_int64_t)" % item
                    out.append("  print '(a,1x,i0)', 'init %s %s %d', &\n    %s" % (s.name, f.name, i, value))
    for c in api.constants:
        if isinstance(c.value, str):
            out.append("  print '(a)', 'string %s ' // %s" % (c.name, c.name))
        else:
            out.append("  print '(a,1x,i0)', 'constant %s', int(%s, c_int64_t)" % (c.name, c.name))
    out.append("end program fortran_view")
    return "\n".join(out) + "\n"


def fortran_view(api, fc, workdir):
    (workdir / "fortran_view.f90").write_text(layout_program(api))
    run([fc, "-std=f2018", "-c", str(MODULE), "-o", "gdap_c_api.o"], workdir)
    run([fc, "-std=f2018", "fortran_view.f90", "gdap_c_api.o", "-o", "fortran_view"], workdir)
    return c_view.parse(run([str(workdir / "fortran_view")], workdir))


def check_layout(checker, api, c, f):
    for s in api.structs:
        cs, fs = c["structs"][s.name], f["structs"][s.name]
        checker.check(cs["size"] == fs["size"], "rule: c_sizeof is sizeof: %s is %d bytes in Fortran, %d in C"
                      % (s.name, fs["size"], cs["size"]))
        for field in s.fields:
            checker.check(cs["fields"][field.name] == fs["fields"][field.name], "rule: a component lies where the C "
                          "field does: %s%%%s at (offset, size) %s in Fortran, %s in C"
                          % (s.name, field.name, fs["fields"][field.name], cs["fields"][field.name]))
        if s.init:
            differ = ["%s: %s in Fortran, %s in C" % (k, fs["init"].get(k), v) for k, v in cs["init"].items()
                      if fs["init"].get(k) != v]
            checker.check(not differ, "rule: the defaults are %s's: %s" % (s.init_name, "; ".join(differ)))
    for name, value in c["constants"].items():
        checker.check(f["constants"].get(name) == value, "rule: a parameter has the C value: %s is %r in Fortran, "
                      "%r in C" % (name, f["constants"].get(name), value))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cc", default="cc")
    parser.add_argument("--fc", default="gfortran")
    args = parser.parse_args()
    checker = c_view.Checker("fortran abi")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = pathlib.Path(tmp)
        try:
            api, c = c_view.read(args.cc)
            check_interfaces(checker, api, args.fc, workdir)
            check_layout(checker, api, c, fortran_view(api, args.fc, workdir))
        except RuntimeError as e:
            checker.check(False, str(e))
    return checker.finish()


if __name__ == "__main__":
    sys.exit(main())
