"""The comparison as a picture: cost per GPU-hour against estimated bus bandwidth per GPU.

One point per option (one panel per fabric), labelled with kind, platform and switch model;
an option whose price is incomplete is an open marker at its lower bound. matplotlib
(the `chart` extra) draws it; SVG and PNG are written without dates or random ids, so the
same comparison gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MARKERS = {"infiniband": "o", "roce": "s", "spectrum-x": "D"}
COLORS = {"infiniband": "#1f77b4", "roce": "#d62728", "spectrum-x": "#2ca02c"}


class ChartUnavailable(RuntimeError):
    """matplotlib is not installed."""


def draw(data: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ChartUnavailable("--chart needs matplotlib: pip install 'fabgen[chart]'") from None
    matplotlib.rcParams["svg.hashsalt"] = "fabgen"
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: searchable, and no glyph paths to vary
    fabrics = list(data["fabrics"].items())
    fig, axes = plt.subplots(len(fabrics), 1, figsize=(8, 5 * len(fabrics)), squeeze=False)
    cur = data["currency"]
    for ax, (name, f) in zip(axes[:, 0], fabrics):
        xmax = max([o["estimate"]["busbw_per_gpu_gbs"] or 0 for o in f["options"]] + [1])
        ymax = max([o["cost"]["per_gpu_hour"] or 0 for o in f["options"]] + [0.001])
        placed: list[tuple[float, float]] = []
        for o in f["options"]:
            x, y = o["estimate"]["busbw_per_gpu_gbs"], o["cost"]["per_gpu_hour"]
            if x is None or y is None:  # not priced (or no estimate): no point, named under the panel
                continue
            # labels of points close together are stacked below each other instead of overprinting
            near = sum(1 for px, py in placed if abs(px - x) < 0.1 * xmax and abs(py - y) < 0.08 * ymax)
            placed.append((x, y))
            complete = o["cost"]["complete"]
            ax.scatter([x], [y], marker=MARKERS[o["kind"]], s=70, color=COLORS[o["kind"]],
                       facecolors=COLORS[o["kind"]] if complete else "none", zorder=3)
            label = o["label"].replace(f"{o['platform']} / ", f"{o['platform']}\n", 1)
            label += "" if complete else " (≥, unpriced parts)"
            ax.annotate(label, (x, y), textcoords="offset points", xytext=(8, 4 - 24 * near), fontsize=8,
                        arrowprops={"arrowstyle": "-", "alpha": 0.4} if near else None)
        ax.set_title(f"{data['cluster']} / {name}: {f['gpus']:,} GPUs, {f['link_speed_gbps']}G "
                     f"(estimates, {data['amortization_months']}-month amortization)", fontsize=10)
        undrawn = [o["label"] + (" (not priced)" if not o["cost"]["priced"] else " (no estimate)")
                   for o in f["options"]
                   if o["cost"]["per_gpu_hour"] is None or o["estimate"]["busbw_per_gpu_gbs"] is None]
        ax.set_xlabel("estimated all-reduce bus bandwidth per GPU (GB/s)"
                      + "".join(f"\nnot drawn: {u}" for u in undrawn[:8])
                      + (f"\n... and {len(undrawn) - 8} more" if len(undrawn) > 8 else ""), fontsize=8)
        ax.set_ylabel(f"fabric capital cost per GPU-hour ({cur})")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0, top=ymax * 1.2)  # room for the highest point's label under the title
        ax.set_xlim(left=0, right=xmax * 1.35)
    fig.tight_layout()
    metadata = {"Date": None, "Creator": "fabgen"} if path.suffix.lower() == ".svg" else {"Software": "fabgen"}
    fig.savefig(path, metadata=metadata)
    plt.close(fig)
