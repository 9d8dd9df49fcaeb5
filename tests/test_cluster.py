"""The whole cluster: a node on a compute, a storage and an in-band fabric at once (docs/cluster.md).

An unseen cluster (not an example) renders; every port of every node is cabled once, on the
fabric of its role; host files never collide; netplan's own generator accepts every node's
netplan; host and switch files agree for every role when both are read back.
"""

from __future__ import annotations

import csv
import ipaddress
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from readback import read_cabling, read_fabric
from test_hosts import check_hosts, read_setup, scripts_ok, switch_ports, switch_qos
from test_planes import NETPLAN, _netplan_generate

from conftest import IN_CI, INVENTORIES
from fabgen.errors import InventoryError
from fabgen.inventory.loader import load
from fabgen.inventory.validate import validate
from fabgen.pipeline import render_to
from fabgen.targets.hosts import TABLES

# 24 DGX B200 on a RoCE compute fabric (EOS), their storage ports and three storage servers on a
# SONiC storage fabric, their in-band ports and three head nodes on a Spectrum-X in-band network.
UNSEEN = """
version: 1
cluster: whole
node_groups:
  - {name: gpu, model: dgx-b200, count: 24, hostname: "n{n:03d}"}
  - {name: mgr, model: mgmt-node, count: 3, hostname: "mgr{n}"}
  - {name: nas, model: nas-node, role: storage, count: 3, hostname: "nas{n}"}
node_models:
  mgmt-node:
    gpus: 0
    ports:
      - {role: inband, rdma: mlx5_0, netdev: enp3s0f0np0, speed: 400}
      - {role: inband, rdma: mlx5_1, netdev: enp3s0f1np1, speed: 400}
      - {role: oob, rdma: bmc, speed: 1}
  nas-node:
    gpus: 0
    ports:
      - {role: storage, rdma: mlx5_0, netdev: ens1f0np0, speed: 400}
      - {role: storage, rdma: mlx5_1, netdev: ens1f1np1, speed: 400}
fabrics:
  - name: gpufab
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [gpu]
    management: {prefix: 192.168.0.0/24, gateway: 192.168.0.1}
  - name: stor
    role: storage
    kind: roce
    platform: sonic
    topology: rail-optimized
    switch_model: sn5600-sonic
    node_groups: [gpu, nas]
    ethernet:
      pools: {loopbacks: 10.254.0.0/24, links: 10.253.0.0/22, hosts: 100.127.0.0/16}
      asn: {leaf: 4200020000, spine: 4200002000}
      qos: {roce_dscp: 24, roce_priority: 4}
    management: {prefix: 192.168.1.0/24, gateway: 192.168.1.1}
  - name: mgmt
    role: inband
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [gpu, mgr]
    ethernet:
      host_addressing: leaf-subnet
      pools: {loopbacks: 10.252.0.0/24, links: 10.251.0.0/22, hosts: 10.160.0.0/16}
      asn: {leaf: 4200030000, spine: 4200003000}
    management: {prefix: 192.168.2.0/24, gateway: 192.168.2.1}
  - name: bmcnet
    role: oob
    kind: ethernet
    platform: nvue
    topology: fat-tree
    switch_model: sn2201
    node_groups: [gpu, mgr]
    scalable_unit: 16
    oob_vlan: 42
    management: {prefix: 172.16.0.0/24, gateway: 172.16.0.1, ntp: [172.16.9.1]}
"""

ROLE_OF = {"gpufab": "compute", "stor": "storage", "mgmt": "inband", "bmcnet": "oob"}
MGMT_PORT = {"gpufab": "Management1", "stor": "eth0", "mgmt": "eth0"}


@pytest.fixture(scope="module")
def unseen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cluster")
    inv = root / "whole.yaml"
    inv.write_text(UNSEEN)
    render_to(inv, root / "out")
    return root / "out"


def _ports_by_role(out: Path) -> dict[str, dict[tuple[str, str], tuple[str, str]]]:
    """fabric -> (node, port) -> (leaf, leaf port), from each fabric's cabling plan."""
    return {fab: {(r["a_device"], r["a_port"]): (r["z_device"], r["z_port"])
                  for r in read_cabling(out, fab) if r["tier"] == "node-leaf"} for fab in ROLE_OF}


