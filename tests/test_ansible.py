"""Ansible reads and runs the output: ansible-inventory lists every device in its groups, every
playbook of ansible/ passes --syntax-check, and a real local run of the staging playbook
changes files the first time and nothing the second."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import INVENTORIES, IN_CI, ROOT
from readback import read_cabling
from fabgen.pipeline import render_to

pytestmark = pytest.mark.integration
BIN = Path(sys.executable).parent
PLAYBOOK = shutil.which("ansible-playbook", path=str(BIN)) or shutil.which("ansible-playbook")
INVENTORY = shutil.which("ansible-inventory", path=str(BIN)) or shutil.which("ansible-inventory")
if not (PLAYBOOK and INVENTORY):
    if IN_CI:
        raise RuntimeError("CI must have ansible: `make test` installs the test extras")
    pytestmark = [pytestmark, pytest.mark.skip(reason="ansible not installed")]
ENV = {"ANSIBLE_NOCOLOR": "1", "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_RETRY_FILES_ENABLED": "False",
       "PATH": f"{BIN}:/usr/bin:/bin"}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=600, env=ENV)


@pytest.mark.parametrize("case,fabric", [("superpod-4su", "compute"), ("fattree-2to1", "fabric"),
                                         ("spectrumx-1su", "sx"), ("roce-3tier", "eth")])
def test_inventory_lists_every_device_in_its_groups(case: str, fabric: str, tmp_path: Path) -> None:
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    res = run(INVENTORY, "-i", "ansible/inventory.yml", "--list", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    cabling = read_cabling(tmp_path, fabric)
    switches = {r["z_device"] for r in cabling} | {r["a_device"] for r in cabling if r["tier"] != "node-leaf"}
    nodes = {r["a_device"] for r in cabling if r["tier"] == "node-leaf"} - {
        r["a_device"] for r in cabling if "-storage-leaf" in r["z_device"]}
    group = f"fabric_{fabric.replace('-', '_')}"
    assert set(data[group]["hosts"]) == switches | nodes
    assert set(data["role_node"]["hosts"]) == nodes
    roles = {r: set(data.get(f"role_{r}", {}).get("hosts", [])) for r in ("leaf", "spine", "core")}
    assert set().union(*roles.values()) == switches
    assert all(name.split("-")[-1].startswith(r) or f"-{r}" in name for r, names in roles.items() for name in names)
    hostvars = data["_meta"]["hostvars"]
    for sw in switches:
        for f in hostvars[sw]["fabgen_files"]:
            assert (tmp_path / f["src"]).is_file()


def test_every_playbook_passes_syntax_check(tmp_path: Path) -> None:
    render_to(INVENTORIES / "fattree-2to1.yaml", tmp_path)
    playbooks = sorted((ROOT / "ansible").glob("*.yml"))
    assert len(playbooks) >= 5
    for pb in playbooks:
        res = run(PLAYBOOK, "-i", "ansible/inventory.yml", "--syntax-check", str(pb), cwd=tmp_path)
        assert res.returncode == 0, f"{pb.name}: {res.stdout[-1500:]}{res.stderr[-1500:]}"


def _changed(output: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", output, re.M)}


def test_staging_run_changes_once_then_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    stage = tmp_path / "stage"
    cmd = (PLAYBOOK, "-i", "ansible/inventory.yml", str(ROOT / "ansible" / "stage.yml"), "-e", f"stage_dir={stage}")
    first = run(*cmd, cwd=out)
    assert first.returncode == 0, first.stdout[-3000:]
    assert set(_changed(first.stdout)) == {"roce-leaf01", "gpu01", "gpu02"}
    assert all(n > 0 for n in _changed(first.stdout).values())
    assert (stage / "roce-leaf01" / "roce-leaf01.cfg").read_bytes() == \
        (out / "roce" / "switches" / "roce-leaf01.cfg").read_bytes()
    assert sorted(p.name for p in (stage / "gpu01").iterdir()) == ["hca-setup.sh", "nccl.env", "netplan.yaml"]
    second = run(*cmd, cwd=out)
    assert second.returncode == 0, second.stdout[-3000:]
    assert set(_changed(second.stdout).values()) == {0}


def test_management_addresses_become_ansible_host(tmp_path: Path) -> None:
    render_to(INVENTORIES / "roce-3tier.yaml", tmp_path)
    res = run(INVENTORY, "-i", "ansible/inventory.yml", "--list", cwd=tmp_path)
    hostvars = json.loads(res.stdout)["_meta"]["hostvars"]
    switches = sorted((h for h in hostvars if h.startswith("eth-")), key=lambda n: (
        {"leaf": 0, "spine": 1, "core": 2}[hostvars[n]["fabgen_role"]], n))
    assert [hostvars[s]["ansible_host"] for s in switches[:2]] == ["192.168.1.1", "192.168.1.2"]
    assert len({hostvars[s]["ansible_host"] for s in switches}) == 24
    assert hostvars["gpu001"]["ansible_host"] == "192.168.10.1"
    assert hostvars["gpu032"]["ansible_host"] == "192.168.10.32"
