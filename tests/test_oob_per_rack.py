"""The out-of-band access layer of a GB300 NVL72 rack as NVIDIA's tables size it (issue 56 item 4).

NVIDIA's NVL72 Enterprise RA (ERA-00012, 2-4-5-800) puts two SN2201 in each rack, "18 trays x 3 x
1G = 54 ports per rack"; NVIDIA's generator (NVIDIA/enterprise-ras, net-configurator/output/
2-4-5-800/default/topology/2-4-5-800-topology.json at 66f13d5972c959885db6488add2d93098034c83c)
names them rack-oob-su-01-01 and -02 and cables tray n's management port to swpn of the first.
fabgen's GB300 tray has three 1G out-of-band ports (BMC, Host 1GbE, BF3 OOB): the rack spans two
SN2201, the BMCs on swp1-18 of the first, the host ports on its swp19-36, the BlueField-3 ports on
swp1-18 of the second. These tests render NVIDIA's design (inventories/era-2-4-5-800.yaml) at one
and two racks on both out-of-band designs and hold the cabling, the counts, the NVUE files against
NVIDIA's object model, growth by pure addition and the located refusal.
"""

from __future__ import annotations

import copy
import csv
import io
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
EXAMPLE = (ROOT / "inventories" / "era-2-4-5-800.yaml").read_text()
# the example's routed block, NVIDIA's details included (tests/test_nvidia_choices_oob.py holds them)
_AT = EXAMPLE.index("    oob_design: routed\n")
ROUTED = EXAMPLE[_AT:EXAMPLE.index("\n\n", _AT) + 1]
assert "oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.33.200" in ROUTED
ONE_RACK = "    count: 18                          # one NVL72 rack\n"
assert ONE_RACK in EXAMPLE
# the compute fabric's plan holds two racks (a leaf per rail and plane takes two racks): written down in
# the example, the out-of-band block's size is the plan's and a rack more only adds
assert "    planned_nodes: 36 " in EXAMPLE


def inventory(design: str = "routed", racks: int = 1) -> str:
    text = EXAMPLE if design == "routed" else EXAMPLE.replace(ROUTED, "")
    return text.replace(ONE_RACK, f"    count: {18 * racks}\n")


def render(text: str) -> dict:
    return run(load_text(text, "rack.yaml")).files


def rows(files: dict, path: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files[path].decode())))


def trays(files: dict) -> list[dict[str, str]]:
    return [r for r in rows(files, "oob/cabling.csv") if r["a_device"].startswith("su-01-node-")]


@pytest.fixture(scope="module", params=["layer2", "routed"])
def two_racks(request) -> tuple[str, dict]:
    return request.param, render(inventory(request.param, racks=2))


def test_each_tray_three_ports_each_rack_two_sn2201(two_racks) -> None:
    """54 rows a rack: tray n's BMC on swpn and its host port on swp(18+n) of the rack's first SN2201,
    its BlueField-3 port on swpn of the second; no rack shares an access switch with another."""
    _, files = two_racks
    cab = trays(files)
    assert len(cab) == 2 * 54
    assert {r["speed"] for r in cab} == {"1G"} and {r["media"] for r in cab} == {"utp"}
    by_rack: dict[int, set[str]] = {}
    for r in cab:
        n = int(r["a_device"].rsplit("-", 1)[1])
        rack, slot = divmod(n - 1, 18)
        first, second = f"oob-gpu-access{2 * rack + 1:04d}", f"oob-gpu-access{2 * rack + 2:04d}"
        want = {"bmc": (first, slot + 1), "host-1g": (first, 19 + slot), "bf3-oob": (second, slot + 1)}
        assert (r["z_device"], r["z_port"]) == (want[r["a_port"]][0], f"swp{want[r['a_port']][1]}"), r
        by_rack.setdefault(rack, set()).add(r["z_device"])
    assert [len(v) for v in by_rack.values()] == [2, 2] and not by_rack[0] & by_rack[1]
    per_switch = {}
    for r in cab:
        per_switch[r["z_device"]] = per_switch.get(r["z_device"], 0) + 1
    assert sorted(per_switch.values()) == [18, 18, 36, 36]  # 54 of 96 ports a rack, 42 free
    ends = [(r["z_device"], r["z_port"]) for r in rows(files, "oob/cabling.csv")]
    assert len(ends) == len(set(ends))  # no port cabled twice


