"""The ABI as one model, read from the public headers themselves (include/gdap/gdap.h, gdap_mpi.h,
gdap_cuda.h) with tree-sitter-c: every exported function with its parameters, every struct with its
fields and _INIT macro, every enum and integer or string macro, every opaque handle. The binding
generators (tools/abigen/generate.py) and the binding checks (tests/bindings) both start here.

What C cannot say about a pointer parameter, the header says in a short comment right after the
parameter's name, which this module reads and refuses when it does not know it:
    int64_t* shape /*[ndim]*/            an array of ndim elements (any expression of the parameters)
    const int64_t* strides /*[ndim] or NULL*/   an array that may be NULL
    gdap_dtype* dtype /*or NULL*/        one element that may be NULL
    const int64_t* indices /*[n], retained*/    kept by gdap after the call (bindings pass an address)
    int64_t* ranks /*[count], host or device*/  an address that may be device memory
A pointer parameter without a comment points at one element (an out-parameter when not const)."""
import ast
import pathlib
import re
from dataclasses import dataclass, field

import tree_sitter_c
from tree_sitter import Language, Parser

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADERS = ("gdap.h", "gdap_mpi.h", "gdap_cuda.h")

# Sizes and alignments of the C types the headers use, on the LP64 platforms gdap supports.
SCALARS = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int": 4,
           "int64_t": 8, "uint64_t": 8, "double": 8, "char": 1, "size_t": 8}
POINTER_SIZE = 8
# Macros whose type is not the house's int64_t: version numbers compare with gdap_version()'s int.
MACRO_TYPES = (("GDAP_VERSION_", "int"), ("GDAP_PROTOCOL_", "int"))
NOT_CONSTANTS = re.compile(r"^GDAP(_\w+)?_H$|^GDAP_API$")


class HeaderError(Exception):
    """The header says something this model does not read; the message names the place."""


@dataclass(frozen=True)
class CType:
    base: str               # 'int64_t', 'gdap_dim', 'void', 'char', 'struct DLManagedTensor', ...
    const: bool = False     # the pointee (or the value) is const
    pointers: int = 0       # pointer depth
    extents: tuple = ()     # array extents of a struct field, e.g. (2,)

    def spelling(self):
        return ("const " if self.const else "") + self.base + "*" * self.pointers

    def pointee(self):
        return CType(self.base, self.const, self.pointers - 1)


@dataclass
class Param:
    name: str
    type: CType
    length: str = None      # array length expression, None for one element
    nullable: bool = False
    retained: bool = False
    anywhere: bool = False  # host or device address


@dataclass
class Function:
    name: str
    ret: CType
    params: list
    doc: str
    header: str
    replacement: str = None  # for a deprecated name (GDAP_DEPRECATED), the function that replaces it

    def collective(self):
        return re.match(r"Collective\b", self.doc) is not None


@dataclass
class Field:
    name: str
    type: CType
    doc: str


@dataclass
class Struct:
    name: str
    fields: list
    doc: str
    init: list = None       # the _INIT macro's values, as C expressions (nested lists for arrays)
    init_name: str = None


@dataclass
class Constant:
    name: str
    value: object           # int or str
    doc: str
    type: str = "int"       # the C type a binding gives it
    enum: str = None        # the enum it belongs to (None for a macro or an anonymous enum)
    spelling: str = None    # as written, for character literals ('b')
    group: int = 0          # constants of one enum, or macros that follow one another, share a group
    heading: str = None     # the doc comment above the group


