"""Growth without a plan on every plane and every role: no present node's address or cable moves,
or validate names how many will (docs/growth.md, docs/planes.md).

The inventories are built here, not the bundled ones: a multi-plane compute fabric (two or four
planes) with a storage fabric (storage servers, BGP to the host or not), an in-band fabric (per-port
/31s or leaf subnets) and the out-of-band network, or with a north-south fabric instead of storage
and in-band; grown by a rack of NVL72 trays and by a scalable unit, none with `planned_nodes`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from netaddr import IPAddress, IPNetwork

from fabgen.inventory.ethernet import asn_stride, plane_slice
from fabgen.inventory.loader import load_text
from fabgen.inventory.validate import validate
from fabgen.pipeline import build
from fabgen.spec.schema import EthernetOptions

COMPUTE_POOLS = {"loopbacks": "10.255.0.0/16", "links": "10.0.0.0/13", "hosts": "10.8.0.0/13"}


def cluster(model: str, nodes: int, planes: int, *, su: int, topology: str = "rail-optimized",
            roles: tuple[str, ...] = ("storage", "inband", "oob"), servers: int = 2, bgp: bool = False,
            leaf_subnet: bool = False, planned: int | None = None) -> str:
    """An inventory of `nodes` compute nodes of `model` on a compute fabric of `planes` planes and
    the fabrics of `roles`, each sized for the nodes present (or `planned`)."""
    plan = f"    planned_nodes: {planned}\n" if planned else ""
    text = f"""version: 1
cluster: grow
node_groups:
  - {{name: gpu, model: {model}, count: {nodes}, hostname: 'gpu{{n:04d}}', management: 10.20.0.0/16}}
"""
    if servers:
        text += f"  - {{name: st, model: server, role: storage, count: {servers}, hostname: 'st{{n:02d}}'}}\n"
        text += """node_models:
  server:
    gpus: 0
    ports:
      - {role: storage, rdma: mlx5_0, netdev: enp1s0f0np0, speed: 400}
      - {role: storage, rdma: mlx5_1, netdev: enp1s0f1np1, speed: 400}
      - {role: oob, rdma: bmc, speed: 1}
"""
    both = "[gpu, st]" if servers else "[gpu]"
    text += f"""fabrics:
  - name: f
    kind: spectrum-x
    platform: nvue
    topology: {topology}
    switch_model: sn5600
    node_groups: [gpu]
    planes: {planes}
{plan}    management: 10.30.0.0/16
    ethernet:
      pools: {{{', '.join(f'{k}: {v}' for k, v in COMPUTE_POOLS.items())}}}
"""
    if topology == "rail-optimized":
        text += f"    scalable_unit: {su}\n"
    if "storage" in roles:  # BGP to the host: each node's service address and ASN too
        routing = "      host_routing: bgp\n" if bgp else ""
        host = ", host: 4200200000" if bgp else ""
        text += f"""  - name: s
    role: storage
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: {both}
{plan}    management: 10.31.0.0/16
    ethernet:
{routing}      pools: {{loopbacks: 10.254.0.0/16, links: 10.248.0.0/15, hosts: 100.64.0.0/12}}
      asn: {{leaf: 4200020000, spine: 4200002000, core: 4200001000{host}}}
"""
    if "inband" in roles:
        text += f"""  - name: i
    role: inband
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [gpu]
{plan}    management: 10.33.0.0/16
    ethernet:
      host_addressing: {'leaf-subnet' if leaf_subnet else 'p2p'}
      pools: {{loopbacks: 10.253.0.0/16, links: 10.246.0.0/15, hosts: 10.160.0.0/12}}
      asn: {{leaf: 4200030000, spine: 4200003000, core: 4200002500}}
"""
    if "northsouth" in roles:
        text += f"""  - name: n
    role: northsouth
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: {both}
    scalable_unit: 36
{plan}    management: {{prefix: 10.34.0.0/16, gateway: 10.34.0.1}}
    ethernet:
      pools: {{loopbacks: 10.252.0.0/16, links: 10.244.0.0/15, hosts: 10.176.0.0/12}}
      asn: {{leaf: 4200040000, spine: 4200004000, core: 4200003500}}
