"""How long `fabgen emulate` takes, and for how many routers (docs/emulate.md, "Scale").

    sudo python benchmarks/emulate.py                        # the examples below
    sudo python benchmarks/emulate.py --cases roce-3tier --json results-emulate.json
    sudo python benchmarks/emulate.py --cases eos-fattree:16384   # a sample (320 routers)

A case is a bundled example inventory, or KIND:GPUS for a synthetic one (benchmarks/inventories.py),
where a fabric beyond the budget is emulated as a sample (docs/emulate.md, "Scale"). Each case is
rendered, then emulated in a fresh `fabgen emulate --format json` process: wall seconds, routers,
hosts, links, and the verdict.

    python benchmarks/emulate.py --sampling eos-rail:4096 eos-rail:16384 eos-rail:65536

`--sampling` times, without root and without starting a lab, the part of a run that reads the
whole fabric: the render read back, every fabric read, and the sample chosen within the default
budgets (what happens before the first namespace; the lab itself is bounded by the budgets, so
this part is what grows with the fabric). Each case in a fresh process; seconds and peak MiB.
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
CASES = ["roce-2node", "fattree-2to1", "roce-3tier", "spectrumx-1su", "superpod-cluster", "b300-spectrumx-2plane"]


def source(case: str, work: Path) -> Path:
    """The inventory of a case: a bundled example, or KIND:GPUS written from benchmarks/inventories.py."""
    if ":" not in case:
        return ROOT / "inventories" / f"{case}.yaml"
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from inventories import inventory

    kind, gpus = case.split(":")
    path = work / f"{kind}-{gpus}.yaml"
    path.write_text(inventory(kind, int(gpus)))
    return path


def one(case: str, work: Path, max_routers: int, max_nodes: int = 128, max_sessions: int = 4096) -> dict:
    out = work / case.replace(":", "-")
    subprocess.run([sys.executable, "-m", "fabgen", "render", str(source(case, work)), "-o", str(out)], check=True,
                   capture_output=True)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "fabgen", "emulate", str(out), "--format", "json", "--max-routers",
                           str(max_routers), "--max-nodes", str(max_nodes), "--max-sessions", str(max_sessions),
                           "--timeout", "1200"],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        return {"case": case, "error": proc.stderr.strip()[-300:]}
    r = json.loads(proc.stdout)
    return {"case": case, "max_routers": max_routers, "max_nodes": max_nodes, "max_sessions": max_sessions,
            "seconds": round(seconds, 1), "routers": r["routers"], "hosts": r["hosts"],
            "links": r["links"], "ok": r["ok"], "notes": r["notes"]}


_SAMPLING = """
import json, resource, sys, time
from pathlib import Path
from fabgen.rendered import read as rendered
from fabgen.emulate.read import BadInput, fabrics_of, read_fabric
from fabgen.emulate.run import MAX_HOSTS, MAX_ROUTERS, MAX_SESSIONS, _sampled
start = time.perf_counter()
files = rendered.read_render(Path(sys.argv[1]), lambda s: None)
fabs = [read_fabric(files, f) for f in fabrics_of(files, None)]
read = time.perf_counter() - start
cables = sum(len(f.cables) for f in fabs)
try:
    fabs, notes = _sampled(fabs, MAX_ROUTERS, MAX_HOSTS, MAX_SESSIONS)
    sample = f"{sum(len(f.routers) for f in fabs)} routers"
except BadInput as exc:  # the top tier alone is beyond the budget: the run stops here, exit 2
    sample = f"refused: {exc}"
print(json.dumps({"read_s": round(read, 2), "total_s": round(time.perf_counter() - start, 2), "cables": cables,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "sample": sample}))
"""


def sampling(case: str, work: Path) -> dict:
    """Seconds and peak MiB of reading a render and choosing the sample (no lab)."""
    out = work / case.replace(":", "-")
    subprocess.run([sys.executable, "-m", "fabgen", "render", str(source(case, work)), "-o", str(out)], check=True,
                   capture_output=True)
    proc = subprocess.run([sys.executable, "-c", _SAMPLING, str(out)], capture_output=True, text=True)
    subprocess.run(["rm", "-rf", str(out)], check=True)
    if proc.returncode != 0:
        return {"case": case, "error": proc.stderr.strip()[-300:]}
    row = json.loads(proc.stdout)
    return {"case": case, **row, "us_per_cable": round(row["read_s"] / row["cables"] * 1e6, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", nargs="*", default=CASES)
    ap.add_argument("--json")
    ap.add_argument("--max-routers", type=int, default=320)
    ap.add_argument("--max-nodes", type=int, default=128)
    ap.add_argument("--max-sessions", type=int, default=4096)
    ap.add_argument("--sampling", nargs="*", metavar="KIND:GPUS", help="time reading the render and choosing the "
                    "sample only, for these cases (no lab, no root)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.sampling or []:
            rows.append(sampling(case, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
        for case in [] if args.sampling is not None else args.cases:
            row = one(case, Path(tmp), args.max_routers, args.max_nodes, args.max_sessions)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
