"""The routed out-of-band network (`oob_design: routed`, issue 56 item 4).

NVIDIA's generator builds its out-of-band network routed (NVIDIA/enterprise-ras, net-configurator/
output/2-8-9-400/default/configs/oob-switch-01-config.sh at 993eed6a993b668e9ab80556cd973b548612c4a4):
each SN2201 an EVPN VTEP with a loopback and an ASN, unnumbered eBGP uplinks to both switches of the
north-south pair (peer group `underlay`, WEIGHTED_ECMP outbound, BFD 300 ms x 3), EVPN sessions to
the pair's loopbacks (`overlay`: multihop 2, update-source lo, IPv4 off, BFD 1000 ms x 3), VLAN 200 on
VNI 4200 with its SVI and a VRR anycast gateway in VRF OOB (L3VNI 5001, `evpn vlan 3001`), `multipath
aspath-ignore`; the pair (2-4-5-800/default/configs/csl-01-config.sh at the same commit) holds the
other ends, VRF OOB, the leaking between OOB and EXIT (OOB_FILTER, EXIT_FILTER) and `service
dhcp-relay OOB`. These tests render such a cluster and hold both ends against NVIDIA's object model
of every release, the numbers both ends must agree on, the located refusals, growth by pure
addition, and the EVPN lab's reader; each check is shown refusing a broken file.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import nvue_model
import pytest
import yaml
from typer.testing import CliRunner

from fabgen.cli import app
from fabgen.emulate import evpn
from fabgen.emulate.inputs import table
from fabgen.errors import InventoryError
from fabgen.inventory.loader import load_text
from fabgen.pipeline import run
from fabgen.targets import nvue

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = (ROOT / "inventories" / "era-2-8-9-400.yaml").read_text()
ROUTED = ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.1.200, "
          "uplink_speed: 100}\n")
RELEASES = ("5.13", "5.14", "5.16", "5.18")
# the example's routed block, with NVIDIA's details (oob_routed.vrf_loopbacks, announce, evpn_filter:
# tests/test_nvidia_choices_oob.py); these tests take the routed design without them
EXAMPLE_ROUTED = EXAMPLE[EXAMPLE.index("    oob_design: routed\n"):EXAMPLE.index("    management:", EXAMPLE.index(
    "    oob_design: routed\n"))]
LAYER2 = EXAMPLE.replace(EXAMPLE_ROUTED, "")  # the example as it was before it took the routed design
assert "oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.1.200" in EXAMPLE_ROUTED  # the example's
PAIR = ("ns-su001-leaf1", "ns-su001-leaf2")
# the example's north-south fabric is NVIDIA's collapsed pair (one ASN, no spines, no inbound filter)
PAIR_LINE = ("    tiers: 1                           # NVIDIA's collapsed pair: two leaves, iBGP peer links, "
             "no spines\n")
NO_FILTER = ", inbound_filter: false}"
assert PAIR_LINE in EXAMPLE and NO_FILTER in EXAMPLE


def _oob_block(text: str) -> tuple[str, str]:
    """The example split before the out-of-band fabric's `oob_vlan` line's end (its last key)."""
    mark = "    oob_vlan: 200"
    head, tail = text.split(mark, 1)
    line, rest = tail.split("\n", 1)
    return head + mark + line + "\n", rest


def routed(text: str = LAYER2, oob: str = ROUTED, release: str | None = None) -> str:
    """The example with the routed out-of-band design (`oob` under the oob fabric's keys); with
    `release` every NVUE fabric at that Cumulus Linux release."""
    head, rest = _oob_block(text)
    out = head + oob + rest
    if release:
        out = out.replace("    platform: nvue", f"    platform: nvue\n    platform_version: '{release}'")
    return out


def render(text: str) -> dict:
    return run(load_text(text, "oobr.yaml")).files


def trees(files: dict, fabric: str) -> dict[str, tuple[dict, dict]]:
    out = {}
    for path, body in files.items():
        if path.startswith(f"{fabric}/switches/") and path.endswith(".nvue.yaml"):
            doc = yaml.safe_load(body)
            out[path.split("/")[-1].removesuffix(".nvue.yaml")] = (doc[0]["header"], doc[1]["set"])
    return out


@pytest.fixture(scope="module")
def files() -> dict:
    return render(routed())


@pytest.mark.parametrize("release", RELEASES)
def test_nvidias_object_model_takes_both_ends_and_refuses_a_broken_line(release: str) -> None:
    files = render(routed(release=release))
    checked = 0
    for fabric in ("oob", "ns"):
        for name, (header, tree) in trees(files, fabric).items():
            assert nvue_model.release(header) == release
            assert nvue_model.problems(release, tree) == [], name
            checked += 1
    assert checked == 3 + 2  # three SN2201 and the collapsed pair (tiers: 1, no spines)
    _, access = trees(files, "oob")["oob-gpu-access0001"]
    broken = copy.deepcopy(access)  # the VRF's VNI is a word of its path, not a value
    broken["vrf"]["OOB"]["evpn"]["vni"] = 5001
    assert nvue_model.problems(release, broken)
    _, pair = trees(files, "ns")[PAIR[0]]
    broken = copy.deepcopy(pair)  # the relay's other release: 5.13 has no server groups, 5.14 on no `server`
    relay = broken["service"]["dhcp-relay"]["OOB"]
    if "server-group" in relay:
        relay["server"] = {"192.168.1.200": {}}
    else:
        relay["server-group"] = {"g": {"server": {"192.168.1.200": {}}}}
    assert any("dhcp-relay" in p for p in nvue_model.problems(release, broken))


def test_the_script_is_the_yaml_line_for_line(files: dict) -> None:
    """The `nv set` lines, read back as the NVUE CLI reads them, are the startup.yaml's tree."""
    text = files["oob/switches/oob-gpu-access0001.nvue.sh"].decode()
    lines = [ln for ln in text.splitlines() if ln.startswith("nv set ")]
    _, tree = trees(files, "oob")["oob-gpu-access0001"]
    back: dict = {}
    for ln in lines:
        nvue_model.merge(back, nvue_model.parse_nv_set("5.16", ln.replace('"${FABGEN_CUMULUS_HASH}"', "X")))
    assert back["vrf"] == tree["vrf"] and back["router"] == tree["router"] and back["bridge"] == tree["bridge"]
    assert "nv set vrf OOB evpn vni 5001" in lines and "nv set bridge domain br_default vlan 200 vni 4200" in lines


def test_access_switch_is_nvidias_vtep(files: dict) -> None:
    access = trees(files, "oob")
    pair = {n: t for n, (_, t) in trees(files, "ns").items() if n in PAIR}
    pair_lo = sorted(next(iter(t["interface"]["lo"]["ipv4"]["address"])).split("/")[0] for t in pair.values())
    asns, loopbacks = set(), set()
    for _, t in access.values():
        lo = next(iter(t["interface"]["lo"]["ipv4"]["address"])).split("/")[0]
        loopbacks.add(lo)
        asns.add(t["router"]["bgp"]["autonomous-system"])
        assert t["router"]["bgp"]["router-id"] == lo and t["nve"]["vxlan"]["source"]["address"] == lo
        assert t["bridge"]["domain"]["br_default"]["vlan"] == {"200": {"vni": {"4200": {}}}}
        svi = t["interface"]["vlan200"]
        assert svi["vrf"] == "OOB" and svi["ipv4"]["vrr"]["address"] == {"192.168.0.1/23": {}}
        assert t["vrf"]["OOB"]["evpn"] == {"state": "enabled", "vlan": 3001, "vni": {"5001": {}}}
        assert t["vrf"]["OOB"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["route-export"] == {
            "to-evpn": {"state": "enabled"}}
        bgp = t["vrf"]["default"]["router"]["bgp"]
        assert bgp["path-selection"] == {"multipath": {"aspath-ignore": "enabled"}}
        assert "static" not in t["vrf"]["default"]["router"]  # the default route comes by BGP
        groups = bgp["peer-group"]
        assert groups[nvue.OOB_UNDERLAY]["address-family"]["ipv4-unicast"]["policy"] == {
            "outbound": {"route-map": "WEIGHTED_ECMP"}}
        over = groups[nvue.OOB_OVERLAY]
        assert (over["multihop-ttl"], over["update-source"], over["remote-as"]) == (2, "lo", "external")
        assert over["address-family"] == {"ipv4-unicast": {"state": "disabled"}, "l2vpn-evpn": {"state": "enabled"}}
        profiles = t["router"]["bfd"]["profile"]
        assert profiles[groups[nvue.OOB_UNDERLAY]["bfd"]["profile"]]["min-rx-interval"] == 300
        assert profiles[over["bfd"]["profile"]]["min-rx-interval"] == 1000
        nb = bgp["neighbor"]
        assert {p: v["type"] for p, v in nb.items() if v["peer-group"] == nvue.OOB_UNDERLAY} == {
            "swp49": "unnumbered", "swp50": "unnumbered"}
        assert sorted(p for p, v in nb.items() if v["peer-group"] == nvue.OOB_OVERLAY) == pair_lo
        assert "uplink" not in t["interface"]  # the layer-2 design's bond is gone
    assert len(asns) == len(loopbacks) == len(access) == 3


def test_pair_holds_the_other_ends_the_vrf_the_relay_and_the_leaking(files: dict) -> None:
    access = {n: t for n, (_, t) in trees(files, "oob").items()}
    for leaf in PAIR:
        _, t = trees(files, "ns")[leaf]
        bgp = t["vrf"]["default"]["router"]["bgp"]
        ups = {p for p, v in bgp["neighbor"].items() if v["peer-group"] == nvue.OOB_UNDERLAY}
        far = {str(t["interface"][p]["description"]).split(":")[0] for p in ups}
        assert far == set(access) and len(ups) == 3
        for p in ups:  # the far end names this port back
            sw, port = t["interface"][p]["description"].split(":")
            assert access[sw]["interface"][port]["description"] == f"{leaf}:{p}"
        assert {p for p, v in bgp["neighbor"].items() if v["peer-group"] == nvue.OOB_OVERLAY} == {
            next(iter(a["interface"]["lo"]["ipv4"]["address"])).split("/")[0] for a in access.values()}
        assert t["bridge"]["domain"]["br_default"]["vlan"]["200"] == {"vni": {"4200": {}}}
        svi = t["interface"]["vlan200"]
        assert svi["vrf"] == "OOB" and svi["ipv4"]["vrr"]["address"] == {"192.168.0.1/23": {}}
        oob = t["vrf"]["OOB"]
        assert oob["evpn"]["vni"] == {"5001": {}}
        imp = oob["router"]["bgp"]["address-family"]["ipv4-unicast"]["route-import"]["from-vrf"]
        assert imp["list"] == {"EXIT": {}} and imp["route-map"] == "OOB_FILTER"
        exit_imp = t["vrf"]["EXIT"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["route-import"]["from-vrf"]
        assert "OOB" in exit_imp["list"] and exit_imp["route-map"] == "EXIT_FILTER"
        maps = t["router"]["policy"]["route-map"]
        assert maps["OOB_FILTER"]["rule"]["5"]["match"] == {"community-list": "11"}
        assert maps["INBAND_FILTER"]["rule"][nvue.OOB_TENANT_RULE]["match"]["ip-prefix-list"] == "OOB_PREFIXES"
        assert t["router"]["policy"]["prefix-list"]["OOB_PREFIXES"]["rule"]["10"]["match"] == {
            "192.168.0.0/23": {"max-prefix-len": 32}}
        relay = t["service"]["dhcp-relay"]["OOB"]
        assert relay["downstream-interface"] == {"vlan200": {"server-group-name": nvue.RELAY_GROUP}}
        assert relay["server-group"][nvue.RELAY_GROUP] == {"server": {"192.168.1.200": {}},
                                                           "upstream-interface": {"vlan3001_l3": {}}}
        assert relay["source-ip"] == "giaddress"
    own = {str(next(iter(trees(files, "ns")[leaf][1]["interface"]["vlan200"]["ipv4"]["address"]))) for leaf in PAIR}
    svis = {str(next(iter(a["interface"]["vlan200"]["ipv4"]["address"]))) for a in access.values()}
    assert len(own | svis) == 5  # every switch its own address on the VLAN


def test_cabling_holds_the_uplinks_from_both_ends(files: dict) -> None:
    rows = [r for r in rows_of(files, "oob/cabling.csv") if r["tier"] == "access-uplink"]
    assert len(rows) == 2 * 3 and {r["z_device"] for r in rows} == set(PAIR)
    for r in rows:  # the pair's config names the same cable from its end
        _, t = trees(files, "ns")[r["z_device"]]
        assert t["interface"][r["z_port"]]["description"] == f"{r['a_device']}:{r['a_port']}"
        assert r["speed"] == "100G"
    bom = [r for r in rows_of(files, "oob/bom.csv") if "access uplink to the north-south pair" in r["description"]]
    assert bom and int(bom[0]["quantity"]) == 6


def test_netbox_holds_the_uplinks_as_cables_and_interfaces(files: dict) -> None:
    cables = {(r["side_a_device"], r["side_a_name"], r["side_b_device"], r["side_b_name"])
              for r in rows_of(files, "netbox/08-cables.csv")}
    ups = {(r["a_device"], r["a_port"], r["z_device"], r["z_port"]) for r in rows_of(files, "oob/cabling.csv")
           if r["tier"] == "access-uplink"}
    assert ups and ups <= cables
    ports = {(r["device"], r["name"]): r["type"] for r in rows_of(files, "netbox/07-interfaces.csv")}
    for a, ap, z, zp in ups:
        assert ports[(a, ap)] == "100gbase-x-qsfp28" and (z, zp) in ports


def rows_of(files: dict, path: str) -> list[dict[str, str]]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO(files[path].decode())))


def test_the_layer2_design_stays_the_default() -> None:
    base = render(LAYER2)
    explicit = render(routed(oob="    oob_design: layer2\n"))
    assert {p: b for p, b in base.items() if p != "manifest.json"} == \
        {p: b for p, b in explicit.items() if p != "manifest.json"}
    _, t = trees(base, "oob")["oob-gpu-access0001"]
    assert "uplink" in t["interface"] and "static" in t["vrf"]["default"]["router"]


def test_the_lab_reads_the_pair_and_leaves_the_sessions_out(files: dict) -> None:
    assert nvue.OOB_UNDERLAY in evpn.OOB_GROUPS and nvue.OOB_OVERLAY in evpn.OOB_GROUPS
    plan = evpn.read(files, "ns", table)
    assert plan.oob_sessions == 2 * (3 + 3)  # a pair leaf: three uplinks and three loopback sessions
    for leaf in PAIR:
        sw = plan.switches[leaf]
        assert "OOB" in sw.l3vnis and 200 in sw.tenants and not sw.numbered
        assert not any(g in evpn.OOB_GROUPS for g in (*sw.groups, *sw.unnumbered.values()))
    broken = dict(files)  # a numbered session of another peer group is still refused
    path = f"ns/switches/{PAIR[0]}.nvue.yaml"
    broken[path] = files[path].replace(b"peer-group: oob-overlay", b"peer-group: OTHER")
    with pytest.raises(evpn.TranslateError):
        evpn.read(broken, "ns", table)


GROWTH = """\
    planned_nodes: 16
"""


def _sized(text: str, groups: int) -> str:
    """The example with `groups` units of four and room for four: the GPU and north-south fabrics
    planned for 16 nodes, an access switch a unit out of band (its servers left out with its groups)."""
    text = text.replace(PAIR_LINE, PAIR_LINE + GROWTH)
    text = text.replace("    tiers: 1                           # one SN5600", GROWTH + "    tiers: 1  #")
    units = "\n".join(f"  - {{name: su0{k}, model: hgx-2-8-9-400, count: 4, hostname: \"su-0{k}-node-{{n:02d}}\"}}"
                      for k in range(1, groups + 1))
    head, rest = text.split("node_groups:                           # NVIDIA's units of four nodes and its names\n")
    rest = rest.split("\n\nfabrics:", 1)[1]
    names = ", ".join(f"su0{k}" for k in range(1, groups + 1))
    rest = rest.replace(", support, storage]", "]").replace("node_groups: [su01, su02, su03]",
                                                             f"node_groups: [{names}]")
    return head + "node_groups:\n" + units + "\n\nfabrics:" + rest


def test_growth_only_adds() -> None:
    """A unit more: a fourth access switch with the next loopback, ASN and pair port; every existing
    access switch's file unchanged, the pair's lines only added to."""
    oob = ROUTED + "    scalable_unit: 4\n"
    small, big = render(routed(_sized(LAYER2, 3), oob)), render(routed(_sized(LAYER2, 4), oob))
    a_small, a_big = trees(small, "oob"), trees(big, "oob")
    assert set(a_small) < set(a_big) and "oob-gpu-access0004" in a_big
    for name in a_small:
        assert small[f"oob/switches/{name}.nvue.sh"] == big[f"oob/switches/{name}.nvue.sh"], name
    for leaf in PAIR:
        before = set(small[f"ns/switches/{leaf}.nvue.sh"].decode().splitlines())
        after = set(big[f"ns/switches/{leaf}.nvue.sh"].decode().splitlines())
        gone = before - after  # only unused ports taken into use: the new nodes' and access switch's
        assert all(ln.endswith(" link state down") for ln in gone), sorted(gone)[:3]
        new = _new_ports(a_big, leaf) - _new_ports(a_small, leaf)
        assert len(new) == 1 and f"nv set interface {new.pop()} link state down" in gone, leaf


def _new_ports(access: dict, leaf: str) -> set[str]:
    """The pair ports the network's access switches take."""
    return {u["description"].split(":")[1] for _, t in access.values() for u in t["interface"].values()
            if isinstance(u, dict) and str(u.get("description", "")).startswith(f"{leaf}:")}


REFUSED = [
    ("    oob_routed: {loopbacks: 10.254.1.0/24}\n", "oob_routed", "oob_design: routed"),
    ("    oob_design: routed\n", "oob_design", "loopbacks"),
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/24}\n", "oob_routed", "DHCP"),
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.0.0/24, dhcp_server: 192.168.1.200}\n",
     "loopbacks", "overlaps"),
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/33, dhcp_server: 192.168.1.200}\n",
     "loopbacks", "IPv4"),
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.1.200, "
     "northsouth: gpu}\n", "northsouth", "not a northsouth fabric"),
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.1.200, "
     "vrf: INBAND}\n", "oob_routed", "VRF of its own"),
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.1.200, "
     "vni: 4300}\n", "vni", "each VNI once"),
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.1.200, "
     "l3vni: 5004}\n", "oob_routed", "EXIT's layer-3 VNI"),
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.1.200, "
     "l3vni_vlan: 300}\n", "oob_routed", "pair carries both"),
    ("    oob_design: fancy\n", "oob_design", "layer2"),
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.0.5}\n",
     "dhcp_server", "the BMCs'"),
    # the pair's own ASN: the uplinks' `remote-as external` sessions would be iBGP and never come up
    ("    oob_design: routed\n    oob_routed: {loopbacks: 10.254.1.0/24, dhcp_server: 192.168.1.200, "
     "asn: 4200020000}\n", "asn", "meet fabric 'ns''s leaf ASNs"),
]


