#!/usr/bin/env bash
# CI: derivgen works from an installed wheel. Build the wheel, install it into a fresh venv, build the
# example op library (examples/user_library) from an unrelated directory, load it and train a few steps,
# and check that the installed derivgen folder is byte-identical before and after (nothing, kernel
# caches included, is ever written into the package).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python -m pip wheel --no-deps -q -w "$work/dist" "$repo"
# system site packages: numpy, numba, sympy... come from the machine's interpreter, derivgen from the wheel
python -m venv --system-site-packages "$work/venv"
py="$work/venv/bin/python"
cd "$work"   # never import derivgen from the checkout
"$py" -m pip install -q --no-deps "$work"/dist/derivgen-*.whl
site="$("$py" -c 'import os, derivgen; print(os.path.dirname(derivgen.__file__))')"
case "$site" in "$work/venv/"*) ;; *) echo "wheel check: derivgen imports from $site, not the fresh venv"; exit 1;; esac

tree_hash() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum; }
before="$(tree_hash "$site")"

mkdir "$work/elsewhere"
cd "$work/elsewhere"
export DERIVGEN_CACHE_DIR="$work/cache"
"$work/venv/bin/derivgen" library build "$repo/examples/user_library/ops.yaml" --package myproj_ops --out "$work/lib"
"$work/venv/bin/derivgen" library check "$repo/examples/user_library/ops.yaml" --out "$work/lib"
PYTHONPATH="$work/lib:$repo/examples/user_library" "$py" "$repo/examples/user_library/train.py" | tee "$work/train.txt"
grep -q "nodes: RownormBackward0 SoftsignBackward0" "$work/train.txt"
grep -q "loss decreased: True" "$work/train.txt"
test -n "$(find "$DERIVGEN_CACHE_DIR/numba" -name '*.nbi' | head -1)"   # kernels were cached in the user cache

after="$(tree_hash "$site")"
if [ "$before" != "$after" ]; then
    echo "wheel check: the installed derivgen folder changed while it was used" >&2
    exit 1
fi
echo "wheel check: OK (installed derivgen unchanged: $after)"
