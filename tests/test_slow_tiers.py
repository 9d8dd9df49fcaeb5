"""Port groups at their own speed on a north-south leaf (issue 56 item 5, docs/hardware.md "Port speeds").

NVIDIA's generator runs its north-south pair's border uplinks and its routed out-of-band uplinks on
cages broken out at a speed of their own, below the node ports' (NVIDIA/enterprise-ras,
net-configurator/output/2-8-9-400/default/configs/core-01-config.sh at
2f46cb2fca8f4d9b432f9de62957e54aed8f64d9: `swp55,swp61,swp63 link breakout 8x`, the EXIT uplinks on
swp61s0-s5 and swp63s0-s5, the out-of-band uplinks on swp55s0-s2, the even cages beside them
`breakout disabled`; 2-4-5-800's csl-01-config.sh at 993eed6a993b668e9ab80556cd973b548612c4a4: EXIT
uplinks `4x` at 200G, the out-of-band uplinks `8x` at 100G), and sets `link speed 1G` on the SN2201's
access ports (2-8-9-400's oob-switch-01-config.sh at 993eed6). fabgen builds them with
`northsouth.border.speed`, `oob_routed.uplink_speed` and the out-of-band fabric's
`cabling.node_leaf.speed`; `inventories/era-2-8-9-400.yaml` sets NVIDIA's values. These tests hold the
rendered leaf and access switch against NVIDIA's object model (and a broken breakout refused by it),
the breakout and speed lines, cabling.csv, bom.csv and NetBox, the located refusals, the defaults
unchanged and growth by addition.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import nvue_model
import pytest
import yaml
from typer.testing import CliRunner

from fabgen.cli import app
from fabgen.errors import InventoryError
from fabgen.inventory.loader import load_text
from fabgen.pipeline import run

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = (ROOT / "inventories" / "era-2-8-9-400.yaml").read_text()
BORDER = "border: {router: site-router, uplinks: 12, speed: 100, peer_group: underlay-esl-external,"
UPLINKS = "oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.1.200, uplink_speed: 100,"
ACCESS = "    cabling: {node_leaf: {speed: 1}}"
assert BORDER in EXAMPLE and UPLINKS in EXAMPLE and ACCESS in EXAMPLE  # NVIDIA's values in the example
LEAF = "ns-su001-leaf1"
ACCESS_SWITCH = "oob-gpu-access0001"


def render(text: str) -> dict[str, bytes]:
    return run(load_text(text, "slow.yaml")).files


def defaults(text: str = EXAMPLE) -> str:
    """The example without the three keys: every group at the node ports' speed, as before them."""
    return (text.replace(BORDER, BORDER.replace(" speed: 100,", ""))
            .replace(UPLINKS, UPLINKS.replace(", uplink_speed: 100", "")).replace(ACCESS + "", "    # (none)"))


def rows(files: dict[str, bytes], path: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(files[path].decode())))


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return render(EXAMPLE)


def lines(files: dict[str, bytes], fabric: str, switch: str) -> set[str]:
    return set(files[f"{fabric}/switches/{switch}.nvue.sh"].decode().splitlines())


def test_the_leaf_breaks_the_groups_cages_out_at_their_speed(files: dict[str, bytes]) -> None:
    """Border uplinks on swp61 and swp63 split 8 x 100G (NVIDIA's cages), the out-of-band uplinks on
    swp59 8 x 100G, the even cage beside each `breakout disabled`; every used port's `link speed`, the
    speeds mixing (the hosts' 200G, the peer links' 400G, the groups' 100G)."""
    nv = lines(files, "ns", LEAF)
    for cage in ("swp59", "swp61", "swp63"):
        assert f"nv set interface {cage} link breakout 8x" in nv, cage
    for cage in ("swp60", "swp62", "swp64"):
        assert f"nv set interface {cage} link breakout disabled" in nv, cage
        assert not any(ln.startswith(f"nv set interface {cage}s") for ln in nv), cage  # no ports in it
    border = [f"swp61s{k}" for k in range(8)] + [f"swp63s{k}" for k in range(4)]
    for port in border:
        assert f"nv set interface {port} link speed 100G" in nv and f"nv set interface {port} vrf EXIT" in nv, port
    for port in ("swp59s0", "swp59s1", "swp59s2"):
        assert f"nv set interface {port} link speed 100G" in nv, port
    assert "nv set interface swp1s0 link speed 200G" in nv  # a node port
    assert "nv set interface swp33s0 link speed 400G" in nv  # a peer link to the other leaf
    assert "nv set interface swp63s4 link state down" in nv  # the border cage's spare ports, shut
    assert "nv set interface swp1 link breakout 4x" in nv and "nv set interface swp33 link breakout 2x" in nv


