"""Extend derivgen with a new op: one table row becomes a node class, a kernel, a function and a method.

Run:  python examples/extend_new_op.py
It works in a scratch copy of the project (your formulas.yaml and generated/ are left alone): it appends
a `softsign` row to the copy's table, runs the generator there, and uses the new op from a fresh Python
process that imports the copy.
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NEW_ROW = """
- name: softsign(Tensor self) -> Tensor
  forward: self / (1 + abs(self))
  self: grad / ((1 + abs(self)) * (1 + abs(self)))

- name: softsign_derived(Tensor self) -> Tensor
  forward: self / (1 + abs(self))
  self: derived
"""

USE_IT = r"""
import derivgen as torch
print("derivgen imported from", torch.__file__)
x = torch.tensor([-2.0, -0.5, 0.0, 1.5], dtype=torch.float64, requires_grad=True)
y = torch.softsign(x)
print("softsign(x)      =", y)
print("y.grad_fn        =", y.grad_fn.name())
print(type(y.grad_fn).__doc__)
y.sum().backward()
print("x.grad           =", x.grad)
print("hand formula     =", (1 / (1 + x.detach().abs()) ** 2))
z = x.detach().requires_grad_().softsign_derived()
z.sum().backward()
print("derived by sympy =", z.grad_fn.name() if z.grad_fn else None)
"""


def main():
    scratch = tempfile.mkdtemp(prefix="derivgen-extend-")
    try:
        shutil.copytree(os.path.join(ROOT, "derivgen"), os.path.join(scratch, "derivgen"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(os.path.join(ROOT, "formulas.yaml"), scratch)
        with open(os.path.join(scratch, "formulas.yaml"), "a") as fh:
            fh.write(NEW_ROW)
        print("1. appended to the scratch table:" + NEW_ROW)
        # In the installed project generated/ is mapped to derivgen.generated; in the scratch copy it is
        # generated straight into the package folder so a plain PYTHONPATH import finds it.
        out = os.path.join(scratch, "derivgen", "generated")
        env = dict(os.environ, PYTHONPATH=scratch, DERIVGEN_NO_CACHE="1")
        print("2. derivgen generate:")
        subprocess.run([sys.executable, "-m", "derivgen", "generate", "--table",
                        os.path.join(scratch, "formulas.yaml"), "--out", out],
                       check=True, cwd=scratch, env=env)
        print("\n3. using the new op:")
        subprocess.run([sys.executable, "-c", USE_IT], check=True, cwd=scratch, env=env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
