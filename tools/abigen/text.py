"""Small text helpers the binding generators share: a doc comment's first sentence, comment wrapping,
and wrapping a list of items into lines of at most a given width."""
import re
import textwrap


def first_sentence(doc, longest=200):
    """Up to the first full stop that ends a sentence ('e.g.', 'i.e.' and '...' do not); a sentence
    longer than `longest` characters ends at its first colon or semicolon instead."""
    doc = doc.strip()
    sentence = doc
    for m in re.finditer(r"(?<!\.)\.(\s+|$)", doc):
        before = doc[:m.start() + 1]
        if not re.search(r"\b(e\.g|i\.e|etc|vs)\.$", before):
            sentence = before
            break
    if len(sentence) > longest:
        cut = clause_end(sentence)
        if cut is not None:
            sentence = sentence[:cut] + "."
    return sentence


def clause_end(sentence):
    """Where the first colon or semicolon outside parentheses ends a clause, or None."""
    depth = 0
    for i, c in enumerate(sentence):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and c in ":;" and sentence[i + 1:i + 2] == " ":
            return i
    return None


def comment(text, prefix, width):
    """`text` as comment lines starting with `prefix` (e.g. '  ! '), at most `width` columns."""
    return [prefix + line for line in textwrap.wrap(text, width - len(prefix), break_on_hyphens=False)] or [prefix.rstrip()]


def pack(items, first, indent, width, separator=", ", tail=""):
    """Items joined by `separator` after `first`, broken into lines of at most `width` columns; each
    continued line starts with `indent`. `tail` ends the last line. Returns the lines."""
    if not items:
        return [first + tail]
    lines, current = [], first
    for i, item in enumerate(items):
        piece = item + (separator.rstrip() if i < len(items) - 1 else tail)
        gap = "" if current == first or current == indent else " "
        if current not in (first, indent) and len(current) + len(gap) + len(piece) > width:
            lines.append(current.rstrip())
            current, gap = indent, ""
        current += gap + piece
    lines.append(current)
    return lines


def noted(declaration, note, prefix, width):
    """`declaration` with `note` as a trailing comment when both fit in `width` columns, else with the
    note as comment lines above it. `prefix` starts a comment (e.g. ' ! ')."""
    if not note:
        return [declaration]
    if len(declaration) + len(prefix) + len(note) <= width:
        return [declaration + prefix + note]
    indent = declaration[:len(declaration) - len(declaration.lstrip())]
    return comment(note, indent + prefix.strip() + " ", width) + [declaration]


def constant_groups(constants):
    """The constants in header order, as ('heading', text) before each group (None when the group has
    no doc comment) and ('constant', c) items, so every binding lays them out alike."""
    group = None
    for c in constants:
        if c.group != group:
            yield "heading", first_sentence(c.heading) if c.heading else None
            group = c.group
        yield "constant", c


def constant_note(c):
    """The trailing comment of a constant: its character literal ('b') and its doc's first sentence."""
    return ": ".join(part for part in (c.spelling, first_sentence(c.doc)) if part)