@dataclass
class Api:
    functions: list = field(default_factory=list)
    structs: list = field(default_factory=list)
    constants: list = field(default_factory=list)
    enums: dict = field(default_factory=dict)     # enum typedef name -> its doc comment
    handles: list = field(default_factory=list)   # opaque typedef names, in header order
    foreign: list = field(default_factory=list)   # forward-declared structs of other headers (DLPack)
    callbacks: dict = field(default_factory=dict) # function-pointer typedef name -> its doc comment
    last_group: int = 0                           # the group of the constant read last

    def struct(self, name):
        return next((s for s in self.structs if s.name == name), None)

    def function(self, name):
        return next((f for f in self.functions if f.name == name), None)

    def current(self):
        """The functions less the deprecated names: what the bindings wrap."""
        return [f for f in self.functions if not f.replacement]

    def is_callback(self, ctype):
        """A function pointer passed by value (a typedef such as gdap_interrupt_check)."""
        return not ctype.pointers and ctype.base in self.callbacks

    def is_handle(self, ctype):
        return ctype.base in self.handles or ctype.base in self.foreign

    def sizeof(self, ctype):
        return layout_of(self, ctype)[0]

    def layout(self, struct_name):
        """[(field, offset, size)] and (size, alignment) of a struct, by the C rules for LP64."""
        offset, align, rows = 0, 1, []
        for f in self.struct(struct_name).fields:
            size, a = layout_of(self, f.type)
            offset = (offset + a - 1) // a * a
            rows.append((f, offset, size))
            offset += size
            align = max(align, a)
        return rows, ((offset + align - 1) // align * align, align)


def layout_of(api, ctype):
    count = 1
    for e in ctype.extents:
        count *= e
    if ctype.pointers or ctype.base in api.callbacks:
        return POINTER_SIZE * count, POINTER_SIZE
    if ctype.base in SCALARS:
        return SCALARS[ctype.base] * count, SCALARS[ctype.base]
    if ctype.base in api.enums:
        return 4 * count, 4
    if api.struct(ctype.base):
        _, (size, align) = api.layout(ctype.base)
        return size * count, align
    raise HeaderError("no size known for C type '%s'" % ctype.spelling())


# ---------------------------------------------------------------------------------------------
# Reading the headers
# ---------------------------------------------------------------------------------------------

def _blank(match):
    return re.sub(r"[^\n]", " ", match.group(0))


MARKERS = re.compile(r"\bGDAP_API\b|\bGDAP_DEPRECATED\(\w+\)")


def prepare(text):
    """The header with what C++ and the attribute macros add blanked out (byte offsets kept), so that
    tree-sitter-c parses plain C: the `#ifdef __cplusplus` blocks, and GDAP_API and
    GDAP_DEPRECATED(replacement) before declarations."""
    text = re.sub(r"#ifdef __cplusplus\n.*?#endif", _blank, text, flags=re.S)
    return "\n".join(line if line.lstrip().startswith("#") else MARKERS.sub(_blank, line) for line in text.split("\n"))


def doc_text(comment):
    """The text of a /** ... */ or /**< ... */ comment, one paragraph, no decoration."""
    body = re.sub(r"^/\*\*<?|\*/$", "", comment.strip())
    lines = [re.sub(r"^\s*\*( |$)", "", line).strip() for line in body.split("\n")]
    return " ".join(line for line in lines if line).strip()


class Reader:
    def __init__(self, path):
        self.path = path
        self.source = prepare(path.read_text()).encode()
        self.original = path.read_text().encode()
        tree = Parser(Language(tree_sitter_c.language())).parse(self.source)
        bad = [n for n in walk(tree.root_node) if n.type == "ERROR" or n.is_missing]
        if bad:
            raise HeaderError("%s line %d: tree-sitter-c cannot parse this" % (path.name, bad[0].start_point[0] + 1))
        self.root = tree.root_node

    def text(self, node):
        return self.source[node.start_byte:node.end_byte].decode()

    def where(self, node):
        return "%s line %d" % (self.path.name, node.start_point[0] + 1)

    def top_level(self):
        """The declarations of the file in order, each with the doc comment just before it. Goes into
        the include guard; skips other conditional blocks (visibility macro, inline MPI helper)."""
        def items(node):
            previous = None
            for child in node.children:
                if child.type == "preproc_ifdef" and self._is_guard(child):
                    yield from items(child)
                elif child.type == "comment":
                    previous = child
                    continue
                elif child.type not in ("preproc_if", "preproc_ifdef", "preproc_include", "#ifndef",
                                        "#endif", "identifier", "#define", "preproc_call"):
                    yield child, previous
                previous = None
        return items(self.root)

    def _is_guard(self, node):
        name = node.child_by_field_name("name")
        return node.children[0].type == "#ifndef" and name is not None and re.match(r"GDAP\w*_H$", self.text(name))

    def markers(self, node):
        """(exported, replacement): whether GDAP_API stood before the declaration, and the name in its
        GDAP_DEPRECATED(name) if any (prepare() blanked both)."""
        line_start = self.original.rfind(b"\n", 0, node.start_byte) + 1
        m = re.fullmatch(r"GDAP_API(?:\s+GDAP_DEPRECATED\((\w+)\))?",
                         self.original[line_start:node.start_byte].decode().strip())
        return m is not None, m.group(1) if m else None


def walk(node):
    yield node
    for child in node.children:
        yield from walk(child)


def type_of(reader, node):
    """The CType of a declaration, parameter or field node, and its declarator's name node."""
    const = any(c.type == "type_qualifier" and reader.text(c) == "const" for c in node.children)
    type_node = node.child_by_field_name("type")
    base = reader.text(type_node)
    if type_node.type in ("struct_specifier", "enum_specifier"):
        base = re.sub(r"\s+", " ", base)
    declarator = node.child_by_field_name("declarator")
    pointers, extents = 0, []
    while declarator is not None and declarator.type in ("pointer_declarator", "array_declarator"):
        if declarator.type == "pointer_declarator":
            if any(c.type == "type_qualifier" for c in declarator.children):
                raise HeaderError("%s: a const pointer ('* const') is not read" % reader.where(declarator))
            pointers += 1
        else:
            extents.append(int(reader.text(declarator.child_by_field_name("size")), 0))
        declarator = declarator.child_by_field_name("declarator")
    return CType(base, const, pointers, tuple(extents)), declarator


ANNOTATION = re.compile(r"^(?:\[(?P<length>[^\]]+)\])?\s*(?P<rest>.*)$")
FLAGS = {"or NULL": "nullable", "retained": "retained", "host or device": "anywhere"}


def parse_annotation(text, where):
    body = text.strip()[2:-2].strip()
    m = ANNOTATION.match(body)
    values = {"length": m.group("length").strip() if m.group("length") else None}
    for word in [w.strip() for w in m.group("rest").split(",") if w.strip()]:
        if word not in FLAGS:
            raise HeaderError("%s: parameter comment '%s': '%s' is not one of [n], %s"
                              % (where, text.strip(), word, ", ".join(FLAGS)))
        values[FLAGS[word]] = True
    return values


def read_function(reader, node, doc):
    ret, declarator = type_of(reader, node)
    if declarator is None or declarator.type != "function_declarator":
        raise HeaderError("%s: a declaration that is not a function" % reader.where(node))
    name = reader.text(declarator.child_by_field_name("declarator"))
    plist = declarator.child_by_field_name("parameters")
    params, comments = [], []
    for child in walk(plist):
        if child.type == "parameter_declaration":
            ptype, pname = type_of(reader, child)
            if pname is None:
                if ptype.base == "void" and not ptype.pointers:
                    continue
                raise HeaderError("%s: %s has a parameter without a name" % (reader.where(child), name))
            params.append((child.start_byte, Param(reader.text(pname), ptype)))
        elif child.type == "comment":
            comments.append(child)
    for comment in comments:
        owner = [p for start, p in params if start < comment.start_byte]
        if not owner:
            raise HeaderError("%s: a comment before %s's first parameter" % (reader.where(comment), name))
        for key, value in parse_annotation(reader.text(comment), reader.where(comment)).items():
            setattr(owner[-1], key, value)
    params = [p for _, p in params]
    for p in params:
        if (p.length or p.nullable or p.retained or p.anywhere) and not p.type.pointers:
            raise HeaderError("%s: %s's parameter '%s' is not a pointer but has a pointer comment"
                              % (reader.where(node), name, p.name))
    return Function(name, ret, params, doc_text(reader.text(doc)) if doc else "", reader.path.name)


def read_struct(reader, spec, doc, name):
    fields, previous = [], None
    body = spec.child_by_field_name("body")
    for child in body.children:
        if child.type == "field_declaration":
            ftype, fname = type_of(reader, child)
            previous = Field(reader.text(fname), ftype, "")
            fields.append(previous)
        elif child.type == "comment" and previous is not None and reader.text(child).startswith("/**<"):
            previous.doc = doc_text(reader.text(child))
    return Struct(name, fields, doc_text(reader.text(doc)) if doc else "")


def read_enum(reader, spec, doc, name):
    constants, previous = [], None
    for child in spec.child_by_field_name("body").children:
        if child.type == "enumerator":
            value_node = child.child_by_field_name("value")
            if value_node is None:
                raise HeaderError("%s: every enumerator needs an explicit value" % reader.where(child))
            spelled = reader.text(value_node)
            value = ord(spelled[1]) if value_node.type == "char_literal" else int(spelled, 0)
            previous = Constant(reader.text(child.child_by_field_name("name")), value, "", "int", name,
                                spelled if value_node.type == "char_literal" else None)
            constants.append(previous)
        elif child.type == "comment" and previous is not None and reader.text(child).startswith("/**<"):
            previous.doc = doc_text(reader.text(child))
    return constants


def split_initialiser(text):
    """'{a, {0, 0}, b}' -> ['a', ['0', '0'], 'b']."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return text
    items, depth, current = [], 0, ""
    for ch in text[1:-1]:
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
            continue
        depth += (ch == "{") - (ch == "}")
        current += ch
    if current.strip():
        items.append(current)
    return [split_initialiser(item) for item in items]


def evaluate(expr, known, where):
    """The value of an integer macro expression (literals with u suffixes, shifts, + - * /, other macros)."""
    python = re.sub(r"\b(\d+)[uU]?[lL]*\b", r"\1", expr)
    python = re.sub(r"\b(GDAP_\w+)\b", lambda m: str(known[m.group(1)]) if m.group(1) in known else m.group(1), python)
    tree = ast.parse(python, mode="eval")
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv,
               ast.Div, ast.LShift, ast.RShift, ast.BitOr, ast.BitAnd, ast.USub, ast.Invert)
    bad = [n for n in ast.walk(tree) if not isinstance(n, allowed)]
    if bad:
        raise HeaderError("%s: macro value '%s' is not an integer expression this model evaluates" % (where, expr))
    return int(eval(compile(tree, "<macro>", "eval")))  # only literals and arithmetic remain


def read_macro(reader, node, doc, api, pending_inits):
    name = reader.text(node.child_by_field_name("name"))
    if NOT_CONSTANTS.match(name):
        return
    value_node = node.child_by_field_name("value")
    raw = reader.text(value_node) if value_node is not None else ""
    raw = re.sub(r"/\*.*?\*/", "", raw).strip()
    trailing = [c for c in node.children if c.type == "comment"]
    text = doc_text(reader.text(trailing[0])) if trailing else ""
    if raw.startswith("{"):
        pending_inits[name] = split_initialiser(raw)
        return
    if raw.startswith('"'):
        constant = Constant(name, ast.literal_eval(raw), text, "const char*")
    else:
        known = {c.name: c.value for c in api.constants if isinstance(c.value, int)}
        ctype = next((t for prefix, t in MACRO_TYPES if name.startswith(prefix)), "int64_t")
        constant = Constant(name, evaluate(raw, known, reader.where(node)), text, ctype)
    previous = api.constants[-1] if api.constants else None
    if doc or previous is None or previous.enum or previous.group != api.last_group:
        api.last_group += 1
        constant.heading = doc_text(reader.text(doc)) if doc else None
    constant.group = api.last_group
    api.constants.append(constant)


def read(root=ROOT):
    api, pending_inits = Api(), {}
    for header in HEADERS:
        reader = Reader(root / "include" / "gdap" / header)
        for node, doc in reader.top_level():
            if node.type == "preproc_def":
                read_macro(reader, node, doc, api, pending_inits)
            elif node.type == "type_definition":
                read_typedef(reader, node, doc, api)
            elif node.type == "enum_specifier":
                add_enum(api, read_enum(reader, node, doc, None), doc_text(reader.text(doc)) if doc else None)
            elif node.type == "struct_specifier":
                api.foreign.append("struct " + reader.text(node.child_by_field_name("name")))
            elif node.type == "declaration":
                exported, replacement = reader.markers(node)
                if not exported:
                    raise HeaderError("%s: a declaration without GDAP_API" % reader.where(node))
                api.functions.append(read_function(reader, node, doc))
                api.functions[-1].replacement = replacement
            elif node.type not in (";",):
                raise HeaderError("%s: unexpected %s" % (reader.where(node), node.type))
    attach_inits(api, pending_inits)
    type_constants(api)
    return api


def read_typedef(reader, node, doc, api):
    spec = node.child_by_field_name("type")
    declarator = node.child_by_field_name("declarator")
    name = reader.text(declarator)
    if callback_name(declarator) is not None:
        api.callbacks[reader.text(callback_name(declarator))] = doc_text(reader.text(doc)) if doc else ""
    elif spec.type == "struct_specifier" and spec.child_by_field_name("body") is None:
        api.handles.append(name)
    elif spec.type == "struct_specifier":
        api.structs.append(read_struct(reader, spec, doc, name))
    elif spec.type == "enum_specifier":
        api.enums[name] = doc_text(reader.text(doc)) if doc else ""
        add_enum(api, read_enum(reader, spec, doc, name), "%s: %s" % (name, api.enums[name]))
    else:
        raise HeaderError("%s: a typedef this model does not read" % reader.where(node))


def callback_name(declarator):
    """The name node of `(*name)(...)`, a function-pointer typedef's declarator, or None."""
    if declarator.type != "function_declarator":
        return None
    inner = declarator.child_by_field_name("declarator")
    while inner is not None and inner.type == "parenthesized_declarator":
        inner = inner.named_children[0] if inner.named_children else None
    if inner is None or inner.type != "pointer_declarator":
        return None
    return inner.child_by_field_name("declarator")


def add_enum(api, constants, heading):
    api.last_group += 1
    for c in constants:
        c.group = api.last_group
    if constants:
        constants[0].heading = heading
    api.constants.extend(constants)


def attach_inits(api, pending):
    for name, values in pending.items():
        struct = api.struct("gdap_" + name[len("GDAP_"):-len("_INIT")].lower()) if name.endswith("_INIT") else None
        if struct is None or len(values) != len(struct.fields):
            raise HeaderError("macro %s is an initialiser but not one of a struct's %s fields"
                              % (name, len(struct.fields) if struct else "(no struct)"))
        struct.init, struct.init_name = values, name


def type_constants(api):
    """A constant family named in a struct field's comment ('GDAP_DTYPE_*', 'a gdap_dist_type') takes
    that field's type, so that bindings give it the field's kind (gdap_dtype.code is uint8_t)."""
    for struct in api.structs:
        for f in struct.fields:
            for prefix in re.findall(r"\b(GDAP_[A-Z_]+?)_\*", f.doc):
                for c in api.constants:
                    if c.name.startswith(prefix + "_") and isinstance(c.value, int):
                        c.type = f.type.base
            for enum in re.findall(r"\ba (gdap_\w+)\b", f.doc):
                for c in api.constants:
                    if c.enum == enum:
                        c.type = f.type.base


def init_value(api, struct, expr):
    """The value of one _INIT item: an int, None for NULL, or a list for an array field."""
    if isinstance(expr, list):
        return [init_value(api, struct, e) for e in expr]
    expr = expr.strip()
    if expr == "NULL":
        return None
    m = re.fullmatch(r"sizeof\((\w+)\)", expr)
    if m:
        return api.layout(m.group(1))[1][0]
    known = {c.name: c.value for c in api.constants if isinstance(c.value, int)}
    return evaluate(expr, known, struct.init_name)
