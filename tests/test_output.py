"""Output safety: atomic replacement, refusing directories fabgen did not make, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
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
    assert (out / "roce" / "cabling.csv").exists()
    render_to(INVENTORIES / "superpod-4su.yaml", out)
    assert not (out / "roce").exists(), "files of the previous render that this one lacks are gone"
    assert (out / "compute" / "cabling.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_never_deletes_what_it_did_not_write(tmp_path: Path) -> None:
    """A directory holding anything fabgen's manifest does not list is refused, with or
    without --force, and the message suggests nothing that would delete it."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "precious.txt").write_text("keep me")
    for force in (False, True):
        with pytest.raises(OutputError, match="did not write") as err:
            render_to(INVENTORIES / "roce-2node.yaml", home, force=force)
        assert "precious.txt" in str(err.value) and "--force" not in str(err.value)
        assert (home / "precious.txt").read_text() == "keep me"
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    (out / "notes.md").write_text("mine")
    (out / ".git").mkdir()
    with pytest.raises(OutputError, match="2 entries fabgen did not write"):
        render_to(INVENTORIES / "roce-2node.yaml", out, force=True)
    assert (out / "notes.md").read_text() == "mine" and (out / ".git").is_dir()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        write_tree(a_file, {"a": b"b"})
    with pytest.raises(OutputError, match="is a file, so"):
        write_tree(a_file / "sub" / "out", {"a": b"b"})
    assert a_file.read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "home", "out"], "no temporary tree left"


def test_the_inventory_inside_out_is_refused(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text((INVENTORIES / "roce-2node.yaml").read_text())
    with pytest.raises(OutputError, match="inv.yaml"):
        render_to(inv, tmp_path)
    assert inv.read_text() == (INVENTORIES / "roce-2node.yaml").read_text()


def test_edited_files_are_replaced_only_with_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    cfg = out / "roce" / "switches" / "roce-leaf01.cfg"
    original = cfg.read_bytes()
    cfg.write_text("hand edit\n")
    with pytest.raises(OutputError, match="changed since fabgen wrote it; pass --force"):
        render_to(INVENTORIES / "roce-2node.yaml", out)
    assert cfg.read_text() == "hand edit\n"
    render_to(INVENTORIES / "roce-2node.yaml", out, force=True)
    assert cfg.read_bytes() == original


def test_a_symlink_out_is_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OutputError, match="is a symbolic link"):
        render_to(INVENTORIES / "roce-2node.yaml", tmp_path / "link")
    assert not any((tmp_path / "real").iterdir())


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_current_directory_is_rendered_in_place(workers: str, tmp_path: Path, monkeypatch) -> None:
    """OUT '.' (or a mount point) cannot be swapped by rename: the tree is moved in entry by
    entry, and the working directory stays the same directory; also when several processes
    write the temporary tree inside it."""
    from fabgen import parallel

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)
    monkeypatch.setenv("FABGEN_WORKERS", workers)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    render_to(INVENTORIES / "roce-2node.yaml", Path("."))
    render_to(INVENTORIES / "fattree-2to1.yaml", Path("."))
    assert Path.cwd() == work and (work / "manifest.json").exists()
    assert (work / "fabric" / "cabling.csv").exists() and not (work / "roce").exists()
    assert not [p for p in work.iterdir() if p.name.startswith(".fabgen")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]


