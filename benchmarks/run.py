"""Scale benchmark: wall time and peak memory per pipeline stage, per fabric kind and size.

    python benchmarks/run.py                       # every kind at every size (minutes)
    python benchmarks/run.py --kinds eos-rail --sizes 4096 32768
    python benchmarks/run.py --json results.json
    python benchmarks/run.py --repeat 3            # each stage's best of three runs (for scaling)
    python benchmarks/run.py --against v0.1.0 --kinds sx-4plane --sizes 131072 --repeat 3
                                                   # this tree and a git ref, alternating; same output?

Each case runs in a fresh interpreter (so peak memory is its own) and renders into a
temporary directory, end to end: load, validate, build, check, allocate, structure,
render, write. Peak memory per stage is the main process's resident set size sampled every
5 ms while the stage runs ("peak MiB": the largest of them); "all MiB" is the peak of the
resident set sizes of the main process and the processes it forks (the render child, the
check and the targets made apart), summed, sampled every 50 ms: an upper bound of what the
render takes from the machine (pages they share copy-on-write count in each).

`--against REF` checks REF out beside this tree (a git worktree, removed at the end) and
renders every case with both, alternating which goes first, in one run: the machine's drift
(20% and more within a day here) then falls on both alike. It prints a table for each and
whether their output trees are identical (a digest over every file's path and bytes, taken
after the timing), and exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from inventories import KINDS, SIZES, inventory  # noqa: E402  (benchmarks/ is not a package)

STAGES = ("load", "validate", "build", "check", "allocate", "structure", "render", "write")

CHILD = r"""
import json, os, sys, threading, time
import gc
gc.disable()  # as the command line does for a render (fabgen.cli)
from pathlib import Path
from fabgen.pipeline import render_to
from fabgen.errors import InventoryError

page = os.sysconf("SC_PAGE_SIZE")
current = {"stage": "start"}
peaks = {}
stop = False

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page

