"""The table file as text and as a YAML node tree, with every decoding and YAML problem reported as a
``TableError`` naming file, line and (where the line lies inside a row) the entry.

While the node tree is built, nesting deeper than the table's shape needs (a list of rows, a row's
mapping, a flag list: 3 levels), which would make the recursive composer overflow the stack, is
refused, and so are anchors and aliases, which the table format never needs and which can multiply a
small file into a huge tree.
"""
import re

import yaml

from .errors import TableError

MAX_DEPTH = 4
_ROW_NAME = re.compile(r"^\s*-?\s*name\s*:\s*['\"]?([A-Za-z_][\w.]*)")


def entry_at(lines, line):
    """The op name of the row that contains ``line`` (1-based), found by reading back to its ``name:``."""
    if not line:
        return None
    for text in reversed(lines[:line]):
        m = _ROW_NAME.match(text)
        if m:
            return m.group(1)
        if text.startswith("-"):      # the start of a row without a readable name
            return None
    return None


def decode_table(data, file):
    """UTF-8 text of the table; a byte that is not UTF-8 is reported at its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        lines = data[:exc.start].decode("utf-8", "replace").splitlines()
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise TableError(f"the table is not valid UTF-8: byte 0x{data[exc.start]:02x} at column {column}",
                         file, line, entry_at(lines, line)) from None


def _error(message, file, lines, line):
    return TableError(message, file, line, entry_at(lines, line))


class _Refused(Exception):
    def __init__(self, message, line):
        super().__init__(message)
        self.message, self.line = message, line


class _TableLoader(yaml.SafeLoader):
    """SafeLoader's composer, refusing anchors, aliases and nesting deeper than MAX_DEPTH before it
    recurses into them (the composer is recursive; the parser under it is not)."""

    _depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(f"YAML alias '*{event.anchor}' is not allowed in the table (write the value out)", line)
        if getattr(event, "anchor", None) is not None:
            raise _Refused(f"YAML anchor '&{event.anchor}' is not allowed in the table", line)
        nested = isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent))
        if nested:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise _Refused(f"YAML nested deeper than {MAX_DEPTH} levels: a table is a list of rows whose "
                               "values are plain strings or a list of flags", line)
        try:
            return super().compose_node(parent, index)
        finally:
            if nested:
                self._depth -= 1


def compose_table(text, file):
    """The YAML node tree of ``text`` (None for an empty document)."""
    lines = text.splitlines()
    try:
        return yaml.compose(text, Loader=_TableLoader)
    except _Refused as exc:
        raise _error(exc.message, file, lines, exc.line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark else None
        if isinstance(exc, yaml.reader.ReaderError):   # a character YAML does not accept (control codes)
            line = text.count("\n", 0, exc.position) + 1
            code = exc.character if isinstance(exc.character, int) else ord(exc.character)
            raise _error(f"character U+{code:04X} is not allowed in the table", file, lines, line) from None
        problem = getattr(exc, "problem", None) or str(exc)
        raise _error(f"YAML syntax error: {problem}", file, lines, line) from None
    except (RecursionError, MemoryError) as exc:
        raise TableError(f"the table is too large or too deeply nested to read ({type(exc).__name__})",
                         file, 1) from None