@pytest.mark.parametrize(("oob", "key", "words"), REFUSED)
def test_a_routed_design_without_what_it_needs_is_refused_where_it_is_written(oob: str, key: str,
                                                                             words: str) -> None:
    with pytest.raises(InventoryError) as err:
        render(routed(oob=oob))
    text = str(err.value)
    assert key in text and words in text, text
    line = int(text.split("oobr.yaml:")[1].split(":")[0])
    inv = routed(oob=oob)
    assert line >= inv[:inv.index("role: oob")].count("\n") + 1  # at the out-of-band fabric's keys


def test_one_routed_out_of_band_network_a_north_south_pair() -> None:
    """A second routed out-of-band network hanging from the same pair would take the same pair ports,
    VLAN and VRF: refused at its oob_design."""
    text = routed()
    block = text[text.index("  - name: oob\n"):text.index("\n# NVIDIA's baseline on every switch")]
    second = (block.replace("  - name: oob\n", "  - name: oob2\n")
              .replace("node_groups: [su01, su02, su03]", "node_groups: [su03]")
              .replace("192.168.0.0/23, gateway: 192.168.0.1", "192.168.2.0/24, gateway: 192.168.2.1")
              .replace("10.254.1.0/24", "10.254.2.0/24").replace("192.168.1.200", "192.168.2.200"))
    assert second != block
    two = text.replace(block, block.replace("[su01, su02, su03]", "[su01, su02]") + "\n" + second)
    with pytest.raises(InventoryError, match="already carries the routed out-of-band network 'oob'") as err:
        render(two)
    assert "fabrics[3].oob_design" in str(err.value)


