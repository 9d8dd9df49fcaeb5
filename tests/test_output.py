"""Output safety: atomic replacement, refusing directories fabgen did not make, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import INVENTORIES, ROOT
from fabgen.errors import OutputError
from fabgen.output import write_tree
from fabgen.pipeline import render_to


def _tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_replaces_its_own_output_and_leaves_no_temporaries(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    (out / "stale.txt").write_text("from an older render")
    render_to(INVENTORIES / "superpod-4su.yaml", out)
    assert not (out / "stale.txt").exists()
    assert (out / "compute" / "cabling.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_refuses_foreign_directory_and_files(tmp_path: Path) -> None:
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep me")
    with pytest.raises(OutputError, match="did not create"):
        render_to(INVENTORIES / "roce-2node.yaml", foreign)
    assert (foreign / "precious.txt").read_text() == "keep me"
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        write_tree(a_file, {"a": b"b"})
    render_to(INVENTORIES / "roce-2node.yaml", foreign, force=True)
    assert not (foreign / "precious.txt").exists()


def test_manifest_lists_every_file_with_its_hash(tmp_path: Path) -> None:
    import hashlib

    out = tmp_path / "out"
    render_to(INVENTORIES / "superpod-4su.yaml", out)
    doc = json.loads((out / "manifest.json").read_text())
    files = {e["path"]: e for e in doc["files"]}
    on_disk = {p for p in _tree(out) if p != "manifest.json"}
    assert set(files) == on_disk
    for path, e in files.items():
        data = (out / path).read_bytes()
        assert e["sha256"] == hashlib.sha256(data).hexdigest() and e["bytes"] == len(data)
    assert doc["inventory_sha256"] == hashlib.sha256((INVENTORIES / "superpod-4su.yaml").read_bytes()).hexdigest()


@pytest.mark.parametrize("case", ["superpod-4su", "fattree-2to1"])
def test_deterministic_across_hash_seeds(case: str, tmp_path: Path) -> None:
    trees = []
    for seed in ("0", "12345"):
        out = tmp_path / f"out-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "fabgen", "render", str(INVENTORIES / f"{case}.yaml"), "-o", str(out)],
                       check=True, env=env, cwd=ROOT, capture_output=True)
        trees.append(_tree(out))
    assert trees[0] == trees[1]


@pytest.mark.parametrize("case", ["fattree-2to1", "roce-3tier", "spectrumx-1su", "superpod-4su"])
def test_two_core_render_is_byte_identical(case: str, monkeypatch) -> None:
    """The forked render (fabgen.parallel) writes exactly what one process writes."""
    from fabgen import parallel
    from fabgen.pipeline import run

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)
    monkeypatch.setenv("FABGEN_WORKERS", "1")
    one = run(INVENTORIES / f"{case}.yaml").files
    monkeypatch.setenv("FABGEN_WORKERS", "2")
    assert parallel._workers(10) == 2
    two = run(INVENTORIES / f"{case}.yaml").files
    assert one == two


def test_a_failing_render_worker_is_reported(monkeypatch) -> None:
    from fabgen import parallel

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)
    monkeypatch.setenv("FABGEN_WORKERS", "2")

    def render(data):
        if data == "boom":
            raise ValueError("bad data")
        yield ("a", b"1")

    jobs = [(render, "ok", lambda d, part, parts: "boom" if part == 1 else d)]
    with pytest.raises(RuntimeError, match="ValueError: bad data"):
        list(parallel.render_all(jobs, 10))
