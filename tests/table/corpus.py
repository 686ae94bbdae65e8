"""Malformed and hostile tables, by category. Each case is (id, table bytes, line, entry, reason): the
generator must stop with exactly ``formulas.yaml:LINE: entry 'ENTRY': REASON`` (no entry part when
ENTRY is None) and write nothing."""


def row(schema="mysin(Tensor self) -> Tensor", forward="sin(self)", **keys):
    """One table row; ``keys`` are extra lines (formula keys, flags), in order."""
    text = f"- name: {schema}\n"
    if forward is not None:
        text += f"  forward: {forward}\n"
    if not keys:
        keys = {"self": "grad * cos(self)"}
    for k, v in keys.items():
        text += f"  {k.replace('__', ', ')}: {v}\n"
    return text


SIN = row()
COS = row("cos(Tensor self) -> Tensor", "cos(self)", self="grad * -sin(self)") + "\n" + \
    row("sin(Tensor self) -> Tensor", "sin(self)", self="grad * cos(self)")
MUL = row("mul.Tensor(Tensor self, Tensor other) -> Tensor", "self * other",
          self="grad * other", other="grad * self")

ENCODING = [
    ("bad-utf8-in-doc", (SIN + "  doc: caf\xe9\n").encode("latin-1"), 4, "mysin",
     "the table is not valid UTF-8: byte 0xe9 at column 11"),
    ("bad-utf8-in-formula", SIN.encode().replace(b"cos(self)", b"cos(s\xffelf)"), 3, "mysin",
     "the table is not valid UTF-8: byte 0xff at column 21"),
    ("utf16-file", "- name: a(Tensor self) -> Tensor\n".encode("utf-16"), 1, None,
     "the table is not valid UTF-8: byte 0xff at column 1"),
    ("nul-character", (SIN + "  doc: a\x00b\n").encode(), 4, "mysin", "character U+0000 is not allowed in the table"),
    ("bell-character", (SIN + "  doc: a\x07b\n").encode(), 4, "mysin", "character U+0007 is not allowed in the table"),
    ("truncated-multibyte", SIN.encode() + b"# \xe2\x82\n", 4, "mysin",
     "the table is not valid UTF-8: byte 0xe2 at column 3"),
]

YAML_STRUCTURE = [
    ("tab-indent", SIN.replace("  self:", "\tself:").encode(), 3, "mysin",
     "YAML syntax error: found character '\\t' that cannot start any token"),
    ("duplicate-key", (SIN + "  self: grad\n").encode(), 4, "mysin", "key 'self' appears twice"),
    ("row-is-a-string", (SIN + "- just a string\n").encode(), 4, None,
     "each entry must be a mapping starting with 'name:'"),
    ("row-is-a-list", (SIN + "- [a, b]\n").encode(), 4, None, "each entry must be a mapping starting with 'name:'"),
    ("root-is-a-mapping", b"name: mysin(Tensor self) -> Tensor\n", 1, None,
     "the table must be a list of entries ('- name: ...')"),
    ("empty-file", b"", 1, None, "the table has no entries (a table needs at least one '- name: ...' row)"),
    ("comments-only", b"# nothing here\n# at all\n", 1, None,
     "the table has no entries (a table needs at least one '- name: ...' row)"),
    ("empty-list", b"[]\n", 1, None, "the table has no entries (a table needs at least one '- name: ...' row)"),
    ("anchor", (SIN + "  doc: &d text\n").encode(), 4, "mysin", "YAML anchor '&d' is not allowed in the table"),
    ("alias-bomb", (b"- name: mysin(Tensor self) -> Tensor\n  doc: &a [x, x]\n"
                    b"  forward: &b [*a, *a]\n"), 2, "mysin", "YAML anchor '&a' is not allowed in the table"),
    ("deep-nesting", (SIN + "  doc: " + "[" * 5000 + "]" * 5000 + "\n").encode(), 4, "mysin",
     "YAML nested deeper than 4 levels: a table is a list of rows whose values are plain strings or a list of flags"),
    ("unclosed-bracket", (SIN + "  doc: [a, b\n").encode(), 5, "mysin",
     "YAML syntax error: expected ',' or ']', but got '<stream end>'"),
    ("missing-name", b"- forward: sin(self)\n  self: grad\n", 1, None, "entry has no 'name:'"),
    ("name-is-a-list", b"- name: [a, b]\n", 1, None, "expected a plain value here"),
    ("formula-is-a-mapping", row(self="{a: b}").encode(), 3, "mysin", "expected a plain value here"),
    ("key-is-a-mapping", (SIN + "  {a: b}: c\n").encode(), 4, "mysin", "expected a plain value here"),
    ("duplicate-row", (SIN + "\n" + SIN).encode(), 5, "mysin", "duplicate entry (first defined at line 1)"),
]

