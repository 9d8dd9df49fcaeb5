"""fabgen and Arista AVD side by side: the same inventories, timed in one run on one machine.

    make bench-avd                                   # sets up pyavd, runs the default cases
    python benchmarks/compare_avd.py --sizes 1024 4096 16384 --kinds eos-fattree

For each RoCE EOS inventory of benchmarks/inventories.py, fabgen renders everything (every
switch config and every host file, `benchmarks/run.py`'s measurement), then AVD (pyavd, see
benchmarks/avd.py) generates the switch configurations of the same fabric from the same
inventory: same switches, ports, peers, ASNs, host addresses and QoS profile. Both run in a
fresh interpreter, with their imports outside the timing, and with the same number of
processes. Each AVD run is checked against fabgen's structured config (routed ports, BGP
neighbor count, ASN and QoS profile per switch), so the two generated the same network, and
every switch's AVD config is compared line by line with fabgen's (`avd.line_parity`: equal
section by section but for the differences `avd.ACCEPTED` documents), so that what fabgen
writes stays what AVD 6.4 writes for the same intent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import run_case  # noqa: E402

from inventories import inventory  # noqa: E402  (benchmarks/ is not a package)

KINDS = ("eos-fattree", "eos-rail", "eos-northsouth")


def run_avd_case(name: str, gpus: int, workers: int, work: Path) -> dict:
    case = Path(tempfile.mkdtemp(prefix=f"avd-{name}-{gpus}-", dir=work))  # removed at the end, as run_case's
    inv = case / "inv.yaml"
    inv.write_text(inventory(name, gpus))
    # fabgen's switch configs of the same inventory, for the line-level comparison (untimed)
    rendered = subprocess.run([sys.executable, "-m", "fabgen", "render", str(inv), "-o", str(case / "fabgen")],
                              check=False, capture_output=True, text=True)
    if rendered.returncode != 0:
        return {"error": (rendered.stderr.strip().splitlines() or ["fabgen failed"])[-1]}
    os.sync()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(HERE / "avd.py"), str(inv), str(case / "avd"), str(workers),
                           str(case / "fabgen" / "f" / "switches")], check=False, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    t = data["timings"]
    data["total"] = sum(v for k, v in t.items() if k != "inputs")
    data["process_wall"] = wall
    return data


def table(rows: list[dict]) -> str:
    head = ["kind", "GPUs", "switches", "fabgen s (all files)", "fabgen peak MiB", "AVD s (switch configs)",
            "AVD validate / facts / structure+render / write", "AVD peak MiB", "AVD ms/switch", "AVD / fabgen",
            "same network", "same lines"]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for r in rows:
        f, a = r["fabgen"], r["avd"]
        if "error" in f or "error" in a:
            lines.append(f"{r['kind']} | {r['gpus']} | error: {(f.get('error') or a.get('error'))[:100]}")
            continue
        t = a["timings"]
        same = "yes" if not a["parity_problems"] else f"NO: {a['parity_problems'][0]}"
        lines_same = (f"yes ({a['lines_checked']} switches)" if not a["line_problems"]
                      else f"NO: {a['line_problems'][0]}")
        lines.append(" | ".join([
            r["kind"], str(r["gpus"]), str(f["switches"]), f"{f['total']:.2f}",
            f"{max(f['peaks'].values()) / 2**20:.0f}", f"{a['total']:.2f}",
            " / ".join(f"{t[k]:.2f}" for k in ("validate", "facts", "structure+render", "write")),
            f"{a['peak'] / 2**20:.0f}", f"{1000 * a['total'] / a['switches']:.1f}",
            f"{a['total'] / f['total']:.0f}x", same, lines_same]))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", nargs="*", default=list(KINDS), choices=list(KINDS))
    ap.add_argument("--sizes", nargs="*", type=int, default=[1024, 4096])
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)),
                    help="AVD processes for the per-device work (fabgen forks one renderer per core)")
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    ap.add_argument("--out-root", help="where both write their output (default: the system temporary directory)")
    args = ap.parse_args()
    from importlib.metadata import PackageNotFoundError, version

    try:
        avd_version = version("pyavd")
    except PackageNotFoundError:
        sys.exit("pyavd is not installed: `make bench-avd`, or pip install -e '.[bench-avd]'")
    rows = []
    with tempfile.TemporaryDirectory(prefix="fabgen-bench-", dir=args.out_root) as tmp:
        work = Path(tmp)
        for name in args.kinds:
            for gpus in args.sizes:
                f = run_case(name, gpus, work)
                print(f"{name} {gpus} fabgen: " + (f"{f['total']:.2f} s" if "total" in f else f["error"]),
                      file=sys.stderr, flush=True)
                a = run_avd_case(name, gpus, args.workers, work)
                print(f"{name} {gpus} AVD: " + (f"{a['total']:.2f} s" if "total" in a else a["error"]),
                      file=sys.stderr, flush=True)
                rows.append({"kind": name, "gpus": gpus, "fabgen": f, "avd": a})
    print(f"pyavd {avd_version}, Python {platform.python_version()}, {len(os.sched_getaffinity(0))} cores, "
          f"AVD workers {args.workers}\n")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps({"pyavd": avd_version, "workers": args.workers, "rows": rows},
                                        indent=2, sort_keys=True) + "\n")
    if any(r["avd"].get("parity_problems") or r["avd"].get("line_problems") for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
