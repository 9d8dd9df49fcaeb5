"""slurmctld reads the rendered topology.yaml (Slurm 25.05 and later).

Debian 12's slurmctld (22.05, tests/test_slurm.py) reads topology.conf only. `make test` unpacks
Debian unstable's slurmctld and slurm-client with everything they link against into a directory of
their own (tests/slurm_sid.sh; nothing is installed on the machine). Each case starts that
slurmctld chrooted there, in a mount namespace of its own (the controller needs /proc and /dev),
with topology.yaml beside a minimal slurm.conf and no topology.conf, and asks `scontrol show
topology NAME` for every topology of the file: the tree's switches with their nodes or children
and levels, the blocks with their nodes and base size, and the aggregated blocks must be those
fabgen meant (its Slurm structure before it is written out). Broken files show that slurmctld
refuses some mistakes and that the comparison reports those it starts with anyway. Needs root
(chroot and mount), as CI runs.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import yaml

from conftest import GOLDEN, IN_CI, INVENTORIES, ROOT
from fabgen.formats.hostlist import compress, expand
from fabgen.pipeline import render_to

pytestmark = pytest.mark.integration

SLURM_ROOT = ROOT / os.environ.get("SLURM_ROOT", "build/slurm-sid")  # the Makefile's SLURM_ROOT
CHROOT = SLURM_ROOT / "root"
# examples of each shape: two- and three-tier trees, a fat tree, NVL72 racks as blocks (one and two
# block sizes), two planes, one switch, and a whole cluster (compute beside storage and management)
CASES = ["superpod-4su", "ib-3tier", "fattree-2to1", "gb300-nvl72", "b300-spectrumx-2plane", "gb200-superpod-2su",
         "roce-2node", "superpod-cluster"]


def _need_slurm() -> str:
    """The chrooted Slurm's version; skip (fail in CI) where it cannot run."""
    why = None
    if not (SLURM_ROOT / ".installed").exists():
        why = f"no Slurm unpacked in {SLURM_ROOT} (`make test` runs tests/slurm_sid.sh)"
    elif os.geteuid() != 0 or shutil.which("unshare") is None:
        why = "chroot and a mount namespace need root and unshare (util-linux)"
    if why:
        if IN_CI:
            raise RuntimeError(f"CI must run the Slurm that reads topology.yaml: {why}")
        pytest.skip(f"slurmctld on topology.yaml skipped: {why}")
    run = subprocess.run(["chroot", str(CHROOT), "/usr/sbin/slurmctld", "-V"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    version = run.stdout.split()[-1]
    assert tuple(map(int, version.split(".")[:2])) >= (25, 5), f"Slurm {version} does not read topology.yaml"
    return version


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _nodes(doc: list[dict]) -> list[str]:
    nodes: list[str] = []
    for topo in doc:
        for entry in topo.get("tree", {}).get("switches", []) + topo.get("block", {}).get("blocks", []):
            nodes += [n for n in expand(entry.get("nodes", "")) if n not in nodes] if entry.get("nodes") else []
    return nodes


class Controller:
    """slurmctld in the chroot, its files in a directory of its own under the chroot's /tmp."""

    def __init__(self, topology_yaml: str, nodes: list[str]) -> None:
        self.inside = Path("/tmp") / f"fabgen-{uuid.uuid4().hex[:12]}"
        self.dir = CHROOT / self.inside.relative_to("/")
        (self.dir / "state").mkdir(parents=True)
        (self.dir / "topology.yaml").write_text(topology_yaml)
        (self.dir / "slurm.conf").write_text("\n".join([
            "ClusterName=fabgen", "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}", "SlurmUser=root",
            "AuthType=auth/none", "CredType=cred/none", f"StateSaveLocation={self.inside / 'state'}",
            f"SlurmctldPidFile={self.inside / 'slurmctld.pid'}", f"SlurmctldLogFile={self.inside / 'slurmctld.log'}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SchedulerType=sched/builtin",
            "MpiDefault=none",
            f"NodeName={compress(nodes)} NodeAddr=127.0.0.1 CPUs=1 State=FUTURE",
            "PartitionName=all Nodes=ALL Default=YES State=UP", ""]))
        self.env = {**os.environ, "SLURM_CONF": str(self.inside / "slurm.conf")}
        self.proc: subprocess.Popen | None = None

    def _in_namespace(self, *command: str) -> list[str]:
        # a private mount namespace: /proc and /dev for the chroot, gone with its last process
        script = (f'mount -t proc proc "{CHROOT}/proc" && mount --rbind /dev "{CHROOT}/dev" && '
                  f'exec chroot "{CHROOT}" "$@"')
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command]

    def start(self) -> tuple[int, str]:
        """Start slurmctld; (0, '') once it answers, or (its exit code, its output) if it stops."""
        self.proc = subprocess.Popen(self._in_namespace("/usr/sbin/slurmctld", "-D", "-i"), env=self.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return self.proc.returncode, self.proc.stdout.read() + self.log()
            if self.scontrol("ping")[0] == 0:
                return 0, ""
            time.sleep(0.3)
        raise AssertionError("slurmctld did not answer within 30 s:\n" + self.log()[-3000:])

    def scontrol(self, *args: str) -> tuple[int, str]:
        run = subprocess.run(["chroot", str(CHROOT), "/usr/bin/scontrol", *args], env=self.env, capture_output=True,
                             text=True, timeout=20)
        return run.returncode, run.stdout + run.stderr

    def log(self) -> str:
        path = self.dir / "slurmctld.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _records(text: str, kind: str = "SwitchName") -> dict[str, dict[str, str]]:
    """`scontrol show topology` lines of one kind (SwitchName, BlockName, AggregatedBlock) as
    {name: fields}."""
    out = {}
    for line in text.splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        assert {"SwitchName", "BlockName", "AggregatedBlock"} & set(fields), line
        if kind in fields:
            out[fields[kind]] = fields
    return out


def intended(case: str) -> dict[str, dict]:
    """fabgen's Slurm topologies for an example before they are written out (the structure both
    topology.conf and topology.yaml are rendered from): {topology name: what it holds}."""
    from fabgen.inventory.loader import load
    from fabgen.inventory.validate import validate
    from fabgen.pipeline import build
    from fabgen.targets import slurm

    _, contexts = build(validate(load(INVENTORIES / f"{case}.yaml")))
    out: dict[str, dict] = {}
    for i, fab in enumerate(slurm.structure(list(contexts.values()))["fabrics"]):
        out[f"{fab['fabric']}-tree"] = {"default": i == 0, "tree": fab["tree"]}
        if fab["block_sizes"]:
            out[f"{fab['fabric']}-block"] = {"default": False, "sizes": fab["block_sizes"],
                                             "blocks": {b: list(nodes) for b, nodes in fab["blocks"].items()}}
    return out


def differences(expected: dict[str, dict], doc: list[dict], ctl: Controller) -> list[str]:  # noqa: C901 (each topology's records against the rendered ones, kind by kind)
    """Where the topologies the running slurmctld shows differ from those fabgen meant to write
    (`intended`); `doc`: the file slurmctld read, for the topologies it declares."""
    out: list[str] = []
    declared = [(t.get("topology"), t.get("cluster_default")) for t in doc]
    if declared != [(n, want["default"]) for n, want in expected.items()]:
        out.append(f"topologies (name, default) {declared} for {[(n, w['default']) for n, w in expected.items()]}")
    for name, want in expected.items():
        code, shown = ctl.scontrol("show", "topology", name)
        if code != 0:
            out.append(f"{name}: {shown.strip()}")
            continue
        if "tree" in want:
            seen = _records(shown)
            rendered = {s["switch"]: s for s in want["tree"]}
            if set(seen) != set(rendered):
                out.append(f"{name}: switches differ: {sorted(set(seen) ^ set(rendered))}")
                continue
            level: dict[str, int] = {}
            for sw, entry in rendered.items():  # children are listed before their parents
                shows = seen[sw]
                if "nodes" in entry:
                    level[sw] = 0
                    if expand(shows.get("Nodes", "")) != expand(entry["nodes"]):
                        out.append(f"{name}: {sw}: nodes {shows.get('Nodes')} for {entry['nodes']}")
                else:
                    kids = expand(entry["children"])
                    level[sw] = 1 + max(level[c] for c in kids)
                    if expand(shows.get("Switches", "")) != kids:
                        out.append(f"{name}: {sw}: children {shows.get('Switches')} for {entry['children']}")
                    below = sorted(n for c in kids for n in expand(seen[c].get("Nodes", "")))
                    if sorted(expand(shows.get("Nodes", ""))) != below:
                        out.append(f"{name}: {sw}: nodes {shows.get('Nodes')} are not its children's")
                if int(shows["Level"]) != level[sw]:
                    out.append(f"{name}: {sw}: level {shows['Level']}, {level[sw]} in the tree")
        else:
            seen, blocks, base = _records(shown, "BlockName"), want["blocks"], want["sizes"][0]
            if set(seen) != set(blocks):
                out.append(f"{name}: blocks differ: {sorted(set(seen) ^ set(blocks))}")
                continue
            for b, nodes in blocks.items():
                if expand(seen[b]["Nodes"]) != nodes:
                    out.append(f"{name}: {b}: nodes {seen[b]['Nodes']} for {compress(nodes)}")
                if int(seen[b]["BlockSize"]) != base:
                    out.append(f"{name}: {b}: block size {seen[b]['BlockSize']} for {base}")
            # each larger block size: consecutive base blocks, as many as fit whole
            order, wanted = list(blocks), {}
            for size in want["sizes"][1:]:
                m = size // base
                for k in range(len(order) // m):
                    group = order[k * m:(k + 1) * m]
                    wanted[frozenset(group)] = (size, [n for g in group for n in blocks[g]])
            aggregated = {frozenset(expand(a)): (int(f["BlockSize"]), expand(f["Nodes"]))
                          for a, f in _records(shown, "AggregatedBlock").items()}
            if aggregated != wanted:
                out.append(f"{name}: aggregated blocks differ")
    # the default topology is the one `scontrol show topology` shows without a name
    (default,) = [n for n, want in expected.items() if want["default"]]
    if ctl.scontrol("show", "topology") != ctl.scontrol("show", "topology", default):
        out.append(f"the default topology is not {default}")
    return out


@pytest.mark.parametrize("case", CASES)
def test_slurmctld_reads_topology_yaml_as_rendered(case: str, tmp_path: Path) -> None:
    """The topologies slurmctld reads from the rendered topology.yaml are those fabgen meant."""
    _need_slurm()
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    text = (tmp_path / "slurm" / "topology.yaml").read_text()
    doc = yaml.safe_load(text)
    ctl = Controller(text, _nodes(doc))
    try:
        code, out = ctl.start()
        assert code == 0, out[-3000:]
        assert differences(intended(case), doc, ctl) == []
    finally:
        ctl.stop()


def _ib_3tier() -> list[dict]:
    return yaml.safe_load((GOLDEN / "ib-3tier" / "slurm" / "topology.yaml").read_text())


def _tree(doc: list[dict]) -> list[dict]:
    return doc[0]["tree"]["switches"]


# topology.yaml files slurmctld refuses to start with: (what is broken, how, in its output)
REFUSED = [
    ("a switch naming a child that does not exist",
     lambda d: _tree(d)[-1].update(children="ib-pod[01-03]"), "ib-pod03"),
    ("children as a YAML list, not a host list",
     lambda d: _tree(d)[-1].update(children=["ib-pod01", "ib-pod02"]), "Failed to load topology.yaml"),
    ("a misspelt switches key", lambda d: d[0]["tree"].update(switchs=d[0]["tree"].pop("switches")),
     "No switches configured"),
    ("a larger block size not a power-of-two multiple of the base",
     lambda d: d[1]["block"].update(block_sizes=[32, 96]), "Invalid BlockSizes value in topology ib-block"),
]


@pytest.mark.parametrize("what,alter,expected", REFUSED, ids=[r[0] for r in REFUSED])
def test_slurmctld_refuses_a_broken_file(what: str, alter, expected: str) -> None:
    _need_slurm()
    doc = _ib_3tier()
    nodes = _nodes(doc)
    alter(doc)
    ctl = Controller(yaml.safe_dump(doc, sort_keys=False), nodes)
    try:
        code, out = ctl.start()
        assert code != 0 and expected in out, (what, code, out[-2000:])
    finally:
        ctl.stop()


# files slurmctld starts with but reads otherwise than rendered: the comparison reports them
MISREAD = [
    ("a misspelt children key (ignored: a switch without children)",
     lambda d: _tree(d)[-1].update(child=_tree(d)[-1].pop("children")), "ib-tree: ib: children"),
    ("a node under two switches", lambda d: _tree(d)[1].update(nodes="h100-[032-064]"),
     "ib-tree: ib-su002: nodes"),
    ("a base block size that is not the unit's", lambda d: d[1]["block"].update(block_sizes=[16]),
     "ib-block: ib-su001: block size"),
    ("two default topologies", lambda d: d[1].update(cluster_default=True), "topologies (name, default)"),
]


@pytest.mark.parametrize("what,alter,expected", MISREAD, ids=[m[0] for m in MISREAD])
def test_the_read_back_reports_a_file_read_otherwise(what: str, alter, expected: str) -> None:
    _need_slurm()
    doc = _ib_3tier()
    nodes = _nodes(doc)
    alter(doc)
    ctl = Controller(yaml.safe_dump(doc, sort_keys=False), nodes)
    try:
        code, out = ctl.start()
        assert code == 0, out[-2000:]
        found = differences(intended("ib-3tier"), doc, ctl)
        assert any(expected in p for p in found), (what, found)
    finally:
        ctl.stop()