def test_every_port_is_cabled_once_on_the_fabric_of_its_role(unseen: Path) -> None:
    from fabgen.spec.catalog import NODES

    cabled = _ports_by_role(unseen)
    seen: dict[tuple[str, str], str] = {}
    for fab, ports in cabled.items():
        for key in ports:
            assert key not in seen, f"{key} cabled on {seen[key]} and {fab}"
            seen[key] = fab
    b200 = NODES["dgx-b200"]
    for n in range(1, 25):
        node = f"n{n:03d}"
        for role, fab in (("compute", "gpufab"), ("storage", "stor"), ("inband", "mgmt"), ("oob", "bmcnet")):
            want = {p.rdma for p in b200.role_ports(role)}
            got = {port for (dev, port), f in seen.items() if dev == node and f == fab}
            assert got == want, (node, role, got, want)
        # a dual-homed node: its two storage (and in-band) ports on two different leaves
        for fab in ("stor", "mgmt"):
            leaves = {cabled[fab][(node, p.rdma)][0] for p in b200.role_ports(ROLE_OF[fab])}
            assert len(leaves) == 2, (node, fab, leaves)
    for node in ("mgr1", "mgr2", "mgr3"):
        assert {p for (d, p), f in seen.items() if d == node} == {"mlx5_0", "mlx5_1", "bmc"}
        assert {f for (d, _), f in seen.items() if d == node} == {"mgmt", "bmcnet"}
    for node in ("nas1", "nas2", "nas3"):
        assert {f for (d, _), f in seen.items() if d == node} == {"stor"}
    for n in range(1, 25):
        assert seen[(f"n{n:03d}", "bmc")] == "bmcnet"
    for node in ("mgr1", "mgr2", "mgr3"):
        assert seen[(node, "bmc")] == "bmcnet"
    assert not any(d.startswith("nas") and f == "bmcnet" for (d, _), f in seen.items()), "nas-node has no BMC port"
    # every switch of every other fabric: its management port on an access port, once
    for fab, port in MGMT_PORT.items():
        switches = {r["z_device"] for r in read_cabling(unseen, fab)} | {r["a_device"] for r in read_cabling(
            unseen, fab) if r["tier"] != "node-leaf"}
        assert switches and all(seen.get((sw, port)) == "bmcnet" for sw in switches), fab


def test_host_files_never_collide_and_follow_the_roles(unseen: Path) -> None:
    groups = {p.name: sorted(f.name for f in p.iterdir()) for p in (unseen / "host-groups").iterdir()}
    # NCCL only for the compute node group; storage RoCE NIC settings where the storage QoS is set
    assert groups == {"gpu": ["hca-setup.sh", "nccl.env", "storage-nic-setup.sh"], "nas": ["storage-nic-setup.sh"]}
    nodes = sorted(p.name for p in (unseen / "hosts").iterdir())
    assert len(nodes) == 24 + 3 + 3 and len(set(nodes)) == len(nodes)
    for p in (unseen / "hosts").iterdir():
        assert [f.name for f in p.iterdir()] == ["netplan.yaml"]
    manifest = yaml.safe_load((unseen / "manifest.json").read_text())
    paths = ([f["path"] for f in manifest["files"]] if isinstance(manifest.get("files"), list)
             else list(manifest["files"]))
    assert len(paths) == len(set(paths))
    inventory = yaml.safe_load((unseen / "ansible" / "inventory.yml").read_text())["all"]["children"]
    for fab in ROLE_OF:
        members = inventory[f"fabric_{fab}"]["hosts"]
        assert ("n001" in members) and (("mgr1" in members) == (fab in ("mgmt", "bmcnet")))
    assert "gpufab-su1-leaf1" not in inventory["fabric_bmcnet"]["hosts"], "a managed switch is in its own fabric"
    gv = yaml.safe_load((unseen / "ansible" / "group_vars" / "nodes_mgr.yml").read_text())
    assert gv["fabgen_group_files"] == [] and gv["fabgen_fabric"] == "mgmt"
    gv = yaml.safe_load((unseen / "ansible" / "group_vars" / "nodes_gpu.yml").read_text())
    assert gv["fabgen_fabric"] == "gpufab"
    assert [f["src"].rsplit("/", 1)[1] for f in gv["fabgen_group_files"]] == [
        "nccl.env", "hca-setup.sh", "storage-nic-setup.sh"]
    slurm = (unseen / "slurm" / "topology.conf").read_text()
    assert "gpufab" in slurm and all(x not in slurm for x in ("stor", "mgmt", "mgr", "bmcnet"))
    report = yaml.safe_load((unseen / "report.json").read_text())
    assert {f: d["role"] for f, d in report["fabrics"].items()} == ROLE_OF