def test_a_north_south_fabric_on_another_platform_or_none_is_refused() -> None:
    eos = routed().replace("    role: northsouth\n    kind: spectrum-x\n    platform: nvue",
                           "    role: northsouth\n    kind: roce\n    platform: eos").replace(
        "    switch_model: sn5600\n    node_groups: [su01, su02, su03, support, storage]\n" + PAIR_LINE,
        "    switch_model: arista-7060x5\n    node_groups: [su01, su02, su03, support, storage]\n" + PAIR_LINE)
    assert "platform: eos" in eos and "arista-7060x5" in eos
    with pytest.raises(InventoryError, match="'ns' runs eos: the routed out-of-band design"):
        render(eos)
    sonic = routed().replace("  - name: oob\n    role: oob\n    kind: ethernet\n    platform: nvue",
                          "  - name: oob\n    role: oob\n    kind: ethernet\n    platform: sonic")
    with pytest.raises(InventoryError, match="routed out-of-band design is written for NVUE"):
        render(sonic)


def test_the_command_line_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(routed(oob="    oob_design: routed\n"))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(bad), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert "bad.yaml:" in result.output and "oob_design" in result.output and "Traceback" not in result.output
    assert not out.exists()


def _evidence(out: Path, fabrics: tuple[str, ...], ev: Path, change=None) -> Path:
    """The LLDP evidence the plan's cables would give (lldpctl JSON, both ends of each), `change`
    applied to the rows first (test_verify.py's way, for several fabrics at once)."""
    import json

    sys.path.insert(0, str(Path(__file__).parent))
    from lldp_lab import cables, netdevs

    rows = [r for f in fabrics for r in cables(out, f)]
    names = {k: v for f in fabrics for k, v in netdevs(out, f).items()}
    if change:
        rows = change(rows)
    views: dict[str, list] = {}
    for r in rows:
        for dev, port, far, far_port in ((r["a_device"], r["a_port"], r["z_device"], r["z_port"]),
                                         (r["z_device"], r["z_port"], r["a_device"], r["a_port"])):
            far_name = names.get((far, far_port))
            pid = {"type": "mac", "value": "02:00:00:00:00:01"} if far_name else {"type": "ifname", "value": far_port}
            views.setdefault(dev, []).append({names.get((dev, port), port): {
                "chassis": {far: {}}, "port": {"id": pid, "descr": far_name or far_port}}})
    ev.mkdir()
    for dev, items in views.items():
        (ev / f"{dev}.json").write_text(json.dumps({"lldp": {"interface": items}}))
    return ev