def test_the_access_ports_run_1g(files: dict[str, bytes]) -> None:
    nv = lines(files, "oob", ACCESS_SWITCH)
    assert "nv set interface swp1 link speed 1G" in nv
    assert not any(ln.startswith("nv set interface swp49 link speed") for ln in nv)  # the uplink: its own 100G
    assert "nv set interface swp48 link state down" in nv and "nv set interface swp48 link speed 1G" not in nv


@pytest.mark.parametrize("release", ["5.13", "5.14", "5.16", "5.18"])
def test_nvidias_object_model_takes_them_and_refuses_a_broken_breakout(release: str) -> None:
    text = EXAMPLE.replace("    platform: nvue", f"    platform: nvue\n    platform_version: '{release}'")
    out = render(text)
    for fabric, switch in (("ns", LEAF), ("oob", ACCESS_SWITCH), ("ns", "ns-su001-leaf2")):
        doc = yaml.safe_load(out[f"{fabric}/switches/{switch}.nvue.yaml"])
        assert nvue_model.release(doc[0]["header"]) == release
        assert nvue_model.problems(release, doc[1]["set"]) == [], switch
    tree = yaml.safe_load(out[f"ns/switches/{LEAF}.nvue.yaml"])[1]["set"]
    assert tree["interface"]["swp61"]["link"]["breakout"] == {"8x": {}}
    # the model keys breakouts by any name (fabgen's validation holds the modes, NVUE_BREAKOUTS); it holds
    # a mode's lanes and every port's speed
    tree["interface"]["swp61"]["link"]["breakout"] = {"8x": {"lanes-per-port": "3"}}
    assert nvue_model.problems(release, tree)
    tree["interface"]["swp61"]["link"]["breakout"] = {"8x": {}}
    tree["interface"]["swp61s0"]["link"]["speed"] = "150G"
    assert nvue_model.problems(release, tree)
    access = yaml.safe_load(out[f"oob/switches/{ACCESS_SWITCH}.nvue.yaml"])[1]["set"]
    access["interface"]["swp1"]["link"]["speed"] = "1Gbps"  # not a speed NVUE takes
    assert nvue_model.problems(release, access)


def test_cabling_bom_report_and_netbox_follow_the_groups_speed(files: dict[str, bytes]) -> None:
    ns = rows(files, "ns/cabling.csv")
    border = [r for r in ns if r[-1] == "leaf-border" and r[0] == LEAF]
    assert [r[1] for r in border] == [f"swp61s{k}" for k in range(8)] + [f"swp63s{k}" for k in range(4)]
    assert {r[4] for r in border} == {"100G"} and {r[5] for r in border} == {"mmf"}
    oob = [r for r in rows(files, "oob/cabling.csv") if r[-1] == "access-uplink"]
    assert [(r[0], r[2], r[3], r[4]) for r in oob if r[2] == LEAF] == [
        ("oob-gpu-access0001", LEAF, "swp59s0", "100G"), ("oob-gpu-mgmt0001", LEAF, "swp59s1", "100G"),
        ("oob-ns-mgmt0001", LEAF, "swp59s2", "100G")]
    bom = {(r[1], r[2]): r for r in rows(files, "ns/bom.csv")[1:]}
    cable = next(r for (_, d), r in bom.items() if d.startswith("leaf-border"))
    optic = next(r for (_, d), r in bom.items() if d == "switch side (border uplinks)")
    assert cable[3:] == ["24", "100G, to the site router"] and optic[3] == "4"  # two cages a leaf, 12 cables each
    report = yaml.safe_load(files["report.json"])["fabrics"]["ns"]  # JSON is YAML
    assert report["tier_speeds_gbps"] == {"node-leaf": 200, "leaf-leaf": 400, "leaf-border": 100}
    assert report["links"]["leaf-border"] == 24
    nb = {(r[0], r[1]): r for r in rows(files, "netbox/07-interfaces.csv")}
    assert nb[(LEAF, "swp61s0")][3] == "100000000" and nb[(LEAF, "swp59s0")][3] == "100000000"


def test_without_the_keys_the_groups_run_the_node_ports_speed() -> None:
    """The defaults: the border and out-of-band uplinks at the pair's 200G on its highest free ports,
    no `breakout disabled`, no `link speed` on the access ports."""
    out = render(defaults())
    ns = rows(out, "ns/cabling.csv")
    border = [r for r in ns if r[-1] == "leaf-border" and r[0] == LEAF]
    assert border[0][1:5] == ["swp62s0", "site-router", "uplink1", "200G"] and len(border) == 12
    nv = lines(out, "ns", LEAF)
    assert not any(ln.endswith("link breakout disabled") or ln.endswith("link breakout 8x") for ln in nv)
    assert not any(ln.endswith("link speed 1G") for ln in lines(out, "oob", ACCESS_SWITCH))
    oob = [r for r in rows(out, "oob/cabling.csv") if r[-1] == "access-uplink" and r[2] == LEAF]
    assert [r[3] for r in oob] == ["swp61s3", "swp61s2", "swp61s1"]