@pytest.mark.parametrize("nodes", [1024, 2048])  # 2,048: past parallel.SPLIT_THRESHOLD, the render forks
def test_sigterm_leaves_the_previous_tree_and_no_temporary(nodes: int, tmp_path: Path) -> None:
    import signal
    import time

    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    before = _tree(out)
    big = tmp_path / "big.yaml"
    big.write_text(f"version: 1\ncluster: kill\nnode_groups: [{{name: gpu, model: dgx-h100, count: {nodes}}}]\n"
                   "fabrics:\n"
                   "  - {name: f, kind: roce, platform: eos, topology: rail-optimized, switch_model: arista-7060x5, "
                   "node_groups: [gpu]}\n")
    proc = subprocess.Popen([sys.executable, "-m", "fabgen", "render", str(big), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # signal once the temporary tree beside OUT exists: the render has passed validation and
    # is building, rendering or writing (a fixed delay sometimes came after the swap)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline and \
            not any(p.name.startswith(".out.fabgen-") for p in tmp_path.iterdir()):
        time.sleep(0.005)
    # the point is a render stopped mid-way: one that ended before the signal tests nothing, and one
    # that ends 0 after it ignored the signal (both fail here; neither is a skip)
    assert proc.poll() is None, "the render ended before it could be interrupted: give it more nodes"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted; nothing written" in err and "Traceback" not in err
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.yaml", "out"]


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


@pytest.mark.parametrize("case", ["roce-3tier", "superpod-cluster"])
def test_two_core_writes_the_same_tree(case: str, tmp_path: Path, monkeypatch) -> None:
    """render_to on two processes, each writing the files it rendered into the temporary tree,
    leaves byte for byte the tree (manifest included) one process writes; and it is what the
    in-memory render holds."""
    from fabgen import parallel
    from fabgen.pipeline import run

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)
    trees = []
    for workers in ("1", "2"):
        monkeypatch.setenv("FABGEN_WORKERS", workers)
        result = render_to(INVENTORIES / f"{case}.yaml", tmp_path / workers)
        trees.append(_tree(tmp_path / workers))
        assert sorted(result.files) == sorted(trees[-1])
    assert trees[0] == trees[1]
    assert trees[0] == run(INVENTORIES / f"{case}.yaml").files
    manifest = json.loads(trees[0]["manifest.json"])
    assert len(manifest["files"]) == len(trees[0]) - 1


def test_a_write_error_in_the_render_worker_keeps_the_previous_tree(tmp_path: Path, monkeypatch, capsys) -> None:
    """The forked render process writes its own files: a full disk there is the same one line,
    exit 2, the previous OUT untouched and no temporary tree, as in the parent."""
    import fabgen.output as output
    from fabgen import parallel
    from fabgen.cli import main

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)
    monkeypatch.setenv("FABGEN_WORKERS", "2")
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-3tier.yaml", out)
    before = _tree(out)
    parent = os.getpid()
    real_write = output._write_one

    slow = [True]

    def full_in_child(base: str, rel: str, content: bytes) -> None:
        if os.getpid() != parent:
            raise OSError(28, os.strerror(28), os.path.join(base, rel))
        if slow[0]:  # the parent pauses on its first file, so the child surely takes pieces
            slow[0] = False
            time.sleep(0.5)
        real_write(base, rel, content)

    monkeypatch.setattr(output, "_write_one", full_in_child)
    with pytest.raises(SystemExit) as exc:
        main(["render", str(INVENTORIES / "roce-3tier.yaml"), "-o", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device; nothing written" in err[0], err
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"], "no temporary tree left"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_failed_check_beside_the_render_writes_nothing(workers: str, tmp_path: Path, monkeypatch) -> None:
    """The structural check of a large fabric runs in a forked process beside allocate,
    structure and render: a problem it finds still stops the render before the tree is
    swapped in (OUT stays as it was, no temporary tree), and run() raises it too."""
    from fabgen import parallel, pipeline
    from fabgen.check.fabric import TopologyError

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)
    monkeypatch.setenv("FABGEN_WORKERS", workers)
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-3tier.yaml", out)
    before = _tree(out)

    def broken(fabric) -> None:
        raise TopologyError(f"fabric {fabric.name}: 1 structural problem(s): a planted bug")

    monkeypatch.setattr(pipeline, "check", broken)
    with pytest.raises(TopologyError, match="a planted bug"):
        render_to(INVENTORIES / "superpod-4su.yaml", out)
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"], "no temporary tree left"
    with pytest.raises(TopologyError, match="a planted bug"):
        pipeline.run(INVENTORIES / "superpod-4su.yaml")


def test_the_render_queue_takes_every_piece_once(monkeypatch) -> None:
    """Pieces of the two-core render: every file once, whichever process takes which piece,
    also with more targets than the queue holds at eight pieces each (fewer pieces each)."""
    from fabgen import parallel

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)

    def render(data):
        for item in data["items"]:
            yield (f"{data['name']}/{item}", str(item).encode())

    def shard(data, part, parts):
        return {**data, "items": data["items"][part::parts]}

    for count in (3, 1500):
        jobs = [(render, {"name": f"t{i}", "items": list(range(20))}, shard if i % 3 else None) for i in range(count)]
        monkeypatch.setenv("FABGEN_WORKERS", "1")
        one = list(parallel.render_all(jobs, 10))
        monkeypatch.setenv("FABGEN_WORKERS", "2")
        two = list(parallel.render_all(jobs, 10))
        assert len(one) == count * 20 and sorted(one) == sorted(two)
        pieces, queue = parallel._queue(jobs)
        os.close(queue)
        assert len(pieces) * parallel._TOKEN.size <= parallel._QUEUE_BYTES
        assert len(pieces) == {3: 1 + 2 * parallel.CHUNKS, 1500: 1500}[count]  # fewer pieces each when many