"""
    if "oob" in roles:
        text += f"""  - name: b
    role: oob
    kind: ethernet
    platform: nvue
    switch_model: sn2201
    node_groups: {both}
    management: {{prefix: 10.32.0.0/16, gateway: 10.32.0.1}}
"""
    return text


def snapshot(text: str):
    """What growth must keep, by fabric: every node's cables with their addresses, its service
    address and ASN, its bond's addresses, its management and BMC addresses, its GUIDs; the
    switch-to-switch cables; and the validated inventory's warnings."""
    validated = validate(load_text(text, "grow.yaml"))
    fabrics, contexts = build(validated)
    node: dict[tuple, object] = {}
    upper: dict[tuple, object] = {}
    servers: set[str] = set()
    for name, f in fabrics.items():
        a = contexts[name].allocation
        hosts = {h.name for h in f.hosts if h.role != "switch"}
        servers |= {h.name for h in f.hosts if h.role == "storage"}
        for i, lk in enumerate(f.links):
            key = (name, lk.a, lk.a_port, lk.z, lk.z_port)
            (node if lk.a in hosts else upper)[key] = a.link_ips.get(i)
        for h in hosts:
            for what in ("node_loopbacks", "node_asns", "management"):
                if h in getattr(a, what):
                    node[(name, h, what)] = getattr(a, what)[h]
            if a.tenants is not None and h in a.tenants.nodes:
                node[(name, h, "bond")] = (a.tenants.nodes[h], a.tenants.segments[h])
    return validated, fabrics, contexts, node, upper, servers


def moved(small: dict, big: dict) -> dict:
    return {k: v for k, v in small.items() if big.get(k, "gone") != v}


def warned_storage(validated, fabric: str) -> int:
    """The count the storage-server warning of `fabric` names per compute node added (0: none)."""
    found = [w for w in validated.warnings.get(fabric, []) if "storage servers are numbered after" in w]
    if not found:
        return 0
    (text,) = found
    per_node = re.search(r"adding a compute node moves their ([^;]*);", text)
    if per_node is None:
        return 0
    return sum(int(n.replace(",", "")) for n in re.findall(r"(?:^|, | and )(\d[\d,]*) ", per_node.group(1)))


def assert_nodes_stay(small: str, big: str) -> None:
    """The property: growing without a plan moves no present node's cable or address, except
    what validate counted before: the storage servers' addresses, numbered after the compute nodes
    (as many as the warning names), their BMCs where the out-of-band block warning says so, and
    switch-to-switch cables where the growth warning says so."""
    v_small, _, _, node_small, upper_small, servers = snapshot(small)
    _, _, _, node_big, upper_big, _ = snapshot(big)
    gone = moved(node_small, node_big)
    for fabric in {k[0] for k in node_small}:
        mine = {k: v for k, v in gone.items() if k[0] == fabric and k[1] in servers}
        count = sum(2 if k[2] == "bond" else 1 for k in mine if k[2] != "management")
        if fabric in ("b",):  # the out-of-band network: blocks after an unplanned one move, as it warns
            if mine:
                assert any("out-of-band block" in w for w in v_small.warnings.get("b", [])), mine
            continue
        assert count == (warned_storage(v_small, fabric) if count else 0), \
            f"{fabric}: {count} storage server addresses moved, the warning names {warned_storage(v_small, fabric)}"
    rest = {k: v for k, v in gone.items() if k[1] not in servers and not (k[0] == "b" and k[1] in servers)}
    assert not rest, f"{len(rest)} present node cables or addresses moved, e.g. {sorted(rest.items())[:3]}"
    cables = moved(upper_small, upper_big)
    for fabric in {k[0] for k in cables if k[0] != "b"}:
        parent = fabric.split("-plane")[0]
        assert any("growing this fabric" in w for w in v_small.warnings.get(parent, [])), \
            f"{fabric}: switch cables moved and validate said nothing"
    for switch in {k[1] for k in cables if k[0] == "b"}:  # a management port follows its switch's place
        parent = switch.split("-")[0]
        assert any("growing this fabric" in w and "re-address" in w for w in v_small.warnings.get(parent, [])), \
            f"{switch}: its management port moved on the out-of-band network and validate said nothing"


