"""North-south bonds a node can boot from the network on (docs/northsouth.md, "PXE"): the in-band
VLAN untagged on every leaf bond with LACP bypass (NVUE) or LACP fallback to individual ports
(EOS), the node's in-band address on its bond itself, storage a VLAN on it; and the render's
reader (the EVPN lab's plan, emulate/evpn.py) refusing a render whose leaves and hosts disagree."""

from __future__ import annotations

import ipaddress
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_northsouth import DGX_EOS, EXAMPLE, _nvue_tree, _rows
from test_planes import NETPLAN, _netplan_generate

from conftest import IN_CI
from fabgen.emulate import evpn, inputs
from fabgen.emulate.model import TranslateError
from fabgen.pipeline import render_to
from fabgen.rendered import read as rendered
from fabgen.spec.schema import NorthSouth

sys.path.insert(0, str(Path(__file__).parent))
import nvue_model  # noqa: E402

INBAND, STORAGE = NorthSouth().inband.vlan, NorthSouth().storage.vlan  # the defaults the examples keep


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pxe") / "out"
    render_to(EXAMPLE, out)
    return out


def _leaf_bonds(out: Path) -> dict[str, dict[str, dict]]:
    """leaf -> bond -> its NVUE node, for every leaf of the northsouth fabric."""
    out_bonds = {}
    for f in sorted((out / "northsouth" / "switches").glob("*leaf*.nvue.yaml")):
        tree = _nvue_tree(f)
        out_bonds[f.name.split(".")[0]] = {k: v for k, v in tree["interface"].items()
                                           if v.get("type") == "bond" and "evpn" in v}
    return out_bonds


def test_every_nvue_leaf_bond_bypasses_lacp_with_in_band_untagged(example: Path) -> None:
    """Each node's leg on every leaf: LACP bypass on, the in-band VLAN untagged and storage among
    its VLANs, in the word of the release the file names (`on` to 5.14, `enabled` from 5.15); the
    object model takes it and refuses the other dialect's word."""
    bonds = _leaf_bonds(example)
    leaf = next(iter(bonds))
    header = yaml.safe_load((example / "northsouth" / "switches" / f"{leaf}.nvue.yaml").read_text())[0]["header"]
    version = nvue_model.release(header)
    word, other = ("on", "enabled") if version in ("5.13", "5.14") else ("enabled", "on")
    legs = sum(len(b) for b in bonds.values())
    cabled = [r for r in _rows(example / "northsouth" / "cabling.csv") if r["tier"] == "node-leaf"]
    assert legs == len(cabled) > 0
    for leaf, mine in bonds.items():
        for name, node in mine.items():
            assert node["bond"]["lacp-bypass"] == word, (leaf, name)
            domain = node["bridge"]["domain"]["br_default"]
            assert domain["untagged"] == INBAND and str(STORAGE) in domain["vlan"], (leaf, name)
    tree = _nvue_tree(example / "northsouth" / "switches" / f"{leaf}.nvue.yaml")
    assert nvue_model.problems(version, tree) == []
    bond = next(iter(bonds[leaf]))
    tree["interface"][bond]["bond"]["lacp-bypass"] = other
    assert any("lacp-bypass" in p for p in nvue_model.problems(version, tree))


def test_every_eos_port_channel_falls_back_to_in_band_access(tmp_path: Path) -> None:
    """EOS: each node's Port-Channel is a trunk whose native VLAN is in-band, with LACP fallback to
    individual ports after a timeout shorter than a PXE firmware's DHCP retries (60 s), and each
    member an access port of in-band, which is what it is while fallen back."""
    inv = tmp_path / "ns.yaml"
    inv.write_text(DGX_EOS.format(count=16))
    render_to(inv, tmp_path / "out")
    configs = sorted((tmp_path / "out" / "ns" / "switches").glob("*leaf*.cfg"))
    assert configs
    channels = members = 0
    for cfg in configs:
        for block in cfg.read_text().split("\n!\n"):
            head = block.lstrip("!\n").split("\n", 1)[0]
            if re.fullmatch(r"interface Port-Channel\d+", head):
                channels += 1
                assert f"   switchport trunk native vlan {INBAND}\n" in block, block
                assert re.search(rf"switchport trunk allowed vlan ({STORAGE},{INBAND}|{INBAND},{STORAGE})\n", block)
                assert "   port-channel lacp fallback individual\n" in block
                timeout = int(re.search(r"port-channel lacp fallback timeout (\d+)", block).group(1))
                assert 0 < timeout < 60
            elif re.fullmatch(r"interface Ethernet\S+", head) and "channel-group" in block:
                members += 1
                assert f"   switchport access vlan {INBAND}\n" in block and "switchport mode access" in block
    assert channels == members == 2 * 18  # 16 DGX and 2 head nodes, two legs each


