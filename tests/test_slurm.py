"""Slurm topology files read back: every compute node under exactly one level-1 switch, every
referenced switch defined, one root per fabric, and the grouping follows the cabling."""

from __future__ import annotations

import getpass
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from readback import read_cabling

from conftest import IN_CI, INVENTORIES
from fabgen.formats.hostlist import compress, expand
from fabgen.pipeline import render_to


def read_conf(path: Path) -> dict[str, dict[str, list[str]]]:
    switches = {}
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"SwitchName=(\S+) (Nodes|Switches)=(\S+)", line)
        assert m, f"not topology.conf syntax: {line}"
        assert m.group(1) not in switches
        switches[m.group(1)] = {m.group(2): expand(m.group(3))}
    return switches


@pytest.mark.parametrize("case,fabric", [("superpod-4su", "compute"), ("ib-3tier", "ib"),
                                         ("fattree-2to1", "fabric"), ("ib-storage", "ib"),
                                         ("gb300-nvl72", "compute"), ("b300-xdr-2su", "compute"),
                                         ("gb200-superpod-2su", "compute")])
def test_topology_follows_the_cabling(case: str, fabric: str, tmp_path: Path) -> None:
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    conf = read_conf(tmp_path / "slurm" / "topology.conf")
    cabling = read_cabling(tmp_path, fabric)
    leaves_of: dict[str, set[str]] = {}
    for r in cabling:
        if r["tier"] == "node-leaf":
            leaves_of.setdefault(r["a_device"], set()).add(r["z_device"])
    compute = {h for h, leaves in leaves_of.items() if not any("-storage-leaf" in x for x in leaves)}
    placed = [n for sw in conf.values() for n in sw.get("Nodes", [])]
    assert sorted(placed) == sorted(compute), "every compute node exactly once, no storage node"
    children = [c for sw in conf.values() for c in sw.get("Switches", [])]
    assert set(children) <= set(conf) and len(children) == len(set(children))
    roots = set(conf) - set(children)
    assert len(roots) == 1
    # nodes under one level-1 switch share their leaves: one hop apart on every rail
    for sw in conf.values():
        nodes = sw.get("Nodes")
        if nodes is None:
            continue
        assert len({frozenset(leaves_of[n]) for n in nodes}) == 1
    doc = yaml.safe_load((tmp_path / "slurm" / "topology.yaml").read_text())
    assert doc[0]["topology"] == f"{fabric}-tree" and doc[0]["cluster_default"] is True
    tree = {s["switch"]: s for s in doc[0]["tree"]["switches"]}
    assert set(tree) == set(conf)
    block = doc[1]["block"]
    sizes = block["block_sizes"]
    assert all(b == a * 2 ** (b // a).bit_length() // 2 and (b // a) & (b // a - 1) == 0
               for a, b in zip(sizes, sizes[1:])), "successive block sizes: power-of-two multiples"
    assert sorted(n for b in block["blocks"] for n in expand(b["nodes"])) == sorted(compute)


def test_hostlist_round_trip() -> None:
    names = ["dgx001", "dgx002", "dgx003", "dgx010", "b200-01", "login", "dgx011"]
    expr = compress(names)
    assert expr == "dgx[001-003,010-011],b200-01,login"
    assert sorted(expand(expr)) == sorted(names)


# ---- the real scheduler: Debian's slurmctld reads the rendered topology.conf ----------------

SLURMCTLD = shutil.which("slurmctld") or ("/usr/sbin/slurmctld" if Path("/usr/sbin/slurmctld").exists() else None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _slurm_conf(tmp: Path, topology: Path) -> Path:
    """A minimal slurm.conf: one controller on localhost, no authentication daemon (auth/none,
    Slurm 22.05 still ships it), the compute nodes of topology.conf in state FUTURE so the
    controller never contacts them, and topology/tree reading the rendered file beside it."""
    nodes = [n for sw in read_conf(topology).values() for n in sw.get("Nodes", [])]
    (tmp / "state").mkdir(parents=True)
    shutil.copy(topology, tmp / "topology.conf")
    conf = tmp / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=fabgen", "SlurmctldHost=localhost(127.0.0.1)",
        f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}", f"SlurmUser={getpass.getuser()}",
        "AuthType=auth/none", "CredType=cred/none", f"StateSaveLocation={tmp / 'state'}",
        f"SlurmctldPidFile={tmp / 'slurmctld.pid'}", f"SlurmctldLogFile={tmp / 'slurmctld.log'}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/linear",
        "SchedulerType=sched/builtin", "MpiDefault=none", "TopologyPlugin=topology/tree",
        f"NodeName={compress(nodes)} NodeAddr=127.0.0.1 CPUs=1 State=FUTURE",
        "PartitionName=all Nodes=ALL Default=YES State=UP", ""]))
    return conf