def test_counts_follow_bom_report_netbox_addresses(two_racks) -> None:
    _, files = two_racks
    bom = rows(files, "oob/bom.csv")
    ports = next(r for r in bom if "BF3 OOB" in r["part"])
    assert ports["category"] == "included" and ports["quantity"] == "108"  # 36 trays x 3, in the tray
    sn2201 = next(r for r in bom if r["part"] == "MSN2201")
    assert sn2201["quantity"] == "6"
    report = yaml.safe_load(files["report.json"])
    oob = report["fabrics"]["oob"]
    assert oob["switches"]["leaf"] == 4 + 2  # two a rack, and the two switch-management ones
    assert oob["switch_ports"]["used"] == 108 + oob["oob"]["managed_switches"]
    interfaces = rows(files, "netbox/07-interfaces.csv")
    tray = [r for r in interfaces if r.get("device") == "su-01-node-20"]
    assert {"bmc", "host-1g", "bf3-oob"} <= {r["name"] for r in tray}
    cables = rows(files, "netbox/08-cables.csv")
    mine = {(r["side_a_name"], r["side_b_device"], r["side_b_name"], r["type"]) for r in cables
            if r["side_a_device"] == "su-01-node-20" and r["side_b_device"].startswith("oob-")}
    assert mine == {("bmc", "oob-gpu-access0003", "swp2", "cat6"), ("host-1g", "oob-gpu-access0003", "swp20", "cat6"),
                    ("bf3-oob", "oob-gpu-access0004", "swp2", "cat6")}
    addr = [r for r in rows(files, "oob/addresses.csv") if r["device"].startswith("su-01-node-")]
    assert len(addr) == 108 and len({r["address"] for r in addr}) == 108  # an address a port


def test_the_report_says_what_each_design_builds(two_racks) -> None:
    """report.md's out-of-band paragraph (targets/report.py `_oob`): the layer-2 design's bond to the
    site's management network; the routed design's uplinks to the north-south pair the cabling takes
    them to, its VRF and VNI, and no bond; the trays' three ports, as many as are cabled."""
    design, files = two_racks
    oob = yaml.safe_load(files["report.json"])["fabrics"]["oob"]["oob"]
    assert oob["design"] == design
    assert oob["node_ports"] == [{"model": "gb300-nvl72", "nodes": 36, "ports": ["BMC", "Host 1GbE", "BF3 OOB"]}]
    assert len(trays(files)) == 36 * 3
    md = files["report.md"].decode()
    para = next(ln for ln in md.splitlines() if ln.startswith("Access switches"))
    pair = sorted({r["z_device"] for r in rows(files, "oob/cabling.csv") if r["tier"] == "access-uplink"})
    if design == "routed":
        assert pair == ["ns-leaf001", "ns-leaf002"] and "ns-leaf001 and ns-leaf002 of 'ns'" in para
        assert "bonded" not in para and "no bond to a site network" in para
        assert "VRF OOB" in para and "VNI 4200" in para and "DHCP to 192.168.33.200" in para
        access = yaml.safe_load(files["oob/switches/oob-gpu-access0001.nvue.yaml"])[1]["set"]
        assert access["bridge"]["domain"]["br_default"]["vlan"]["200"]["vni"] == {"4200": {}}
    else:
        assert pair == [] and "two uplinks of each bonded to the site's management network" in para
        assert "VRF" not in para and "VNI" not in para
    assert "the BMC, Host 1GbE, BF3 OOB ports of each of 36 gb300-nvl72 nodes." in md
    assert "the nodes' BMC ports" not in md


def test_nvue_of_every_sn2201_is_nvidias_object_model(two_racks) -> None:
    """Every access switch's startup.yaml loads into NVIDIA's object model of its release; a broken
    tree is refused, so the check is not empty."""
    design, files = two_racks
    checked = 0
    for path, body in files.items():
        if path.startswith("oob/switches/") and path.endswith(".nvue.yaml"):
            header, tree = (lambda d: (d[0]["header"], d[1]["set"]))(yaml.safe_load(body))
            release = nvue_model.release(header)
            assert nvue_model.problems(release, tree) == [], path
            checked += 1
            if path.endswith("oob-gpu-access0002.nvue.yaml"):  # the rack's second SN2201: its ports in VLAN 200
                swp1 = tree["interface"]["swp1"]
                assert swp1["bridge"]["domain"]["br_default"]["access"] == 200, swp1
                broken = copy.deepcopy(tree)
                broken["interface"]["swp1"]["link"] = {"speed": "fast"}
                assert nvue_model.problems(release, broken)
    assert checked == 6, design


def test_a_rack_more_only_adds() -> None:
    """One rack, then two (the plan written down): every cable, address and access-switch file of the
    first rack unchanged; the second rack's on two new SN2201."""
    for design in ("layer2", "routed"):
        small, big = render(inventory(design, 1)), render(inventory(design, 2))
        for path in ("oob/cabling.csv", "oob/addresses.csv"):
            before = set(files_lines(small, path))
            after = set(files_lines(big, path))
            assert before <= after, (design, path, sorted(before - after)[:3])
        old = {p for p in small if p.startswith("oob/switches/")}
        assert old < {p for p in big if p.startswith("oob/switches/")}
        for p in old:
            assert small[p] == big[p], (design, p)


