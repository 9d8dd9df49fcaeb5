"""A tenant VRF's layer-3 VNI on a VLAN of the inventory's (`l3vni_vlan` on a tenant: the GPU overlay's
`ethernet.overlay`, `northsouth.inband`, `northsouth.storage`), as northsouth.border.l3vni_vlan does for
EXIT and oob_routed.l3vni_vlan for OOB.

NVIDIA's lines are its generator's (NVIDIA/enterprise-ras, net-configurator/output/): 2-4-5-800's
gl-plane1-01-config.sh at 2b4e3e2 (`vrf GPU evpn vlan 3003`), csl-01-config.sh at
993eed6a993b668e9ab80556cd973b548612c4a4 (`vrf INBAND evpn vlan 3002`, `vrf STORAGE evpn vlan 3005`);
2-8-9-400's core-01-config.sh at 2f46cb2fca8f4d9b432f9de62957e54aed8f64d9 (INBAND 3002, GPU 3003, no
STORAGE VRF). Both examples set them: the lines are written where NVIDIA writes them, NVIDIA's object
model (nvueschema) takes the files and refuses a VLAN past 4094; left out, the render is what it was
but for those lines; a VLAN the fabric uses otherwise is refused where it is written, and so is the
key on EOS.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nvue_model
import pytest
import yaml
from typer.testing import CliRunner

from fabgen.cli import app
from fabgen.inventory.loader import load_text
from fabgen.pipeline import run

ROOT = Path(__file__).resolve().parent.parent
ERA_800 = (ROOT / "inventories" / "era-2-4-5-800.yaml").read_text()
ERA_400 = (ROOT / "inventories" / "era-2-8-9-400.yaml").read_text()
KEYS = (", l3vni_vlan: 3003}", ", l3vni_vlan: 3002}", ", l3vni_vlan: 3005}")
assert all(k in ERA_800 for k in KEYS)  # the example sets the three
NVIDIA_LINES = {"nv set vrf GPU evpn vlan 3003", "nv set vrf INBAND evpn vlan 3002",
                "nv set vrf STORAGE evpn vlan 3005"}


def render(text: str) -> dict:
    return run(load_text(text, "l3vni.yaml")).files


def switches(files: dict, fabric: str) -> list[str]:
    return sorted(p.split("/")[-1].removesuffix(".nvue.sh") for p in files
                  if p.startswith(f"{fabric}/switches/") and p.endswith(".nvue.sh"))


def lines(files: dict, fabric: str, name: str) -> set[str]:
    return set(files[f"{fabric}/switches/{name}.nvue.sh"].decode().splitlines())


def tree(files: dict, fabric: str, name: str) -> tuple[str, dict]:
    doc = yaml.safe_load(files[f"{fabric}/switches/{name}.nvue.yaml"])
    return nvue_model.release(doc[0]["header"]), doc[1]["set"]


@pytest.fixture(scope="module")
def files() -> dict:
    return render(ERA_800)


def test_the_2_4_5_800_example_writes_nvidias_lines_and_the_object_model_takes_them(files: dict) -> None:
    """Every GPU leaf of both planes maps VRF GPU's layer-3 VNI to VLAN 3003 (no spine has the VRF);
    the pair INBAND's to 3002 and STORAGE's to 3005 beside EXIT's 3004 and OOB's 3001; NVIDIA's object
    model takes each file and refuses the tenant's VLAN past 4094."""
    leaves = [n for p in ("gpu-plane1", "gpu-plane2") for n in switches(files, p) if "leaf" in n]
    assert len(leaves) == 8
    for plane in ("gpu-plane1", "gpu-plane2"):
        for name in switches(files, plane):
            text = lines(files, plane, name)
            assert ("nv set vrf GPU evpn vlan 3003" in text) == ("leaf" in name), name
            release, t = tree(files, plane, name)
            assert nvue_model.problems(release, t) == [], name
    pair = switches(files, "ns")
    assert pair == ["ns-leaf001", "ns-leaf002"]
    for name in pair:
        text = lines(files, "ns", name)
        assert {"nv set vrf INBAND evpn vlan 3002", "nv set vrf STORAGE evpn vlan 3005",
                "nv set vrf EXIT evpn vlan 3004", "nv set vrf OOB evpn vlan 3001"} <= text, name
        release, t = tree(files, "ns", name)
        assert t["vrf"]["INBAND"]["evpn"]["vlan"] == 3002 and t["vrf"]["INBAND"]["evpn"]["vni"] == {"5002": {}}
        assert nvue_model.problems(release, t) == [], name
    broken = copy.deepcopy(t)
    broken["vrf"]["STORAGE"]["evpn"]["vlan"] = 5005
    assert nvue_model.problems(release, broken)
    release, t = tree(files, "gpu-plane1", leaves[0])
    broken = copy.deepcopy(t)
    broken["vrf"]["GPU"]["evpn"]["vlan"] = "vlan3003"
    assert nvue_model.problems(release, broken)