def test_verify_reads_the_uplinks_from_both_ends_and_finds_a_swap(tmp_path: Path) -> None:
    import json
    import subprocess

    from fabgen.pipeline import render_to

    out = tmp_path / "out"
    render_to(ROOT / "inventories" / "era-2-8-9-400.yaml", out)

    def verify(ev: Path) -> dict:
        res = subprocess.run([sys.executable, "-m", "fabgen", "verify", str(out), "--lldp", str(ev), "--format",
                              "json"], capture_output=True, text=True, timeout=300)
        assert res.returncode in (0, 1), res.stderr[-2000:]
        return json.loads(res.stdout)

    good = verify(_evidence(out, ("oob", "ns"), tmp_path / "good"))
    assert good["ok"] and not good["findings"], good["findings"][:3]
    assert good["checked"] == good["cabled"] >= len(rows_of({"c": (out / "oob" / "cabling.csv").read_bytes()}, "c"))

    def swap(rows: list) -> list:  # two access switches' first uplinks trade their pair ports
        a, b = [r for r in rows if r["tier"] == "access-uplink" and r["a_port"] == "swp49"][:2]
        a["z_port"], b["z_port"] = b["z_port"], a["z_port"]
        return rows

    bad = verify(_evidence(out, ("oob", "ns"), tmp_path / "bad", swap))
    assert not bad["ok"] and any(f.get("tier") == "access-uplink" for f in bad["findings"]), bad["findings"][:3]