def resident(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * page
    except OSError:
        return 0

def children():
    kids = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                kids += f.read().split()
        except OSError:
            pass
    return kids

def tree():
    # the render's processes together (it forks a render child and the work beside and apart):
    # resident set sizes summed, an upper bound, since they share the parent's pages copy-on-write
    # (proportional set sizes count those once, `pss`, but reading them walks every page table:
    # sampled every 5 ms it slowed the render it measures by a fifth, so only with --pss)
    return resident("self") + sum(resident(k) for k in children())

def proportional(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("Pss:"))
    except (OSError, StopIteration):
        return 0

def pss():
    return proportional("self") + sum(proportional(k) for k in children())

tree_peak = [0]
pss_peak = [0]
PSS_EVERY = int(os.environ.get("BENCH_PSS_EVERY", "0"))  # samples (5 ms each) between PSS readings

def sample():
    n = 0
    while not stop:
        s = current["stage"]
        peaks[s] = max(peaks.get(s, 0), rss())
        if n % 10 == 0:
            tree_peak[0] = max(tree_peak[0], tree())
        if PSS_EVERY and n % PSS_EVERY == 0:
            pss_peak[0] = max(pss_peak[0], pss())
        n += 1
        time.sleep(0.005)

t = threading.Thread(target=sample, daemon=True)
t.start()
start = time.perf_counter()
def progress(stage):
    peaks[current["stage"]] = max(peaks.get(current["stage"], 0), rss())
    current["stage"] = stage
try:
    result = render_to(sys.argv[1], sys.argv[2], progress=progress)
except InventoryError as exc:
    print(json.dumps({"error": str(exc.problems[0].format())}))
    sys.exit(0)
total = time.perf_counter() - start
peaks[current["stage"]] = max(peaks.get(current["stage"], 0), rss())
stop = True
t.join()
plans = [f.plan for f in result.fabrics.values()]  # one per network plane
files = result.files
switch_files = sum(1 for p in files if "/switches/" in p)
print(json.dumps({"timings": result.timings, "total": total, "peaks": peaks, "tree_peak": tree_peak[0],
                  **({"pss_peak": pss_peak[0]} if PSS_EVERY else {}),
                  "files": len(files),
                  "switches": sum(p.leaves + p.spines + p.cores for p in plans), "nodes": plans[0].nodes,
                  "tiers": plans[0].tiers, "switch_files": switch_files}))
sys.stdout.flush()
os._exit(0)  # as the command line leaves after a render: without freeing it object by object
"""


def _allocator(src: Path | None):
    """The fabgen.allocator module of the tree that renders (None: the one this interpreter
    imports), or None for a release before it."""
    if src is None:
        try:
            from fabgen import allocator
        except ImportError:
            return None
        return allocator
    path = src / "generator" / "fabgen" / "allocator.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("_against_allocator", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _environment(src: Path | None = None) -> dict[str, str]:
    """The environment the command line of the tree `src` (default: the installed fabgen)
    renders in (fabgen.allocator: glibc's allocator settings, set before the program
    starts), so the child measures what a user runs; a release before that module renders
    with the environment as it is."""
    environ = dict(os.environ)
    if src is not None:  # its fabgen before the installed one
        environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(src / "generator"), environ.get("PYTHONPATH")) if p)
    allocator = _allocator(src)
    return (allocator.environment(environ) if allocator else None) or environ


def tree_digest(root: Path) -> str:
    """sha256 over every file's path (relative, sorted) and bytes."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        with open(path, "rb") as fh:
            h.update(hashlib.file_digest(fh, "sha256").digest() if hasattr(hashlib, "file_digest")
                     else hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def run_case(name: str, gpus: int, work: Path, src: Path | None = None, digest: bool = False) -> dict:
    """One case in a fresh interpreter, writing under `work`, which the caller removes only
    at the end of the whole run (with `digest`, the output is removed once digested: see
    below): ext4 is several times slower at creating files in the
    minutes after many were deleted (see the README), so deleting one case's output before
    the next would bill the next case for it. `src`: the tree whose fabgen renders (default
    the installed one); `digest`: also the output tree's digest, after the timing."""
    case = Path(tempfile.mkdtemp(prefix=f"{name}-{gpus}-", dir=work))
    inv = case / "inv.yaml"
    inv.write_text(inventory(name, gpus))
    os.sync()  # start from a quiet disk: the previous case's writeback must not be billed here
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, str(inv), str(case / "out")], check=False, capture_output=True,
                          text=True, env=_environment(src))
    wall = time.perf_counter() - start
    if proc.returncode != 0:  # killed (out of memory, say) leaves no message
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}, no message"])[-1]
        return {"kind": name, "gpus": gpus, "error": last}
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data.update(kind=name, gpus=gpus, process_wall=wall)
    if digest and "error" not in data:
        data["digest"] = tree_digest(case / "out")
        # the tree is known by its digest now: six trees of 131k GPUs (3.7 GB each) would not fit
        # a tmpfs; both trees of a comparison pay for the removal alike (they alternate)
        shutil.rmtree(case / "out")
    return data


def against(ref: str, cases: list[tuple[str, int]], work: Path,
            repeat: int) -> tuple[list[dict], list[dict], list[str]]:
    """Every case rendered by this tree and by `ref`, alternating which goes first: (this
    tree's rows, ref's rows, the cases whose outputs differ)."""
    checkout = Path(tempfile.mkdtemp(prefix="fabgen-against-")) / "tree"
    repo = str(HERE.parent)
    subprocess.run(["git", "-C", repo, "worktree", "add", "--detach", str(checkout), ref], check=True,
                   capture_output=True)
    try:
        mine, theirs, differ = [], [], []
        for name, gpus in cases:
            runs: dict[str, list[dict]] = {"this": [], ref: []}
            for k in range(repeat):
                for tree in (("this", ref) if k % 2 == 0 else (ref, "this")):
                    runs[tree].append(run_case(name, gpus, work, None if tree == "this" else checkout, digest=True))
            mine.append(best_of(runs["this"]))
            theirs.append(best_of(runs[ref]))
            if not same_output(runs["this"] + runs[ref]):
                differ.append(f"{name} {gpus}")
            print(f"{name} {gpus}: {mine[-1].get('total', 0):.2f} s, {ref} {theirs[-1].get('total', 0):.2f} s",
                  file=sys.stderr, flush=True)
        return mine, theirs, differ
    finally:
        subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", str(checkout)], check=False,
                       capture_output=True)
        shutil.rmtree(checkout.parent, ignore_errors=True)