def test_hosts_agree_with_switches_on_every_role(unseen: Path) -> None:
    """Each port's address is in its own leaf's subnet (read from the switch files: EOS, SONiC's
    config_db.json, NVUE), its table is its role's, and only in-band ports route by default."""
    check_hosts(unseen, "gpufab", {"gpu": ("n", 24)})  # the compute part, as for any RoCE fabric
    cabled = _ports_by_role(unseen)
    netdevs = {"n": lambda rdma: rdma, "mgr": {"mlx5_0": "enp3s0f0np0", "mlx5_1": "enp3s0f1np1"}.get,
               "nas": {"mlx5_0": "ens1f0np0", "mlx5_1": "ens1f1np1"}.get}
    for fab in ("stor", "mgmt"):
        role = ROLE_OF[fab]
        ports = switch_ports(unseen, fab)
        by_node: dict[str, list[tuple[str, str, str]]] = {}
        for (node, rdma), (leaf, port) in sorted(cabled[fab].items()):
            by_node.setdefault(node, []).append((rdma, leaf, port))
        for node, nics in by_node.items():
            eths = yaml.safe_load((unseen / "hosts" / node / "netplan.yaml").read_text())["network"]["ethernets"]
            netdev = netdevs[re.match(r"[a-z]+", node).group(0)]
            for r, (rdma, leaf, port) in enumerate(nics):
                cfg = eths[netdev(rdma)]
                host_if = ipaddress.ip_interface(cfg["addresses"][0])
                sw_ip, sw_prefix, svi = ports[(leaf, port)]
                gw = ipaddress.ip_interface(f"{sw_ip}/{sw_prefix}" if sw_ip else f"{svi[0]}/{svi[1]}")
                assert host_if.network == gw.network and host_if.ip != gw.ip, (node, rdma)
                (rule,) = cfg["routing-policy"]
                assert rule == {"from": str(host_if.ip), "table": TABLES[role] + r}
                defaults = [x for x in cfg["routes"] if x["to"] == "default"]
                if role == "inband":
                    assert defaults == [{"to": "default", "via": str(gw.ip), "metric": 100 * (r + 1)}]
                else:
                    assert not defaults, "only in-band ports carry a default route"
                assert [x["via"] for x in cfg["routes"] if "via" in x] == [str(gw.ip)] * (2 + len(defaults))
                (main,) = [x for x in cfg["routes"] if "table" not in x and x["to"] != "default"]
                assert main["metric"] == 100 * (r + 1) and host_if.ip in ipaddress.ip_network(main["to"])
    eths = yaml.safe_load((unseen / "hosts" / "n001" / "netplan.yaml").read_text())["network"]["ethernets"]
    assert len(eths) == 8 + 2 + 2, "one netplan: every compute, storage and in-band port of the node"


def test_storage_roce_gets_its_own_class_on_the_hosts(unseen: Path) -> None:
    """The storage ports' NIC settings carry the storage fabric's class, read back from the SONiC
    switches (no-drop priority 4, DSCP 24 -> 4), never the compute one (3, DSCP 26), and touch no
    firmware setting; the scripts pass shellcheck."""
    compute = read_setup(unseen / "host-groups" / "gpu" / "hca-setup.sh")
    for group, rdmas in (("gpu", ["mlx5_1", "mlx5_7"]), ("nas", ["mlx5_0", "mlx5_1"])):
        path = unseen / "host-groups" / group / "storage-nic-setup.sh"
        text = path.read_text()
        setup = read_setup(path)
        no_drop, dscp_map = switch_qos(unseen, "stor")
        (pfc,) = setup["pfc"]
        assert no_drop == {tuple(i for i, b in enumerate(pfc.split(",")) if b == "1")} == {(4,)}
        assert dscp_map[24] == 4 and setup["link_type"] == set() and "mlxconfig_set mlx" not in text
        assert re.findall(r"^# (mlx5_\d+)$", text, re.M) == rdmas
        assert setup["pfc"] != compute["pfc"]
    scripts_ok([unseen / "host-groups" / g / "storage-nic-setup.sh" for g in ("gpu", "nas")], firmware=False)


