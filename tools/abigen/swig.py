"""Writes the SWIG fragment bindings/python/gdap_c_generated.i from the ABI model: what of the Python
extension's interface follows from the header alone. gdap_c.i includes it before gdap.h.
 - every opaque handle a call creates (gdap_x** out) comes back as a pointer object, destroyed with
   gdap_x_destroy if wrapping it fails;
 - every statistics struct (gdap_x_stats* stats, filled by gdap_x_stats_get) comes back as a dict of its
   fields but struct_size and reserved ones, so a field appended in C reaches Python without a hand edit;
 - every collective call runs without the GIL: the ranks of an in-process group are threads of one
   interpreter, and each must reach the call."""
from text import pack

WIDTH = 110
# Calls that are not collective but may wait long, so run without the GIL too.
WAITING = {"gdap_comm_destroy": "waits for the device work that last used the communicator's buffers",
           "gdap_plan_create": "plans at length on large maps"}
FORMATS = {"int64_t": ("L", "long long"), "int32_t": ("i", "int"), "int": ("i", "int"), "uint32_t": ("I", "unsigned int"),
           "double": ("d", "double")}

HEAD = """\
/* gdap_c_generated.i: the part of the SWIG interface (gdap_c.i) that follows from the public headers.
 * GENERATED from the headers by tools/abigen/generate.py: do not edit. After changing a header, run
 *   tools/abigen/generate.py --write
 * (the ctest bindings.generated fails while this file differs from what the generator writes). */
"""


def handle_lines(api):
    out = ["", "/* ---- handles a call creates: opaque pointer objects ---------------------------------------- */"]
    for handle in api.handles:
        destroy = handle + "_destroy"
        if not api.function(destroy):
            continue
        out += ["%%typemap(in, numinputs=0) %s** out (%s* temp) {" % (handle, handle),
                "  temp = NULL;", "  $1 = &temp;", "}",
                "%%typemap(argout) %s** out {" % handle,
                "  if (gdap_py_append($result, SWIG_NewPointerObj(*$1, $descriptor(%s*), 0)) != 0) {" % handle,
                "    %s(*$1);" % destroy, "    SWIG_fail;", "  }", "}"]
    return out


def stats_lines(api):
    out = ["", "/* ---- statistics: a dict of every field but struct_size and reserved ones ------------------ */"]
    for struct in api.structs:
        if not struct.name.endswith("_stats"):
            continue
        fields = [f for f in struct.fields if f.name != "struct_size" and not f.name.startswith("reserved")]
        size_type = struct.fields[0].type.base
        out += ["%%typemap(in, numinputs=0) %s* stats (%s temp) {" % (struct.name, struct.name),
                "  memset(&temp, 0, sizeof temp);", "  temp.struct_size = (%s)sizeof temp;" % size_type,
                "  $1 = &temp;", "}", "%%typemap(argout) %s* stats {" % struct.name]
        codes = ",".join("s:%s" % FORMATS[f.type.base][0] for f in fields)
        values = ['"%s", (%s)$1->%s' % (f.name, FORMATS[f.type.base][1], f.name) for f in fields]
        out += pack(values, '  PyObject* d = Py_BuildValue("{%s}", ' % codes, "                              ",
                    WIDTH, ", ", ");")
        out += ["  if (gdap_py_append($result, d) != 0) SWIG_fail;", "}"]
    return out


def gil_lines(api):
    out = ["", "/* ---- calls that wait for other ranks (or work at length) run without the GIL -------------- */",
           "/* Each notes how many Ctrl-Cs came before it (gdap_c.i), so that its interrupt check stops it at",
           " * the next one. */",
           "%define GDAP_WITHOUT_GIL(NAME)", "%exception NAME {", "  gdap_py_call_sigints = gdap_py_sigints;",
           "  Py_BEGIN_ALLOW_THREADS", "  $action",
           "  Py_END_ALLOW_THREADS", "}", "%enddef"]
    for fn in api.current():
        if fn.collective():
            out.append("GDAP_WITHOUT_GIL(%s)" % fn.name)
        elif fn.name in WAITING:
            out.append("GDAP_WITHOUT_GIL(%s) /* %s */" % (fn.name, WAITING[fn.name]))
    return out


def deprecated_lines(api):
    names = [f for f in api.functions if f.replacement]
    if not names:
        return []
    return ["", "/* ---- deprecated names: not wrapped (Python has the functions that replace them) ------------ */"] + [
        "%%ignore %s; /* use %s */" % (f.name, f.replacement) for f in names]


def generate(api):
    missing = [name for name in WAITING if not api.function(name)]
    if missing:
        raise ValueError("swig.WAITING names functions the headers do not declare: %s" % ", ".join(missing))
    return "\n".join(HEAD.rstrip("\n").split("\n") + handle_lines(api) + stats_lines(api) + gil_lines(api) +
                     deprecated_lines(api)) + "\n"
