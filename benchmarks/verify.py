"""Verification benchmark: `fabgen verify` against LLDP evidence of the whole fabric, by size.

    python benchmarks/verify.py                          # eos-rail at 2,048 to 32,768 GPUs
    python benchmarks/verify.py --kind sonic-rail --sizes 4096 65536 --json results-verify.json

For each size the fabric is rendered, then the evidence a built fabric would give is written:
every switch and node's LLDP neighbours in lldpctl JSON (a switch names its ports, a node its
netdevs), from the plan's cabling.csv and addresses.csv, with the first two cables (one node's
ports on two leaves) crossed, so the run finds a miswire and its repair as a real one would.
`fabgen verify OUT --lldp EVIDENCE --format json` is then timed in a fresh process, as an
operator runs it (median of `--repeat` runs), with its peak memory. The claim (issue "four planes
at the largest scale"): the time and memory per cable stay flat as the fabric grows, i.e. verify
is linear in the fabric.

InfiniBand (`--ibnetdiscover`) is not measured here: its evidence comes from ibsim in the tests,
and a synthetic ibnetdiscover dump would measure the reader of our own writer.
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
sys.path.insert(0, str(HERE.parent / "tests"))
import lldp_lab  # noqa: E402  (the tests' reading of a plan's cabling and netdevs)

from inventories import inventory  # noqa: E402  (benchmarks/ is not a package)

FABGEN = [sys.executable, "-m", "fabgen"]


def evidence(out: Path, fabric: str, into: Path) -> int:
    """Each device's lldpctl JSON as the planned cabling gives it, its first two cables (one node's
    ports on two leaves) crossed at their far ends; the number of cables. The plan is read as the
    lldpd lab of the tests reads it (tests/lldp_lab.py: cables, and each node port's netdev)."""
    cables = lldp_lab.cables(out, fabric)
    names = lldp_lab.netdevs(out, fabric)
    a, b = cables[0], cables[1]  # a miswire for the run to find
    a["z_device"], a["z_port"], b["z_device"], b["z_port"] = b["z_device"], b["z_port"], a["z_device"], a["z_port"]
    views: dict[str, list] = {}
    for r in cables:
        for dev, port, far, far_port in ((r["a_device"], r["a_port"], r["z_device"], r["z_port"]),
                                         (r["z_device"], r["z_port"], r["a_device"], r["a_port"])):
            far_name = names.get((far, far_port))
            pid = {"type": "ifname", "value": far_name or far_port}
            views.setdefault(dev, []).append({names.get((dev, port), port): {
                "chassis": {far: {}}, "port": {"id": pid, "descr": pid["value"]}}})
    into.mkdir(parents=True)
    for dev, items in views.items():
        (into / f"{dev}.json").write_text(json.dumps({"lldp": {"interface": items}}))
    return len(cables)


def timed(args: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (MiB) and exit code of one fabgen process."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss // 1024, (status >> 8) & 0xFF


def case(kind: str, gpus: int, repeat: int, root: Path) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"verify-{kind}-{gpus}-", dir=root))
    inv = work / "inv.yaml"
    inv.write_text(inventory(kind, gpus))
    out = work / "out"
    subprocess.run([*FABGEN, "render", str(inv), "-o", str(out)], check=True, capture_output=True)
    cables = evidence(out, "f", work / "evidence")
    runs = [timed([*FABGEN, "verify", str(out), "--lldp", str(work / "evidence"), "--format", "json"])
            for _ in range(repeat)]
    codes = {code for _, _, code in runs}
    if codes != {1}:  # 1: the swap was found; anything else is a broken run
        raise SystemExit(f"{kind} {gpus}: verify exited {sorted(codes)}, expected 1 (a miswire found)")
    seconds = statistics.median(s for s, _, _ in runs)
    mib = max(m for _, m, _ in runs)
    subprocess.run(["rm", "-rf", str(work)], check=True)
    return {"kind": kind, "gpus": gpus, "cables": cables, "seconds": round(seconds, 2), "peak_mib": mib,
            "us_per_cable": round(seconds / cables * 1e6, 1), "kib_per_cable": round(mib * 1024 / cables, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", default="eos-rail")
    ap.add_argument("--sizes", nargs="*", type=int, default=[2048, 8192, 32768])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out-root", default=None, help="where the renders and evidence go (default: the system "
                    "temporary directory)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    root = Path(a.out_root or tempfile.gettempdir())
    results = []
    print("kind | GPUs | cables | seconds | peak MiB | us/cable | KiB/cable")
    print("--- | --- | --- | --- | --- | --- | ---")
    for gpus in a.sizes:
        r = case(a.kind, gpus, a.repeat, root)
        results.append(r)
        print(f"{r['kind']} | {gpus} | {r['cables']} | {r['seconds']} | {r['peak_mib']} | {r['us_per_cable']} | "
              f"{r['kib_per_cable']}", flush=True)
    if a.json:
        a.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
