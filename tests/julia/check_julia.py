#!/usr/bin/env python3
"""Checks the Julia binding without a Julia runtime (none exists on our machines), against the C
compiler's view of the ABI (tests/bindings/c_view.py) and the header model (tools/abigen/header.py).

1. Every .jl file under bindings/julia parses with a real Julia grammar (tree-sitter-julia).
2. Every `ccall((:name, lib), Ret, (ArgTypes...), args...)` names a symbol libgdap exports
   (abi/gdap.map), passes as many arguments as it declares types, and its return and argument types
   are the C prototype's: same width and signedness for numbers, a pointer for a pointer with the same
   pointee (a struct by name; `Cvoid` for an opaque handle; `UInt8` for char), `Ptr` where C takes an
   array or NULL (a `Ref` cannot be C_NULL), the struct itself where C passes one by value.
3. Every exported C function has a ccall wrapper, but the deprecated names (GDAP_DEPRECATED).
4. Every Julia struct named like a C struct (gdap_*) has the C fields in order, each of the C field's
   type, and the offsets, sizes, struct size and alignment that Julia's C-compatible layout rules give
   them (computed here from the Julia source) are the ones the C compiler gives (offsetof, sizeof).
5. Every C constant has a Julia constant of the same name and value, and every _INIT constant holds
   the values the C macro holds.
6. Project.toml's version is the header's GDAP_VERSION_*.
7. Every function that hands a Julia array to gdap_array_wrap (`pointer(A)` among its arguments)
   compares `size(A)` with the section: gdap moves as many elements as the dims describe, and a
   mismatch would read or write past the array (hunt 12).
8. The Julia examples in docs/examples parse, and every function they call is exported by the GDAP
   module or is one of the Base functions listed in BASE.
Prints "julia binding: N passed, M failed" and exits 1 on any failure.

  check_julia.py --cc CC"""
import argparse
import pathlib
import re
import sys

import tree_sitter_julia
from tree_sitter import Language, Parser

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "bindings"))

import c_view  # noqa: E402  (puts tools/abigen on the path too)

ABI_MAP = ROOT / "abi" / "gdap.map"
JULIA_DIR = ROOT / "bindings" / "julia"
EXAMPLES_DIR = ROOT / "docs" / "examples"
# Base functions the examples may call besides GDAP's exports.
BASE = {"zeros", "println", "pointer", "print", "length", "sum", "all", "collect"}

# Julia's C-compatible primitive types: name -> (canonical name, size). Alignment equals size.
JULIA_PRIMITIVES = {"Int8": ("int8", 1), "UInt8": ("uint8", 1), "Int16": ("int16", 2), "UInt16": ("uint16", 2),
                    "Int32": ("int32", 4), "Cint": ("int32", 4), "UInt32": ("uint32", 4), "Cuint": ("uint32", 4),
                    "Int64": ("int64", 8), "Clonglong": ("int64", 8), "UInt64": ("uint64", 8),
                    "Csize_t": ("uint64", 8), "Cdouble": ("double", 8), "Float64": ("double", 8),
                    "Float32": ("float", 4), "Cfloat": ("float", 4), "Cvoid": ("void", 0)}
C_PRIMITIVES = {"int8_t": "int8", "uint8_t": "uint8", "int16_t": "int16", "uint16_t": "uint16",
                "int32_t": "int32", "int": "int32", "uint32_t": "uint32", "int64_t": "int64", "uint64_t": "uint64",
                "size_t": "uint64", "double": "double", "float": "float", "void": "void", "char": "char"}


def c_canonical(api, ctype):
    """('ptr', ...) nested for pointers; a primitive's canonical name, 'int32' for an enum, the
    struct's name, or 'opaque' for a handle."""
    if api.is_callback(ctype):
        return ("ptr", "void")  # a function pointer: Ptr{Cvoid} in Julia
    if ctype.pointers:
        return ("ptr", c_canonical(api, ctype.pointee()))
    if ctype.base in C_PRIMITIVES:
        return C_PRIMITIVES[ctype.base]
    if ctype.base in api.enums:
        return "int32"
    if api.is_handle(ctype):
        return "opaque"
    return ctype.base


