"""Whole-cluster benchmark: every network of a DGX pod rendered at once (docs/cluster.md).

    python benchmarks/cluster.py                       # 256, 2,048 and 4,096 DGX H100 (2k to 32k GPUs)
    python benchmarks/cluster.py --nodes 2048 --json results-cluster.json
    python benchmarks/cluster.py --nodes 4096 --base ../previous --repeat 3   # beside another release

The inventory is `inventories/superpod-cluster.yaml` grown to N DGX (InfiniBand compute,
EOS storage with storage servers, SONiC in-band with head nodes, SN2201 out-of-band), its
pools and management prefixes widened to hold the largest case. Each case is one fresh
`fabgen render` process writing to a temporary directory: wall seconds, peak RSS, files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "inventories" / "superpod-cluster.yaml"
WIDER = {  # every pool and prefix of the example, sized for 4,096 DGX
    "count: 64": "count: {n}",
    "count: 4\n": "count: 16\n",
    "loopbacks: 10.254.0.0/24, links: 10.253.0.0/22": "loopbacks: 10.254.0.0/19, links: 10.224.0.0/12",
    "loopbacks: 10.252.0.0/24, links: 10.251.0.0/22": "loopbacks: 10.252.0.0/22, links: 10.248.0.0/15",
    "prefix: 192.168.10.0/24\n      gateway: 192.168.10.1": "prefix: 172.20.0.0/20\n      gateway: 172.20.0.1",
    "prefix: 192.168.11.0/24\n      gateway: 192.168.11.1": "prefix: 172.21.0.0/20\n      gateway: 172.21.0.1",
    "prefix: 192.168.0.0/23\n      gateway: 192.168.0.1": "prefix: 172.24.0.0/16\n      gateway: 172.24.0.1",
}


def inventory(nodes: int) -> str:
    text = EXAMPLE.read_text()
    for old, new in WIDER.items():
        assert old in text, old
        text = text.replace(old, new.format(n=nodes))
    return text


def one(nodes: int, work: Path, source: Path | None = None) -> dict:
    """One render in a fresh process; `source`: another checkout's generator/ folder to run instead
    (the previous release, side by side with this one on the same inventory)."""
    inv = work / f"cluster-{nodes}.yaml"
    inv.write_text(inventory(nodes))
    out = work / f"out-{nodes}-{'base' if source else 'this'}"
    env = {**os.environ, **({"PYTHONPATH": str(source)} if source else {})}
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "fabgen", "render", str(inv), "-o",
                           str(out)], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return {"nodes": nodes, "error": proc.stderr.strip().splitlines()[-2:]}
    rss = int(proc.stderr.strip().splitlines()[-1]) // 1024
    report = json.loads((out / "report.json").read_text())["fabrics"]
    return {"nodes": nodes, "gpus": nodes * 8, "fabgen": str(source or "this"), "seconds": round(seconds, 2),
            "peak_mib": rss,
            "files": sum(1 for p in out.rglob("*") if p.is_file()),
            "switches": {name: sum(f["switches"].values()) for name, f in report.items()}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, nargs="*", default=[256, 2048, 4096])
    ap.add_argument("--json")
    ap.add_argument("--base", type=Path, help="a checkout of another release: run its generator/ beside this one, "
                    "alternating, best of --repeat each")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.nodes:
            for source in ([args.base / "generator"] if args.base else []) + [None]:
                runs = [one(n, Path(tmp), source) for _ in range(args.repeat)]
                row = min(runs, key=lambda r: r.get("seconds", 1e9))
                rows.append(row)
                print(json.dumps(row))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
