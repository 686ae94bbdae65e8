"""Parse PyTorch schema strings: ``op[.overload](Type arg, ..., *, kwonly=default) -> returns``."""
import re
from dataclasses import dataclass, field

_NAME_RE = re.compile(r"^\s*([A-Za-z_]\w*)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*$", re.S)
_TYPE_RE = re.compile(r"^(Tensor(?:\([a-z](?:!| -> \*)?\))?(?:\[\])?\??|Tensor\?\[\]|Scalar\??|Scalar\[\]|int(?:\[\d*\])?\??|"
                      r"SymInt(?:\[\d*\])?\??|float\??|bool(?:\[\d*\])?\??|str\??|ScalarType\??|Generator\??|"
                      r"Layout\??|Device\??|MemoryFormat\??|SymFloat\??)$")
_IDENT_RE = re.compile(r"^[A-Za-z]\w*$")
_INT_RE = re.compile(r"-?\d+")
_FLOAT_RE = re.compile(r"-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")
RESERVED = {"grad", "grads", "result", "grad_input_mask", "retain_variables"}


class SchemaError(ValueError):
    pass


@dataclass
class Argument:
    name: str
    type: str
    default: object = None
    has_default: bool = False
    kwonly: bool = False

    @property
    def is_tensor(self):
        return self.type.startswith("Tensor") and not self.is_tensor_list

    @property
    def is_tensor_list(self):
        return self.type.startswith("Tensor") and self.type.rstrip("?").endswith("[]")

    @property
    def is_optional(self):
        return self.type.endswith("?")

    @property
    def is_number(self):
        return self.type.rstrip("?") in ("Scalar", "float", "int", "SymInt", "bool", "SymFloat")


@dataclass
class Return:
    name: str
    type: str

    @property
    def is_tensor_list(self):
        return self.type.endswith("[]")

    @property
    def is_view(self):
        return "(a)" in self.type or "(a -> *)" in self.type


@dataclass
class Schema:
    text: str
    base: str
    overload: str
    args: list = field(default_factory=list)
    returns: list = field(default_factory=list)

    @property
    def full_name(self):
        return f"{self.base}.{self.overload}" if self.overload else self.base

    @property
    def py_name(self):
        """The generated function's name: ``sum.dim_IntList`` -> ``sum_dim_IntList``."""
        return self.full_name.replace(".", "_")

    @property
    def row_name(self):
        """The generated row function's name, as torch.ops spells overloads: ``mul_Tensor``, ``mm_default``."""
        return f"{self.base}_{self.overload or 'default'}"

    def arg(self, name):
        for a in self.args:
            if a.name == name:
                return a
        return None

    @property
    def return_names(self):
        return [r.name for r in self.returns]


def _split_top(s, sep=","):
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts]


def _parse_default(text):
    t = text.strip()
    if t in ("None",):
        return None
    if t in ("True", "False"):
        return t == "True"
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        return tuple(_parse_default(x) for x in _split_top(inner)) if inner else ()
    if t in ("contiguous_format", "Mean", "long"):
        return t
    if t in ("inf", "-inf", "nan"):
        return float(t)
    if len(t) >= 2 and (t.startswith('"') and t.endswith('"') or t.startswith("'") and t.endswith("'")):
        if not re.fullmatch(r"[\w .\-]*", t[1:-1]):
            raise SchemaError(f"bad default value {t}: a string default may hold letters, digits, '_', '.', "
                              "'-' and spaces only")
        return t[1:-1]
    if _INT_RE.fullmatch(t):
        if len(t.lstrip("-")) > 19:
            raise SchemaError(f"default value {t} is out of range for a 64-bit int")
        return int(t)
    if _FLOAT_RE.fullmatch(t):
        return float(t)
    raise SchemaError(f"bad default value '{t}'")


def _split_type_name(piece):
    """'Tensor(a -> *) self' -> ('Tensor(a -> *)', 'self')."""
    piece = piece.strip()
    idx = piece.rfind(" ")
    if idx < 0:
        raise SchemaError(f"argument '{piece}' needs a type and a name")
    return piece[:idx].strip(), piece[idx + 1:].strip()


def parse_schema(text):
    bad = [ch for ch in text if not ch.isprintable()]
    if bad:
        raise SchemaError(f"schema string contains the character {bad[0]!r}: a schema is one line of text")
    m = _NAME_RE.match(text)
    if not m:
        raise SchemaError(f"bad schema syntax '{text}': expected 'op[.overload](Type arg, ...) -> Returns'")
    base, overload, args_s, rets_s = m.group(1), m.group(2) or "", m.group(3), m.group(4)
    schema = Schema(text=text.strip(), base=base, overload=overload)
    kwonly = False
    seen = set()
    for piece in _split_top(args_s):
        if piece == "*":
            kwonly = True
            continue
        default, has_default = None, False
        if "=" in piece:
            piece, dtext = piece.split("=", 1)
            default, has_default = _parse_default(dtext), True
        typ, name = _split_type_name(piece)
        if not _TYPE_RE.match(typ):
            raise SchemaError(f"unknown type '{typ}' for argument '{name}'")
        if not _IDENT_RE.match(name):
            raise SchemaError(f"bad argument name '{name}'")
        if name in RESERVED:
            raise SchemaError(f"argument name '{name}' is reserved in formulas")
        if name in seen:
            raise SchemaError(f"argument '{name}' appears twice")
        seen.add(name)
        schema.args.append(Argument(name, typ, default, has_default, kwonly))
    rets_s = rets_s.strip()
    if rets_s.startswith("(") and rets_s.endswith(")"):
        pieces = _split_top(rets_s[1:-1])
    else:
        pieces = [rets_s]
    unnamed = []
    for piece in pieces:
        if " " in piece and not piece.startswith("Tensor(a -> *)") or piece.count(" ") > 2:
            typ, name = _split_type_name(piece)
        else:
            typ, name = piece, None
        if not _TYPE_RE.match(typ):
            raise SchemaError(f"unknown return type '{typ}'")
        if name is not None and not _IDENT_RE.match(name):
            raise SchemaError(f"bad output name '{name}'")
        if name in RESERVED - {"result"}:
            raise SchemaError(f"output name '{name}' is reserved in formulas")
        if name is not None and name in seen:
            name = f"{name}_return"
        schema.returns.append(Return(name, typ))
        if name is None:
            unnamed.append(schema.returns[-1])
    if base.endswith("_") and len(schema.returns) == 1:
        schema.returns[0].name = "result"
    for i, r in enumerate(schema.returns):
        if r.name is None:
            r.name = "result" if len(schema.returns) == 1 else f"result{i}"
    return schema


def node_prefix(base):
    """PyTorch's class-name rule: CamelCase of the base name (``str.title`` per ``_`` part) + Backward."""
    camel = "".join(p.title() for p in base.split("_"))
    return (camel + "Backward").replace("ForwardBackward", "Backward")