def test_out_of_band_access_switches(unseen: Path) -> None:
    """The access switches' NVUE files pass NVIDIA's object model (of the release they name; the YAML and its `nv set`
    lines); every used port is an untagged member of the one management VLAN and says who is on
    it (the cabling plan's far end), unused ports are down; the uplink bond is the model's first
    two uplinks; the switch's address (its SVI) and every BMC's come from the management prefix,
    distinct, never the gateway, and agree with addresses.csv."""
    import nvue_model
    from readback import read_nvue

    rows = list(csv.DictReader((unseen / "bmcnet" / "addresses.csv").open()))
    by_device = {(r["device"], r["interface"]): r["address"] for r in rows}
    addresses = [ipaddress.ip_interface(r["address"]) for r in rows]
    net = ipaddress.ip_network("172.16.0.0/24")
    assert len({a.ip for a in addresses}) == len(addresses)
    assert all(a.network == net and str(a.ip) != "172.16.0.1" for a in addresses)
    cabled = {(r["z_device"], r["z_port"]): f"{r['a_device']}_{r['a_port']}" for r in read_cabling(unseen, "bmcnet")}
    switches = sorted((unseen / "bmcnet" / "switches").glob("*.nvue.yaml"))
    # blocks named after what they serve (topology/oob.py): the GPU nodes at their places in gpufab,
    # 16 per access switch; the head nodes (home: the in-band fabric mgmt); each managed fabric's switches
    assert [p.name[:-len(".nvue.yaml")] for p in switches] == sorted(
        ["bmcnet-gpufab-access0001", "bmcnet-gpufab-access0002", "bmcnet-mgmt-access0001", "bmcnet-gpufab-mgmt0001",
         "bmcnet-stor-mgmt0001", "bmcnet-mgmt-mgmt0001"])
    for fab, port in MGMT_PORT.items():  # a managed fabric's switches on its own block, at their planned places
        on = {sw for (sw, _), who in cabled.items() if who.endswith(f"_{port}") and who.startswith(f"{fab}-")}
        assert on == {f"bmcnet-{fab}-mgmt0001"}, (fab, on)
    assert {sw for (sw, _), who in cabled.items() if who.startswith("mgr")} == {"bmcnet-mgmt-access0001"}
    for p in switches:
        header, tree = read_nvue(p)
        name = p.name[:-len(".nvue.yaml")]
        version = nvue_model.release(header)  # the default release's dialect (spec/platforms.py)
        assert nvue_model.problems(version, tree) == [] and nvue_model.header_problems(version, header) == []
        built: dict = {}
        for line in p.with_name(name + ".nvue.sh").read_text().splitlines():
            if line.startswith("nv set "):
                nvue_model.merge(built, nvue_model.parse_nv_set(version, line))
        assert nvue_model.problems(version, built) == []
        iface = tree["interface"]
        for port in (f"swp{i}" for i in range(1, 49)):
            if (name, port) in cabled:
                assert iface[port]["bridge"]["domain"]["br_default"]["access"] == 42
                assert iface[port]["description"] == f"OOB_{cabled[name, port]}"
            else:
                assert iface[port]["link"]["state"] == {"down": {}}
        assert set(iface["uplink"]["bond"]["member"]) == {"swp49", "swp50"}
        (svi,) = iface["vlan42"]["ipv4" if version >= "5.15" else "ip"]["address"]
        assert by_device[(name, "vlan42")] == svi
        assert tree["vrf"]["default"]["router"]["static"]["0.0.0.0/0"]["via"] == {"172.16.0.1": {}}
        assert tree["system"]["ntp"] if "ntp" in tree.get("system", {}) else tree["service"]["ntp"]
    bmcs = [r for r in rows if r["role"] == "bmc"]
    assert len(bmcs) == 24 + 3 and [r["device"] for r in bmcs[:2]] == ["n001", "n002"]
    # 16 nodes per access switch: n001-n016 on one, n017-n024 and the head nodes on the next
    assert {cabled_sw for (cabled_sw, _), who in cabled.items() if who == "n016_bmc"} != \
        {cabled_sw for (cabled_sw, _), who in cabled.items() if who == "n017_bmc"}


