#!/usr/bin/env python3
"""Checks the Julia binding without a Julia runtime (none exists on our machines).

1. Every .jl file under bindings/julia parses with a real Julia grammar (tree-sitter-julia):
   no ERROR or MISSING node.
2. Every `ccall((:name, lib), Ret, (ArgTypes...), args...)` names a symbol that libgdap exports
   (abi/gdap.map), declares as many argument types as the C prototype in include/gdap/gdap.h has
   parameters, passes as many arguments as it declares, and uses Julia types that match the C
   types (table below).
3. Every exported C function has a ccall wrapper.
4. `struct Dim`, `DType`, `Device`, `Run` list the C struct's fields in the same order.
5. The Julia examples in docs/examples parse, and every function they call is exported by the
   GDAP module or is one of the Base functions listed in BASE.
Prints "julia binding: N passed, M failed" and exits 1 on any failure.
"""
import pathlib
import re
import sys

import tree_sitter_julia
from tree_sitter import Language, Parser

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADER = ROOT / "include" / "gdap" / "gdap.h"
ABI_MAP = ROOT / "abi" / "gdap.map"
JULIA_DIR = ROOT / "bindings" / "julia"
EXAMPLES_DIR = ROOT / "docs" / "examples"
# Base functions the examples may call besides GDAP's exports.
BASE = {"zeros", "println", "pointer", "print", "length", "sum", "all", "collect"}

# C parameter type -> Julia types accepted in the ccall's type tuple.
HANDLE = {"Ptr{Cvoid}"}
OUT_HANDLE = {"Ref{Ptr{Cvoid}}"}
C_TO_JULIA = {
    "int64_t": {"Int64"},
    "int": {"Cint"},
    "gdap_status": {"Cint"},
    "gdap_reduce_op": {"Cint"},
    "int64_t*": {"Ptr{Int64}", "Ref{Int64}"},
    "const int64_t*": {"Ptr{Int64}", "Ref{Int64}"},
    "int*": {"Ref{Cint}"},
    "gdap_dim*": {"Ref{Dim}", "Ptr{Dim}"},
    "const gdap_dim*": {"Ref{Dim}", "Ptr{Dim}"},
    "gdap_run*": {"Ptr{Run}"},
    "gdap_dtype": {"DType"},
    "gdap_device": {"Device"},
    "gdap_dtype*": {"Ref{DType}"},
    "gdap_device*": {"Ref{Device}"},
    "const char*": {"Cstring", "Ptr{UInt8}"},
    "const char**": {"Ref{Ptr{UInt8}}"},
    "void*": HANDLE,
    "const void*": HANDLE,
    "void**": OUT_HANDLE,
    "gdap_map*": HANDLE,
    "const gdap_map*": HANDLE,
    "gdap_array*": HANDLE,
    "const gdap_array*": HANDLE,
    "gdap_map**": OUT_HANDLE,
    "gdap_array**": OUT_HANDLE,
    "struct DLManagedTensorVersioned*": HANDLE,
    "struct DLManagedTensor*": HANDLE,
    "struct DLManagedTensorVersioned**": OUT_HANDLE,
    "struct DLManagedTensor**": OUT_HANDLE,
    "gdap_comm*": HANDLE,
    "const gdap_comm*": HANDLE,
    "gdap_comm**": OUT_HANDLE | {"Ptr{Ptr{Cvoid}}"},
    "gdap_plan*": HANDLE,
    "const gdap_plan*": HANDLE,
    "gdap_plan**": OUT_HANDLE,
    "gdap_map**": OUT_HANDLE,
    "gdap_comm_kind*": {"Ref{Cint}"},
    "gdap_plan_stats*": {"Ref{PlanStats}"},
    "gdap_halo*": HANDLE,
    "const gdap_halo*": HANDLE,
    "gdap_halo**": OUT_HANDLE,
    "gdap_exchange*": HANDLE,
    "gdap_exchange**": OUT_HANDLE,
    "const gdap_halo_options*": {"Ref{HaloOptions}"},
    "const gdap_zarr_options*": {"Ref{ZarrOptions}"},
    "gdap_halo_stats*": {"Ref{HaloStats}"},
    "double": {"Cdouble"},
    "gdap_interrupt_check": HANDLE,
    "gdap_gemm*": HANDLE,
    "const gdap_gemm*": HANDLE,
    "gdap_gemm**": OUT_HANDLE,
    "const gdap_gemm_options*": {"Ref{GemmOptions}"},
    "const gdap_axis_layout*": {"Ptr{AxisLayout}"},
    "gdap_gemm_stats*": {"Ref{GemmStats}"},
}
C_RETURN_TO_JULIA = {"gdap_status": {"Cint"}, "int": {"Cint"}, "const char*": {"Cstring", "Ptr{UInt8}"}}
STRUCTS = {"Dim": "gdap_dim", "DType": "gdap_dtype", "Device": "gdap_device", "Run": "gdap_run",
           "PlanStats": "gdap_plan_stats", "HaloOptions": "gdap_halo_options", "HaloStats": "gdap_halo_stats",
           "ZarrOptions": "gdap_zarr_options", "GemmOptions": "gdap_gemm_options", "GemmStats": "gdap_gemm_stats",
           "AxisLayout": "gdap_axis_layout"}


def normalise(c_type):
    c_type = re.sub(r"\s+", " ", c_type.strip())
    return re.sub(r"\s*\*", "*", c_type)