def files_lines(files: dict, path: str) -> list[str]:
    return files[path].decode().splitlines()


def test_a_rack_on_one_access_group_too_many_is_refused_where_written(tmp_path: Path) -> None:
    """Two racks' 108 ports cannot share one pair of SN2201: scalable_unit 36 refused at its line,
    exit 2, nothing written."""
    unit = "    scalable_unit: 18                  # a rack's 54 ports on two SN2201 of its own\n"
    assert unit in EXAMPLE
    text = inventory().replace(unit, "    scalable_unit: 36\n")
    with pytest.raises(InventoryError) as err:
        render(text)
    message = str(err.value)
    assert "scalable_unit" in message and "at most 18" in message and "2 access switches" in message, message
    line = int(message.split("rack.yaml:")[1].split(":")[0])
    assert text.splitlines()[line - 1].strip().startswith("scalable_unit: 36")
    inv = tmp_path / "rack.yaml"
    inv.write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output and not out.exists()
    assert f"{inv}:{line}:" in result.output


def test_the_other_nl72_tray_keeps_one_port_a_switch_of_eighteen() -> None:
    """The GB200 tray keeps its one BMC port: 18 a rack on one access switch, as before."""
    text = inventory("layer2").replace("model: gb300-nvl72", "model: gb200-nvl72")
    text = text.replace("    planes: 2\n", "    planes: 1\n")
    try:
        files = render(text)
    except InventoryError as err:  # the GPU fabric's two planes are GB300's; skip what GB200 cannot run
        pytest.skip(str(err)[:200])
    cab = trays(files)
    assert len(cab) == 18 and {r["a_port"] for r in cab} == {"bmc"}
    assert {r["z_device"] for r in cab} == {"oob-gpu-access0001"}


def test_one_port_nodes_beside_the_trays_keep_one_port_a_node() -> None:
    """inventories/gb300-northsouth.yaml: 72 trays (four racks, eight SN2201, three ports a tray) and
    four storage servers of one BMC port each on their own block, a port a server, side by side."""
    files = render((ROOT / "inventories" / "gb300-northsouth.yaml").read_text().replace(
        "rdma_links: gb300-cluster-rdma-links.txt", ""))
    cab = [r for r in rows(files, "oob/cabling.csv") if r["tier"] == "node-leaf"]
    trays_ = [r for r in cab if r["a_device"].startswith("gb")]
    servers = [r for r in cab if r["a_device"].startswith("stor")]
    assert len(trays_) == 72 * 3 and len({r["z_device"] for r in trays_}) == 8
    assert [(r["a_port"], r["z_device"], r["z_port"]) for r in servers] == [
        ("bmc", "oob-northsouth-access0001", f"swp{n}") for n in range(1, 5)]


def test_verify_holds_a_racks_three_ports_and_finds_two_swapped(tmp_path: Path) -> None:
    """`fabgen verify` against LLDP evidence of the planned out-of-band cabling: the plan passes;
    a tray's host and BlueField-3 cables swapped between the rack's two SN2201 are found."""
    from test_verify import _lldp_dir, fabgen

    inv = tmp_path / "rack.yaml"
    inv.write_text(inventory("layer2"))
    out = tmp_path / "out"
    assert fabgen("render", inv, "-o", out).returncode == 0
    (tmp_path / "a").mkdir()
    res = fabgen("verify", out, "--lldp", _lldp_dir(out, "oob", tmp_path / "a"), "--fabric", "oob",
                 "--format", "json")
    doc = yaml.safe_load(res.stdout)
    assert res.returncode == 0 and doc["ok"] and doc["checked"] >= 54, res.stdout[-1500:]

    def swap(cab: list) -> list:
        host = next(r for r in cab if r["a_device"] == "su-01-node-05" and r["a_port"] == "host-1g")
        bf3 = next(r for r in cab if r["a_device"] == "su-01-node-05" and r["a_port"] == "bf3-oob")
        host["z_device"], host["z_port"], bf3["z_device"], bf3["z_port"] = (bf3["z_device"], bf3["z_port"],
                                                                            host["z_device"], host["z_port"])
        return cab

    (tmp_path / "b").mkdir()
    res = fabgen("verify", out, "--lldp", _lldp_dir(out, "oob", tmp_path / "b", swap), "--fabric", "oob",
                 "--format", "json")
    doc = yaml.safe_load(res.stdout)
    assert res.returncode == 1
    wrong = {(f["device"], f["port"]) for f in doc["findings"] if f["kind"] == "miswired"}
    assert {("oob-gpu-access0001", "swp23"), ("oob-gpu-access0002", "swp5")} <= wrong, doc["findings"]