def test_netplan_puts_in_band_on_the_bond_and_networkd_takes_it(example: Path, tmp_path: Path) -> None:
    """The node's netplan: the in-band address and default route on bond0 itself, no VLAN of the
    in-band VLAN, storage on bond0.<storage>; `netplan generate` writes them so."""
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed (`make test` installs it)")
    for node in ("gb001", "stor01"):
        text = (example / "hosts" / node / "netplan.yaml").read_text()
        net = yaml.safe_load(text)["network"]
        assert set(net["vlans"]) == {f"bond0.{STORAGE}"}
        run = _netplan_generate({"60-fabgen.yaml": text}, tmp_path / node)
        assert run.returncode == 0, run.stderr
        unit = (tmp_path / node / "run" / "systemd" / "network" / "10-netplan-bond0.network").read_text()
        (address,) = net["bonds"]["bond0"]["addresses"]
        assert f"Address={address}\n" in unit and f"VLAN=bond0.{STORAGE}\n" in unit
        assert "Gateway=" in unit or "Destination=0.0.0.0/0" in unit


def _files(out: Path) -> dict[str, bytes]:
    return rendered.read_render(out)


def _set_leaf(files: dict[str, bytes], leaf: str, edit) -> dict[str, bytes]:
    path = f"northsouth/switches/{leaf}.nvue.yaml"
    doc = yaml.safe_load(files[path])
    edit(next(item["set"] for item in doc if "set" in item))
    return {**files, path: yaml.safe_dump(doc).encode()}


def test_the_lab_reader_refuses_leaves_and_hosts_that_disagree(example: Path) -> None:
    """The rendered fabric reads (evpn.read, what the EVPN lab builds from); a leg without the
    untagged VLAN, a host tagging in-band, and a host whose bond address sits in storage's subnet
    are each refused, naming the file."""
    files = _files(example)
    plan = evpn.read(files, "northsouth", inputs.table)
    node = next(iter(plan.nodes))
    assert plan.nodes[node].vlans["bond0"][0] == 0  # the bond itself
    leaf, port = plan.legs[node][0][1], plan.legs[node][0][2]
    bond = next(b for b, seg in plan.switches[leaf].segments.items() if seg[0] == port)
    assert plan.switches[leaf].untagged[bond] == INBAND

    def no_untagged(tree: dict) -> None:
        del tree["interface"][bond]["bridge"]["domain"]["br_default"]["untagged"]

    with pytest.raises(TranslateError, match="different untagged VLANs"):
        evpn.read(_set_leaf(files, leaf, no_untagged), "northsouth", inputs.table)

    path = f"hosts/{node}/netplan.yaml"
    net = yaml.safe_load(files[path])
    bond0 = net["network"]["bonds"]["bond0"]
    tagged = {**net}
    own = {"addresses": bond0.pop("addresses"), "routes": bond0.pop("routes", [])}
    tagged["network"]["vlans"][f"bond0.{INBAND}"] = {"id": INBAND, "link": "bond0", **own}
    with pytest.raises(TranslateError, match=rf"{path}: bond0 has no address of its own"):
        evpn.read({**files, path: yaml.safe_dump(tagged).encode()}, "northsouth", inputs.table)

    net = yaml.safe_load(files[path])
    storage = net["network"]["vlans"][f"bond0.{STORAGE}"]["addresses"][0]
    other = ipaddress.ip_interface(storage)
    net["network"]["bonds"]["bond0"]["addresses"] = [f"{other.ip + 1}/{other.network.prefixlen}"]
    with pytest.raises(TranslateError, match=r"not in .*the subnet of VLAN"):
        evpn.read({**files, path: yaml.safe_dump(net).encode()}, "northsouth", inputs.table)