def same_output(runs: list[dict]) -> bool:
    """Whether every run rendered and wrote the same tree."""
    return all("error" not in r for r in runs) and len({r["digest"] for r in runs}) == 1


def best_of(runs: list[dict]) -> dict:
    """One row from repeated runs of a case: each stage's and the total's minimum (what the
    code costs, without the machine's noise), the largest peak memory."""
    if any("error" in r for r in runs):
        return runs[0]
    row = dict(runs[0])
    row["timings"] = {s: min(r["timings"].get(s, 0.0) for r in runs) for s in runs[0]["timings"]}
    for key in ("total", "process_wall"):
        row[key] = min(r[key] for r in runs)
    row["peaks"] = {s: max(r["peaks"].get(s, 0) for r in runs) for s in runs[0]["peaks"]}
    row["tree_peak"] = max(r.get("tree_peak", 0) for r in runs)
    if any("pss_peak" in r for r in runs):
        row["pss_peak"] = max(r.get("pss_peak", 0) for r in runs)
    row["runs"] = len(runs)
    return row


def table(rows: list[dict]) -> str:
    pss = any("pss_peak" in r for r in rows)
    head = ["kind", "GPUs", "switches", "files"] + [s for s in STAGES] + ["total s", "proc s", "peak MiB", "all MiB",
                                                                      "ms/switch"] + (["all PSS MiB"] if pss else [])
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['kind']} | {r['gpus']} | skipped: {r['error'][:90]}")
            continue
        t = r["timings"]
        peak = max(r["peaks"].values()) / 2**20
        per_switch = 1000 * (t.get("structure", 0) + t.get("render", 0)) / max(1, r["switches"])
        cells = [r["kind"], str(r["gpus"]), str(r["switches"]), str(r["files"])]
        cells += [f"{t.get(s, 0):.2f}" for s in STAGES]
        cells += [f"{r['total']:.2f}", f"{r['process_wall']:.2f}", f"{peak:.0f}",
                  f"{r.get('tree_peak', 0) / 2**20:.0f}", f"{per_switch:.2f}"]
        if pss:
            cells.append(f"{r.get('pss_peak', 0) / 2**20:.0f}")
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", nargs="*", default=list(KINDS), choices=list(KINDS))
    ap.add_argument("--sizes", nargs="*", type=int, default=list(SIZES))
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each case N times; report each stage's fastest time and the largest peak memory")
    ap.add_argument("--pss", type=float, default=0, metavar="SECONDS",
                    help="also sample the proportional set sizes of the render's processes summed (pages they "
                         "share counted once: what they take together) every SECONDS (it walks page tables: "
                         "sampled often it slows the render)")
    ap.add_argument("--out-root", help="where the output is written (default: the system temporary directory); "
                    "a tmpfs such as /dev/shm measures fabgen without the disk")
    ap.add_argument("--against", metavar="REF", help="also render every case with git ref REF, alternating, and "
                    "compare the outputs (exit 1 if any differs)")
    args = ap.parse_args()
    if args.pss:
        os.environ["BENCH_PSS_EVERY"] = str(max(1, round(args.pss / 0.005)))  # the child samples every 5 ms
    if args.against:
        with tempfile.TemporaryDirectory(prefix="fabgen-bench-", dir=args.out_root) as work:
            cases = [(name, gpus) for name in args.kinds for gpus in args.sizes]
            mine, theirs, differ = against(args.against, cases, Path(work), args.repeat)
        print(f"### This tree\n\n{table(mine)}\n\n### {args.against}\n\n{table(theirs)}\n")
        print("Output: " + (f"differs for {', '.join(differ)}" if differ else "identical in every case"))
        if args.json:
            rows = [dict(r, tree="this") for r in mine] + [dict(r, tree=args.against) for r in theirs]
            args.json.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")
        sys.exit(1 if differ else 0)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fabgen-bench-", dir=args.out_root) as work:
        for name in args.kinds:
            for gpus in args.sizes:
                row = best_of([run_case(name, gpus, Path(work)) for _ in range(args.repeat)])
                rows.append(row)
                print(f"{name} {gpus}: " + (f"{row['total']:.2f} s" if "total" in row else row["error"]),
                      file=sys.stderr, flush=True)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
