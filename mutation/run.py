"""Mutation testing of chosen modules with mutmut, on a copy of the tree (docs/internals/mutation.md).

    python mutation/run.py [MODULE ...] [--tests FILE ...] [--max-children N] [--only NAME ...] [--again]

MODULE is a key of MODULES (default: all of them). For each, the tree is copied into
build/mutation/<module>/ with the package at src/fabgen (mutmut finds a package only at ./, src/
or source/, and names mutants after that path), mutmut mutates that one module there and runs
the module's test subset against each mutant, and build/mutation/<module>/report.md lists the
counts and every mutant that no test killed, with its diff. The working tree's sources are never
written: mutmut's own copy (mutants/) lives inside the build copy.

--again keeps the last run's verdicts and tests only the mutants it left alive (after adding tests
that should kill them), with the module's subset or --tests. This is a development tool, not a CI
gate: a run takes minutes to tens of minutes per module. Run it with the virtualenv that `make
mutation` makes (the `mutation` extra); `make mutation` runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# module key -> (source file under generator/fabgen, the fast test subset that exercises it)
MODULES: dict[str, tuple[str, list[str]]] = {
    "qos": ("intent/qos.py", ["tests/test_qos_readback.py", "tests/test_mutants.py"]),
    "addressing": ("addressing.py", ["tests/test_mutants.py", "tests/test_build.py", "tests/test_infiniband.py",
                                     "tests/test_management.py"]),
    "sizing": ("spec/sizing.py", ["tests/test_sizing.py", "tests/test_sizing_edges.py"]),
}
# what the tests read beside the package (templating.py finds templates/ and ansible/ two levels up)
ALSO_COPY = ["templates", "ansible", "inventories"]


def _copy_tree(work: Path, module: str) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache")
    shutil.copytree(ROOT / "generator" / "fabgen", work / "src" / "fabgen", ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    for name in ALSO_COPY:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, work / name, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")


def _config(work: Path, module: str, tests: list[str]) -> None:
    lines = lambda values: "".join(f"\n    {v}" for v in values)  # noqa: E731 (setup.cfg lists: one a line)
    (work / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths = src\n"
        f"only_mutate = src/fabgen/{module}\n"
        f"also_copy ={lines(ALSO_COPY)}\n"
        f"pytest_add_cli_args_test_selection ={lines(tests)}\n"
        f"pytest_add_cli_args ={lines(['-p', 'no:cacheprovider', '-m', 'not integration'])}\n"
        "use_git_change_detection = false\n"
    )


def statuses(work: Path, module: str) -> dict[str, str]:
    """mutant name -> mutmut's verdict ('killed', 'survived', 'no tests', 'not checked', ...)."""
    from mutmut.stats import status_by_exit_code

    meta = work / "mutants" / "src" / "fabgen" / f"{module}.meta"
    if not meta.exists():
        return {}
    return {k: status_by_exit_code[v] for k, v in json.loads(meta.read_text())["exit_code_by_key"].items()}


ALIVE = ("survived", "no tests", "suspicious")


def summarise(work: Path, key: str, module: str, tests: list[str], mutmut: str, env: dict[str, str],
              seconds: float, found: dict[str, str]) -> dict:
    from importlib.metadata import version

    counts: dict[str, int] = {}
    for status in found.values():
        counts[status] = counts.get(status, 0) + 1
    tested = sum(n for s, n in counts.items() if s not in ("not checked", "skipped"))
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    rate = 100 * killed / tested if tested else 0.0
    alive = [name for name, status in found.items() if status in ALIVE]
    out = [f"# mutmut {version('mutmut')} on generator/fabgen/{module}, {date.today().isoformat()}", "",
           f"Tests: {' '.join(tests)}", "",
           f"{killed} of {tested} mutants killed ({rate:.1f}%); this run {seconds / 60:.1f} min; "
           + ", ".join(f"{s} {n}" for s, n in sorted(counts.items())), ""]
    for name in alive:
        diff = subprocess.run([mutmut, "show", name], cwd=work, env=env, capture_output=True, text=True).stdout
        out += [f"## {name}: {found[name]}", "", "```diff", diff.split("\n", 1)[-1].rstrip(), "```", ""]
    (work / "report.md").write_text("\n".join(out))
    (work / "results.json").write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    return {"killed": killed, "tested": tested, "rate": rate, "alive": len(alive), "counts": counts}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", metavar="MODULE", help=f"of {', '.join(MODULES)} (default: all)")
    ap.add_argument("--tests", nargs="+", help="test files instead of the module's subset")
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--only", nargs="+", default=[],
                    help="mutant names or globs (e.g. 'fabgen.addressing.x_allocate_oob*')")
    ap.add_argument("--again", action="store_true",
                    help="keep the last run's verdicts and test again only the mutants it left alive or "
                         "unchecked, with the current tests (after adding tests that should kill them)")
    args = ap.parse_args()
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        ap.error(f"unknown module {', '.join(unknown)}: choose from {', '.join(MODULES)}")
    mutmut = str(Path(sys.executable).parent / "mutmut")
    for key in args.modules or list(MODULES):
        module, tests = MODULES[key]
        tests = [t for t in (args.tests or tests) if (ROOT / t).exists()]
        work = ROOT / "build" / "mutation" / key
        before: dict[str, str] = {}
        names = list(args.only)
        if args.again and (work / "mutants").is_dir():
            done = work / "results.json"
            before = json.loads(done.read_text()) if done.exists() else statuses(work, module)
            names = names or [n for n, s in before.items() if s in ALIVE or s == "not checked"]
            for tree in (work / "tests", work / "mutants" / "tests"):
                shutil.rmtree(tree, ignore_errors=True)
                shutil.copytree(ROOT / "tests", tree, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            if not names:
                print(f"{key}: nothing left alive")
                continue
        else:
            if work.exists():
                shutil.rmtree(work)
            _copy_tree(work, module)
        _config(work, module, tests)
        env = dict(os.environ)
        env.pop("CI", None)  # tools a test needs are skipped, not failed, here
        env["FABGEN_WORKERS"] = "1"  # render in this process, where mutmut's trampolines count the calls
        # `python -m fabgen` from a test runs the mutants too. The folder must exist before mutmut
        # starts: Python caches a missing sys.path entry as such, and would import the working
        # tree's fabgen (the editable install) instead of the mutants.
        (work / "mutants" / "src").mkdir(parents=True, exist_ok=True)
        env["PYTHONPATH"] = str(work / "mutants" / "src")
        start = time.monotonic()
        with open(work / "mutmut.log", "a" if before else "w") as log:
            subprocess.run(["nice", "-n", "19", mutmut, "run", "--max-children", str(args.max_children), *names],
                           cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
        now = statuses(work, module)
        found = {**before, **{n: s for n, s in now.items() if s != "not checked" or n not in before}}
        r = summarise(work, key, module, tests, mutmut, env, time.monotonic() - start, found)
        print(f"{key}: {r['killed']} of {r['tested']} killed ({r['rate']:.1f}%), {r['alive']} alive "
              f"({', '.join(f'{s} {n}' for s, n in sorted(r['counts'].items()))}); {work / 'report.md'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