REFUSED = [
    (BORDER, BORDER.replace("speed: 100", "speed: 300"), "northsouth.border.speed", "break out to"),
    (UPLINKS, UPLINKS.replace("uplink_speed: 100", "uplink_speed: 200"), "oob_routed.uplink_speed",
     "uplinks run 100G"),
    (ACCESS, ACCESS.replace("speed: 1", "speed: 10"), "cabling.node_leaf.speed", "access ports run 1G"),
]


def test_one_helper_says_which_speeds_nvue_breaks_a_cage_out_to() -> None:
    """spec/catalog.py `nvue_mode`: the border's, the out-of-band uplinks' and a tier's speed checks ask
    it (NVIDIA's SN5600 cages at 800G whole, 400G 2x, 200G 4x, 100G 8x); a mode splitting a cage 3 ways,
    which no NVUE breakout writes, is none."""
    from dataclasses import replace

    from fabgen.spec.catalog import SWITCHES, PortMode

    sn5600 = SWITCHES["sn5600"]
    assert {s: sn5600.nvue_mode(s).per_cage for s in (800, 400, 200, 100)} == {  # type: ignore[union-attr]
        800: 1, 400: 2, 200: 4, 100: 8}
    assert sn5600.nvue_mode(300) is None and sn5600.nvue_speeds().startswith("800G, 400G, 200G, 100G")
    odd = replace(sn5600, modes=(*sn5600.modes, PortMode(speed=266, per_cage=3, name="swp{c}s{j0}")))
    assert odd.mode_for(266) is not None and odd.nvue_mode(266) is None and "266G" not in odd.nvue_speeds()


@pytest.mark.parametrize(("old", "new", "key", "words"), REFUSED)
def test_what_cannot_be_built_is_refused_where_it_is_written(tmp_path: Path, old: str, new: str, key: str,
                                                            words: str) -> None:
    bad = tmp_path / "bad.yaml"
    text = EXAMPLE.replace(old, new)
    bad.write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(bad), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert key in result.output and words in result.output and "Traceback" not in result.output, result.output
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if new.strip() in ln)
    assert f"bad.yaml:{line}:" in result.output, result.output
    assert not out.exists()


def test_eos_takes_none_of_them() -> None:
    """The border (its speed with it) and the routed design are NVUE's: EOS refused at the border."""
    eos = EXAMPLE.replace("    role: northsouth\n    kind: spectrum-x\n    platform: nvue",
                          "    role: northsouth\n    kind: roce\n    platform: eos").replace(
        "    switch_model: sn5600\n    node_groups: [su01, su02, su03]\n    scalable_unit: 12",
        "    switch_model: arista-7060x5\n    node_groups: [su01, su02, su03]\n    scalable_unit: 12")
    with pytest.raises(InventoryError, match="border") as err:
        render(eos)
    assert "northsouth.border" in str(err.value)


def _grown(units: int) -> str:
    """The example planned for 16 nodes on its leaf pair, `units` units of four present."""
    text = EXAMPLE.replace("    scalable_unit: 12                  # the 12 nodes on one leaf pair\n",
                           "    scalable_unit: 16\n    planned_nodes: 16\n")
    text = text.replace("    tiers: 1                           # one SN5600", "    planned_nodes: 16\n    tiers: 1  #")
    groups = "\n".join(f"  - {{name: su0{k}, model: hgx-2-8-9-400, count: 4, hostname: \"su-0{k}-node-{{n:02d}}\"}}"
                       for k in range(1, units + 1))
    head, rest = text.split("node_groups:                           # NVIDIA's units of four nodes and its names\n")
    servers = "\n".join(ln for ln in rest.split("\n\nfabrics:", 1)[0].splitlines() if "role: storage" in ln)
    rest = rest.split("\n\nfabrics:", 1)[1]
    names = ", ".join(f"su0{k}" for k in range(1, units + 1))
    rest = rest.replace("[su01, su02, su03, support, storage]", f"[{names}, support, storage]")  # and its servers
    return head + "node_groups:\n" + groups + "\n" + servers + "\n\nfabrics:" + rest.replace(
        "[su01, su02, su03]", f"[{names}]")


