"""Review benchmark: `fabgen diff` on a fabric-wide one-key change, per fabric kind at 32k GPUs.

    python benchmarks/diff.py                      # eos-fattree, sonic-rail, spectrum-x at 32,768 GPUs
    python benchmarks/diff.py --kinds eos-rail --gpus 4096 --json results-diff.json

For each case: both inventories (the second with the RoCE ECN minimum threshold changed) are
rendered to folders, then the review is timed between the folders and between the inventories
(which renders both in memory), each in a fresh `fabgen` process, as a reviewer runs it. The
markdown's size is recorded against GitHub's 65,536-character comment limit.
Targets (issue "growth and review"): folders at most 5 s, inventories at most 10 s, on 2 cores;
each the median of `--repeat` runs (default 3).

`--growth` reviews a planned fabric grown by one scalable unit instead (the old side one unit
short of the GPUs given, both planned for them) and records whether the review lists
additions only (no device changed, re-cabled, removed or re-addressed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from inventories import inventory  # noqa: E402  (benchmarks/ is not a package)

FABGEN = [sys.executable, "-m", "fabgen"]
CHANGE = "    ethernet:\n      qos:\n        ecn: {min_threshold_kbytes: 300}\n"


def timed(args: list[str], out: Path | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (MiB) of one fabgen process; its stdout goes to `out`. From a
    quiet disk: the renders before it leave gigabytes to write back (at 131k GPUs of four planes
    two folders of 3.7 GB), which the review would otherwise pay for (31-39 s against 27-29 s)."""
    os.sync()
    start = time.perf_counter()
    with open(out or "/dev/null", "wb") as fh:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", *FABGEN, *args], stdout=fh, stderr=subprocess.PIPE,
                              check=True)
    return time.perf_counter() - start, int(proc.stderr.decode().strip().splitlines()[-1]) // 1024


def changed(text: str) -> str:
    """The inventory with CHANGE, inside its `ethernet` block where it has one (the four-plane
    case sets its pools there)."""
    if "\n    ethernet:\n" in text:
        return text.replace("\n    ethernet:\n", "\n" + CHANGE, 1)
    return text + CHANGE


ALTERING = ("Devices changed", "Devices removed", "Links re-cabled", "Links removed", "Addresses changed",
            "Addresses removed", "ASNs changed")


def planned(text: str, nodes: int, unit: int) -> tuple[str, str]:
    """The inventory planned for its nodes, one unit short, and as given."""
    text = text.replace("    node_groups: [gpu]\n", f"    node_groups: [gpu]\n    planned_nodes: {nodes}\n", 1)
    return text.replace(f"count: {nodes},", f"count: {nodes - unit},", 1), text


def case(kind: str, gpus: int, work: Path, growth: bool = False, repeat: int = 1) -> dict:
    old, new = work / "old.yaml", work / "new.yaml"
    if growth:
        a, b = planned(inventory(kind, gpus), gpus // 8, 32)
        old.write_text(a)
        new.write_text(b)
    else:
        old.write_text(inventory(kind, gpus))
        new.write_text(changed(inventory(kind, gpus)))
    for inv in (old, new):
        subprocess.run([*FABGEN, "render", str(inv), "-o", str(work / inv.stem)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    md = work / "review.md"
    try:
        runs = [timed(["diff", str(work / "old"), str(work / "new"), "--format", "markdown"], md)
                for _ in range(repeat)]
        folders: float | str = round(statistics.median(r[0] for r in runs), 2)
        folders_mib: int | str = max(r[1] for r in runs)
    except subprocess.CalledProcessError as exc:  # a render beyond what a review of folders reads (diff.py)
        if exc.returncode != 2:
            raise
        folders, folders_mib = "refused", "-"
    # the review's size from the folders' review, as before; from the inventories' where that was refused
    runs = [timed(["diff", str(old), str(new), "--format", "markdown"], md if folders == "refused" else None)
            for _ in range(repeat)]
    inventories, inventories_mib = statistics.median(r[0] for r in runs), max(r[1] for r in runs)
    text = md.read_text()
    row = {"kind": kind, "gpus": gpus, "folders_s": folders, "folders_mib": folders_mib,
           "inventories_s": round(inventories, 2), "inventories_mib": inventories_mib, "markdown_chars": len(text)}
    if growth:
        row["additions_only"] = not any(f"### {h} (" in text for h in ALTERING)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=["eos-fattree", "sonic-rail", "spectrum-x"])
    ap.add_argument("--gpus", type=int, default=32768)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--out-root", type=Path, help="where the renders go (default: a temporary directory)")
    ap.add_argument("--growth", action="store_true", help="a planned fabric grown by 32 nodes")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each review; the median is reported "
                    "(this machine's timings vary by up to 40%% between runs)")
    args = ap.parse_args()
    rows = []
    print("kind | GPUs | diff folders s | MiB | diff inventories s | MiB | markdown characters")
    print("--- | --- | --- | --- | --- | --- | ---")
    for kind in args.kinds:
        with tempfile.TemporaryDirectory(dir=args.out_root) as tmp:
            r = case(kind, args.gpus, Path(tmp), args.growth, args.repeat)
        rows.append(r)
        print(f"{r['kind']} | {r['gpus']} | {r['folders_s']} | {r['folders_mib']} | {r['inventories_s']} | "
              f"{r['inventories_mib']} | {r['markdown_chars']}" + (f" | {r['additions_only']}" if args.growth else ""),
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