SCHEMA = [
    ("newline-in-schema", row('"mysin(Tensor self,\\n Tensor other) -> Tensor"').encode(), 1, "mysin",
     "schema string contains the character '\\n': a schema is one line of text"),
    ("tab-in-schema", row('"mysin(Tensor\\tself) -> Tensor"').encode(), 1, "mysin",
     "schema string contains the character '\\t': a schema is one line of text"),
    ("bad-syntax", row("mysin(Tensor self) Tensor").encode(), 1, "mysin",
     "bad schema syntax 'mysin(Tensor self) Tensor': expected 'op[.overload](Type arg, ...) -> Returns'"),
    ("unknown-type", row("mysin(Tensr self) -> Tensor").encode(), 1, "mysin",
     "unknown type 'Tensr' for argument 'self'"),
    ("unknown-return-type", row("mysin(Tensor self) -> Tensr").encode(), 1, "mysin", "unknown return type 'Tensr'"),
    ("bad-default", row("mysin(Tensor self, float x=1+2) -> Tensor").encode(), 1, "mysin", "bad default value '1+2'"),
    ("int-default-out-of-range", row("mysin(Tensor self, int x=123456789012345678901) -> Tensor").encode(), 1,
     "mysin", "default value 123456789012345678901 is out of range for a 64-bit int"),
    ("string-default-code", row("mysin(Tensor self, str x='a'+'b') -> Tensor").encode(), 1, "mysin",
     "bad default value 'a'+'b': a string default may hold letters, digits, '_', '.', '-' and spaces only"),
    ("reserved-argument", row("mysin(Tensor self, Tensor grad) -> Tensor").encode(), 1, "mysin",
     "argument name 'grad' is reserved in formulas"),
    ("duplicate-argument", row("mysin(Tensor self, Tensor self) -> Tensor").encode(), 1, "mysin",
     "argument 'self' appears twice"),
    ("bad-output-name", row("mysin(Tensor self) -> (Tensor a-b, Tensor c)").encode(), 1, "mysin",
     "bad output name 'a-b'"),
    ("reserved-output-name", row("mysin(Tensor self) -> (Tensor grads, Tensor c)").encode(), 1, "mysin",
     "output name 'grads' is reserved in formulas"),
]

