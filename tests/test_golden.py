"""Every example inventory renders byte for byte to its golden tree."""

from __future__ import annotations

import difflib
import shutil

import pytest

from conftest import GOLDEN, IN_CI, INVENTORIES, example_cases
from fabgen.pipeline import run

# topology.svg exists only where Graphviz is installed (CI installs it). Without it, the
# SVGs and the manifest that lists them are left out of the comparison, nothing else.
HAVE_DOT = shutil.which("dot") is not None
if IN_CI and not HAVE_DOT:
    raise RuntimeError("CI must have graphviz: `make test` installs it")


def _tree(path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", example_cases())
def test_golden(case: str, update_golden: bool) -> None:
    files = run(INVENTORIES / f"{case}.yaml").files
    gdir = GOLDEN / case
    if update_golden:
        assert HAVE_DOT, "update goldens where Graphviz is installed, so topology.svg is part of them"
        shutil.rmtree(gdir, ignore_errors=True)
        for rel, content in files.items():
            (gdir / rel).parent.mkdir(parents=True, exist_ok=True)
            (gdir / rel).write_bytes(content)
        return
    assert gdir.is_dir(), f"golden/{case} is missing: run pytest --update-golden and review the files"
    golden = _tree(gdir)
    if not HAVE_DOT:
        golden = {k: v for k, v in golden.items() if not k.endswith(".svg") and k != "manifest.json"}
        files = {k: v for k, v in files.items() if k != "manifest.json"}
    assert sorted(files) == sorted(golden), (
        f"file sets differ: only rendered {sorted(set(files) - set(golden))[:10]}, "
        f"only golden {sorted(set(golden) - set(files))[:10]}")
    failures = []
    for rel in sorted(files):
        if files[rel] != golden[rel]:
            diff = difflib.unified_diff(golden[rel].decode().splitlines(), files[rel].decode().splitlines(),
                                        f"golden/{case}/{rel}", f"rendered/{rel}", lineterm="", n=2)
            failures.append("\n".join(list(diff)[:60]))
    assert not failures, "\n\n".join(failures)


def test_every_golden_has_an_inventory() -> None:
    stale = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir() and not (INVENTORIES / f"{p.name}.yaml").exists())
    assert not stale, f"golden cases without an inventory: {stale}"