TWO_BOND_PORTS = """\
      - {role: inband, rdma: mlx5_0, netdev: enp1s0f0np0, speed: 400}
      - {role: inband, rdma: mlx5_2, netdev: enp2s0f0np0, speed: 400}
      - {role: storage, rdma: mlx5_1, netdev: enp1s0f1np1, speed: 400}
      - {role: storage, rdma: mlx5_3, netdev: enp2s0f1np1, speed: 400}
"""


NAS_MODEL = """\
node_models:
  nas-box:
    gpus: 0
    ports:
      - {role: storage, rdma: mlx5_0, netdev: enp1s0f0np0, speed: 400}
      - {role: storage, rdma: mlx5_1, netdev: enp1s0f1np1, speed: 400}
"""


def _two_bond_inventory(folder: Path, edit=lambda s: s) -> Path:
    """The example with its storage servers as support/storage servers of two bonds (bonds: 2):
    two in-band ports (one on each card) and two storage ports."""
    text = EXAMPLE.read_text()
    old = ("      - {role: storage, rdma: mlx5_0, netdev: enp1s0f0np0, speed: 400}\n"
           "      - {role: storage, rdma: mlx5_1, netdev: enp1s0f1np1, speed: 400}\n")
    assert old in text and "    role: storage\n    count: 4\n" in text
    text = text.replace(old, TWO_BOND_PORTS).replace("    role: storage\n    count: 4\n",
                                                     "    role: storage\n    bonds: 2\n    count: 4\n")
    folder.mkdir(parents=True, exist_ok=True)
    links = EXAMPLE.with_name("gb300-cluster-rdma-links.txt")
    (folder / links.name).write_bytes(links.read_bytes())
    inv = folder / "inv.yaml"
    inv.write_text(edit(text))
    return inv


