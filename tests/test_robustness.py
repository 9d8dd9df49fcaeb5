"""Robustness: a render killed at any moment leaves the previous output byte for byte; random
mutations of valid inventories never produce a traceback, and whatever is accepted renders."""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import INVENTORIES
from fabgen.errors import InventoryError
from fabgen.inventory.loader import load_text
from fabgen.inventory.validate import validate
from fabgen.pipeline import build, render_to, run


def _snapshot(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


BIG = """version: 1
cluster: kill
node_groups: [{name: gpu, model: dgx-h100, count: 1024}]
fabrics:
  - {name: f, kind: roce, platform: eos, topology: rail-optimized, switch_model: arista-7060x5, node_groups: [gpu]}
"""


@pytest.mark.integration
def test_killed_render_leaves_the_previous_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    before = _snapshot(out)
    big = tmp_path / "big.yaml"
    big.write_text(BIG)
    env = {**os.environ, "FABGEN_WORKERS": "1"}
    start = time.perf_counter()
    full = subprocess.run([sys.executable, "-m", "fabgen", "render", str(big), "-o", str(tmp_path / "probe")],
                          env=env, capture_output=True, timeout=300)
    assert full.returncode == 0, full.stderr
    duration = time.perf_counter() - start
    # kill at ten moments spread over a whole render: during start-up, rendering and writing
    for i in range(1, 11):
        proc = subprocess.Popen([sys.executable, "-m", "fabgen", "render", str(big), "-o", str(out)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * i / 11)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        now = _snapshot(out)
        if now != before:  # the swap happened: then it must be the whole new tree, never a mix
            assert now == _snapshot(tmp_path / "probe"), f"kill {i}: a partial tree"
            before = now
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")]
    assert all(".fabgen-" in n or ".old-" in n for n in leftovers)


@pytest.mark.integration
def test_a_killed_render_leaves_no_process_behind(tmp_path: Path) -> None:
    """A render on two cores forks (the render child, the check beside it, the targets made
    apart): killed with SIGKILL, as an out-of-memory killer or a CI timeout does, none of them
    goes on writing into its temporary tree."""
    big = tmp_path / "big.yaml"
    big.write_text(BIG.replace("count: 1024", "count: 2048"))  # above parallel.SPLIT_THRESHOLD devices
    env = {**os.environ, "FABGEN_WORKERS": "2"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fabgen", "render", str(big), "-o", str(tmp_path / "probe")],
                   env=env, capture_output=True, timeout=300, check=True)
    duration = time.perf_counter() - start

    def survivors() -> list[str]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and str(big).encode() in (entry / "cmdline").read_bytes():
                    found.append(entry.name)
            except OSError:
                continue
        return found

    forked = 0
    for share in (0.4, 0.5, 0.6):
        proc = subprocess.Popen([sys.executable, "-m", "fabgen", "render", str(big), "-o", str(tmp_path / "out")],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * share)
        forked += len(survivors()) > 1
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 0.5  # the kernel kills them at once; a render would take seconds
        while survivors() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not survivors(), f"killed at {share:.0%} of a render, its forked processes went on"
    assert forked, "no kill came while the render had forked: the test did not test"


# --- random mutations of valid inventories -------------------------------------------------

BASES = ["roce-2node", "fattree-2to1", "ib-storage", "spectrumx-1su", "roce-3tier"]
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 600), st.sampled_from(
    ["", "x", "qm9700", "sonic", "rail-optimized", "fat-tree", "auto", "0.5", "10.0.0.0/33", "a/b", "..", "gpu",
     "dgx-h100", "infiniband", "roce", "spectrum-x", "65101", "-1", "  ", "ufm", "nvue", "eos", "opensm",
     "storage", "leaf-subnet", "lossy"]),
    st.lists(st.sampled_from(["gpu", "b200", "store", "x"]), max_size=3), st.dictionaries(st.sampled_from(
        ["mtu", "qos", "pools", "asn", "tiers", "count", "name"]), st.integers(0, 70000), max_size=2))


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _mutate(doc, data):
    paths = [p for p in _paths(doc) if p]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        action = data.draw(st.sampled_from(["set", "delete", "rename", "duplicate"]))
        if action == "set":
            parent[key] = data.draw(VALUES)
        elif action == "delete":
            if isinstance(parent, dict):
                parent.pop(key, None)
            elif isinstance(parent, list) and key < len(parent):
                parent.pop(key)
        elif action == "rename" and isinstance(parent, dict) and key in parent:
            parent[str(key) + data.draw(st.sampled_from(["s", "_", "x"]))] = parent.pop(key)
        elif action == "duplicate" and isinstance(parent, list) and key < len(parent):
            parent.append(copy.deepcopy(parent[key]))
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
    return doc


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(BASES), data=st.data())
def test_mutated_inventories_fail_cleanly_or_render(base: str, data) -> None:
    doc = yaml.safe_load((INVENTORIES / f"{base}.yaml").read_text())
    doc = _mutate(doc, data)
    text = yaml.safe_dump(doc, sort_keys=False)
    try:
        validated = validate(load_text(text, "mutated.yaml"))
    except InventoryError as exc:
        for p in exc.problems:
            line = p.format()
            assert line.startswith("mutated.yaml:") and "Traceback" not in line
        return
    nodes = sum(len(m) for m in validated.members.values()) + sum(len(m) for m in validated.storage.values())
    if nodes > 2000:  # accepted and large: prove it builds; the golden and scale tests render such sizes
        build(validated)
        return
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    inv = tmp / f"fabgen-mutated-{os.getpid()}.yaml"
    inv.write_text(text)
    try:
        assert run(inv).files
    finally:
        inv.unlink()


def test_free_text_cannot_break_the_report_table(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text("""version: 1
cluster: c
node_groups: [{name: n, model: box, count: 2}]
node_models:
  box:
    gpus: 8
    vendor: "A|B"
    nic_model: "CX7 | dual \\\\ port"
    nics: [{rdma: mlx5_0, speed: 400}]
fabrics:
  - {name: f, kind: infiniband, platform: opensm, topology: fat-tree, switch_model: qm9700, node_groups: [n]}
""")
    md = run(inv).files["report.md"].decode()
    row = next(line for line in md.splitlines() if "NIC in box" in line)
    cells = [c for c in __import__("re").split(r"(?<!\\)\|", row)[1:-1]]
    assert len(cells) == 5 and "CX7 \\| dual \\\\ port" in row
