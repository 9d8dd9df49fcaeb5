"""Decision benchmark: `fabgen compare` on the benchmark inventories, as a user runs it.

    python benchmarks/compare.py                          # ib-rail and eos-fattree, 1k to 32k GPUs
    python benchmarks/compare.py --kinds ib-rail --gpus 32768 --json results-compare.json

Each case is one fresh `fabgen compare --format json` process: every option of the fabric
(six at 400G: two InfiniBand, three RoCE, one Spectrum-X) validated, built and counted.
Wall seconds and peak RSS, the median of `--repeat` runs.
Target: 32,768 GPUs within 20 s and 2 GiB on 2 cores (a decision is made once, not per commit;
render itself stays the fast path).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from inventories import KINDS, inventory  # noqa: E402  (benchmarks/ is not a package)

TARGET_SECONDS, TARGET_MIB = 20.0, 2048


def one(path: Path) -> tuple[float, int, int]:
    """Seconds, peak RSS (MiB) and option count of one `fabgen compare` process."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "fabgen", "compare", str(path),
                           "--format", "json"], capture_output=True, check=True)
    seconds = time.perf_counter() - start
    rss = int(proc.stderr.decode().strip().splitlines()[-1]) // 1024
    options = sum(len(f["options"]) for f in json.loads(proc.stdout)["fabrics"].values())
    return seconds, rss, options


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", nargs="*", default=["ib-rail", "eos-fattree"], choices=list(KINDS))
    ap.add_argument("--gpus", nargs="*", type=int, default=[1024, 4096, 16384, 32768])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds:
            for gpus in args.gpus:
                path = Path(tmp) / f"{kind}-{gpus}.yaml"
                path.write_text(inventory(kind, gpus))
                runs = [one(path) for _ in range(args.repeat)]
                seconds = statistics.median(r[0] for r in runs)
                rss = max(r[1] for r in runs)
                ok = gpus != 32768 or (seconds <= TARGET_SECONDS and rss <= TARGET_MIB)
                rows.append({"kind": kind, "gpus": gpus, "options": runs[0][2], "seconds": round(seconds, 2),
                             "peak_rss_mib": rss, "meets_target": ok})
                print(f"{kind:<14} {gpus:>6} GPUs  {runs[0][2]} options  {seconds:6.2f} s  {rss:5d} MiB"
                      f"{'' if ok else '  MISSES the target'}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