def test_a_two_bond_server_is_two_segments_on_its_leaf_pair(tmp_path: Path) -> None:
    """bonds: 2: each server's in-band ports are bond0 (in-band untagged), its storage ports bond1
    (storage untagged), each bond one leg on each leaf of the server's pair on the same port, each
    its own Ethernet segment; LACP bypass on all; the NVUE model takes it; the netplan has bond0
    with the in-band address and default route, bond1 with the storage address, and networkd
    takes it; addresses.csv and NetBox name the bond holding each address and each member."""
    out = tmp_path / "out"
    render_to(_two_bond_inventory(tmp_path / "inv"), out)
    legs: dict[tuple[str, str], list[tuple[str, str, int, dict]]] = {}  # (server, host bond) -> legs
    for leaf, bonds in _leaf_bonds(out).items():
        for node in bonds.values():
            server, host_bond = node["description"].removeprefix("HOST_").rsplit("_", 1)
            legs.setdefault((server, host_bond), []).append(
                (leaf, next(iter(node["bond"]["member"])), node["evpn"]["multihoming"]["segment"]["local-id"], node))
    servers = sorted({s for s, _ in legs if s.startswith("stor")})
    assert servers == ["stor01", "stor02", "stor03", "stor04"]
    ids = []
    for server in servers:
        for host_bond, vlan in (("bond0", INBAND), ("bond1", STORAGE)):
            ends = legs[server, host_bond]
            assert len({leaf for leaf, _, _, _ in ends}) == 2 and len({p for _, p, _, _ in ends}) == 1, ends
            assert len({i for _, _, i, _ in ends}) == 1
            ids.append(ends[0][2])
            for *_, node in ends:
                assert node["bridge"]["domain"]["br_default"] == {"untagged": vlan, "vlan": {str(vlan): {}}}
                assert node["bond"]["lacp-bypass"] == "enabled"  # the default release, 5.16
    assert len(set(ids)) == len(ids)  # every bond a segment of its own
    for leaf in _leaf_bonds(out):
        if "storage" in leaf:
            assert nvue_model.problems("5.16", _nvue_tree(out / "northsouth" / "switches" / f"{leaf}.nvue.yaml")) == []
    net = yaml.safe_load((out / "hosts" / "stor01" / "netplan.yaml").read_text())["network"]
    assert set(net["bonds"]) == {"bond0", "bond1"} and "vlans" not in net
    assert net["bonds"]["bond0"]["interfaces"] == ["enp1s0f0np0", "enp2s0f0np0"]
    assert net["bonds"]["bond1"]["interfaces"] == ["enp1s0f1np1", "enp2s0f1np1"]
    table = _rows(out / "northsouth" / "addresses.csv")
    rows = {(r["device"], r["interface"]): r["address"] for r in table}
    gateways = {r["device"]: r["address"] for r in table if r["role"] == "anycast"}
    for bond, role in (("bond0", "inband"), ("bond1", "storage")):
        (address,) = net["bonds"][bond]["addresses"]
        assert rows["stor01", bond] == address
        assert ipaddress.ip_interface(address).network == ipaddress.ip_interface(gateways[f"{role}-gateway"]).network
    assert [r["to"] for r in net["bonds"]["bond0"].get("routes", []) if r["to"] == "default"] == ["default"]
    assert not [r for r in net["bonds"]["bond1"].get("routes", []) if r["to"] == "default"]
    lags = {(r["device"], r["name"]): r.get("lag", "") for r in _rows(out / "netbox" / "07-interfaces.csv")}
    assert [lags["stor01", p] for p in ("mlx5_0", "mlx5_2", "mlx5_1", "mlx5_3")] == ["bond0", "bond0", "bond1", "bond1"]
    if NETPLAN is not None:
        run = _netplan_generate({"60-fabgen.yaml": (out / "hosts" / "stor01" / "netplan.yaml").read_text()},
                                tmp_path / "root")
        assert run.returncode == 0, run.stderr
        units = tmp_path / "root" / "run" / "systemd" / "network"
        for bond in ("bond0", "bond1"):
            assert "Kind=bond" in (units / f"10-netplan-{bond}.netdev").read_text()


@pytest.mark.parametrize(("case", "edit", "expected"), [
    ("compute group", lambda s: s.replace("    count: 72 ", "    bonds: 2\n    count: 72 ", 1),
     "node_groups[0].bonds: bonds: 2 is a server's"),
    ("two ports", lambda s: s.replace("      - {role: inband, rdma: mlx5_2, netdev: enp2s0f0np0, speed: 400}\n", ""),
     "node_groups[1].bonds: bonds: 2 bonds two inband ports (bond0) and two storage ports (bond1)"),
    ("no northsouth fabric", lambda s: s.replace("    node_groups: [gb, store]\n", "    node_groups: [gb]\n"),
     "node_groups[1].bonds: bonds: 2 sets a server's bonds on a northsouth fabric"),
    ("servers of two shapes", lambda s: s.replace("node_models:\n", NAS_MODEL, 1).replace(
        "    node_groups: [gb, store]\n", "    node_groups: [gb, store, nas]\n", 1).replace(
        "node_groups:\n", "node_groups:\n  - {name: nas, model: nas-box, role: storage, count: 2, "
        "hostname: 'nas{n:02d}'}\n", 1),
     "fabrics[1].node_groups: the servers of a northsouth fabric have one shape"),
])
def test_a_two_bond_server_that_cannot_be_is_refused_where_written(tmp_path: Path, case: str, edit, expected: str
                                                                    ) -> None:
    """bonds: 2 on a compute group, on a model without two inband and two storage ports, or on a
    group no northsouth fabric lists: `validate` exits 2 naming the key's line and column."""
    inv = _two_bond_inventory(tmp_path, edit)
    run = subprocess.run([sys.executable, "-m", "fabgen", "validate", str(inv)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2, (case, run.stderr)
    line = next(x for x in run.stderr.splitlines() if expected in x)
    assert re.match(rf"{re.escape(str(inv))}:\d+:\d+: ", line), line
    assert "Traceback" not in run.stderr
