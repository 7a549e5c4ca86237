"""Writes the Fortran module gdap_c_api (bindings/fortran/gdap_c_api.f90) from the ABI model: every
constant as a parameter, every struct as a bind(C) derived type with the _INIT macro's defaults, and
one bind(C) interface per C function, with the C names and parameter order. The hand-written module
gdap (bindings/fortran/gdap.f90) uses it and adds the Fortran conveniences."""
from header import init_value
from text import comment, constant_groups, constant_note, first_sentence, noted, pack

WIDTH = 110
KINDS = {"int8_t": "c_int8_t", "uint8_t": "c_int8_t", "int16_t": "c_int16_t", "uint16_t": "c_int16_t",
         "int32_t": "c_int32_t", "uint32_t": "c_int32_t", "int": "c_int", "int64_t": "c_int64_t",
         "uint64_t": "c_int64_t", "size_t": "c_size_t"}

HEAD = """\
! gdap_c_api: gdap's C ABI (include/gdap/gdap.h, gdap_mpi.h, gdap_cuda.h) for Fortran, over ISO_C_BINDING.
! GENERATED from the headers by tools/abigen/generate.py: do not edit. After changing a header, run
!   tools/abigen/generate.py --write
! (the ctest bindings.generated fails while this file differs from what the generator writes).
!
! Every C function has an interface of the same name with the same parameters in the same order,
! returning the gdap_status as integer(c_int). The translation, parameter by parameter:
!  - handles (gdap_map*, gdap_array*, gdap_comm*, ...) are type(c_ptr), value; a handle that a call
!    creates (gdap_x** out) is type(c_ptr), intent(inout);
!  - a pointer to one value is that value's type: intent(in) when C reads it (const), else intent(inout)
!    (not intent(out): gdap leaves an out-parameter untouched when a call fails, and intent(out) would
!    let the compiler discard the caller's value first);
!  - a pointer to several values (the header's comment [n] after the parameter) is an assumed-size
!    array x(*), in C order (0-based indices, dimension 0 first); one that may be NULL (or NULL) is
!    optional;
!  - strings are character(kind=c_char) arrays, NUL-terminated by the caller: trim(s)//c_null_char;
!  - memory gdap keeps after the call (retained), may find on a device (host or device) or takes as
!    raw bytes of any type (void*) is type(c_ptr), value: c_loc of a TARGET, or a device pointer;
!  - structs are bind(C) derived types, field for field, their defaults the header's _INIT macro
!    (struct_size as the C compiler on LP64 systems computes it: the test bindings.fortran_layout checks).
! The module gdap (gdap.f90) re-exports all of this with Fortran conveniences; use that one.
module gdap_c_api
  use, intrinsic :: iso_c_binding
  implicit none
  private
"""


def kind_of(api, base):
    """The Fortran type spelling of a C value type."""
    if base in KINDS:
        return "integer(%s)" % KINDS[base]
    if base == "double":
        return "real(c_double)"
    if base in api.enums:
        return "integer(c_int)"
    if api.struct(base):
        return "type(%s)" % base
    raise ValueError("no Fortran type for C type '%s'" % base)


def imports_of(spelling):
    """The iso_c_binding kinds or derived types a declaration names (for the interface's import)."""
    inner = spelling[spelling.index("(") + 1:spelling.index(")")]
    return {inner.split("=")[-1]}


def constant_lines(api):
    out = ["", "  ! ---- constants (enums and macros of the headers) ----"]
    for kind, item in constant_groups(api.constants):
        if kind == "heading":
            out += [""] + (comment(item, "  ! ", WIDTH) if item else [])
            continue
        c = item
        if isinstance(c.value, str):
            decl = "  character(len=*), parameter, public :: %s = '%s'" % (c.name, c.value)
        else:
            decl = "  %s, parameter, public :: %s = %d" % (kind_of(api, c.type), c.name, c.value)
        out += noted(decl, constant_note(c), "  ! ", WIDTH)
    return out


def default_text(api, struct, f, value, expr):
    if value is None:
        return "c_null_ptr"
    if isinstance(value, list):
        return "%d" % value[0] if len(set(value)) == 1 else "[%s]" % ", ".join(
            "%d_%s" % (v, KINDS[f.type.base]) for v in value)
    if isinstance(expr, str) and expr.strip().startswith("GDAP_"):
        return expr.strip()
    return "%d" % value