NAMES = [
    ("overload-file-collision", (MUL + "\n" + row("mul_Tensor(Tensor self, Tensor other) -> Tensor", "self * other",
                                                  self="grad * other", other="grad * self")).encode(), 6, "mul_Tensor",
     "generated name 'mul_Tensor' is also generated by entry 'mul.Tensor' (line 1): rename one of them"),
    ("case-insensitive-file", (SIN + "\n" + row("Mysin(Tensor self) -> Tensor")).encode(), 5, "Mysin",
     "module file 'Mysin.py' (kernels/, nodes/) is also written by entry 'mysin' (line 1; file names are compared ignoring case)"),
    ("dunder-init-op", row("__init__(Tensor self) -> Tensor").encode(), 1, "__init__",
     "op name '__init__' is a '__dunder__' name (reserved by Python)"),
    ("dunder-overload", row("mysin.__init__(Tensor self) -> Tensor").encode(), 1, "mysin.__init__",
     "overload name '__init__' is a '__dunder__' name (reserved by Python)"),
    ("op-named-len", row("len(Tensor self) -> Tensor").encode(), 1, "len",
     "generated name 'len' shadows the builtin of that name, which the generated code uses"),
    ("op-named-_return_type", row("_return_type(Tensor self) -> Tensor").encode(), 1, "_return_type",
     "generated name '_return_type' is a name the generated modules use for themselves"),
    ("op-named-_k", row("_k(Tensor self) -> Tensor").encode(), 1, "_k",
     "generated name '_k' is a name the generated modules use for themselves"),
    ("op-named-FUNCTIONS", row("FUNCTIONS(Tensor self) -> Tensor").encode(), 1, "FUNCTIONS",
     "generated name 'FUNCTIONS' is a name the generated modules use for themselves"),
    ("keyword-op", row("lambda(Tensor self) -> Tensor").encode(), 1, "lambda",
     "generated name 'lambda' is a Python keyword"),
    ("keyword-argument", row("mysin(Tensor self, Scalar class) -> Tensor").encode(), 1, "mysin",
     "argument name 'class' is a Python keyword"),
    ("builtin-argument", row("mysin(Tensor self, Tensor tuple) -> Tensor").encode(), 1, "mysin",
     "argument name 'tuple' shadows the builtin of that name, which the generated code uses"),
    ("wrapper-local-argument", row("mysin(Tensor self, Tensor grad_fn) -> Tensor").encode(), 1, "mysin",
     "argument name 'grad_fn' is a name the generated functions use for themselves"),
    ("derived-local-argument", row("mysin(Tensor self, Tensor grad_input_self) -> Tensor").encode(), 1, "mysin",
     "argument name 'grad_input_self' clashes with a local the generated code derives from this row's names"),
    ("keyword-output", row("mysin(Tensor self) -> (Tensor class, Tensor b)").encode(), 1, "mysin",
     "output name 'class' is a Python keyword"),
    ("duplicate-output", row("mysin(Tensor self) -> (Tensor a, Tensor a)").encode(), 1, "mysin",
     "output name 'a' is used twice"),
    ("row-function-collision", (SIN + "\n" + row("mysin_default(Tensor self) -> Tensor")).encode(), 5,
     "mysin_default", "generated name 'mysin_default' is also generated by entry 'mysin' (line 1): rename one of them"),
    ("kernel-name-collision", (SIN + "\n" + row("mysin_backward.self(Tensor self) -> Tensor") + "\n" + COS).encode(), 5,
     "mysin_backward.self",
     "generated kernel 'mysin_backward_self' is also generated by entry 'mysin' (line 1): rename one of them"),
    ("inplace-function-collision", (row(inplace="true") + "\n" + row("mysin__default(Tensor self) -> Tensor")).encode(),
     5, "mysin__default",
     "generated name 'mysin__default' is also generated by entry 'mysin' (line 1): rename one of them"),
    ("package-file", row("nodes(Tensor self) -> Tensor").encode(), 1, "nodes",
     "generated name 'nodes' is a name the generated modules use for themselves"),
]

