"""``derivgen cache info`` / ``derivgen cache clear``: the per-user cache directory (compiled kernels,
fused kernels, libraries compiled from ``@derivgen.library.op``). Imports nothing of the runtime."""
import os
import shutil
import sys

from derivgen.config import user_cache_dir


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
    if not os.path.isdir(root):
        print(f"{root}: nothing to clear")
        return 0
    if os.path.basename(root.rstrip(os.sep)) != "derivgen" and not os.path.exists(os.path.join(root, "numba")) \
            and not args.force:
        # DERIVGEN_CACHE_DIR may point anywhere: never empty a folder that does not look like derivgen's cache
        print(f"derivgen cache clear: {root} does not look like derivgen's cache; pass --force", file=sys.stderr)
        return 1
    total, count = _size(root)
    shutil.rmtree(root)
    print(f"derivgen cache clear: removed {root} ({count} files, {total / (1 << 20):.1f} MiB)")
    return 0


def add_parser(sub):
    c = sub.add_parser("cache", help="show or clear the user cache directory (compiled kernels)")
    csub = c.add_subparsers(dest="cache_command", required=True)
    csub.add_parser("info", help="where the cache is and what it holds").set_defaults(func=cmd_cache)
    clear = csub.add_parser("clear", help="remove the cache directory")
    clear.add_argument("--force", action="store_true", help="clear a DERIVGEN_CACHE_DIR not named 'derivgen'")
    clear.set_defaults(func=cmd_cache)