def test_out_of_band_growth_only_adds(tmp_path: Path) -> None:
    """More nodes on the out-of-band network (the fabrics it manages planned for them): every existing
    cable and address stays, the head nodes' too (their block is the in-band fabric's)."""
    planned = (UNSEEN.replace("node_groups: [gpu]\n", "node_groups: [gpu]\n    planned_nodes: 48\n")
               .replace("node_groups: [gpu, nas]\n", "node_groups: [gpu, nas]\n    planned_nodes: 48\n")
               .replace("node_groups: [gpu, mgr]\n    ethernet", "node_groups: [gpu, mgr]\n    planned_nodes: 51\n"
                        "    ethernet"))

    def render(count: int) -> tuple[set, set]:
        inv = tmp_path / f"g{count}.yaml"
        inv.write_text(planned.replace("count: 24", f"count: {count}"))
        out = tmp_path / f"out{count}"
        render_to(inv, out)
        cab = {tuple(r.values()) for r in read_cabling(out, "bmcnet")}
        addr = {tuple(r.values()) for r in csv.DictReader((out / "bmcnet" / "addresses.csv").open())}
        return cab, addr
    small, big = render(24), render(40)
    assert small[0] <= big[0] and len(big[0]) > len(small[0])
    assert small[1] <= big[1]


def test_netplan_generate_accepts_every_node(unseen: Path, tmp_path: Path) -> None:
    """netplan's generator writes a networkd unit per port of every node (each role); the in-band
    ports get the default route; a netplan with the same port twice across roles is refused."""
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed (`make test` installs it)")
    for node in ("n001", "n024", "mgr1", "nas3"):
        text = (unseen / "hosts" / node / "netplan.yaml").read_text()
        root = tmp_path / node
        run = _netplan_generate({"60-fabgen-rails.yaml": text}, root)
        assert run.returncode == 0, run.stderr
        units = root / "run" / "systemd" / "network"
        for name, cfg in yaml.safe_load(text)["network"]["ethernets"].items():
            unit = (units / f"10-netplan-{name}.network").read_text()
            assert f"Address={cfg['addresses'][0]}\n" in unit
            table = cfg["routing-policy"][0]["table"]
            assert f"Table={table}\n" in unit
            assert ("Destination=0.0.0.0/0" in unit) == (table >= TABLES["inband"]), (node, name)
    text = (unseen / "hosts" / "n001" / "netplan.yaml").read_text()
    broken = text.replace("metric: 200", "metric: many", 1)
    assert broken != text
    run = _netplan_generate({"60-fabgen-rails.yaml": broken}, tmp_path / "broken")
    assert run.returncode != 0, "netplan must refuse a metric that is not a number"


