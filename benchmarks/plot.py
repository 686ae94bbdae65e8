#!/usr/bin/env python
"""Bar chart of the derivgen/PyTorch time ratios (with their targets) from ``run.py`` results.

    python benchmarks/plot.py results.json benchmarks/ratios.png
    python benchmarks/run.py --plot benchmarks/ratios.png          # same chart, straight from a run
"""
import json
import sys

LABELS = {"W1": "W1 engine overhead\n2,000 ops on (8,)", "W2": "W2 elementwise chain\n3 x 4M float32",
          "W3": "W3 MLP step\n784-256-128-10, b=256", "W4": "W4 broadcast+reduce\n(2048,2048)"}


def plot_ratios(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = res.get("ratios", {})
    env = res.get("env", {})
    wls = [w for w in ("W1", "W2", "W3", "W4") if "vs_torch" in ratios.get(w, {})]
    has_abs = "import" in res or "generate" in res
    fig, axes = plt.subplots(1, 2 if has_abs else 1, figsize=(12 if has_abs else 8, 4.8),
                             gridspec_kw={"width_ratios": [3, 1.3]} if has_abs else None)
    ax = axes[0] if has_abs else axes
    xs = range(len(wls))
    vals = [ratios[w]["vs_torch"] for w in wls]
    targets = [ratios[w]["target"] for w in wls]
    colors = ["#2e7d32" if v <= t else "#c62828" for v, t in zip(vals, targets)]
    bars = ax.bar(xs, vals, color=colors, width=0.6, label="derivgen / PyTorch (median time)")
    for i, (v, t) in enumerate(zip(vals, targets)):
        ax.hlines(t, i - 0.4, i + 0.4, colors="black", linestyles="--", linewidth=1.5,
                  label="target" if i == 0 else None)
        ax.text(i, v, f"{v:.2f}x", ha="center", va="bottom", fontsize=9)
    mins = [ratios[w].get("vs_torch_min") for w in wls]
    if any(m is not None for m in mins):
        ax.plot([i for i, m in enumerate(mins) if m is not None], [m for m in mins if m is not None], "D",
                color="black", markersize=5, label="ratio of the fastest runs (min / min)")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([LABELS[w] + (f"\n(derivgen/numpy {ratios[w]['vs_numpy']:.2f}x)" if "vs_numpy" in ratios[w]
                                     else "") for w in wls], fontsize=8)
    ax.set_ylabel("time ratio derivgen / PyTorch eager (lower is better)")
    top = max([v for v in vals + targets + mins if v is not None] or [1.0])
    if top > 8:
        ax.set_yscale("log")
    else:
        ax.set_ylim(0, top * 1.35)
    ax.set_title("forward + backward, float32, CPU"
                 + (" - one thread each, process CPU time" if env.get("single_thread") else
                    f" - wall clock, PyTorch {env.get('torch_threads', 2)} threads"), fontsize=10)
    ax.legend(fontsize=8, loc="upper center", ncol=3, framealpha=0.9)
    del bars

    if has_abs:
        ax2 = axes[1]
        names, got, tgt = [], [], []
        if "import" in res:
            names.append("import\nderivgen")
            got.append(res["import"]["import_s"]["median"])
            tgt.append(0.8)
        if "generate" in res:
            names.append("derivgen\ngenerate")
            got.append(res["generate"].get("time_s", res["generate"]["wall_s"])["median"])
            tgt.append(3.0)
        cols = ["#2e7d32" if g <= t else "#c62828" for g, t in zip(got, tgt)]
        ax2.bar(range(len(got)), got, color=cols, width=0.6)
        for i, (g, t) in enumerate(zip(got, tgt)):
            ax2.hlines(t, i - 0.4, i + 0.4, colors="black", linestyles="--", linewidth=1.5)
            ax2.text(i, g, f"{g:.2f} s", ha="center", va="bottom", fontsize=9)
        ax2.set_xticks(range(len(got)))
        ax2.set_xticklabels(names, fontsize=8)
        ax2.set_ylabel(f"seconds, {'CPU' if env.get('single_thread') else 'wall'} (target dashed)")
        ax2.set_title("start-up")
    fig.suptitle(f"derivgen vs PyTorch {env.get('torch', '')} eager - {env.get('date', '')}, "
                 f"{env.get('cpu_count', '?')} cores, numpy {env.get('numpy', '')}, numba {env.get('numba', '')}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as fh:
        plot_ratios(json.load(fh), sys.argv[2])