FORMULAS = [
    ("import-call", row(self="__import__('os').system('true')").encode(), 3, "mysin",
     "in formula for 'self': function '__import__' is not allowed"),
    ("dunder-attribute", row(self="grad.__class__").encode(), 3, "mysin",
     "in formula for 'self': attribute '__class__' is not allowed"),
    ("lambda", row(self='"(lambda: grad)()"').encode(), 3, "mysin",
     "in formula for 'self': only calls of named functions or methods are allowed"),
    ("string-literal", row(self="grad * 'abc'").encode(), 3, "mysin",
     "in formula for 'self': literal 'abc' is not allowed in a formula (numbers, True, False, None only)"),
    ("statement", row(self='"grad; import os"').encode(), 3, "mysin",
     "in formula for 'self': syntax error in formula: invalid syntax"),
    ("unknown-name", row(self="grad * other").encode(), 3, "mysin", "in formula for 'self': unknown name 'other'"),
    ("unknown-function", row(self="grad * frobnicate(self)").encode(), 3, "mysin",
     "in formula for 'self': unknown function 'frobnicate'"),
    ("empty-formula", row(self='""').encode(), 3, "mysin", "in formula for 'self': empty formula"),
    ("formula-for-non-argument", row(other="grad").encode(), 3, "mysin",
     "formula for 'other', which is not an argument of the schema (arguments: self)"),
    ("derived-without-forward", row(forward=None, self="derived").encode(), 1, "mysin",
     "'derived' formulas need an elementwise 'forward:' expression to derive from"),
    ("forward-tuple", row("f(Tensor self, Tensor other) -> Tensor", '"(self, other)"', self="grad").encode(), 2, "f",
     "in forward: cannot be compiled into an elementwise kernel: a tuple is not a number"),
    ("forward-none", row("f(Tensor self, Tensor other) -> Tensor", "where(self > 0, None, other)",
                         self="grad").encode(), 2, "f",
     "in forward: cannot be compiled into an elementwise kernel: 'None' has no per-element value in a kernel"),
    ("forward-matmul", row("f(Tensor self, Tensor other) -> Tensor", "other * (self @ other)",
                           self="grad").encode(), 2, "f",
     "in forward: cannot be compiled into an elementwise kernel: 'matmul' is not an elementwise function"),
    ("forward-nan", row("f(Tensor self) -> Tensor", "self + inf * 0", self="grad").encode(), 2, "f",
     "in forward: cannot be compiled into an elementwise kernel: the expression is undefined (nan)"),
    ("forward-metadata", row("f(Tensor self, Tensor other) -> Tensor", "self * other + self.dim()",
                             self="grad").encode(), 2, "f",
     "in forward: cannot be compiled into an elementwise kernel: 'self_dim' has no per-element value in a kernel"),
    ("forward-injection", row(forward="self.__class__").encode(), 2, "mysin",
     "in forward: attribute '__class__' is not allowed"),
    ("forward-imaginary", row("f(Tensor self) -> Tensor", "self * sqrt(-1)", self="grad").encode(), 2, "f",
     "in forward: cannot be compiled into an elementwise kernel: the constant I is not a real number"),
    ("forward-log-of-negative", row("f(Tensor self) -> Tensor", "self * log(-1)", self="grad").encode(), 2, "f",
     "in forward: cannot be compiled into an elementwise kernel: the constant I is not a real number"),
    ("forward-tuple-in-where", row("f(Tensor self) -> Tensor", "where(self > 0, (self, self), self)",
                                   self="grad").encode(), 2, "f",
     "in forward: cannot be compiled into an elementwise kernel: a tuple is not a number"),
    ("forward-division-by-zero", row("f(Tensor self) -> Tensor", "where(self > 0, 1/0, self)",
                                     self="grad").encode(), 2, "f",
     "in forward: cannot be compiled into an elementwise kernel: the expression is undefined (nan)"),
    ("derived-of-a-comparison", row("gt(Tensor self, Tensor other) -> Tensor", "self > other",
                                    self="derived").encode(), 3, "gt",
     "'derived' needs a forward with a numeric result: this one is a comparison (bool), which has no "
     "derivative; list the arguments under non_differentiable instead"),
    ("derived-of-floor", row("myfloor(Tensor self) -> Tensor", "floor(self)", self="derived").encode(), 3, "myfloor",
     "'derived': sympy cannot differentiate floor(self) (it stays an unevaluated derivative); write the formula "
     "for 'self'"),
]

