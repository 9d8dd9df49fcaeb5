"""SONiC that runs: every rendered config_db.json names its SKU, carries the SKU's port table,
the buffer model its ASIC runs with the tables that model needs, cable lengths, a routing
mode that renders its BGP tables, an eBGP policy and peer activation in the release's form
(tests/sonic_rules.py, each rule from SONiC's sources); and each rule catches the file that
breaks it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import sonic_rules

from conftest import INVENTORIES
from fabgen.pipeline import render_to
from fabgen.spec.catalog import SWITCHES

INV = """version: 1
cluster: s
node_groups:
  - {{name: n, model: dgx-h100, count: {count}}}
fabrics:
  - name: f
    kind: roce
    platform: sonic
{version}    topology: {topology}
    switch_model: {model}
    node_groups: [n]
    {extra}
"""


def render(tmp_path: Path, model: str, count: int = 40, topology: str = "rail-optimized", extra: str = "",
           version: str = "") -> tuple[Path, list[dict]]:
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(model=model, count=count, topology=topology, extra=extra,
                              version=f'    platform_version: "{version}"\n' if version else ""))
    out = tmp_path / "out"
    render_to(inv, out)
    files = sorted((out / "f" / "switches").glob("*/config_db.json"))
    # every test loops over these: one per switch the report counts, never none
    switches = json.loads((out / "report.json").read_text())["fabrics"]["f"]["switches"]
    assert files and len(files) == sum(switches.values()), (len(files), switches)
    return out, [json.loads(p.read_text()) for p in files]


@pytest.mark.parametrize("model,shape", [("arista-7060x6-64pe-b", "fat-tree"), ("sn5600-sonic", "rail-optimized"),
                                         ("arista-7060x6-64pe-b", "leaf-subnet-3tier")])
def test_every_switch_comes_up_as_its_sku(model: str, shape: str, tmp_path: Path) -> None:
    extra = "tiers: 3\n    ethernet: {host_addressing: leaf-subnet}" if shape == "leaf-subnet-3tier" else ""
    _, dbs = render(tmp_path, model, topology="fat-tree" if shape == "fat-tree" else "rail-optimized", extra=extra)
    sku = SWITCHES[model].sonic
    for db in dbs:
        assert sonic_rules.problems(db, "202505", sku.pg_lookup or None) == []
        meta = db["DEVICE_METADATA"]["localhost"]
        assert (meta["hwsku"], meta["platform"], meta["buffer_model"]) == (sku.hwsku, sku.platform, sku.buffer_model)
        assert db["BUFFER_POOL"] == sku.buffer_pools and db["BUFFER_PROFILE"] == sku.buffer_profiles
        lossless = [p for p, row in db["PORT_QOS_MAP"].items() if p != "global"]
        assert lossless and all(db["PORT"][p]["admin_status"] == "up" for p in lossless)
        pg = db["BUFFER_PG"]
        if sku.buffer_model == "dynamic":
            assert all(pg[f"{p}|3"] == {"profile": "NULL"} for p in lossless)
        else:  # buffermgrd adds the lossless PG from pg_profile_lookup.ini itself
            assert not any(k.endswith("|3") for k in pg)
        assert set(db["CABLE_LENGTH"]["AZURE"]) == set(db["PORT"])


def test_sku_port_tables_are_the_skus_port_config() -> None:
    """Rows of the two SKUs' port_config.ini files (sonic-buildimage, cited in sonic_skus.py)."""
    from fabgen.targets.sonic import port_table

    th5 = dict(zip(SWITCHES["arista-7060x6-64pe-b"].port_names(400), port_table(SWITCHES["arista-7060x6-64pe-b"], 400)))
    assert th5["Ethernet0"] == {"lanes": "17,18,19,20", "alias": "etp1a", "index": "1"}
    assert th5["Ethernet4"] == {"lanes": "21,22,23,24", "alias": "etp1b", "index": "1"}
    assert th5["Ethernet8"] == {"lanes": "1,2,3,4", "alias": "etp2a", "index": "2"}
    assert th5["Ethernet500"] == {"lanes": "485,486,487,488", "alias": "etp63b", "index": "63"}
    assert th5["Ethernet508"] == {"lanes": "501,502,503,504", "alias": "etp64b", "index": "64"}
    sn = dict(zip(SWITCHES["sn5600-sonic"].port_names(400), port_table(SWITCHES["sn5600-sonic"], 400)))
    assert sn["Ethernet0"] == {"lanes": "0,1,2,3", "alias": "etp1a", "index": "1"}
    assert sn["Ethernet508"] == {"lanes": "508,509,510,511", "alias": "etp64b", "index": "64"}
    for table in (th5, sn):
        lanes = [lane for row in table.values() for lane in row["lanes"].split(",")]
        assert len(table) == 128 and len(lanes) == len(set(lanes)) == 512