def c_prototypes():
    """name -> (return type, [parameter types]) for every GDAP_API function of the header."""
    # gdap.h and the engine headers beside it (gdap_mpi.h, gdap_cuda.h).
    text = re.sub(r"/\*.*?\*/", "", "\n".join(h.read_text() for h in sorted(HEADER.parent.glob("*.h"))), flags=re.S)
    text = re.sub(r"static inline.*?\n}\n", "", text, flags=re.S)
    protos = {}
    for m in re.finditer(r"GDAP_API\s+([^;{(]*?)\b(gdap_\w+)\s*\(([^)]*)\)\s*;", text):
        ret, name, params = normalise(m.group(1)), m.group(2), m.group(3).strip()
        types = []
        if params and params != "void":
            for p in params.split(","):
                p = normalise(p)
                types.append(normalise(re.sub(r"\b\w+$", "", p)) if re.search(r"[\w*]\s*\w+$", p) else p)
        protos[name] = (ret, types)
    return protos


def c_struct_fields(name):
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name), text, flags=re.S).group(1)
    return [re.sub(r"\[.*\]", "", decl.split()[-1]).lstrip("*") for decl in body.split(";") if decl.strip()]


def exported_symbols():
    text = ABI_MAP.read_text()
    block = text.split("global:", 1)[1].split("local:", 1)[0]
    return set(re.findall(r"(gdap_\w+)\s*;", block))


def node_text(node, source):
    return source[node.start_byte:node.end_byte].decode()


def walk(node):
    yield node
    for child in node.children:
        yield from walk(child)


def named_children(node):
    return [c for c in node.children if c.is_named]


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what)


def check_parse(checker, parser, path):
    source = path.read_bytes()
    tree = parser.parse(source)
    bad = [n for n in walk(tree.root_node) if n.type == "ERROR" or n.is_missing]
    where = ", ".join("line %d" % (n.start_point[0] + 1) for n in bad[:5])
    checker.check(not bad, "%s parses as Julia (%s)" % (path.relative_to(ROOT), where or "clean"))
    return tree, source


def ccalls(tree, source):
    for node in walk(tree.root_node):
        if node.type != "call_expression":
            continue
        callee = node.children[0]
        if node_text(callee, source) != "ccall":
            continue
        args = [c for c in named_children(node.children[1])]
        yield node, args


def check_ccall(checker, protos, exported, node, args, source, wrapped):
    line = node.start_point[0] + 1
    target = args[0]
    m = re.match(r"\(\s*:(\w+)\s*,", node_text(target, source))
    if not m:
        checker.check(False, "line %d: ccall target is not (:symbol, lib)" % line)
        return
    name = m.group(1)
    wrapped.add(name)
    checker.check(name in exported, "line %d: %s is exported by libgdap" % (line, name))
    if name not in protos:
        checker.check(False, "line %d: %s is declared in gdap.h" % (line, name))
        return
    c_ret, c_params = protos[name]
    ret = node_text(args[1], source)
    checker.check(ret in C_RETURN_TO_JULIA.get(c_ret, set()),
                  "line %d: %s returns %s in C, ccall says %s" % (line, name, c_ret, ret))
    types_node = args[2]
    julia_types = [node_text(c, source) for c in named_children(types_node)]
    checker.check(len(julia_types) == len(c_params),
                  "line %d: %s has %d C parameters, ccall declares %d" % (line, name, len(c_params), len(julia_types)))
    passed = len(args) - 3
    checker.check(passed == len(julia_types),
                  "line %d: %s declares %d argument types but passes %d arguments" % (line, name, len(julia_types), passed))
    for i, (c_type, j_type) in enumerate(zip(c_params, julia_types)):
        accepted = C_TO_JULIA.get(c_type)
        checker.check(accepted is not None and j_type in accepted,
                      "line %d: %s parameter %d is C '%s', Julia '%s' (accepted: %s)"
                      % (line, name, i + 1, c_type, j_type, sorted(accepted or [])))


def check_structs(checker, tree, source):
    for node in walk(tree.root_node):
        if node.type != "struct_definition":
            continue
        text = node_text(node, source)
        header = re.match(r"(?:mutable\s+)?struct\s+(\w+)", text)
        if not header or header.group(1) not in STRUCTS:
            continue
        julia_fields = re.findall(r"^\s*(\w+)::", text, flags=re.M)
        c_fields = c_struct_fields(STRUCTS[header.group(1)])
        checker.check(julia_fields == c_fields, "struct %s fields %s match C %s fields %s"
                      % (header.group(1), julia_fields, STRUCTS[header.group(1)], c_fields))


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
    checker = Checker()
    parser = Parser(Language(tree_sitter_julia.language()))
    protos, exported, wrapped = c_prototypes(), exported_symbols(), set()
    checker.check(len(protos) == len(exported) and set(protos) == exported,
                  "gdap.h declarations match abi/gdap.map (%d vs %d)" % (len(protos), len(exported)))
    files = sorted(JULIA_DIR.rglob("*.jl"))
    checker.check(bool(files), "Julia sources found under bindings/julia")
    for path in files:
        tree, source = check_parse(checker, parser, path)
        for node, args in ccalls(tree, source):
            check_ccall(checker, protos, exported, node, args, source, wrapped)
        check_structs(checker, tree, source)
    examples = sorted(EXAMPLES_DIR.glob("*.jl"))
    checker.check(bool(examples), "Julia examples found under docs/examples")
    for path in examples:
        check_example(checker, parser, path, module_exports())
    for name in sorted(exported - wrapped):
        checker.check(False, "%s has no ccall wrapper in the Julia binding" % name)
    print("julia binding: %d passed, %d failed" % (checker.passed, checker.failed))
    return 1 if checker.failed else 0


if __name__ == "__main__":
    sys.exit(main())