BOUNDS = [
    ("huge-power", row(self="0 * 10 ** 10 ** 10").encode(), 3, "mysin",
     "in formula for 'self': exponent 10000000000 is too large (at most 64 in magnitude here)"),
    ("huge-pow-call", row(self="grad * pow(10, 10 ** 10)").encode(), 3, "mysin",
     "in formula for 'self': exponent 10000000000 is too large (at most 64 in magnitude here)"),
    ("huge-symbolic-power", row(self="grad * self ** 100000").encode(), 3, "mysin",
     "in formula for 'self': exponent 100000 is too large (at most 1024 in magnitude here)"),
    ("deep-unary", row(self="grad * " + "-" * 400 + "self").encode(), 3, "mysin",
     "in formula for 'self': formula nested too deeply (at most 32 levels)"),
    ("deep-calls", row(self="grad * " + "sin(" * 60 + "self" + ")" * 60).encode(), 3, "mysin",
     "in formula for 'self': formula nested too deeply (at most 32 levels)"),
    ("deep-forward", row(forward="+".join(["self"] * 200)).encode(), 2, "mysin",
     "in forward: formula nested too deeply (at most 32 levels)"),
    ("long-formula", row(self="grad" + " * 1" * 600).encode(), 3, "mysin",
     "in formula for 'self': formula longer than 2000 characters"),
    ("wide-formula", row(self="grad * cos(self) + 0 * atan2(" + ", ".join(["1"] * 600) + ")").encode(), 3, "mysin",
     "in formula for 'self': formula too large (at most 500 syntax nodes)"),
    ("big-int-literal", row(self="grad * 1234567890123456789012").encode(), 3, "mysin",
     "in formula for 'self': integer literal longer than 18 digits"),
    ("infinite-float-literal", row(self="grad * 1e999").encode(), 3, "mysin",
     "in formula for 'self': literal inf is not a finite number (write inf for infinity)"),
]

FLAGS = [
    ("inplace-yes", (SIN + "  inplace: yes\n").encode(), 4, "mysin", "inplace takes true or false, not 'yes'"),
    ("inplace-one", (SIN + "  inplace: 1\n").encode(), 4, "mysin", "inplace takes true or false, not '1'"),
    ("grads-of-non-differentiable-output",
     row("mymax(Tensor self) -> (Tensor values, Tensor indices)", None, self="grads[1]",
         output_differentiability="[True, False]").encode(), 2, "mymax",
     "formula uses grads[1], but output 1 ('indices') is marked non-differentiable in output_differentiability"),
    ("grad-name-of-non-differentiable-output",
     row("mymax(Tensor self) -> (Tensor values, Tensor indices)", None, self="grad_indices",
         output_differentiability="[True, False]").encode(), 2, "mymax",
     "formula uses grad_indices, but output 1 ('indices') is marked non-differentiable in output_differentiability"),
    ("grads-out-of-bounds", row("mymax(Tensor self) -> (Tensor values, Tensor indices)", None,
                                self="grads[2]").encode(), 2, "mymax",
     "Out of bounds grads access: derivative formula used grads[2], but the forward only returns 2 outputs."),
    ("output-differentiability-length", row("mymax(Tensor self) -> (Tensor values, Tensor indices)", None,
                                            self="grads[0]", output_differentiability="[True]").encode(), 3,
     "mymax", "The length of output_differentiability (1), does not match the number of outputs (2)."),
    ("output-differentiability-not-a-list", (SIN + "  output_differentiability: True\n").encode(), 4, "mysin",
     "output_differentiability must be a list like [True, False]"),
    ("output-differentiability-values", (SIN + "  output_differentiability: [maybe]\n").encode(), 4, "mysin",
     "output_differentiability takes True/False values"),
    ("grad-and-grads", row("mymax(Tensor self) -> (Tensor values, Tensor indices)", None,
                           self="grad + grads[0]").encode(), 2, "mymax",
     "Derivative definition illegally mixes use of 'grad' and 'grads'. Consider replacing occurrences of "
     "'grad' with 'grads[0]'"),
    ("forward-mode-key-without-backward", row(result="grad").encode(), 3, "mysin",
     "a forward-mode formula ('result:') needs the row's backward formulas: the row has none, so it "
     "records no node"),
    ("formula-for-int-argument", row("mysin(Tensor self, int n) -> Tensor", "sin(self) * n",
                                     self="grad * cos(self) * n", n="grad").encode(), 4, "mysin",
     "'n' has type int: only Tensor arguments can have a formula"),
    ("variants-not-a-list", (SIN + "  variants: function\n").encode(), 4, "mysin",
     "variants must be a list like [function, method]"),
    ("variants-unknown-value", (SIN + "  variants: [function, module]\n").encode(), 4, "mysin",
     "variants takes function, method, inplace_function, not 'module'"),
    ("variants-repeated", (SIN + "  variants: [method, method]\n").encode(), 4, "mysin",
     "variants lists a value twice"),
    ("variants-inplace-function-without-inplace", (SIN + "  variants: [inplace_function]\n").encode(), 4, "mysin",
     "variants: inplace_function needs 'inplace: true' (it names the in-place form)"),
    ("variants-on-one-overload-only",
     (row("myop.a(Tensor self) -> Tensor", "self * 2", variants="[method]") + "\n" +
      row("myop.b(Tensor self, Tensor other) -> Tensor", "self * other", doc="two")).encode(), 1, "myop.a",
     "variants given here but not on another overload of 'myop' (give them on every overload of an op, or on none)"),
    ("variants-differ-between-overloads",
     (row("myop.a(Tensor self) -> Tensor", "self * 2", variants="[method]") + "\n" +
      row("myop.b(Tensor self, Tensor other) -> Tensor", "self * other", variants="[function]")).encode(), 5,
     "myop.b", "variants differ from those of 'myop.a', another overload of 'myop' (every overload of an op is "
     "public in the same places)"),
]