def test_growth_within_the_plan_keeps_the_groups_ports() -> None:
    """A fourth unit of four: the border and out-of-band uplinks and the servers' bonds on the same ports,
    no cage re-split; the leaf's lines only added to (a node port taken into use drops its `link state
    down`)."""
    small, big = render(_grown(3)), render(_grown(4))
    for path in ("ns/cabling.csv", "oob/cabling.csv"):
        before = {tuple(r) for r in rows(small, path) if r[-1] in ("leaf-border", "access-uplink")
                  or r[0].startswith(("support-", "storage-"))}
        after = {tuple(r) for r in rows(big, path) if r[-1] in ("leaf-border", "access-uplink")
                 or r[0].startswith(("support-", "storage-"))}
        assert before and before <= after, path
    for leaf in (LEAF, "ns-su001-leaf2"):
        gone = lines(small, "ns", leaf) - lines(big, "ns", leaf)
        assert all(ln.endswith(" link state down") for ln in gone), sorted(gone)[:3]
        assert {ln for ln in lines(small, "ns", leaf) if " link breakout " in ln} == \
            {ln for ln in lines(big, "ns", leaf) if " link breakout " in ln}


def test_the_gb300_example_runs_nvidias_200g_border_and_100g_out_of_band_cages() -> None:
    """inventories/era-2-4-5-800.yaml (NVIDIA's csl-01 at 993eed6: EXIT uplinks `4x` at 200G, the
    out-of-band uplinks `8x` at 100G, the pair's hosts and peer links 2 x 400G): five 200G uplinks on
    two cages split 4x, the out-of-band cage split 8x beside a disabled one, the trays' 400G; NVIDIA's
    object model takes the leaf and the access switch."""
    out = render((ROOT / "inventories" / "era-2-4-5-800.yaml").read_text())
    nv = lines(out, "ns", "ns-leaf001")
    assert {"nv set interface swp63 link breakout 4x", "nv set interface swp64 link breakout 4x",
            "nv set interface swp61 link breakout 8x", "nv set interface swp62 link breakout disabled",
            "nv set interface swp1 link breakout 2x", "nv set interface swp1s0 link speed 400G",
            "nv set interface swp64s0 link speed 200G", "nv set interface swp61s0 link speed 100G"} <= nv
    border = [r[1] for r in rows(out, "ns/cabling.csv") if r[-1] == "leaf-border" and r[0] == "ns-leaf001"]
    assert border == ["swp63s0", "swp63s1", "swp63s2", "swp63s3", "swp64s0"]
    for fabric, switch in (("ns", "ns-leaf001"), ("oob", ACCESS_SWITCH)):
        doc = yaml.safe_load(out[f"{fabric}/switches/{switch}.nvue.yaml"])
        assert nvue_model.problems(nvue_model.release(doc[0]["header"]), doc[1]["set"]) == [], switch


def test_groups_that_do_not_fit_the_free_cages_are_refused_at_their_speed() -> None:
    """Three GB300 racks with spines at 1:1 leave a north-south leaf 14 free cages: 64 border uplinks
    at 100G need 8 cages split 8x, each beside an unsplit one, and the out-of-band uplinks then find
    no cage below them; both refused where their speed is written."""
    text = (ROOT / "inventories" / "era-2-4-5-800.yaml").read_text()
    # three racks are past the collapsed pair (`tiers: 1`, which also holds the support servers): without both
    pinned = re.search(r"\n    tiers: 1 .*", text)
    servers = re.search(r"\n  - \{name: support, .*", text)
    assert pinned and servers and "node_groups: [gb, support]" in text
    text = text.replace(pinned.group(0), "").replace(servers.group(0), "").replace(
        "node_groups: [gb, support]", "node_groups: [gb]")
    text = text.replace("    count: 18                          # one NVL72 rack", "    count: 54").replace(
        "    planned_nodes: 36 ", "    planned_nodes: 54 ").replace(
        "border: {router: site-router, speed: 200, inbound_filter: false, loopback: true, l3vni_vlan: 3004, "
        "multipaths: default-only}",
        "border: {router: site-router, uplinks: 64, speed: 100}").replace(
        "segment_local_id: port ", "segment_local_id: place")
    with pytest.raises(InventoryError) as err:
        render(text)
    msg = str(err.value)
    at = {k: next(n for n, ln in enumerate(text.splitlines(), 1) if k in ln)
          for k in ("uplinks: 64, speed: 100", "uplink_speed: 100")}
    assert f"slow.yaml:{at['uplinks: 64, speed: 100']}:" in msg and "northsouth.border.speed: 64 border uplinks" in msg
    assert f"slow.yaml:{at['uplink_speed: 100']}:" in msg and "oob_routed.uplink_speed" in msg, msg