def test_the_example_cluster_renders_every_role(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(INVENTORIES / "superpod-cluster.yaml", out)
    check_hosts(out, "compute", {"dgx": ("dgx", 64)})
    report = yaml.safe_load((out / "report.json").read_text())
    assert {f: d["role"] for f, d in report["fabrics"].items()} == {
        "compute": "compute", "storagenet": "storage", "internalnet": "inband", "ipminet": "oob"}
    eths = yaml.safe_load((out / "hosts" / "dgx001" / "netplan.yaml").read_text())["network"]["ethernets"]
    # the DGX H100 User Guide's names of the slot cards' ports (Table 5), in Ethernet mode; InfiniBand compute:
    # no rail in netplan
    assert set(eths) == {"enp41s0f0np0", "enp170s0f0np0", "enp41s0f1np1", "enp170s0f1np1", "lo"}
    assert not (out / "host-groups" / "head").exists() and (out / "hosts" / "head01" / "netplan.yaml").exists()


def _errors(text: str, tmp_path: Path) -> list[str]:
    p = tmp_path / "inv.yaml"
    p.write_text(text)
    with pytest.raises(InventoryError) as exc:
        validate(load(p))
    return [f"{x.path}: {x.message}" for x in exc.value.problems]


@pytest.mark.parametrize("old,new,expected", [
    ("  - name: stor\n    role: storage\n", "  - name: stor\n    role: storage\n    planes: 2\n",
     "fabrics[1].planes: planes split compute NICs; the storage fabric has one plane"),
    ("  - name: mgmt\n    role: inband\n    kind: spectrum-x\n    platform: nvue\n",
     "  - name: mgmt\n    role: inband\n    kind: infiniband\n    platform: ufm\n",
     "fabrics[2].kind: an inband fabric is roce or spectrum-x"),
    ("    role: oob\n    kind: ethernet\n", "    role: oob\n    kind: roce\n",
     "fabrics[3].kind: the out-of-band network is kind ethernet with role oob"),
    ("    management: {prefix: 172.16.0.0/24, gateway: 172.16.0.1, ntp: [172.16.9.1]}\n", "",
     "fabrics[3]: an out-of-band network needs management"),
    ("    oob_vlan: 42\n", "    oob_vlan: 42\n    manages: [gpufab, storage]\n",
     "fabrics[3].manages[1]: 'storage' is not a fabric this network can manage"),
    ("    scalable_unit: 16\n", "    scalable_unit: 49\n",
     "fabrics[3].scalable_unit: nodes per access switch: at most 48"),
    ("    node_groups: [gpu, mgr]\n    scalable_unit: 16", "    node_groups: [gpu, mgr, nas]\n    scalable_unit: 16",
     "node group 'nas' (nas-node) has no oob ports"),
    ("172.16.0.0/24, gateway: 172.16.0.1", "172.16.0.0/27, gateway: 172.16.0.1",
     "fabrics[3].management.prefix"),
    ("    node_groups: [gpu, nas]\n", "    node_groups: [gpu, nas, mgr]\n",
     "node group 'mgr' (mgmt-node) has no storage ports for this storage fabric (it has inband, oob)"),
    ("    node_groups: [gpu]\n", "    node_groups: [gpu, mgr]\n",
     "node group 'mgr' (mgmt-node) has no compute ports"),
    ("    node_groups: [gpu, mgr]\n", "    node_groups: [gpu, mgr]\n  - name: mgmt2\n    role: inband\n"
     "    kind: roce\n    platform: eos\n    topology: fat-tree\n    switch_model: arista-7060x5\n"
     "    node_groups: [mgr]\n",
     "node group 'mgr' is already attached to fabric 'mgmt' for role inband"),
])
def test_role_mistakes_are_located(old: str, new: str, expected: str, tmp_path: Path) -> None:
    """Role rules are inventory errors with their place: planes and InfiniBand where a role has
    neither, a node group without ports of the role, a node group twice on one role."""
    assert old in UNSEEN
    problems = _errors(UNSEEN.replace(old, new, 1), tmp_path)
    assert any(expected in p for p in problems), problems


VTYSH = shutil.which("vtysh")
BGP_STORAGE = """
version: 1
cluster: bgp
node_groups:
  - {{name: gpu, model: dgx-b200, count: 20, hostname: "g{{n:02d}}"}}
  - {{name: nas, model: nas-node, role: storage, count: 2, hostname: "nas{{n}}"}}
node_models:
  nas-node:
    gpus: 0
    ports:
      - {{role: storage, rdma: mlx5_0, netdev: ens1f0np0, speed: 400}}
      - {{role: storage, rdma: mlx5_1, netdev: ens1f1np1, speed: 400}}
fabrics:
  - name: st
    role: storage
    kind: {kind}
    platform: {platform}
    topology: rail-optimized
    switch_model: {model}
    node_groups: [gpu, nas]
    scalable_unit: 16
    ethernet:
      host_routing: bgp
      asn: {{host: 4200300000}}
    management: {{prefix: 192.168.5.0/24, gateway: 192.168.5.1}}
"""


def _frr(text: str) -> dict:
    """asn, router-id, neighbors and announced networks of a node's frr.conf."""
    return {"asn": int(re.search(r"^router bgp (\d+)$", text, re.M).group(1)),
            "router_id": re.search(r"^ bgp router-id (\S+)$", text, re.M).group(1),
            "neighbors": re.findall(r"^ neighbor (\d+\.\d+\.\d+\.\d+) peer-group FABRIC$", text, re.M),
            "networks": re.findall(r"^  network (\S+)$", text, re.M)}


def _leaf_sessions(out: Path, platform: str) -> dict[str, dict[str, int]]:
    """leaf -> {neighbor address: remote ASN} read back from the switch files."""
    if platform != "nvue":
        return {dev: {ip: int(asn) for ip, asn in d["neighbors"].items()} for dev, d in read_fabric(out, "st").items()}
    from readback import read_nvue

    sessions = {}
    for p in sorted((out / "st" / "switches").glob("*.nvue.yaml")):
        tree = read_nvue(p)[1]
        neigh = tree["vrf"]["default"]["router"]["bgp"].get("neighbor", {})
        sessions[p.name[:-len(".nvue.yaml")]] = {ip: int(n["remote-as"]) for ip, n in neigh.items()
                                                 if n.get("type") == "numbered"}
    return sessions


@pytest.mark.parametrize("kind,platform,model", [("roce", "eos", "arista-7060x5"),
                                                 ("roce", "sonic", "sn5600-sonic"),
                                                 ("spectrum-x", "nvue", "sn5600")])
def test_bgp_to_the_host_agrees_on_both_ends(kind: str, platform: str, model: str, tmp_path: Path) -> None:
    """host_routing bgp on EOS, SONiC and NVUE: every node port's leaf peers with the node's own
    ASN at the node's /31 address, and the node's frr.conf peers with that leaf port, announcing
    the service address netplan puts on lo; `vtysh --dryrun` (FRR) accepts every frr.conf and
    refuses a broken one; `netplan generate` accepts the lo address."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(BGP_STORAGE.format(kind=kind, platform=platform, model=model))
    out = tmp_path / "out"
    render_to(inv, out)
    sessions = _leaf_sessions(out, platform)
    cabled = {(r["a_device"], r["a_port"]): (r["z_device"], r["z_port"]) for r in read_cabling(out, "st")
              if r["tier"] == "node-leaf"}
    rows = {(r["device"], r["interface"]): r["address"] for r in csv.DictReader((out / "st" / "addresses.csv").open())}
    asns = set()
    nodes = [f"g{n:02d}" for n in range(1, 21)] + ["nas1", "nas2"]
    for node in nodes:
        frr = _frr((out / "hosts" / node / "frr.conf").read_text())
        asns.add(frr["asn"])
        plan = yaml.safe_load((out / "hosts" / node / "netplan.yaml").read_text())["network"]["ethernets"]
        assert plan["lo"]["addresses"] == [f"{frr['router_id']}/32"] == frr["networks"]
        ports = [p for (d, p) in cabled if d == node]
        assert len(ports) == 2 and len({cabled[node, p][0] for p in ports}) == 2, "dual-homed"
        assert len(frr["neighbors"]) == 2
        for port in ports:
            leaf, leaf_port = cabled[node, port]
            leaf_ip = rows[(leaf, leaf_port)].split("/")[0]
            node_ip = next(a for (d, i), a in rows.items() if d == node and i in (port, {
                "mlx5_0": "ens1f0np0", "mlx5_1": "ens1f1np1"}.get(port))).split("/")[0]
            assert leaf_ip in frr["neighbors"], (node, leaf_ip)
            assert sessions[leaf][node_ip] == frr["asn"], (node, leaf)
    assert len(asns) == len(nodes) and min(asns) == 4200300000
    host_sessions = [(leaf, ip) for leaf, s in sessions.items() for ip, asn in s.items() if asn in asns]
    assert len(host_sessions) == len(set(host_sessions)) == 2 * len(nodes), "one session per node port"
    if VTYSH is None or NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have frr and netplan.io: `make test` installs them")
        pytest.skip("frr or netplan.io is not installed (`make test` installs them)")
    for node in (nodes[0], nodes[-1]):
        run = subprocess.run([VTYSH, "--dryrun", "-f", str(out / "hosts" / node / "frr.conf")],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        gen = _netplan_generate({"60-fabgen-rails.yaml": (out / "hosts" / node / "netplan.yaml").read_text()},
                                tmp_path / "np" / node)
        assert gen.returncode == 0, gen.stderr
        unit = (tmp_path / "np" / node / "run" / "systemd" / "network" / "10-netplan-lo.network").read_text()
        assert f"Address={_frr((out / 'hosts' / node / 'frr.conf').read_text())['router_id']}/32" in unit
    broken = tmp_path / "broken.conf"
    broken.write_text((out / "hosts" / nodes[0] / "frr.conf").read_text().replace(
        "remote-as external", "remote-as somewhere"))
    run = subprocess.run([VTYSH, "--dryrun", "-f", str(broken)], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0, "FRR must refuse a neighbor without a valid remote-as"
    if platform == "sonic":  # the HOSTS sessions through SONiC's YANG models (where they are kept)
        from test_ethernet import yang_check

        leaves = sorted((out / "st" / "switches").glob("st-su*-leaf*/config_db.json"))[:2]
        assert len(leaves) == 2 and '"HOSTS"' in leaves[0].read_text()
        yang_check(leaves)


def test_nvl72_trays_on_every_network(tmp_path: Path) -> None:
    """GB300 trays (one BlueField-3 B3240, ERA-00012): storage on its P1 (mlx5_2), in-band on its P2
    (mlx5_3), each single-homed; the tray's three 1G out-of-band ports (BMC, host, BlueField-3)
    on two access switches a rack of its own (ERA-00012: 54 ports a rack on two SN2201); racks
    shape only the compute fabric (the in-band one mixes trays and management nodes)."""
    out = tmp_path / "out"
    render_to(Path(__file__).parent / "data" / "cluster-nvl72.yaml", out)
    ports = {fab: {(r["a_device"], r["a_port"]): r["z_device"] for r in read_cabling(out, fab)
                   if r["tier"] == "node-leaf"} for fab in ("stor", "inb", "oob")}
    assert {p for (d, p) in ports["stor"] if d == "gb001"} == {"mlx5_2"}
    assert {p for (d, p) in ports["inb"] if d == "gb001"} == {"mlx5_3"}
    access: dict[str, set[int]] = {}
    for (d, p), sw in ports["oob"].items():
        if d.startswith("gb"):
            assert p in ("bmc", "host-1g", "bf3-oob")
            access.setdefault(sw, set()).add(int(d[2:]))
    assert sum(1 for d, _ in ports["oob"] if d == "gb001") == 3
    racks = sorted(sorted(v) for v in access.values())
    want = sorted(list(range(18 * k + 1, 18 * k + 19)) for k in range(4) for _ in range(2))
    assert racks == want, "each whole NVL72 rack on two access switches of its own"
    frr = _frr((out / "hosts" / "gb001" / "frr.conf").read_text())
    assert len(frr["neighbors"]) == 1 and frr["networks"] == [f"{frr['router_id']}/32"]


UFM = """
version: 1
cluster: u
node_groups:
  - {name: gpu, model: dgx-h100, count: 31, hostname: "dgx{n:03d}"}
  - {name: ufm, model: ufm-appliance, role: storage, count: 2, hostname: "ufm{n}"}
  - {name: head, model: ufm-appliance, count: 1, hostname: "head{n}"}
node_models:
  ufm-appliance:
    gpus: 0
    nics:
      - {rdma: mlx5_0, speed: 400}
    ports:
      - {role: inband, rdma: mlx5_1, speed: 100}
      - {role: oob, rdma: bmc, speed: 1}
fabrics:
  - name: ib
    kind: infiniband
    platform: ufm
    topology: rail-optimized
    switch_model: qm9700
    node_groups: [gpu, ufm]
    scalable_unit: 32
    infiniband: {subnet_managers: [ufm1, ufm2]}
"""


def test_subnet_manager_hosts_are_node_groups_on_their_fabric(tmp_path: Path) -> None:
    """UFM appliances as a node group (their HCA on the fabric's storage leaves) can be the subnet
    managers the deploy playbook installs the SM files on; a node not on the fabric cannot."""
    inv = tmp_path / "u.yaml"
    inv.write_text(UFM)
    out = tmp_path / "out"
    render_to(inv, out)
    cabled = {r["a_device"]: r["z_device"] for r in read_cabling(out, "ib") if r["tier"] == "node-leaf"}
    assert cabled["ufm1"].startswith("ib-storage-leaf") and cabled["ufm2"].startswith("ib-storage-leaf")
    for sm in ("ufm1", "ufm2"):
        hv = yaml.safe_load((out / "ansible" / "host_vars" / f"{sm}.yml").read_text())  # JSON, read as YAML
        assert hv["fabgen_role"] == "subnet-manager"
        assert any(f["src"] == "ib/infiniband/opensm.conf" for f in hv["fabgen_files"])
    problems = _errors(UFM.replace("subnet_managers: [ufm1, ufm2]", "subnet_managers: [ufm1, head1]"), tmp_path)
    assert problems == ["fabrics[0].infiniband.subnet_managers[1]: subnet manager 'head1' is a node of a node group "
                        "not on this fabric; give the SM host its own name"]