WHERE = row("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", "where(condition, self, other)",
            condition="non_differentiable", self="where(condition, grad, 0)", other="where(condition, 0, grad)")

PROOFS = [
    ("wrong-outside-the-small-box", row(self="where(abs(self) > 10, 0, grad * cos(self))").encode(), 3, "mysin",
     "formula for 'self' disagrees with the derivative of its forward (sin(self)): at grad=-0.751996, self=1000: "
     "formula gives 0 but d(forward) gives -0.422906619, its one-sided limits -0.4229072408 and -0.4229059972"),
    ("wrong-for-large-negative", row("sq(Tensor self) -> Tensor", "self * self",
                                     self="grad * 2 * self * where(self < -500, 0.5, 1)").encode(), 3, "sq",
     "formula for 'self' disagrees with the derivative of its forward (self * self): at grad=-0.751996, "
     "self=-1000: formula gives 751.9956499 but d(forward) gives 1503.9913, its one-sided limits 1503.991301 "
     "and 1503.991298"),
    ("tie-counted-twice", row("mymax(Tensor self, Tensor other) -> Tensor", "maximum(self, other)",
                              self="grad * (self >= other)", other="grad * (other >= self)").encode(), 4, "mymax",
     "formula for 'other' disagrees with the derivative of its forward (maximum(self, other)): at grad=-1.59338, "
     "other=-2.28678, self=-2.28678, where a condition switches: the formulas for self, other add up to "
     "-3.186769141, but moving all of them together changes the forward at rate -1.593384571 (the gradient is "
     "counted more than once)"),
    ("wrong-value-at-a-tie", row("mymax(Tensor self, Tensor other) -> Tensor", "maximum(self, other)",
                                 self="where(self == other, 2 * grad, grad * (self > other))",
                                 other="grad * (other > self)").encode(), 3, "mymax",
     "formula for 'self' disagrees with the derivative of its forward (maximum(self, other)): at grad=-0.751996, "
     "other=1000, self=1000: formula gives -1.5039913 but d(forward) gives -0, its one-sided limits "
     "-0.7519956499 and -0"),
    ("wrong-at-a-threshold", row("thr(Tensor self) -> Tensor", "where(self > 1, self, 0)",
                                 self="where(self == 1, 5 * grad, where(self > 1, grad, 0))").encode(), 3, "thr",
     "formula for 'self' disagrees with the derivative of its forward (where(self > 1, self, 0)): at "
     "grad=-0.751996, self=1: formula gives -3.75997825 but d(forward) gives -0, its one-sided limits -0 and "
     "-0.7519956499"),
    ("wrong-at-zero", row("myabs(Tensor self) -> Tensor", "abs(self)",
                          self="grad * sign(self) + where(self == 0, grad * 3, 0)").encode(), 3, "myabs",
     "formula for 'self' disagrees with the derivative of its forward (abs(self)): at grad=-0.751996, self=0: "
     "formula gives -2.25598695 but d(forward) gives -0, its one-sided limits 0.7519956499 and -0.7519956499"),
    ("wrong-formula-reading-metadata", row("sq(Tensor self) -> Tensor", "self * self",
                                           self="2 * grad * self / self.sym_numel()").encode(), 3, "sq",
     "formula for 'self' disagrees with the derivative of its forward (self * self): at grad=2.06653, "
     "self=1.54773: formula gives 1.066141597 but d(forward) gives 6.396849581"),
]