GB = "gb300-nvl72"
B300 = "dgx-b300"


@pytest.mark.parametrize("roles", [("storage", "inband", "oob"), ("northsouth", "oob")])
@pytest.mark.parametrize("racks", [1, 3])
def test_a_rack_added_without_a_plan_moves_no_node(roles: tuple[str, ...], racks: int) -> None:
    """GB300 NVL72 trays on two planes (a unit of four racks) grown by one rack: no node of any
    plane or fabric moves but what validate counted."""
    small = cluster(GB, 18 * racks, 2, su=72, roles=roles)
    assert_nodes_stay(small, cluster(GB, 18 * (racks + 1), 2, su=72, roles=roles))


@pytest.mark.parametrize("planes", [2, 4])
@pytest.mark.parametrize("bgp,leaf_subnet", [(False, False), (True, True)])
def test_a_unit_added_without_a_plan_moves_no_node(planes: int, bgp: bool, leaf_subnet: bool) -> None:
    """DGX B300 on two and four planes grown by a scalable unit, with BGP to the host on the storage
    fabric and leaf subnets on the in-band one, or neither."""
    small = cluster(B300, 8, planes, su=8, bgp=bgp, leaf_subnet=leaf_subnet)
    assert_nodes_stay(small, cluster(B300, 16, planes, su=8, bgp=bgp, leaf_subnet=leaf_subnet))


@st.composite
def unplanned_growths(draw):
    model = draw(st.sampled_from([GB, B300]))
    planes = 2 if model == GB else draw(st.sampled_from([2, 4]))
    topology = draw(st.sampled_from(["rail-optimized", "fat-tree"])) if model == B300 else "rail-optimized"
    su = 72 if model == GB else draw(st.sampled_from([4, 8]))
    step = 18 if model == GB else (su if topology == "rail-optimized" else draw(st.sampled_from([1, 4, 16])))
    present = draw(st.integers(1, 3)) * step
    roles = draw(st.sampled_from([("storage", "inband", "oob"), ("northsouth", "oob"), ("storage",), ("inband",)]))
    if model == B300 and "northsouth" in roles:
        roles = ("storage", "oob")  # a DGX's storage ports: storage fabric (northsouth bonds trays here)
    options = dict(su=su, topology=topology, roles=roles, servers=draw(st.sampled_from([0, 2, 3])),
                   bgp=draw(st.booleans()), leaf_subnet=draw(st.booleans()))
    return model, planes, present, step, options


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unplanned_growths())
def test_growth_without_a_plan_moves_no_node_on_any_plane_or_role(case) -> None:
    """Unseen clusters of two and four planes and every role, grown without a plan by a rack, a
    unit or (fat-tree) some nodes."""
    model, planes, present, step, options = case
    assert_nodes_stay(cluster(model, present, planes, **options),
                      cluster(model, present + step, planes, **options))


