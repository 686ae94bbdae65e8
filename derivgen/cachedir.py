"""``derivgen cache info`` / ``derivgen cache clear``: the per-user cache directory (compiled kernels,
fused kernels, libraries compiled from ``@derivgen.library.op``). Imports nothing of the runtime."""
import os
import shutil

from derivgen.config import user_cache_dir

# what derivgen writes into the cache directory: Numba's compiled kernels, fused kernel sources, and
# libraries compiled from @derivgen.library.op, and the table rows whose backward passed the numerical check
OWN_ENTRIES = ("numba", "fused", "libraries", "vjpcheck")


def _size(path):
    total, count = 0, 0
    for root, _, names in os.walk(path):
        for n in names:
            try:
                total += os.path.getsize(os.path.join(root, n))
                count += 1
            except OSError:
                pass
    return total, count


def cmd_cache(args):
    root = user_cache_dir()
    if args.cache_command == "info":
        if not os.path.isdir(root):
            print(f"{root}: empty (does not exist)")
            return 0
        total, count = _size(root)
        print(f"{root}: {count} files, {total / (1 << 20):.1f} MiB")
        for name in sorted(os.listdir(root)):
            sub = os.path.join(root, name)
            if os.path.isdir(sub):
                t, c = _size(sub)
                print(f"  {name}/: {c} files, {t / (1 << 20):.1f} MiB")
        return 0
    # only what derivgen itself writes there: DERIVGEN_CACHE_DIR may name a folder that holds other files
    removed, total, count = [], 0, 0
    for name in OWN_ENTRIES:
        path = os.path.join(root, name)
        if os.path.isdir(path):
            t, c = _size(path)
            shutil.rmtree(path)
            removed.append(name)
            total, count = total + t, count + c
    if os.path.isdir(root) and not os.listdir(root):
        os.rmdir(root)
    if not removed:
        print(f"derivgen cache clear: {root}: nothing to clear")
        return 0
    print(f"derivgen cache clear: removed {', '.join(n + '/' for n in removed)} from {root} "
          f"({count} files, {total / (1 << 20):.1f} MiB)")
    return 0


def add_parser(sub):
    c = sub.add_parser("cache", help="show or clear the user cache directory (compiled kernels)")
    csub = c.add_subparsers(dest="cache_command", required=True)
    csub.add_parser("info", help="where the cache is and what it holds").set_defaults(func=cmd_cache)
    csub.add_parser("clear", help="remove what derivgen keeps in the cache directory").set_defaults(func=cmd_cache)
