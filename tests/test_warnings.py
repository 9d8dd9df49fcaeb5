"""Warnings that say what a deploy would do wrong, each cleared by following its own advice:
an InfiniBand fabric without subnet-manager hosts (and its SM playbook, which refuses to run
rather than do nothing), an NVUE management block without accounts (as EOS's), and the
out-of-band block of a fabric without planned_nodes (a block must be sizable by its advice, or
`validate --strict` could never pass)."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import INVENTORIES
from fabgen.api import validate
from fabgen.pipeline import render_to, run

BIN = Path(sys.executable).parent
PLAYBOOK = shutil.which("ansible-playbook", path=str(BIN)) or shutil.which("ansible-playbook")
ENV = {"ANSIBLE_NOCOLOR": "1", "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_RETRY_FILES_ENABLED": "False",
       "PATH": f"{BIN}:/usr/bin:/bin"}


def _ib(subnet_managers: list[str] | None) -> dict:
    ib: dict = {"subnet_managers": subnet_managers} if subnet_managers is not None else {}
    return {"version": 1, "cluster": "lab",
            "node_groups": [{"name": "gpu", "model": "dgx-h100", "count": 4, "hostname": "gpu{n:02d}"}],
            "fabrics": [{"name": "ib", "kind": "infiniband", "platform": "opensm", "topology": "rail-optimized",
                         "switch_model": "qm9700", "node_groups": ["gpu"], **({"infiniband": ib} if ib else {})}]}


def _messages(inventory: dict | Path, words: str) -> list[str]:
    return [w.message for w in validate(inventory).warnings if words in w.message]


def test_an_infiniband_fabric_without_subnet_manager_hosts_is_warned() -> None:
    assert _messages(_ib(None), "no subnet-manager host")  # no infiniband block at all
    assert _messages(_ib([]), "no subnet-manager host")
    assert not _messages(_ib(["sm1", "sm2"]), "no subnet-manager host")  # the advice followed


@pytest.mark.skipif(not PLAYBOOK, reason="ansible not installed")
def test_the_sm_playbook_refuses_a_render_without_subnet_manager_hosts(tmp_path: Path) -> None:
    """Without SM hosts the playbook fails on its first play, naming the key to set (it used to
    exit 0 with "no hosts matched"); with them the first play passes and the deploy play runs."""
    for name, sms in (("none", None), ("two", ["sm1", "sm2"])):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(_ib(sms)))
        render_to(tmp_path / f"{name}.yaml", tmp_path / name)
        book = ("ansible/deploy-sm.yml",)
        syntax = subprocess.run([PLAYBOOK, "-i", "ansible/inventory.yml", "--syntax-check", *book],
                                cwd=tmp_path / name, capture_output=True, text=True, timeout=300, env=ENV)
        assert syntax.returncode == 0, syntax.stdout[-1500:] + syntax.stderr[-1500:]
        res = subprocess.run([PLAYBOOK, "-i", "ansible/inventory.yml", "--tags", "guard", *book],
                             cwd=tmp_path / name, capture_output=True, text=True, timeout=300, env=ENV)
        if sms is None:
            assert res.returncode != 0 and "subnet_managers" in res.stdout, res.stdout[-2000:]
            assert "Refuse synthetic GUIDs" not in res.stdout  # the deploy play never started
        else:
            assert "No subnet-manager host" not in res.stdout and "Refuse synthetic GUIDs" in res.stdout, \
                res.stdout[-2000:]


def _routed(platform: str, users: list | None) -> dict:
    model = {"nvue": "sn5600", "eos": "arista-7060x5", "sonic": "sn5600-sonic"}[platform]
    kind = "spectrum-x" if platform == "nvue" else "roce"
    m: dict = {"prefix": "192.168.40.0/24"}
    if users is not None:
        m["users"] = users
    return {"version": 1, "cluster": "lab",
            "node_groups": [{"name": "gpu", "model": "dgx-h100", "count": 2, "hostname": "gpu{n:02d}"}],
            "fabrics": [{"name": "f", "kind": kind, "platform": platform, "topology": "fat-tree",
                         "switch_model": model, "node_groups": ["gpu"], "management": m}]}


ADMIN = [{"name": "ops", "role": "admin", "password_hash": {"env": "OPS_HASH"}}]


@pytest.mark.parametrize("platform,warned", [("nvue", True), ("eos", True), ("sonic", False)])
def test_a_management_block_without_accounts_is_warned_where_a_replace_removes_them(platform: str,
                                                                                    warned: bool) -> None:
    words = {"nvue": "NVUE nv config replace", "eos": "EOS configure replace", "sonic": "replace"}[platform]
    assert bool(_messages(_routed(platform, None), words)) is warned
    assert not _messages(_routed(platform, ADMIN if platform != "sonic" else []), words)  # the advice followed


def _oob_warnings(text: str, tmp_path: Path) -> list[str]:
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    return _messages(path, "out-of-band block")


def _planned(text: str, fabric: str, nodes: int) -> str:
    """`text` with planned_nodes set on `fabric` (the line after its name's node_groups)."""
    head, sep, tail = text.partition(f"  - name: {fabric}\n")
    assert sep, fabric
    groups = re.search(r"^    node_groups: .*\n", tail, re.M)
    assert groups
    return head + sep + tail[:groups.end()] + f"    planned_nodes: {nodes}\n" + tail[groups.end():]


def _bmcs(text: str, tmp_path: Path, oob: str) -> dict[str, tuple[str, str, str]]:
    """Each BMC's address and access port on the out-of-band network."""
    path = tmp_path / "grow.yaml"
    path.write_text(text)
    files = run(path).files
    rows = csv.DictReader(io.StringIO(files[f"{oob}/addresses.csv"].decode()))
    return {r["device"]: (r["address"], r["peer_device"], r["peer_interface"]) for r in rows if r["role"] == "bmc"}


def test_following_the_out_of_band_advice_clears_it_and_holds_the_addresses(tmp_path: Path) -> None:
    """superpod-cluster: the out-of-band warnings name fabrics to give planned_nodes; given them,
    validate warns no more (a fabric whose nodes are partly homed on another, the in-band network's
    DGX beside its head nodes, used to warn whatever it was given), and adding DGX and head nodes
    then moves no present BMC. Unfollowed, the same growth moves BMCs, as the warning said."""
    text = (INVENTORIES / "superpod-cluster.yaml").read_text()
    grow = text.replace("    count: 64\n", "    count: 72\n", 1).replace("    count: 2\n", "    count: 3\n", 1)
    assert grow != text
    warned = _oob_warnings(text, tmp_path)
    assert warned
    before, after = _bmcs(text, tmp_path, "ipminet"), _bmcs(grow, tmp_path, "ipminet")
    assert any(after[h] != v for h, v in before.items())  # unfollowed: growth moves present BMCs
    followed, fabrics = text, set()
    for _ in range(3):  # follow each warning's advice until none is left
        named = {m.group(1) for w in _oob_warnings(followed, tmp_path)
                 for m in [re.search(r"set planned_nodes on fabric '([^']+)'", w)] if m}
        if not named:
            break
        for fabric in named - fabrics:
            followed = _planned(followed, fabric, 128)
        fabrics |= named
    assert fabrics and not _oob_warnings(followed, tmp_path)
    grown = followed.replace("    count: 64\n", "    count: 72\n", 1).replace("    count: 2\n", "    count: 3\n", 1)
    before, after = _bmcs(followed, tmp_path, "ipminet"), _bmcs(grown, tmp_path, "ipminet")
    assert len(after) > len(before) and all(after[h] == v for h, v in before.items())
