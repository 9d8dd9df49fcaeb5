"""NVIDIA's remaining per-switch lines on the way out and the routed out-of-band network, each a key
(issue 56, item 7's "different" and "not built" facts): the border VRF's own loopback as its
router-id with EXIT_FILTER's rule 10 denying it (`northsouth.border.loopback`) and its layer-3 VNI's
VLAN (`border.l3vni_vlan`), the out-of-band VRF's own loopback on both ends (`oob_routed.vrf_loopbacks`),
the access switches' loopback by `redistribute connected` through LOOPBACK_BGP (`oob_routed.announce`)
and the pair's EVPN_OOB_OUT on its EVPN sessions to them (`oob_routed.evpn_filter`).

NVIDIA's lines are its generator's (NVIDIA/enterprise-ras, net-configurator/output/2-4-5-800/default/
configs/csl-01-config.sh and 2-8-9-400/default/configs/oob-switch-01-config.sh at
993eed6a993b668e9ab80556cd973b548612c4a4; 2-8-9-400/default/configs/core-01-config.sh at
2f46cb2fca8f4d9b432f9de62957e54aed8f64d9). The example inventory era-2-8-9-400 sets every key: its
files are held against NVIDIA's object model (nvueschema) of every release and against the EVPN lab's
reader, a broken line is shown refused by both, and a bad value is refused where it is written; left
out (or set to the default), the render is what it was.
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
from fabgen.emulate import evpn
from fabgen.emulate.inputs import table
from fabgen.inventory.loader import load_text
from fabgen.pipeline import run

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = (ROOT / "inventories" / "era-2-8-9-400.yaml").read_text()
BORDER_KEYS = ", loopback: true,\n                 l3vni_vlan: 3004"  # then the example's inbound_filter
OOB_KEYS = ", vrf_loopbacks: true,\n                 announce: redistribute, evpn_filter: true}"
assert BORDER_KEYS in EXAMPLE and OOB_KEYS in EXAMPLE  # the example sets every key
WITHOUT = EXAMPLE.replace(BORDER_KEYS, "").replace(OOB_KEYS, "}")
DEFAULTS = EXAMPLE.replace(BORDER_KEYS, ", loopback: false").replace(
    OOB_KEYS, ", vrf_loopbacks: false, announce: network, evpn_filter: false}")
PAIR = ("ns-su001-leaf1", "ns-su001-leaf2")


def render(text: str, name: str = "nvoob.yaml") -> dict:
    return run(load_text(text, name)).files


def trees(files: dict, fabric: str) -> dict[str, tuple[str, dict]]:
    out = {}
    for path, body in files.items():
        if path.startswith(f"{fabric}/switches/") and path.endswith(".nvue.yaml"):
            doc = yaml.safe_load(body)
            out[path.split("/")[-1].removesuffix(".nvue.yaml")] = (nvue_model.release(doc[0]["header"]), doc[1]["set"])
    return out


def lines(files: dict, fabric: str, name: str) -> set[str]:
    return set(files[f"{fabric}/switches/{name}.nvue.sh"].decode().splitlines())


@pytest.fixture(scope="module")
def files() -> dict:
    return render(EXAMPLE)


def test_the_example_writes_nvidias_lines(files: dict) -> None:
    """NVIDIA's lines, one by one (csl-01 and oob-switch-01 at 993eed6, core-01 at 2f46cb2), each
    address a /32 the plan fixes: EXIT's from the loopbacks pool after the tenant VRFs', OOB's from the
    top of oob_routed.loopbacks (the pair's two, then each access switch)."""
    access_names = sorted(trees(files, "oob"))  # the BMCs' access switch, each fabric's management one
    assert len(access_names) == 3
    pair_oob = {}
    for k, leaf in enumerate(PAIR):
        text = lines(files, "ns", leaf)
        _, tree = trees(files, "ns")[leaf]
        exit_lo = next(iter(tree["vrf"]["EXIT"]["loopback"]["ip"]["address"])).removesuffix("/32")
        tenant_lo = [next(iter(tree["vrf"][v]["loopback"]["ip"]["address"])) for v in ("STORAGE", "INBAND")]
        assert exit_lo.startswith("10.254.0.") and f"{exit_lo}/32" not in tenant_lo
        assert exit_lo == f"10.254.0.{252 - 3 * k}"  # leaf k's third VRF loopback from the pool's top
        assert {
            f"nv set vrf EXIT loopback ip address {exit_lo}/32",
            f"nv set vrf EXIT router bgp router-id {exit_lo}",
            "nv set vrf EXIT evpn vlan 3004",
            "nv set router policy route-map EXIT_FILTER rule 10 action deny",
            "nv set router policy route-map EXIT_FILTER rule 10 match ip-prefix-list EXIT_LOCAL_IF",
            "nv set router policy route-map EXIT_FILTER rule 10 match type ipv4",
            "nv set router policy route-map EXIT_FILTER rule 20 set community 11:11",
            f"nv set router policy prefix-list EXIT_LOCAL_IF rule 10 match {exit_lo}/32 max-prefix-len 32",
            f"nv set vrf OOB loopback ip address 10.254.1.{254 - k}/32",
            f"nv set vrf OOB router bgp router-id 10.254.1.{254 - k}",
            "nv set vrf default router bgp peer-group oob-overlay address-family l2vpn-evpn policy outbound "
            "route-map EVPN_OOB_OUT",
            "nv set router policy route-map EVPN_OOB_OUT rule 10 action permit",
            "nv set router policy route-map EVPN_OOB_OUT rule 10 match evpn-route-type macip",
            "nv set router policy route-map EVPN_OOB_OUT rule 10 match ip-prefix-list OOB_HOSTS",
            "nv set router policy route-map EVPN_OOB_OUT rule 20 action deny",
            "nv set router policy route-map EVPN_OOB_OUT rule 20 match evpn-route-type macip",
            "nv set router policy route-map EVPN_OOB_OUT rule 100 action permit",
            "nv set router policy prefix-list OOB_HOSTS rule 10 match 192.168.0.0/23 max-prefix-len 32",
            # the VRF's own loopback among its local addresses and prefixes (NVIDIA's OOB_LOCAL_IF, OOB_PREFIXES)
            f"nv set router policy prefix-list OOB_LOCAL_IF rule 20 match 10.254.1.{254 - k}/32 max-prefix-len 32",
            f"nv set router policy prefix-list OOB_PREFIXES rule 20 match 10.254.1.{254 - k}/32 max-prefix-len 32",
            # both VRFs' loopbacks go out to the site router (NVIDIA's ERA_PREFIXES: its loopback range)
            "nv set router policy prefix-list ERA_PREFIXES rule 50 match 10.254.1.0/24 max-prefix-len 32",
        } <= text, leaf
        pair_oob[leaf] = f"10.254.1.{254 - k}"
        # the switch's own router-id stays in the default VRF
        assert tree["router"]["bgp"]["router-id"] != exit_lo
        # the sessions of the pair's own fabric send no EVPN route-map: only the out-of-band ones
        groups = tree["vrf"]["default"]["router"]["bgp"]["peer-group"]
        assert [g for g, v in groups.items() if "policy" in v["address-family"].get("l2vpn-evpn", {})] == \
            ["oob-overlay"]
    addresses = files["ns/addresses.csv"].decode()
    assert "ns-su001-leaf1,leaf,4200020000,EXIT,10.254.0.252/32" in addresses
    # NetBox holds it as the tenant VRFs' loopbacks: in VRF EXIT, role loopback, on the VRF's own device
    netbox = files["netbox/11-ip-addresses.csv"].decode()
    assert "10.254.0.252/32,EXIT,reserved,loopback,ns-su001-leaf1,EXIT,ns" in netbox
    for j, name in enumerate(access_names):
        text = lines(files, "oob", name)
        _, tree = trees(files, "oob")[name]
        lo = tree["router"]["bgp"]["router-id"]
        assert {
            f"nv set vrf OOB loopback ip address 10.254.1.{252 - j}/32",
            f"nv set vrf OOB router bgp router-id 10.254.1.{252 - j}",
            "nv set vrf default router bgp address-family ipv4-unicast redistribute connected route-map LOOPBACK_BGP",
            "nv set router policy route-map LOOPBACK_BGP rule 10 action permit",
            "nv set router policy route-map LOOPBACK_BGP rule 10 match interface lo",
            "nv set router policy route-map LOOPBACK_BGP rule 10 match type ipv4",
        } <= text, name
        assert not any(" network " in line for line in text if "address-family ipv4-unicast" in line), name
        assert lo == f"10.254.1.{1 + j}" and f"10.254.1.{252 - j}" not in pair_oob.values()


def _unplanned(files: dict, nvue: dict[str, dict[str, dict]]) -> list[str]:
    """Where the address plan (oob/ and ns/addresses.csv) and the NVUE trees of the routed design
    differ: each access switch's loopback, SVI (in VRF OOB, the anycast gateway its VRR address)
    and VRF loopback; the pair's SVI and VRF loopback. `nvue`: fabric -> switch -> its tree."""
    out = []
    plan: dict[tuple[str, str], str] = {}
    for fabric in ("oob", "ns"):
        for r in csv.DictReader(io.StringIO(files[f"{fabric}/addresses.csv"].decode())):
            if r["interface"] in ("lo", "vlan200", "OOB") and (fabric == "oob" or r["interface"] != "lo"):
                plan[r["device"], r["interface"]] = r["address"]
    for fabric, switches in nvue.items():
        for name, tree in switches.items():
            svi = tree["interface"].get("vlan200")
            if svi is None:
                continue  # a north-south leaf off the pair
            done = {"vlan200": next(iter(svi["ipv4"]["address"])),
                    "OOB": next(iter(tree["vrf"]["OOB"]["loopback"]["ip"]["address"]))}
            if fabric == "oob":
                done["lo"] = next(iter(tree["interface"]["lo"]["ipv4"]["address"]))
                if {plan.get(("oob-gateway", "vlan200"))} != set(svi["ipv4"]["vrr"]["address"]):
                    out.append(f"{name}: anycast gateway")
            if svi["vrf"] != "OOB":
                out.append(f"{name}: vlan200 in {svi['vrf']}")
            for k, v in done.items():
                want = plan.pop((name, k), None)
                if want != v:
                    out.append(f"{name} {k}: {v} configured, {want} planned")
    return out + [f"{d} {i}: planned, not configured" for d, i in plan if d != "oob-gateway"]


def test_the_address_plan_is_what_both_ends_configure(files: dict) -> None:
    """addresses.csv holds the routed design's addresses (intent/addresses.py `routed_access_rows`,
    `routed_pair_rows`): the access switches' loopbacks, ASNs, SVIs, anycast gateway and VRF loopbacks,
    the pair's SVIs and VRF loopbacks, each what the NVUE files configure; NetBox has them in VRF OOB.
    A tree with another VRF loopback, or a plan row more, is told apart."""
    nvue = {f: {n: t for n, (_, t) in trees(files, f).items()} for f in ("oob", "ns")}
    assert _unplanned(files, nvue) == []
    oob = list(csv.DictReader(io.StringIO(files["oob/addresses.csv"].decode())))
    asns = {r["device"]: r["asn"] for r in oob if r["role"] == "leaf"}
    assert {n: t["router"]["bgp"]["autonomous-system"] for n, t in nvue["oob"].items()} == \
        {n: int(a) for n, a in asns.items()}
    netbox = files["netbox/11-ip-addresses.csv"].decode()
    assert "10.254.1.254/32,OOB,reserved,loopback,ns-su001-leaf1,OOB,ns" in netbox
    assert "192.168.0.1/23,OOB,reserved,anycast,oob-gpu-access0001,vlan200,oob oob-gateway" in netbox
    assert "OOB,out-of-band VRF of oob" in files["netbox/09-vrfs.csv"].decode()
    broken = copy.deepcopy(nvue)
    broken["ns"][PAIR[1]]["vrf"]["OOB"]["loopback"]["ip"]["address"] = {"10.254.1.200/32": {}}
    assert _unplanned(files, broken) == [f"{PAIR[1]} OOB: 10.254.1.200/32 configured, 10.254.1.253/32 planned"]
    more = dict(files)
    more["ns/addresses.csv"] = files["ns/addresses.csv"] + b"ns-su001-leaf3,leaf,1,vlan200,192.168.1.9/23,,\n"
    assert _unplanned(more, nvue) == ["ns-su001-leaf3 vlan200: planned, not configured"]


def _sized(units: int, release: str) -> str:
    """The example with `units` units of four and room for four (tests/test_oob_routed.py's sizes: an
    access switch a unit out of band), every NVUE fabric at Cumulus Linux `release`."""
    from test_oob_routed import _sized as sized

    unit = "    management: {prefix: 192.168.0.0/23"
    return sized(EXAMPLE, units).replace(unit, "    scalable_unit: 4\n" + unit).replace(
        "    platform: nvue", f"    platform: nvue\n    platform_version: '{release}'")


def _loopbacks(files: dict) -> dict[str, str]:
    """Every EXIT and OOB loopback the files write, by switch and VRF."""
    out = {}
    for fabric in ("ns", "oob"):
        for name, (_, tree) in trees(files, fabric).items():
            for vrf in ("EXIT", "OOB"):
                lo = tree.get("vrf", {}).get(vrf, {}).get("loopback")
                if lo:
                    out[f"{name}/{vrf}"] = next(iter(lo["ip"]["address"]))
    return out


def _object_model(files: dict, release: str) -> None:
    """Every file NVIDIA's object model of `release` takes; a broken line of each new kind it refuses."""
    checked = 0
    for fabric in ("ns", "oob"):
        for name, (version, tree) in trees(files, fabric).items():
            if fabric == "ns" and name not in PAIR:  # the keys change the pair and the SN2201 alone
                continue
            assert version == release
            assert nvue_model.problems(release, tree) == [], name
            checked += 1
    assert checked >= 2 + 3  # the pair; the SN2201
    _, pair = trees(files, "ns")[PAIR[0]]
    broken = copy.deepcopy(pair)  # an EVPN route type NVUE does not know
    broken["router"]["policy"]["route-map"]["EVPN_OOB_OUT"]["rule"]["10"]["match"]["evpn-route-type"] = "mac-ip"
    assert nvue_model.problems(release, broken)
    broken = copy.deepcopy(pair)  # a VLAN past 4094
    broken["vrf"]["EXIT"]["evpn"]["vlan"] = 5004
    assert nvue_model.problems(release, broken)
    _, access = trees(files, "oob")["oob-gpu-access0001"]
    broken = copy.deepcopy(access)  # the VRF loopback's address is a word of its path, not a value
    broken["vrf"]["OOB"]["loopback"]["ip"]["address"] = "10.254.1.252/32"
    assert nvue_model.problems(release, broken)


def test_nvidias_object_model_takes_every_release_and_growth_moves_no_loopback(files: dict) -> None:
    """Cumulus Linux 5.16 (the example's), 5.13 (the old dialect, no relay server groups) and 5.18;
    a unit more (the 5.18 render) keeps every EXIT and OOB loopback already written (each fixed by its
    switch's planned place), the new access switch's a new one."""
    _object_model(files, "5.16")
    small_files = render(_sized(3, "5.13"))
    _object_model(small_files, "5.13")
    big_files = render(_sized(4, "5.18"))
    _object_model(big_files, "5.18")
    small, big = _loopbacks(small_files), _loopbacks(big_files)
    assert len(small) == 2 * 2 + 5 and len(big) == len(small) + 1  # an access switch a unit, two management
    assert {k: v for k, v in big.items() if k in small} == small
    (new,) = set(big) - set(small)
    assert big[new] not in small.values()


def test_the_evpn_lab_reads_the_pair_and_refuses_a_broken_evpn_route_map(files: dict) -> None:
    """The lab's reader takes the EXIT and OOB loopbacks as VRF loopbacks and router-ids, EXIT_FILTER's
    rule 10 as the border's policy, and EVPN_OOB_OUT as sent on the out-of-band sessions alone (left
    out with them); the route-map changed, or sent on a session the lab runs, is refused."""
    plan = evpn.read(files, "ns", table)
    for k, leaf in enumerate(PAIR):
        sw = plan.switches[leaf]
        evpn._checked_switch(sw, leaf)
        assert sw.vrf_loopbacks["EXIT"] == f"10.254.0.{252 - 3 * k}/32"
        assert sw.vrf_router_ids["EXIT"] == f"10.254.0.{252 - 3 * k}"
        assert sw.vrf_loopbacks["OOB"] == f"10.254.1.{254 - k}/32"
        assert sw.oob_maps == {"EVPN_OOB_OUT"} and not sw.evpn_out
        assert sw.policy is not None
    path = f"ns/switches/{PAIR[0]}.nvue.yaml"
    doc = yaml.safe_load(files[path])
    changed = copy.deepcopy(doc)  # rule 20 permits: no longer NVIDIA's map
    changed[1]["set"]["router"]["policy"]["route-map"]["EVPN_OOB_OUT"]["rule"]["20"]["action"] = {"permit": {}}
    with pytest.raises(evpn.TranslateError, match="EVPN_OOB_OUT's rules"):
        evpn.read({**files, path: yaml.safe_dump(changed).encode()}, "ns", table)
    moved = copy.deepcopy(doc)  # the map sent on the pair's own ISL sessions, which the lab runs
    groups = moved[1]["set"]["vrf"]["default"]["router"]["bgp"]["peer-group"]
    own = next(g for g, v in groups.items() if g not in evpn.OOB_GROUPS and "l2vpn-evpn" in v["address-family"])
    groups[own]["address-family"]["l2vpn-evpn"]["policy"] = {"outbound": {"route-map": "EVPN_OOB_OUT"}}
    with pytest.raises(evpn.TranslateError, match="sends an EVPN route-map"):
        evpn.read({**files, path: yaml.safe_dump(moved).encode()}, "ns", table)


def test_left_out_the_render_is_what_it_was() -> None:
    """Without the keys, or with their defaults written, the files are byte for byte the same, and hold
    none of NVIDIA's lines: EXIT and OOB take the switch's router-id, the access switches announce their
    loopback by a `network` statement."""
    without, defaults = render(WITHOUT), render(DEFAULTS)
    assert without.keys() == defaults.keys()
    # the manifest names the inventory's own hash; every file it lists is the same
    assert [p for p in without if without[p] != defaults[p]] == ["manifest.json"]
    for leaf in PAIR:
        text = "\n".join(lines(without, "ns", leaf))
        assert "vrf EXIT loopback" not in text and "vrf OOB loopback" not in text and "EVPN_OOB_OUT" not in text
        assert "EXIT_LOCAL_IF" not in text and "vrf EXIT evpn vlan" not in text
        _, tree = trees(without, "ns")[leaf]
        rid = tree["router"]["bgp"]["router-id"]
        assert tree["vrf"]["EXIT"]["router"]["bgp"]["router-id"] == rid == tree["vrf"]["OOB"]["router"]["bgp"][
            "router-id"]
    for name, (_, tree) in trees(without, "oob").items():
        lo = tree["router"]["bgp"]["router-id"]
        assert tree["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["network"] == {
            f"{lo}/32": {}}, name
        assert "LOOPBACK_BGP" not in tree["router"]["policy"]["route-map"] and "loopback" not in tree["vrf"]["OOB"]


REFUSED = [
    # the border VRF's layer-3 VNI VLAN is the in-band tenant's VLAN
    (BORDER_KEYS, ", loopback: true,\n                 l3vni_vlan: 300", "northsouth.border.l3vni_vlan",
     "is INBAND's VLAN"),
    (BORDER_KEYS, ", loopback: maybe", "northsouth.border.loopback", "true or false"),
    # the out-of-band VRF's layer-3 VNI VLAN on the border's
    (BORDER_KEYS, ", loopback: true,\n                 l3vni_vlan: 3001", "oob_routed", "EXIT's layer-3 VNI VLAN"),
    (OOB_KEYS, ", vrf_loopbacks: true,\n                 announce: static, evpn_filter: true}",
     "oob_routed.announce", "network"),
    # three access switches and their VRFs' loopbacks, and the pair's two: 8 of a /29's 6
    (OOB_KEYS, ", vrf_loopbacks: true}", "oob_routed.loopbacks", "holds 6"),
]


@pytest.mark.parametrize(("old", "new", "key", "words"), REFUSED)
def test_a_bad_choice_is_refused_where_it_is_written(old: str, new: str, key: str, words: str,
                                                     tmp_path: Path) -> None:
    text = EXAMPLE.replace(old, new)
    if key == "oob_routed.loopbacks":
        text = text.replace("loopbacks: 10.254.1.0/24", "loopbacks: 10.254.1.0/29")
    assert text != EXAMPLE
    inv = tmp_path / "bad.yaml"
    inv.write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    located = [ln for ln in result.output.splitlines() if ln.startswith(f"{inv}:") and key in ln and words in ln]
    assert located, result.output
    line = int(located[0].split(f"{inv}:")[1].split(":")[0])
    assert text.splitlines()[line - 1].strip()  # a line of the file, where the key or its block is written
    assert not out.exists()


def test_eos_refuses_the_border_with_its_loopback_where_it_is_written(tmp_path: Path) -> None:
    """EOS writes no border (nor a routed out-of-band network): the keys are refused at the border."""
    text = EXAMPLE.replace("    role: northsouth\n    kind: spectrum-x\n    platform: nvue",
                           "    role: northsouth\n    kind: roce\n    platform: eos").replace(
        "    switch_model: sn5600\n    node_groups: [su01, su02, su03]\n    scalable_unit: 12",
        "    switch_model: arista-7060x5\n    node_groups: [su01, su02, su03]\n    scalable_unit: 12")
    assert text != EXAMPLE
    inv = tmp_path / "eos.yaml"
    inv.write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert any(ln.startswith(f"{inv}:") and "northsouth.border" in ln and "NVUE" in ln
               for ln in result.output.splitlines()), result.output
    assert not out.exists()