def _shipped_table():
    from tests.support.paths import TABLE
    with open(TABLE, encoding="utf-8") as fh:
        return fh.read()


def shipped_with(old, new):
    """The shipped table with ``old`` (ending in one formula line) replaced, and that line's number."""
    text = _shipped_table()
    assert text.count(old + "\n") == 1, old
    line = text[: text.index(old + "\n") + len(old)].count("\n") + 1
    return text.replace(old + "\n", new + "\n").encode(), line


def _backward_case(case_id, entry, old, new, reason):
    data, line = shipped_with(old, new)
    return (case_id, data, line, entry, reason)


# Rows without a forward expression: the new package computes each backward's float64 VJP on samples
# derived from the schema (no samples file beside these tables) and compares it with finite differences.
BACKWARD_CHECKS = [
    _backward_case("sum-twice-the-gradient", "sum", "  self: grad.expand(self.sym_sizes())",
                   "  self: grad.expand(self.sym_sizes()) * 2",
                   "backward formula for 'self' does not match finite differences at self[0, 0]: formula gives "
                   "-4.650062 but finite differences give -2.325031 (sample: self [3, 4] float64)"),
    _backward_case("clone-negated", "clone",
                   "memory_format=None) -> Tensor\n  result: auto_linear\n  self: grad",
                   "memory_format=None) -> Tensor\n  result: auto_linear\n  self: -grad",
                   "backward formula for 'self' does not match finite differences at self[0, 0]: formula gives "
                   "2.325031 but finite differences give -2.325031 (sample: self [3, 4] float64)"),
    _backward_case("tril-ignores-the-mask", "tril", "  self: tril(grad, diagonal)", "  self: grad",
                   "backward formula for 'self' does not match finite differences at self[0, 1]: formula gives "
                   "-0.2187917 but finite differences give 0 (sample: self [3, 4] float64)"),
    _backward_case("fmax-wrong-input", "fmax", "  other: where(self >= other or isnan(other), 0, grad)",
                   "  other: where(self >= other or isnan(other), grad, 0)",
                   "backward formula for 'other' does not match finite differences at other[0, 0]: formula gives "
                   "0.9034702 but finite differences give 0 (sample: self [3, 4] float64, other [3, 4] "
                   "float64)"),
    _backward_case("cat-pieces-swapped", "cat", "  tensors: cat_tensors_backward(grad, to_args_sizes(tensors), dim)",
                   "  tensors: cat_tensors_backward(grad.flip([dim]), to_args_sizes(tensors), dim)",
                   "backward formula for 'tensors' does not match finite differences at tensors[0][0, 0]: formula "
                   "gives 0.2644556 but finite differences give 0.9034702 (sample: tensors[0] [3, 4] float64, "
                   "tensors[1] [3, 4] float64)"),
]

CATEGORIES = {"encoding": ENCODING, "yaml": YAML_STRUCTURE, "schema": SCHEMA, "names": NAMES,
              "formulas": FORMULAS, "bounds": BOUNDS, "flags": FLAGS, "proofs": PROOFS,
              "backward": BACKWARD_CHECKS}
