"""Ansible at scale: `ansible-inventory --list` on a rendered fabric.

    python benchmarks/ansible.py                   # eos-fattree at 32,768 GPUs
    python benchmarks/ansible.py --kinds sonic-rail --gpus 32768 --out-root /dev/shm

Ansible loads every host's variables to build its inventory, so what host_vars hold decides
its time and memory. Target (issue "growth and review"): at most 20 s and 1 GiB at 32k GPUs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from inventories import inventory  # noqa: E402  (benchmarks/ is not a package)

BIN = Path(sys.executable).parent


def case(kind: str, gpus: int, work: Path) -> tuple[float, int, int]:
    inv = work / "inv.yaml"
    inv.write_text(inventory(kind, gpus))
    subprocess.run([str(BIN / "fabgen"), "render", str(inv), "-o", str(work / "out")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", str(BIN / "ansible-inventory"), "-i",
                           str(work / "out" / "ansible" / "inventory.yml"), "--list"],
                          capture_output=True, check=True)
    seconds = time.perf_counter() - start
    return seconds, int(proc.stderr.decode().strip().splitlines()[-1]) // 1024, len(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=["eos-fattree"])
    ap.add_argument("--gpus", type=int, default=32768)
    ap.add_argument("--out-root", type=Path)
    args = ap.parse_args()
    print("kind | GPUs | ansible-inventory --list s | peak MiB | output bytes")
    print("--- | --- | --- | --- | ---")
    for kind in args.kinds:
        with tempfile.TemporaryDirectory(dir=args.out_root) as tmp:
            seconds, mib, size = case(kind, args.gpus, Path(tmp))
        print(f"{kind} | {args.gpus} | {seconds:.1f} | {mib} | {size}", flush=True)


if __name__ == "__main__":
    main()
