"""Writes the C layer of the Julia package (bindings/julia/GDAP/src/capi.jl) from the ABI model: every
constant, every struct as an immutable struct with the C field order and types (and its _INIT macro
as a constant), and one `ccall` wrapper per C function, with the C names. GDAP.jl defines `libgdap`,
includes this file and builds the Julia interface on it."""
from header import init_value
from text import comment, constant_groups, constant_note, first_sentence, noted, pack

WIDTH = 110
TYPES = {"int8_t": "Int8", "uint8_t": "UInt8", "int16_t": "Int16", "uint16_t": "UInt16", "int32_t": "Int32",
         "uint32_t": "UInt32", "int": "Cint", "int64_t": "Int64", "uint64_t": "UInt64", "double": "Cdouble",
         "size_t": "Csize_t", "char": "UInt8", "void": "Cvoid"}
# Julia's reserved words that C parameter names may be; such a parameter gets a trailing underscore.
RESERVED = {"local", "global", "function", "end", "begin", "do", "let", "quote", "struct", "module", "export",
            "import", "using", "if", "else", "elseif", "for", "while", "try", "catch", "finally", "return",
            "break", "continue", "const", "abstract", "primitive", "mutable", "macro", "baremodule", "true",
            "false", "type", "in", "isa", "where", "outer"}

HEAD = """\
# gdap's C ABI (include/gdap/gdap.h, gdap_mpi.h, gdap_cuda.h) for Julia: every constant, every struct
# with the C layout, and one `ccall` wrapper per C function, each named as in C.
# GENERATED from the headers by tools/abigen/generate.py: do not edit. After changing a header, run
#   tools/abigen/generate.py --write
# (the ctest bindings.generated fails while this file differs from what the generator writes).
#
# Included by GDAP.jl, which defines `libgdap` before it. The translation, parameter by parameter:
# handles are `Ptr{Cvoid}` and a handle a call creates (`gdap_x** out`) is `Ref{Ptr{Cvoid}}`; a pointer
# to one value is `Ref{T}`, to several values (the header's /*[n]*/) or to one that may be NULL
# (/*or NULL*/) `Ptr{T}` (pass a Vector, a Ref or C_NULL); strings are `Cstring` (`Ptr{UInt8}` when
# NULL is allowed). Every wrapper returns the C result: a gdap_status as `Cint`, or a `Cstring`.
# The test julia.binding checks every struct's field types, offsets and size against the C compiler,
# and every ccall's types against the C prototype, without a Julia runtime.
"""


def julia_name(name):
    return name + "_" if name in RESERVED else name


def value_type(api, base):
    if base in TYPES:
        return TYPES[base]
    if base in api.enums:
        return "Cint"
    if api.struct(base):
        return base
    raise ValueError("no Julia type for C type '%s'" % base)


def field_type(api, ctype):
    if ctype.pointers:
        inner = value_type(api, ctype.base) if not api.is_handle(ctype) else "Cvoid"
        t = inner
        for _ in range(ctype.pointers):
            t = "Ptr{%s}" % t
    else:
        t = value_type(api, ctype.base)
    for extent in reversed(ctype.extents):
        t = "NTuple{%d,%s}" % (extent, t)
    return t


def parameter_type(api, p):
    t = p.type
    if api.is_callback(t):
        return "Ptr{Cvoid}"  # @cfunction(f, Cint, (Ptr{Cvoid},)) or C_NULL
    if not t.pointers:
        return value_type(api, t.base)
    if api.is_handle(t):
        if t.pointers == 1:
            return "Ptr{Cvoid}"
        return "Ptr{Ptr{Cvoid}}" if p.length else "Ref{Ptr{Cvoid}}"
    if t.base == "char" and t.pointers == 1:
        return "Ptr{UInt8}" if p.nullable else "Cstring"
    if t.pointers == 2:
        return "Ref{Ptr{%s}}" % value_type(api, t.base)
    inner = value_type(api, t.base)
    if p.length or p.nullable or p.retained or p.anywhere or t.base == "void":
        return "Ptr{%s}" % inner
    return "Ref{%s}" % inner