def test_older_releases_activate_peers_with_true(tmp_path: Path) -> None:
    _, dbs = render(tmp_path, "sn5600-sonic", version="202411")
    for db in dbs:
        assert {r["admin_status"] for r in db["BGP_NEIGHBOR"].values()} == {"true"}
        assert sonic_rules.problems(db, "202411") == []
        assert any("admin_status_form" in p for p in sonic_rules.problems(db, "202505"))


def test_policy_permits_what_the_fabric_announces(tmp_path: Path) -> None:
    """The prefix set covers every network a switch announces, so FRR's policy passes them."""
    import ipaddress

    _, dbs = render(tmp_path, "arista-7060x6-64pe-b", extra="ethernet: {host_addressing: leaf-subnet}")
    for db in dbs:
        rules = []
        for key in db["PREFIX"]:
            _, _, net, rng = key.split("|")
            low, high = (int(x) for x in rng.split(".."))
            rules.append((ipaddress.ip_network(net), low, high))
        for key in db["BGP_GLOBALS_AF_NETWORK"]:
            net = ipaddress.ip_network(key.split("|")[2])
            assert any(net.subnet_of(n) and lo <= net.prefixlen <= hi for n, lo, hi in rules), key


def _good(tmp_path: Path) -> dict:
    _, dbs = render(tmp_path, "arista-7060x6-64pe-b", count=8, topology="fat-tree",
                    extra="tiers: 2\n    ethernet: {bgp_password: {env: FABGEN_BGP}}")
    db = next(d for d in dbs if d["DEVICE_METADATA"]["localhost"]["type"] == "ToRRouter")
    assert sonic_rules.problems(db, pg_lookup=SWITCHES["arista-7060x6-64pe-b"].sonic.pg_lookup) == []
    return db


def _break(db: dict, how: str) -> dict:
    db = copy.deepcopy(db)
    meta = db["DEVICE_METADATA"]["localhost"]
    port = next(p for p in db["PORT_QOS_MAP"] if p != "global")
    group = next(iter(db["BGP_PEER_GROUP"]))
    if how == "routing_mode":
        meta["docker_routing_config_mode"] = "split"
    elif how == "sku_identity":
        del meta["hwsku"]
    elif how == "buffer_model_supported":
        meta["buffer_model"] = "dynamic"
    elif how == "dynamic_tables":
        meta["buffer_model"] = "dynamic"
        meta["platform"] = "x86_64-nvidia_sn5600-r0"
    elif how == "traditional_sizes":
        db["CABLE_LENGTH"]["AZURE"][port] = "300m"  # SONiC's stock spine cable: no row in this SKU's lookup
    elif how == "cable_length":
        del db["CABLE_LENGTH"]["AZURE"][port]
    elif how == "port_identity":
        del db["PORT"][port]["index"]
    elif how == "admin_status_form":
        next(iter(db["BGP_NEIGHBOR"].values()))["admin_status"] = "enabled"
    elif how == "ebgp_policy":
        db["BGP_PEER_GROUP_AF"] = {k: {"admin_status": "up"} for k in db["BGP_PEER_GROUP_AF"]}
    elif how == "password_reference":
        db["BGP_PEER_GROUP"][group]["auth_password"] = "s3cret"
    elif how == "global_dscp_map":
        del db["PORT_QOS_MAP"]["global"]
    return db


@pytest.mark.parametrize("rule", [r.__name__ for r in sonic_rules.RULES])
def test_each_rule_catches_the_file_that_breaks_it(rule: str, tmp_path: Path) -> None:
    broken = _break(_good(tmp_path), rule)
    found = sonic_rules.problems(broken, pg_lookup=SWITCHES["arista-7060x6-64pe-b"].sonic.pg_lookup)
    assert any(p.startswith(rule + ":") for p in found), found


def test_example_passes_every_rule() -> None:
    out_dbs = []
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        render_to(INVENTORIES / "fattree-2to1.yaml", Path(tmp))
        for p in sorted(Path(tmp).glob("*/switches/*/config_db.json")):
            out_dbs.append(json.loads(p.read_text()))
    assert out_dbs
    for db in out_dbs:
        assert sonic_rules.problems(db, pg_lookup=SWITCHES["arista-7060x6-64pe-b"].sonic.pg_lookup) == []