def test_every_border_leaf_sends_the_out_of_band_subnet_out_and_refuses_it_back() -> None:
    """With spines and three leaf pairs, the out-of-band subnet leaks into the border VRF on the pair it
    hangs from and reaches every border leaf by EVPN: each one's ERA_PREFIXES holds it (sent out,
    never taken back by INBOUND_ERA_PREFIXES), not the pair's alone."""
    two = routed().replace(PAIR_LINE, "    scalable_unit: 4\n").replace("        segment_local_id: port", "").replace(
        NO_FILTER, "}")
    assert "scalable_unit: 4" in two
    files = render(two)
    subnet = "192.168.0.0/23"
    # the border leaves: the compute leaf pairs' (the servers' storage leaf pairs hold no border)
    leaves = {n: t for n, (_, t) in trees(files, "ns").items() if "leaf" in n and "storage" not in n}
    assert len(leaves) == 6
    for name, tree in leaves.items():
        era = tree["router"]["policy"]["prefix-list"]["ERA_PREFIXES"]["rule"]
        assert [r for r in era.values() if subnet in r["match"]], (name, era)
        inbound = tree["router"]["policy"]["route-map"]["INBOUND_ERA_PREFIXES"]["rule"]["10"]
        assert inbound["match"]["ip-prefix-list"] == "ERA_PREFIXES" and "deny" in inbound["action"]
    assert sum("OOB" in t["vrf"] for t in leaves.values()) == 2  # the VRF itself on the pair only


def test_a_dhcp_server_no_route_reaches_is_a_warning(tmp_path: Path) -> None:
    """Without a way out (northsouth.border) VRF OOB holds its own subnet alone: a DHCP server outside
    the management VLAN is a located warning; with the border, or inside the VLAN, none."""
    far = routed(oob=ROUTED.replace("dhcp_server: 192.168.1.200", "dhcp_server: 10.9.9.9"))
    line = ("        border: {router: site-router, uplinks: 12, speed: 100, peer_group: underlay-esl-external, "
            "loopback: true,\n"
            "                 l3vni_vlan: 3004, multipaths: default-only, inbound_filter: false}\n")
    assert line in far
    for name, text, warned in (("noborder", far.replace(line, ""), True), ("border", far, False),
                               ("inside", routed().replace(line, ""), False)):
        inv = tmp_path / f"{name}.yaml"
        inv.write_text(text)
        result = CliRunner().invoke(app, ["validate", str(inv)])
        assert result.exit_code == 0, result.output
        assert ("VRF OOB has no route to it" in result.output) is warned, (name, result.output[-800:])
        if warned:
            assert "oob_routed.dhcp_server (line" in result.output