def _show_topology(conf: Path) -> tuple[int, str]:
    """Start slurmctld in the foreground, ask it for the topology, stop it by its PID. Returns
    (slurmctld's exit code or 0 while it ran, `scontrol show topology` or slurmctld's output)."""
    env = {**os.environ, "SLURM_CONF": str(conf)}
    proc = subprocess.Popen([SLURMCTLD, "-D", "-i"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return proc.returncode, proc.stdout.read()
            shown = subprocess.run(["scontrol", "show", "topology"], env=env, capture_output=True, text=True,
                                   timeout=10)
            if shown.returncode == 0 and "SwitchName=" in shown.stdout:
                return 0, shown.stdout
            time.sleep(0.3)
        raise AssertionError("slurmctld did not answer within 30 s")
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


def _need_slurmctld() -> None:
    if SLURMCTLD is None or shutil.which("scontrol") is None:
        if IN_CI:
            raise RuntimeError("CI must have slurmctld and scontrol: `make test` installs Debian's slurmctld")
        pytest.skip("slurmctld is not installed (Debian packages slurmctld and slurm-client; `make test` installs "
                    "them)")


@pytest.mark.parametrize("case", ["superpod-4su", "ib-3tier", "fattree-2to1", "gb300-nvl72", "b300-spectrumx-2plane",
                                  "gb200-superpod-2su"])
def test_slurmctld_reads_the_topology_as_rendered(case: str, tmp_path: Path) -> None:
    """Slurm's own controller loads topology.conf and `scontrol show topology` lists exactly the
    rendered switches, each with its nodes or children and the level its place in the tree gives."""
    _need_slurmctld()
    render_to(INVENTORIES / f"{case}.yaml", tmp_path / "out")
    rendered = read_conf(tmp_path / "out" / "slurm" / "topology.conf")
    code, shown = _show_topology(_slurm_conf(tmp_path / "ctl", tmp_path / "out" / "slurm" / "topology.conf"))
    assert code == 0, shown[-3000:]
    seen = {}
    for line in shown.splitlines():
        fields = dict(f.split("=", 1) for f in line.split())
        seen[fields["SwitchName"]] = fields
    assert set(seen) == set(rendered)
    level = {}
    for name, sw in rendered.items():  # children are listed before their parents
        if "Nodes" in sw:
            level[name] = 0
            assert expand(seen[name]["Nodes"]) == sw["Nodes"]
        else:
            level[name] = 1 + max(level[c] for c in sw["Switches"])
            assert expand(seen[name]["Switches"]) == sw["Switches"]
        assert int(seen[name]["Level"]) == level[name], (name, seen[name])


def test_slurmctld_refuses_a_broken_topology(tmp_path: Path) -> None:
    """The check can fail: a parent naming a switch that does not exist stops the controller."""
    _need_slurmctld()
    render_to(INVENTORIES / "ib-3tier.yaml", tmp_path / "out")
    topo = tmp_path / "out" / "slurm" / "topology.conf"
    topo.write_text(topo.read_text().replace("Switches=ib-pod[01-02]", "Switches=ib-pod[01-03]"))
    code, out = _show_topology(_slurm_conf(tmp_path / "ctl", topo))
    assert code != 0 and "invalid child (ib-pod03)" in out, out[-2000:]