def result_type(api, ret):
    if ret.pointers == 1 and ret.base == "char":
        return "Cstring"
    if not ret.pointers and (ret.base in api.enums or ret.base == "int"):
        return "Cint"
    raise ValueError("no Julia rule for a C result of type %s" % ret.spelling())


def constant_lines(api):
    out = ["", "# ---- constants (enums and macros of the headers) ----"]
    for kind, item in constant_groups(api.constants):
        if kind == "heading":
            out += [""] + (comment(item, "# ", WIDTH) if item else [])
            continue
        c = item
        if isinstance(c.value, str):
            decl = 'const %s = "%s"' % (c.name, c.value)
        else:
            decl = "const %s = %s(%d)" % (c.name, value_type(api, c.type), c.value)
        out += noted(decl, constant_note(c), "  # ", WIDTH)
    return out


def literal(api, ctype, value, expr):
    """One field's value in an _INIT constant, typed as the field is."""
    t = field_type(api, ctype)
    if isinstance(value, list):
        inner = value_type(api, ctype.base)
        return "(%s)" % ", ".join("%s(%d)" % (inner, v) for v in value)
    if value is None:
        return "%s(C_NULL)" % t
    if isinstance(expr, str) and expr.strip().startswith("sizeof("):
        return "%s(sizeof(%s))" % (t, expr.strip()[len("sizeof("):-1])
    if isinstance(expr, str) and expr.strip().startswith("GDAP_"):
        return "%s(%s)" % (t, expr.strip())
    return "%s(%d)" % (t, value)


def struct_lines(api, struct):
    out = [""] + comment(first_sentence(struct.doc), "# ", WIDTH)
    out.append("struct %s" % struct.name)
    for f in struct.fields:
        out += noted("    %s::%s" % (f.name, field_type(api, f.type)), first_sentence(f.doc), "  # ", WIDTH)
    out.append("end")
    if struct.init:
        values = [literal(api, f.type, init_value(api, struct, e), e) for f, e in zip(struct.fields, struct.init)]
        out.append("# The C macro %s." % struct.init_name)
        out += pack(values, "const %s = %s(" % (struct.init_name, struct.name), "    ", WIDTH, ", ", ")")
    return out


def wrapper_lines(api, fn):
    names = [julia_name(p.name) for p in fn.params]
    types = [parameter_type(api, p) for p in fn.params]
    tuple_text = "(" + ", ".join(types) + ("," if len(types) == 1 else "") + ")"
    call = "ccall((:%s, libgdap), %s, %s%s)" % (fn.name, result_type(api, fn.ret), tuple_text,
                                                "".join(", " + n for n in names))
    head = "%s(%s) =" % (fn.name, ", ".join(names))
    out = [""] + comment(first_sentence(fn.doc), "# ", WIDTH)
    if len(head) + 1 + len(call) <= WIDTH:
        return out + [head + " " + call]
    out.append(head)
    first = "    ccall((:%s, libgdap), %s, " % (fn.name, result_type(api, fn.ret))
    one_line = first + tuple_text + "".join(", " + n for n in names) + ")"
    if len(one_line) <= WIDTH:
        out.append(one_line)
    elif len(first) + len(tuple_text) + 1 <= WIDTH:
        out.append(first + tuple_text + ",")
        out += pack(names, "          ", "          ", WIDTH, ", ", ")")
    else:
        out += pack(types, first + "(", "          ", WIDTH, ", ", "),")
        out += pack(names, "          ", "          ", WIDTH, ", ", ")")
    return out


def generate(api):
    lines = HEAD.rstrip("\n").split("\n")
    lines += constant_lines(api)
    lines += ["", "# ---- structs ----"]
    for struct in api.structs:
        lines += struct_lines(api, struct)
    lines += ["", "# ---- functions ----"]
    header = None
    for fn in api.current():
        if fn.header != header:
            lines += ["", "# ---- %s ----" % fn.header]
            header = fn.header
        lines += wrapper_lines(api, fn)
    return "\n".join(lines) + "\n"