def julia_canonical(text):
    text = text.replace(" ", "")
    if text == "Cstring":
        return ("ptr", "char")
    m = re.fullmatch(r"(Ptr|Ref)\{(.*)\}", text)
    if m:
        return ("ptr", julia_canonical(m.group(2)))
    if text in JULIA_PRIMITIVES:
        return JULIA_PRIMITIVES[text][0]
    return text


def same_type(c, julia):
    """A C canonical type and a Julia one name the same thing: a Julia Cvoid pointee stands for an
    opaque handle, UInt8 or Int8 for char."""
    if isinstance(c, tuple) or isinstance(julia, tuple):
        return isinstance(c, tuple) and isinstance(julia, tuple) and same_pointee(c[1], julia[1])
    return c == julia


def same_pointee(c, julia):
    if c == "opaque" and julia == "void":
        return True
    if c == "char" and julia in ("uint8", "int8"):
        return True
    return same_type(c, julia)


def node_text(node, source):
    return source[node.start_byte:node.end_byte].decode()


def walk(node):
    yield node
    for child in node.children:
        yield from walk(child)


def named_children(node):
    return [c for c in node.children if c.is_named]


def exported_symbols():
    """The names of every version node's global list in abi/gdap.map."""
    text = re.sub(r"/\*.*?\*/", "", ABI_MAP.read_text(), flags=re.S)
    return {name for block in re.findall(r"global:(.*?)(?:local:|})", text, flags=re.S)
            for name in re.findall(r"(gdap_\w+)\s*;", block)}


class Sources:
    """Every .jl file under bindings/julia, parsed: its ccalls, structs and constants."""

    def __init__(self, checker, parser):
        self.ccalls, self.structs, self.constants = [], {}, {}
        self.files = sorted(JULIA_DIR.rglob("*.jl"))
        checker.check(bool(self.files), "Julia sources found under bindings/julia")
        for path in self.files:
            tree, source = check_parse(checker, parser, path)
            for node in walk(tree.root_node):
                if node.type == "call_expression" and node_text(node.children[0], source) == "ccall":
                    self.ccalls.append((path, node, named_children(node.children[1]), source))
                elif node.type == "struct_definition":
                    self.read_struct(node_text(node, source))
                elif node.type == "const_statement":
                    m = re.fullmatch(r"const\s+(\w+)\s*=\s*(.*)", " ".join(node_text(node, source).split()), re.S)
                    if m:
                        self.constants[m.group(1)] = m.group(2)

    def read_struct(self, text):
        header = re.match(r"(mutable\s+)?struct\s+(\w+)", text)
        if header and not header.group(1):
            fields = re.findall(r"^\s*(\w+)::(\S+)", text, flags=re.M)
            self.structs[header.group(2)] = fields


def check_parse(checker, parser, path):
    source = path.read_bytes()
    tree = parser.parse(source)
    bad = [n for n in walk(tree.root_node) if n.type == "ERROR" or n.is_missing]
    where = ", ".join("line %d" % (n.start_point[0] + 1) for n in bad[:5])
    checker.check(not bad, "%s parses as Julia (%s)" % (path.relative_to(ROOT), where or "clean"))
    return tree, source


# ---------------------------------------------------------------------------------------------
# Julia's layout of an immutable struct of isbits fields: each field at the next multiple of its
# alignment, the struct aligned as its most aligned field and padded to a multiple of that.
# ---------------------------------------------------------------------------------------------

def julia_layout_of(sources, text):
    """(size, alignment) of a Julia field type."""
    text = text.replace(" ", "")
    if re.fullmatch(r"(Ptr\{.*\}|Cstring)", text):
        return 8, 8
    m = re.fullmatch(r"NTuple\{(\d+),(.*)\}", text)
    if m:
        size, align = julia_layout_of(sources, m.group(2))
        return int(m.group(1)) * size, align
    if text in JULIA_PRIMITIVES:
        size = JULIA_PRIMITIVES[text][1]
        return size, size
    if text in sources.structs:
        return julia_struct_layout(sources, text)[1]
    raise KeyError("no Julia layout rule for field type '%s'" % text)