def struct_lines(api, struct):
    out = [""] + comment(first_sentence(struct.doc), "  !> ", WIDTH)
    if struct.init_name:
        size = api.layout(struct.name)[1][0]
        out += comment("Defaults: %s (struct_size %d bytes)." % (struct.init_name, size), "  !> ", WIDTH)
    out.append("  type, bind(C), public :: %s" % struct.name)
    for i, f in enumerate(struct.fields):
        spelling = "type(c_ptr)" if f.type.pointers else kind_of(api, f.type.base)
        name = f.name + ("(%s)" % ", ".join(str(e) for e in f.type.extents) if f.type.extents else "")
        decl = "    %s :: %s" % (spelling, name)
        if struct.init:
            decl += " = " + default_text(api, struct, f, init_value(api, struct, struct.init[i]), struct.init[i])
        out += noted(decl, first_sentence(f.doc), "  ! ", WIDTH)
    out.append("  end type %s" % struct.name)
    return out


def dummy(api, p):
    """(declaration without the name, array suffix) of one dummy argument."""
    t = p.type
    optional = ", optional" if p.nullable else ""
    intent = "intent(in)" if t.const else "intent(inout)"
    if api.is_callback(t):
        return "type(c_funptr), value", ""
    if not t.pointers:
        return ("type(%s), value" % t.base if api.struct(t.base) else kind_of(api, t.base) + ", value"), ""
    if p.retained or p.anywhere:
        return "type(c_ptr), value", ""
    if api.is_handle(t):
        if t.pointers == 1:
            return "type(c_ptr), value", ""
        return "type(c_ptr), intent(inout)", "(*)" if p.length else ""
    if t.base == "void":
        if t.pointers == 2:
            return "type(c_ptr), intent(inout)", ""
        return ("integer(c_int8_t), %s%s" % (intent, optional), "(*)") if p.length else ("type(c_ptr), value", "")
    if t.base == "char":
        if t.pointers == 2:
            return "type(c_ptr), intent(inout)", ""
        if not t.const:
            raise ValueError("a non-const char* parameter ('%s') has no Fortran rule" % p.name)
        return "character(kind=c_char), intent(in)%s" % optional, "(*)"
    if t.pointers == 1:
        return "%s, %s%s" % (kind_of(api, t.base), intent, optional), "(*)" if p.length else ""
    raise ValueError("no Fortran rule for parameter '%s' of C type %s" % (p.name, t.spelling()))


def result_spelling(api, ret):
    if ret.pointers == 1 and ret.base == "char":
        return "type(c_ptr)"
    if not ret.pointers and (ret.base in api.enums or ret.base == "int"):
        return "integer(c_int)"
    raise ValueError("no Fortran rule for a C result of type %s" % ret.spelling())


def statement(items, first, tail=""):
    """A Fortran statement listing `items`, continued with '&' over lines of at most WIDTH columns."""
    lines = pack(items, first, " " * (len(first) - len(first.lstrip()) + 4), WIDTH - 2, ", ", tail)
    return [line + " &" for line in lines[:-1]] + lines[-1:]


def interface_lines(api, fn):
    out = [""] + comment(first_sentence(fn.doc), "    !> ", WIDTH)
    result = "res"
    out += statement([p.name for p in fn.params], "    function %s(" % fn.name,
                     ") bind(C, name='%s') result(%s)" % (fn.name, result))
    decls, used = [], set()
    for p in fn.params:
        spelling, suffix = dummy(api, p)
        decls.append("      %s :: %s%s" % (spelling, p.name, suffix))
        used |= imports_of(spelling)
    ret = result_spelling(api, fn.ret)
    used |= imports_of(ret)
    out += statement(sorted(used), "      import :: ")
    out += decls + ["      %s :: %s" % (ret, result), "    end function %s" % fn.name]
    return out


def generate(api):
    """The module's text. No C comment opener in it: CMake's Ninja generator runs Fortran sources through
    the C preprocessor to find module dependencies."""
    lines = HEAD.rstrip("\n").split("\n")
    lines += constant_lines(api)
    lines += ["", "  ! ---- structs ----"]
    for struct in api.structs:
        lines += struct_lines(api, struct)
    lines += ["", "  ! ---- functions ----"]
    lines += statement([f.name for f in api.current()], "  public :: ")
    lines += ["", "  interface"]
    header = None
    for fn in api.current():
        if fn.header != header:
            lines += ["", "    ! ---- %s ----" % fn.header]
            header = fn.header
        lines += interface_lines(api, fn)
    lines += ["  end interface", "end module gdap_c_api", ""]
    return "\n".join(line.replace("/*", "/ *").replace("*/", "* /") for line in lines)