def test_the_2_8_9_400_example_writes_core_01s_lines() -> None:
    """core-01 at 2f46cb2: GPU 3003 (fabgen's GPU switch), INBAND 3002; it has no STORAGE VRF, so the
    example gives storage none and NVUE picks it."""
    files = render(ERA_400)
    (gpu,) = switches(files, "gpu")
    assert "nv set vrf GPU evpn vlan 3003" in lines(files, "gpu", gpu)
    for name in switches(files, "ns"):
        text = lines(files, "ns", name)
        assert "nv set vrf INBAND evpn vlan 3002" in text, name
        assert not any(ln.startswith("nv set vrf STORAGE evpn vlan") for ln in text), name
        release, t = tree(files, "ns", name)
        assert nvue_model.problems(release, t) == [], name


def test_left_out_the_render_is_what_it_was_but_nvidias_lines(files: dict) -> None:
    """Without the keys the same files, each switch's script short of NVIDIA's lines alone (NVUE picks
    the VLANs), and nothing else moves."""
    text = ERA_800
    for key in KEYS:
        text = text.replace(key, "}")
    without = render(text)
    assert without.keys() == files.keys()
    changed = set()
    for path in files:
        if path.endswith(".nvue.sh"):
            new, old = set(files[path].decode().splitlines()), set(without[path].decode().splitlines())
            assert old <= new and new - old <= NVIDIA_LINES, path
            changed |= new - old
        elif files[path] != without[path]:  # the same trees in other forms, and the manifest
            assert path.endswith((".nvue.yaml", ".json")), path
    assert changed == NVIDIA_LINES


def _refused(inv: Path, key: str, words: str) -> None:
    out = inv.parent / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    located = [ln for ln in result.output.splitlines() if ln.startswith(f"{inv}:") and key in ln and words in ln]
    assert located, result.output
    line = int(located[0].split(f"{inv}:")[1].split(":")[0])
    assert inv.read_text().splitlines()[line - 1].strip()  # a line of the file, where the key or its block is
    assert not out.exists()


REFUSED = [  # the example's text, its edit, where the message points, its words
    ("l3vni_vlan: 3003}", "l3vni_vlan: 900}", "ethernet.overlay.l3vni_vlan", "the tenant's own VLAN"),
    ("l3vni_vlan: 3003}", "l3vni_vlan: 3800}", "ethernet.overlay.l3vni_vlan", "reserved range"),
    ("l3vni_vlan: 3003}", "l3vni_vlan: 4095}", "ethernet.overlay.l3vni_vlan", "4094"),
    ("l3vni_vlan: 3002}", "l3vni_vlan: 500}", "northsouth.inband.l3vni_vlan", "is STORAGE's VLAN"),
    ("l3vni_vlan: 3002}", "l3vni_vlan: 3005}", "northsouth.inband.l3vni_vlan", "is STORAGE's layer-3 VNI VLAN"),
    ("l3vni_vlan: 3005}", "l3vni_vlan: 300}", "northsouth.storage.l3vni_vlan", "is INBAND's VLAN"),
    # EXIT's layer-3 VNI VLAN on in-band's
    ("l3vni_vlan: 3002}", "l3vni_vlan: 3004}", "northsouth.border.l3vni_vlan", "INBAND's layer-3 VNI VLAN"),
    # the routed out-of-band network's VLAN and its layer-3 VNI VLAN (3001, oob_routed's default) on the pair
    ("l3vni_vlan: 3005}", "l3vni_vlan: 200}", "oob_vlan", "STORAGE's layer-3 VNI VLAN"),
    ("l3vni_vlan: 3005}", "l3vni_vlan: 3001}", "oob_routed", "STORAGE's layer-3 VNI VLAN"),
]


@pytest.mark.parametrize(("old", "new", "key", "words"), REFUSED)
def test_a_vlan_in_use_is_refused_where_it_is_written(old: str, new: str, key: str, words: str,
                                                     tmp_path: Path) -> None:
    text = ERA_800.replace(old, new)
    assert text != ERA_800
    inv = tmp_path / "bad.yaml"
    inv.write_text(text)
    _refused(inv, key, words)


def test_eos_refuses_the_key_where_it_is_written(tmp_path: Path) -> None:
    """EOS writes a VRF's layer-3 VNI without a VLAN of fabgen's (`vxlan vrf GPU vni`, as AVD's
    l3ls-evpn): the key is refused there; the same overlay without it renders."""
    from test_gpu_overlay import _inventory

    overlay = "      overlay: {vlan: 900, vni: 10900, vrf: GPU, l3vni: 10003%s}\n"
    inv = _inventory(tmp_path / "bad", platform="eos", extra=overlay % ", l3vni_vlan: 3003")
    _refused(inv, "ethernet.overlay.l3vni_vlan", "EOS maps the VRF's layer-3 VNI")
    good = _inventory(tmp_path / "good", platform="eos", extra=overlay % "")
    result = CliRunner().invoke(app, ["render", str(good), "-o", str(tmp_path / "good" / "out")])
    assert result.exit_code == 0, result.output