def julia_struct_layout(sources, name):
    offset, align, rows = 0, 1, []
    for field, ftype in sources.structs[name]:
        size, a = julia_layout_of(sources, ftype)
        offset = (offset + a - 1) // a * a
        rows.append((field, ftype, offset, size))
        offset += size
        align = max(align, a)
    return rows, ((offset + align - 1) // align * align, align)


def field_canonical(text):
    m = re.fullmatch(r"NTuple\{(\d+),(.*)\}", text.replace(" ", ""))
    return ("array", int(m.group(1)), field_canonical(m.group(2))) if m else julia_canonical(text)


def c_field_canonical(api, ctype):
    base = c_canonical(api, header_type(ctype.base, ctype.const, ctype.pointers))
    for extent in reversed(ctype.extents):
        base = ("array", extent, base)
    return base


def header_type(base, const, pointers):
    return c_view.header.CType(base, const, pointers)


def check_structs(checker, api, view, sources):
    for name, c in view["structs"].items():
        if not checker.check(name in sources.structs, "rule: every C struct has a Julia mirror: %s" % name):
            continue
        rows, (size, align) = julia_struct_layout(sources, name)
        c_fields = api.struct(name).fields
        checker.check([r[0] for r in rows] == [f.name for f in c_fields], "rule: the mirror has the C fields "
                      "in order: %s has %s, C %s" % (name, [r[0] for r in rows], [f.name for f in c_fields]))
        for (field, ftype, offset, fsize), f in zip(rows, c_fields):
            checker.check(same_type(c_field_canonical(api, f.type), field_canonical(ftype)) or
                          field_canonical(ftype) == c_field_canonical(api, f.type),
                          "rule: a field has the C field's type: %s.%s is %s in Julia, %s in C"
                          % (name, field, ftype, f.type.spelling() + "".join("[%d]" % e for e in f.type.extents)))
            checker.check((offset, fsize) == c["fields"].get(field), "rule: Julia lays a field out where C does: "
                          "%s.%s at offset %d size %d in Julia, %s in C" % (name, field, offset, fsize, c["fields"].get(field)))
        checker.check((size, align) == (c["size"], c["align"]), "rule: the mirror's size and alignment are C's: "
                      "%s is %d bytes aligned %d in Julia, %d aligned %d in C" % (name, size, align, c["size"], c["align"]))


# ---------------------------------------------------------------------------------------------
# Constants and _INIT values, evaluated from the Julia source
# ---------------------------------------------------------------------------------------------

TOKEN = re.compile(r'\s*(?:(?P<int>-?\d+)|(?P<name>[A-Za-z_]\w*(?:\{[^(){}]*(?:\{[^{}]*\})?[^(){}]*\})?)|'
                   r'(?P<string>"[^"]*")|(?P<op>[(),]))')


def tokens(text):
    pos, out = 0, []
    while pos < len(text.rstrip()):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError("cannot read '%s' at '%s'" % (text, text[pos:pos + 20]))
        out.append((m.lastgroup, m.group(m.lastgroup)))
        pos = m.end()
    return out


def evaluate(sources, text):
    """The value of a Julia constant expression of the forms capi.jl writes: 12, T(x), sizeof(S),
    Ptr{T}(C_NULL) (None), (a, b) (a list), S(a, ...) (a list of a struct's values), "text", or the
    name of another constant."""
    items = tokens(text)
    value, rest = expression(sources, items)
    if rest:
        raise ValueError("cannot read '%s': trailing %s" % (text, rest))
    return value


def expression(sources, items):
    kind, text = items[0]
    if kind == "int":
        return int(text), items[1:]
    if kind == "string":
        return text[1:-1], items[1:]
    if kind == "op" and text == "(":
        values, rest = arguments(sources, items[1:])
        return values, rest
    if kind == "name":
        if len(items) > 1 and items[1] == ("op", "("):
            values, rest = arguments(sources, items[2:])
            if text == "sizeof":
                return julia_struct_layout(sources, items[2][1])[1][0], rest
            if text in sources.structs:
                return values, rest
            if len(values) != 1:
                raise ValueError("%s(...) takes one value here" % text)
            return values[0], rest
        if text == "C_NULL":
            return None, items[1:]
        if text in sources.constants:
            return evaluate(sources, sources.constants[text]), items[1:]
        return text, items[1:]
    raise ValueError("unexpected %s" % text)


def arguments(sources, items):
    values = []
    while items[0] != ("op", ")"):
        value, items = expression(sources, items)
        values.append(value)
        if items[0] == ("op", ","):
            items = items[1:]
    return values, items[1:]


def check_constants(checker, api, view, sources):
    for name, value in view["constants"].items():
        if not checker.check(name in sources.constants, "rule: every C constant has a Julia one: %s" % name):
            continue
        julia = evaluate(sources, sources.constants[name])
        checker.check(julia == value, "rule: a constant has the C value: %s is %r in Julia, %r in C" % (name, julia, value))
    for s in api.structs:
        if not s.init:
            continue
        if not checker.check(s.init_name in sources.constants, "rule: every _INIT macro has a Julia constant: %s"
                             % s.init_name):
            continue
        values = evaluate(sources, sources.constants[s.init_name])
        julia = {f.name: [0 if v is None else v for v in (value if isinstance(value, list) else [value])]
                 for f, value in zip(s.fields, values)}
        c = view["structs"][s.name]["init"]
        differ = ["%s: %s in Julia, %s in C" % (f, julia.get(f), c[f]) for f in c if julia.get(f) != c[f]]
        checker.check(len(values) == len(s.fields) and not differ, "rule: an _INIT constant holds the C macro's "
                      "values: %s has %d values for %d fields; %s" % (s.init_name, len(values), len(s.fields),
                                                                     "; ".join(differ) or "no value differs"))


# ---------------------------------------------------------------------------------------------
# ccall signatures against the C prototypes
# ---------------------------------------------------------------------------------------------

def check_ccall(checker, api, exported, path, node, args, source, wrapped):
    where = "%s line %d" % (path.name, node.start_point[0] + 1)
    m = re.match(r"\(\s*:(\w+)\s*,", node_text(args[0], source))
    if not checker.check(m is not None, "%s: ccall target is (:symbol, lib)" % where):
        return
    name = m.group(1)
    wrapped.add(name)
    checker.check(name in exported, "%s: %s is exported by libgdap" % (where, name))
    fn = api.function(name)
    if not checker.check(fn is not None, "%s: %s is declared in the headers" % (where, name)):
        return
    ret = node_text(args[1], source)
    checker.check(same_type(c_canonical(api, fn.ret), julia_canonical(ret)), "rule: the result type is C's: %s "
                  "returns %s in C, %s in the ccall" % (name, fn.ret.spelling(), ret))
    types = [node_text(c, source) for c in named_children(args[2])]
    checker.check(len(types) == len(fn.params), "rule: as many argument types as C parameters: %s has %d, the "
                  "ccall %d (%s)" % (name, len(fn.params), len(types), where))
    checker.check(len(args) - 3 == len(types), "%s: %s declares %d argument types but passes %d arguments"
                  % (where, name, len(types), len(args) - 3))
    for p, julia in zip(fn.params, types):
        checker.check(same_type(c_canonical(api, p.type), julia_canonical(julia)), "rule: an argument type is the "
                      "C parameter's: %s '%s' is %s in C, %s in the ccall" % (name, p.name, p.type.spelling(), julia))
        if p.length or p.nullable:
            checker.check(julia.startswith("Ptr{"), "rule: an array or a parameter that may be NULL is a Ptr (a "
                          "Ref cannot be C_NULL or many): %s '%s' is %s" % (name, p.name, julia))


def calls_of(node, source, callee):
    """The call expressions under `node` whose callee is the identifier `callee`."""
    return [n for n in walk(node) if n.type == "call_expression" and n.children[0].type == "identifier"
            and node_text(n.children[0], source) == callee]


def first_argument(call, source):
    args = named_children(call.children[1]) if len(call.children) > 1 else []
    return node_text(args[0], source) if args else None


def check_wrapped_sizes(checker, parser):
    """Rule 7: a Julia array wrapped by pointer has its size compared with the section."""
    wraps = 0
    for path in sorted(JULIA_DIR.rglob("*.jl")):
        tree, source = check_parse(checker, parser, path)
        for fn in (n for n in walk(tree.root_node) if n.type == "function_definition"):
            sized = {first_argument(c, source) for c in calls_of(fn, source, "size")}
            for wrap in calls_of(fn, source, "gdap_array_wrap"):
                for ptr in calls_of(wrap, source, "pointer"):
                    wraps += 1
                    array = first_argument(ptr, source)
                    checker.check(array in sized, "rule: a Julia array handed to gdap_array_wrap has its size "
                                  "compared with the section: %s line %d wraps pointer(%s) and %s size(%s)"
                                  % (path.name, wrap.start_point[0] + 1, array,
                                     "checks" if array in sized else "never checks", array))
    checker.check(wraps > 0, "Julia functions wrapping a Julia array by pointer found (%d)" % wraps)


def check_example(checker, parser, path, exports):
    tree, source = check_parse(checker, parser, path)
    for node in walk(tree.root_node):
        if node.type == "call_expression" and node.children[0].type == "identifier":
            name = node_text(node.children[0], source)
            checker.check(name in exports or name in BASE, "%s line %d: %s is exported by GDAP or in Base"
                          % (path.relative_to(ROOT), node.start_point[0] + 1, name))


def module_exports():
    text = (JULIA_DIR / "GDAP" / "src" / "GDAP.jl").read_text()
    return {name.strip() for line in re.findall(r"^export (.*)$", text, flags=re.M) for name in line.split(",")}


def main():
    parser_args = argparse.ArgumentParser()
    parser_args.add_argument("--cc", default="cc")
    args = parser_args.parse_args()
    checker = c_view.Checker("julia binding")
    parser = Parser(Language(tree_sitter_julia.language()))
    api, view = c_view.read(args.cc)
    exported, wrapped = exported_symbols(), set()
    names = {f.name for f in api.functions}
    checker.check(names == exported, "the headers' functions match abi/gdap.map (only in the headers: %s; only in "
                  "the map: %s)" % (sorted(names - exported), sorted(exported - names)))
    sources = Sources(checker, parser)
    for path, node, ccall_args, source in sources.ccalls:
        check_ccall(checker, api, exported, path, node, ccall_args, source, wrapped)
    check_structs(checker, api, view, sources)
    check_constants(checker, api, view, sources)
    project = re.search(r'^version = "([^"]+)"', (JULIA_DIR / "GDAP" / "Project.toml").read_text(), flags=re.M)
    library = "%d.%d.%d" % tuple(view["constants"]["GDAP_VERSION_" + p] for p in ("MAJOR", "MINOR", "PATCH"))
    checker.check(project is not None and project.group(1) == library, "rule: the package's version is the "
                  "library's: Project.toml says %s, gdap.h %s" % (project and project.group(1), library))
    check_wrapped_sizes(checker, parser)
    examples = sorted(EXAMPLES_DIR.glob("*.jl"))
    checker.check(bool(examples), "Julia examples found under docs/examples")
    for path in examples:
        check_example(checker, parser, path, module_exports())
    for fn in api.functions:
        if fn.replacement:
            checker.check(fn.name not in wrapped, "rule: a deprecated name is not wrapped: %s (use %s)"
                          % (fn.name, fn.replacement))
        else:
            checker.check(fn.name in wrapped, "rule: every C function has a ccall wrapper: %s" % fn.name)
    return checker.finish()


if __name__ == "__main__":
    sys.exit(main())
