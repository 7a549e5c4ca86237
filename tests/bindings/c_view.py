"""The C compiler's view of the ABI, the ground truth the binding checks compare against: a C program
written from the header model (tools/abigen/header.py) and compiled against include/gdap prints every
struct's size, alignment, field offsets and sizes and _INIT values, and every constant's value; while
compiling, a static assertion per function proves that the model's prototype is the header's (GCC's
and Clang's __builtin_types_compatible_p), so a misread header fails here, not in a binding."""
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "abigen"))

import header  # noqa: E402  (tools/abigen/header.py)


def prototype(fn):
    params = ", ".join(p.type.spelling() for p in fn.params) or "void"
    return "%s (*)(%s)" % (fn.ret.spelling(), params)


def source(api):
    out = ["#include <gdap/gdap.h>", "#include <gdap/gdap_mpi.h>", "#include <gdap/gdap_cuda.h>",
           "#include <stddef.h>", "#include <stdio.h>", ""]
    for fn in api.functions:
        out.append('_Static_assert(__builtin_types_compatible_p(__typeof__(&%s), %s), "%s: the model reads '
                   'another prototype than the header declares");' % (fn.name, prototype(fn), fn.name))
    out += ["", "int main(void) {"]
    for s in api.structs:
        out.append('  printf("struct %s %%zu %%zu\\n", sizeof(%s), _Alignof(%s));' % (s.name, s.name, s.name))
        for f in s.fields:
            out.append('  printf("field %s %s %%zu %%zu\\n", offsetof(%s, %s), sizeof(((%s*)0)->%s));'
                       % (s.name, f.name, s.name, f.name, s.name, f.name))
        if s.init:
            out.append("  { %s v = %s;" % (s.name, s.init_name))
            for f in s.fields:
                for i in range(f.type.extents[0] if f.type.extents else 1):
                    item = "v.%s%s" % (f.name, "[%d]" % i if f.type.extents else "")
                    value = "(long long)(%s != NULL)" % item if f.type.pointers else "(long long)%s" % item
                    out.append('    printf("init %s %s %d %%lld\\n", %s);' % (s.name, f.name, i, value))
            out.append("  }")
    for c in api.constants:
        if isinstance(c.value, str):
            out.append('  printf("string %s %%s\\n", %s);' % (c.name, c.name))
        else:
            out.append('  printf("constant %s %%lld\\n", (long long)%s);' % (c.name, c.name))
    out += ["  return 0;", "}", ""]
    return "\n".join(out)


def compile_and_run(cc, text, workdir):
    src, exe = workdir / "c_view.c", workdir / "c_view"
    src.write_text(text)
    build = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-Wno-deprecated-declarations", "-I", str(ROOT / "include"), str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    if build.returncode != 0:
        raise RuntimeError("the C view does not compile (%s):\n%s" % (cc, build.stderr[-4000:]))
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def parse(output):
    """A view from the lines a view program prints: 'struct NAME SIZE [ALIGN]', 'field STRUCT NAME OFFSET
    SIZE', 'init STRUCT FIELD INDEX VALUE', 'constant NAME VALUE', 'string NAME TEXT'."""
    view = {"structs": {}, "constants": {}}
    for line in output.splitlines():
        kind, rest = line.strip().split(" ", 1)
        if kind == "struct":
            name, size, *align = rest.split()
            view["structs"][name] = {"size": int(size), "align": int(align[0]) if align else None, "fields": {},
                                     "init": {}}
        elif kind == "field":
            struct, name, offset, size = rest.split()
            view["structs"][struct]["fields"][name] = (int(offset), int(size))
        elif kind == "init":
            struct, name, index, value = rest.split()
            view["structs"][struct]["init"].setdefault(name, []).append(int(value))
        elif kind == "constant":
            name, value = rest.split()
            view["constants"][name] = int(value)
        elif kind == "string":
            name, value = rest.split(" ", 1)
            view["constants"][name] = value
    return view


def read(cc, api=None):
    """(api model, the C compiler's view) for C compiler `cc`."""
    api = api or header.read()
    with tempfile.TemporaryDirectory() as tmp:
        return api, parse(compile_and_run(cc, source(api), pathlib.Path(tmp)))


class Checker:
    """Counts checks; each failure prints one line naming what differs."""

    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what)
        return ok

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        return 1 if self.failed else 0
