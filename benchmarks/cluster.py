"""Whole-cluster benchmark: every network of a DGX pod rendered at once (docs/cluster.md).

    python benchmarks/cluster.py                       # 256, 2,048 and 4,096 DGX H100 (2k to 32k GPUs)
    python benchmarks/cluster.py --nodes 2048 --json results-cluster.json

The inventory is `inventories/superpod-cluster.yaml` grown to N DGX (InfiniBand compute,
EOS storage with storage servers, SONiC in-band with head nodes, SN2201 out-of-band), its
pools and management prefixes widened to hold the largest case. Each case is one fresh
`fabgen render` process writing to a temporary directory: wall seconds, peak RSS, files.
"""

from __future__ import annotations

import argparse
import json
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


def one(nodes: int, work: Path) -> dict:
    inv = work / f"cluster-{nodes}.yaml"
    inv.write_text(inventory(nodes))
    out = work / f"out-{nodes}"
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "fabgen", "render", str(inv), "-o",
                           str(out)], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return {"nodes": nodes, "error": proc.stderr.strip().splitlines()[-2:]}
    rss = int(proc.stderr.strip().splitlines()[-1]) // 1024
    report = json.loads((out / "report.json").read_text())["fabrics"]
    return {"nodes": nodes, "gpus": nodes * 8, "seconds": round(seconds, 2), "peak_mib": rss,
            "files": sum(1 for p in out.rglob("*") if p.is_file()),
            "switches": {name: sum(f["switches"].values()) for name, f in report.items()}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, nargs="*", default=[256, 2048, 4096])
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.nodes:
            row = one(n, Path(tmp))
            rows.append(row)
            print(json.dumps(row))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