def test_a_failing_render_worker_is_reported(monkeypatch) -> None:
    from fabgen import parallel

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)
    monkeypatch.setenv("FABGEN_WORKERS", "2")

    parent = os.getpid()

    def render(data):
        if data == "boom":
            raise ValueError("bad data")
        time.sleep(0.2)  # the parent is slow: the child takes pieces too
        yield ("a", b"1")

    # every piece fails in the child (which piece each process takes depends on timing)
    jobs = [(render, "ok", lambda d, part, parts: "boom" if os.getpid() != parent else d)]
    with pytest.raises(RuntimeError, match="ValueError: bad data"):
        list(parallel.render_all(jobs, 10))


@pytest.mark.parametrize("errno_, where", [(28, "write"), (30, "mkdtemp"), (13, "mkdtemp")])
def test_full_or_read_only_file_systems_keep_the_previous_tree(tmp_path: Path, monkeypatch, errno_: int,
                                                                where: str) -> None:
    """A full disk (ENOSPC halfway through the files), a read-only file system (EROFS) or no
    permission (EACCES): one clear line through the CLI, exit 2, the previous OUT byte for byte,
    no temporary tree beside it."""
    import fabgen.output as output
    from fabgen.cli import main

    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    before = _tree(out)
    written = []

    def failing_write(base: str, rel: str, content: bytes) -> None:
        if len(written) > 5:
            raise OSError(errno_, os.strerror(errno_), os.path.join(base, rel))
        written.append(rel)
        real_write(base, rel, content)

    def failing_mkdtemp(*args, **kwargs):
        raise OSError(errno_, os.strerror(errno_), str(tmp_path))

    real_write = output._write_one
    if where == "write":
        monkeypatch.setattr(output, "_write_one", failing_write)
    else:
        monkeypatch.setattr(output.tempfile, "mkdtemp", failing_mkdtemp)
    with pytest.raises(SystemExit) as exc:
        main(["render", str(INVENTORIES / "roce-3tier.yaml"), "-o", str(out)])
    assert exc.value.code == 2
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"], "no temporary tree left"


def test_write_errors_are_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    import fabgen.output as output
    from fabgen.cli import main

    def full(base: str, rel: str, content: bytes) -> None:
        raise OSError(28, os.strerror(28), os.path.join(base, rel))

    monkeypatch.setattr(output, "_write_one", full)
    with pytest.raises(SystemExit):
        main(["render", str(INVENTORIES / "roce-2node.yaml"), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device; nothing written" in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "out").exists() and list(tmp_path.iterdir()) == []


def test_report_warnings_do_not_move_with_the_inventorys_lines(tmp_path: Path) -> None:
    """report.md and report.json key their warnings by inventory path: an edit that moves the
    lines (a comment at the top) changes neither, while the command line still gives line and column."""
    from fabgen.api import validate

    text = (INVENTORIES / "b300-cluster.yaml").read_text()
    moved = tmp_path / "moved.yaml"
    moved.write_text("# a comment that moves every line\n\n" + text)
    (tmp_path / "b300-cluster-rdma-links.txt").write_bytes((INVENTORIES / "b300-cluster-rdma-links.txt").read_bytes())
    render_to(INVENTORIES / "b300-cluster.yaml", tmp_path / "a")
    render_to(moved, tmp_path / "b")
    for name in ("report.md", "report.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    report = (tmp_path / "a" / "report.md").read_text()
    assert "- fabrics[" in report and "(line " not in report
    lines = {w.line for w in validate(INVENTORIES / "b300-cluster.yaml").warnings if w.path}
    assert lines and {w.line for w in validate(moved).warnings if w.path} == {n + 2 for n in lines}