def test_the_property_check_catches_a_renumbering(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plane p's part of a pool after plane p-1's present addresses (the numbering before per-plane
    parts): adding a unit moves every node port of plane 2, and the check above fails on it."""
    from fabgen import addressing

    def after_the_planes_before(pool: str, fabric) -> tuple[int, int]:
        net = IPNetwork(pool)
        first = net.first + fabric.plane * 2 * (fabric.plan.endpoints + fabric.plan.storage)
        return first, net.last

    small, big = cluster(B300, 8, 2, su=8, servers=0), cluster(B300, 16, 2, su=8, servers=0)
    assert_nodes_stay(small, big)
    monkeypatch.setattr(addressing, "plane_part", after_the_planes_before)
    with pytest.raises(AssertionError, match="present node cables or addresses moved"):
        assert_nodes_stay(small, big)


def test_storage_servers_after_unplanned_nodes_are_counted_and_the_check_sees_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The storage fabric numbers its servers after the compute nodes: validate names how many
    addresses a compute node added moves, and that is what moves; with a plan, nothing."""
    small = cluster(B300, 8, 2, su=8, servers=3, bgp=True, roles=("storage",))
    big = cluster(B300, 9, 2, su=8, servers=3, bgp=True, roles=("storage",))
    validated = snapshot(small)[0]
    assert warned_storage(validated, "s") == 2 * 3 + 3 + 3  # two ports, a service address and an ASN each
    assert_nodes_stay(small, big)
    planned = [cluster(B300, n, 2, su=8, servers=3, bgp=True, roles=("storage",), planned=32) for n in (8, 9)]
    assert not warned_storage(snapshot(planned[0])[0], "s")
    assert_nodes_stay(*planned)
    _, _, _, node_small, _, servers = snapshot(planned[0])
    assert not moved(node_small, snapshot(planned[1])[3])
    # the check fails where the warning would be missing
    import fabgen.inventory.check_cluster as checks

    monkeypatch.setattr(checks, "_warn_storage_follows", lambda *a: None)
    with pytest.raises(AssertionError, match="storage server addresses moved"):
        assert_nodes_stay(small, big)


@pytest.mark.parametrize("planes", [2, 4])
def test_each_plane_is_numbered_in_its_own_part_of_the_pools(planes: int) -> None:
    """Plane p's addresses lie in part p of each pool (the pool cut in `planes` equal parts), plane
    1's at the pool's start as a one-plane fabric's; plane p's ASNs start p strides above the tier's."""
    _, fabrics, contexts, *_ = snapshot(cluster(B300, 16, planes, su=8, servers=0, roles=()))
    eth = EthernetOptions()
    for p in range(planes):
        f = fabrics[f"f-plane{p + 1}"]
        a = contexts[f.name].allocation
        parts = {k: IPNetwork(v) for k, v in COMPUTE_POOLS.items()}

        def inside(pool: str, address: str, p: int = p, parts=parts) -> bool:
            net = parts[pool]
            size = plane_slice(net.size, planes)
            return net.first + p * size <= int(IPAddress(address.split("/")[0])) < net.first + (p + 1) * size

        assert all(inside("loopbacks", x) for x in a.loopbacks.values())
        for i, lk in enumerate(f.links):
            for address in a.link_ips[i][:2]:
                assert inside("hosts" if lk.tier == "node-leaf" else "links", address), (lk, address)
        for s in f.switches:
            tier_first = {"leaf": eth.asn.leaf, "spine": eth.asn.spine, "core": eth.asn.core}[s.role]
            stride = asn_stride(eth, s.role, planes)
            assert tier_first + p * stride <= a.asns[s.name] < tier_first + (p + 1) * stride
        first_leaf = min((s for s in f.switches if s.role == "leaf"), key=lambda s: s.index)
        lo = parts["loopbacks"]
        assert a.loopbacks[first_leaf.name] == f"{IPAddress(lo.first + p * plane_slice(lo.size, planes) + 1)}"


def _validate_cli(tmp_path: Path, text: str):
    from typer.testing import CliRunner

    from fabgen.cli import app

    path = tmp_path / "inv.yaml"
    path.write_text(text)
    return CliRunner().invoke(app, ["validate", str(path)])


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_pool_whose_plane_part_cannot_hold_a_plane_is_refused(tmp_path: Path) -> None:
    """A hosts pool that holds one plane's /31s but not two: refused at the pool, with the size of
    each plane's part, what a plane needs and the prefix that holds both."""
    ok = cluster(B300, 32, 2, su=8, servers=0, roles=())
    _, fabrics, *_ = snapshot(ok)
    need = 2 * fabrics["f-plane1"].plan.endpoints  # a /31 per port of one plane
    bits = (need - 1).bit_length()
    small = f"10.8.0.0/{32 - bits}"
    bad = ok.replace(f"hosts: {COMPUTE_POOLS['hosts']}", f"hosts: {small}")
    result = _validate_cli(tmp_path, bad)
    assert result.exit_code == 2, result.output
    line = _line_of(bad, "hosts: 10.8.0.0/")
    assert re.search(rf"inv\.yaml:{line}:\d+: .*pool {re.escape(small)} gives each of its 2 planes a "
                     rf"/{33 - bits} of {(1 << bits) // 2} addresses .* a plane needs {need} .*use a /{31 - bits} ",
                     result.output), result.output
    assert "Traceback" not in result.output
    assert _validate_cli(tmp_path, ok.replace(f"hosts: {COMPUTE_POOLS['hosts']}", f"hosts: 10.8.0.0/{31 - bits}")
                         ).exit_code == 0


def test_asn_blocks_too_close_for_the_planes_are_refused(tmp_path: Path) -> None:
    """Leaf ASNs 100 below the spines': each of two planes gets a stride of 10, and a plane of two
    units has 16 leaves: refused at the leaf ASN with the stride and the need."""
    text = cluster(B300, 16, 2, su=8, servers=0, roles=()).replace(
        "    ethernet:\n", "    ethernet:\n      asn: {leaf: 4200010000, spine: 4200010100, core: 4200000000}\n", 1)
    result = _validate_cli(tmp_path, text)
    assert result.exit_code == 2, result.output
    line = _line_of(text, "asn: {leaf: 4200010000")
    assert re.search(rf"inv\.yaml:{line}:\d+: .*leaf ASNs: each of 2 planes starts 10 after the one before .*"
                     r"a plane needs 16", result.output), result.output
    fine = text.replace("spine: 4200010100", "spine: 4200010400")  # a stride of 100
    assert _validate_cli(tmp_path, fine).exit_code == 0


def test_a_management_prefix_whose_plane_part_cannot_hold_a_plane_is_refused() -> None:
    """Four planes share the management prefix in four parts. A /26 holds four planes of 15 switches
    and the gateway end to end (61 of its 62 host addresses), but not plane 1 with the gateway in a
    quarter of it (16 addresses): refused at the prefix; 14 switches a plane fit."""
    from fabgen.inventory.check_cluster import check_plane_parts

    validated = validate(load_text(cluster(B300, 16, 4, su=8, servers=0, roles=()), "grow.yaml"))
    spec = validated.inventory.fabrics[0]
    assert spec.management is not None
    spec = spec.model_copy(update={"management": spec.management.model_copy(
        update={"prefix": "10.30.0.0/26", "gateway": "10.30.0.1"})})
    found: list[tuple[tuple, str]] = []
    check_plane_parts(0, spec, 15, False, lambda where, message: found.append((where, message)))
    assert found == [(("fabrics", 0, "management", "prefix"), "10.30.0.0/26 gives each of its 4 planes 16 addresses "
                      "(plane p from the prefix's start + p x 16); plane 1's 15 switches need 16 with the gateway: "
                      "use a /25 or shorter")]
    found.clear()
    check_plane_parts(0, spec, 14, False, lambda where, message: found.append((where, message)))
    assert not found



@pytest.mark.parametrize("planes,nodes,plane", [(2, 28, 2), (4, 52, 2), (4, 52, 4)])
def test_a_gateway_at_a_plane_parts_first_address_moves_no_switch(tmp_path: Path, planes: int, nodes: int,
                                                                    plane: int) -> None:
    """Plane p's switches take the addresses after its part's first, skipping the gateway. A gateway
    at that first address is below them all: none moves, so a last plane whose switches fill its part
    exactly (6 switches in 8 addresses) ends one below the broadcast, and validate, which counts the
    gateway only inside the run, agrees. A gateway one above leaves that plane a switch short: refused."""
    text = cluster(B300, nodes, planes, su=4, topology="fat-tree", servers=0, roles=())
    net = IPNetwork(f"10.30.0.0/{32 - (8 * planes).bit_length() + 1}")  # 8 addresses a plane
    part = plane_slice(net.size, planes)
    first = net.first + (plane - 1) * part
    fit = text.replace("management: 10.30.0.0/16", f"management: {{prefix: {net}, gateway: {IPAddress(first)}}}")
    assert _validate_cli(tmp_path, fit).exit_code == 0
    fabrics, contexts = build(validate(load_text(fit, "grow.yaml")))
    for name, f in fabrics.items():
        switches = sorted(f.switches, key=f.ordinal)
        assert len(switches) == 6
        start = net.first + f.plane * part
        expected = [a for a in range(start + 1, start + part) if a != first][:len(switches)]
        got = [int(IPAddress(contexts[name].allocation.management[s.name])) for s in switches]
        assert got == expected, f"{name}: {[str(IPAddress(a)) for a in got]}"
        assert net.last not in got and first not in got
    inside = fit.replace(f"gateway: {IPAddress(first)}", f"gateway: {IPAddress(first + 1)}")
    result = _validate_cli(tmp_path, inside)
    if plane == planes:  # the last plane: 6 switches and the gateway in 8 addresses but the broadcast
        assert result.exit_code == 2, result.output
        assert f"plane {plane}'s 6 switches need 7 with the gateway" in result.output, result.output
    else:  # a plane below the last has its part's last address too
        assert result.exit_code == 0, result.output

GROWTHS = [  # (platform, topology, nodes, su, tiers, storage, planes): unplanned, grown by a unit or a leaf
    ("eos", "rail-optimized", 8, 4, 2, 0, 1), ("eos", "rail-optimized", 8, 4, 3, 3, 1),
    ("opensm", "rail-optimized", 16, 8, 3, 3, 1), ("opensm", "fat-tree", 12, 4, 2, 0, 1),
    ("nvue", "rail-optimized", 8, 4, 2, 0, 2), ("sonic", "rail-optimized", 4, 4, 3, 0, 2),
    ("nvue", "fat-tree", 40, 4, 2, 0, 4), ("eos", "rail-optimized", 64, 8, "auto", 0, 1),
]


@pytest.mark.parametrize("platform,topology,nodes,su,tiers,storage,planes", GROWTHS)
def test_switch_addresses_an_unplanned_growth_moves_are_counted(platform, topology, nodes, su, tiers, storage,
                                                                 planes) -> None:
    """Without a plan the spines follow the leaves in the switch order, the cores the spines and the
    storage leaves the compute leaves: growing by a unit (or leaf) renumbers present switches and
    switch-to-switch /31s. The growth warning names both counts, and they are what moves (per plane)."""
    from test_growth import PLATFORMS, identities, inventory

    small = inventory(platform, topology, nodes, None, su=su, tiers=tiers, storage=storage, planes=planes)
    validated = validate(load_text(small, "grow.yaml"))
    fabrics, _ = build(validated)  # the growth check runs beside the build
    warnings = [w for w in validated.warnings.get("f", []) if "growing this fabric" in w]
    plan = next(iter(fabrics.values())).plan
    step = plan.unit_nodes if topology == "rail-optimized" else -(-plan.down // plan.rails)
    grown = (plan.present_units + 1) * step
    big = inventory(platform, topology, grown, None, su=su, tiers=tiers, storage=storage, planes=planes)
    _, f_small, c_small, ids_small, _ = identities(small)
    _, f_big, c_big, ids_big, _ = identities(big)
    first = sorted(fabrics)[0]  # plane 1 (every plane alike)
    names = {s.name for s in f_small.switches if s.name.startswith(first + "-") or first == "f"}
    key = "guids" if PLATFORMS[platform][0] == "infiniband" else "loopbacks"
    switches = sum(1 for n in names if n in ids_big[key] and ids_big[key][n] != ids_small[key][n])
    upper = {k for k in c_small if k[0] in names and k[2] in names}
    links = sum(1 for k in upper if k in c_big and c_big[k] != c_small[k])
    if not switches and not links:
        assert not warnings or "re-address" not in warnings[0]
        return
    (warning,) = warnings
    assert f"to {grown:,} nodes" in warning
    m = re.search(r"re-address (?:([\d,]+) switch(?:es)? \([^)]*\))?(?: and )?(?:([\d,]+) switch-to-switch /31s)?"
                  r"( on each of its \d planes)?", warning)
    assert m, warning
    assert int((m.group(1) or "0").replace(",", "")) == switches, warning
    if key == "loopbacks":
        assert int((m.group(2) or "0").replace(",", "")) == links, warning
    assert bool(m.group(3)) == (planes > 1)
