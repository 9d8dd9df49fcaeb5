"""Growth: a planned fabric grown by a unit only adds; an unplanned one that would re-cable says so."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import INVENTORIES
from fabgen.inventory.loader import load_text
from fabgen.inventory.validate import validate
from fabgen.pipeline import build
from fabgen.spec.sizing import name_widths

PLATFORMS = PLATFORMS_GROWN = {  # kind, platform, switch model
    "opensm": ("infiniband", "opensm", "qm9700"),
    "eos": ("roce", "eos", "arista-7060x5"),
    "sonic": ("roce", "sonic", "arista-7060x6-64pe-b"),
    "nvue": ("spectrum-x", "nvue", "sn5600"),
}


def test_the_growth_tests_cover_every_switch_platform_kind() -> None:
    """One platform per family of names and ports: InfiniBand (ufm names as opensm), EOS, SONiC, NVUE."""
    from fabgen.spec.platforms import PLATFORMS

    assert set(PLATFORMS) - set(PLATFORMS_GROWN) == {"ufm"}


def inventory(platform: str, topology: str, nodes: int, planned: int | None, *, ratio: int = 1,
              tiers: str | int = "auto", su: int = 4, storage: int = 0, leaf_subnet: bool = False,
              planes: int = 1, cluster: bool = False) -> str:
    kind, plat, model = PLATFORMS[platform]
    node = "dgx-b300" if planes > 1 else "dgx-h100"  # planes split 800G NICs into 400G ports
    lines = ["version: 1", "cluster: grow", "node_groups:",
             f"  - {{name: gpu, model: {node}, count: {nodes}, hostname: 'gpu{{n:04d}}', "
             "management: 10.20.0.0/16}"]
    groups = ["gpu"]
    if storage:
        lines += [f"  - {{name: st, model: dgx-h100, role: storage, count: {storage}, hostname: 'st{{n:02d}}'}}"]
        groups.append("st")
    lines += ["fabrics:", "  - name: f", f"    kind: {kind}", f"    platform: {plat}",
              f"    topology: {topology}", f"    switch_model: {model}", f"    node_groups: [{', '.join(groups)}]",
              f"    oversubscription: {ratio}", f"    tiers: {tiers}", "    management: 10.30.0.0/16"]
    if topology == "rail-optimized":
        lines.append(f"    scalable_unit: {su}")
    if planned is not None:
        lines.append(f"    planned_nodes: {planned}")
    if planes > 1:
        lines.append(f"    planes: {planes}")
    if kind != "infiniband":
        lines += ["    ethernet:", f"      host_addressing: {'leaf-subnet' if leaf_subnet else 'p2p'}",
                  "      pools: {loopbacks: 10.255.0.0/16, links: 10.252.0.0/15, hosts: 10.0.0.0/12}"]
    if cluster:  # the nodes' storage ports (BGP to the host) and BMCs too, planned alike
        plan = f"    planned_nodes: {planned}\n" if planned is not None else ""
        lines += ["  - name: s", "    role: storage", "    kind: roce", "    platform: eos",
                  "    topology: rail-optimized", "    switch_model: arista-7060x5",
                  f"    node_groups: [{', '.join(groups)}]" + ("\n" + plan.rstrip() if plan else ""),
                  "    ethernet:", "      host_routing: bgp",
                  "      pools: {loopbacks: 10.254.0.0/16, links: 10.248.0.0/15, hosts: 100.64.0.0/12}",
                  "      asn: {leaf: 4200020000, spine: 4200002000, core: 4200001000, host: 4200200000}",
                  "    management: 10.31.0.0/16",
                  "  - name: b", "    role: oob", "    kind: ethernet", "    platform: nvue",
                  "    switch_model: sn2201", f"    node_groups: [{', '.join(groups)}]",
                  "    management: {prefix: 10.32.0.0/16, gateway: 10.32.0.1}"]
    return "\n".join(lines) + "\n"


def identities(text: str):
    """Everything growth must keep: cables (with their addresses), switches and every identifier."""
    validated = validate(load_text(text, "grow.yaml"))
    fabrics, contexts = build(validated)
    cables = {}
    ids: dict[str, dict] = {k: {} for k in ("loopbacks", "asns", "management", "guids", "leaf_subnets",
                                            "node_loopbacks", "node_asns")}
    upper = {}
    for name, f in fabrics.items():  # every network plane
        a = contexts[name].allocation
        for i, lk in enumerate(f.links):
            cables[(lk.a, lk.a_port, lk.z, lk.z_port)] = a.link_ips.get(i)
        for what in ids:
            ids[what].update(getattr(a, what))
        upper.update({s.name: s.role for s in f.switches if s.role != "leaf"})
    return validated, _Planes(list(fabrics.values())), cables, ids, upper


class _Planes:
    """The switches and hosts of every plane (the hosts are the same nodes on each)."""

    def __init__(self, fabrics):
        self.first = fabrics[0]
        self.switches = [s for f in fabrics for s in f.switches]
        self.hosts = fabrics[0].hosts

    def __getattr__(self, name: str):
        return getattr(self.first, name)  # plan, links, ...: the first plane's (alike on every plane)


def assert_pure_addition(small: str, big: str, warned: bool = False) -> None:
    v_small, f_small, c_small, ids_small, up_small = identities(small)
    v_big, f_big, c_big, ids_big, up_big = identities(big)
    assert warned or not any("growing this fabric" in w for ws in v_small.warnings.values() for w in ws)
    moved = {k: v for k, v in c_small.items() if c_big.get(k, "gone") != v}
    assert not moved, f"{len(moved)} existing cables moved or re-addressed, e.g. {next(iter(moved.items()))}"
    assert {s.name for s in f_small.switches} <= {s.name for s in f_big.switches}
    for what, small_ids in ids_small.items():
        changed = {k: v for k, v in small_ids.items() if ids_big[what].get(k) != v}
        assert not changed, f"{what} of existing devices changed: {sorted(changed.items())[:3]}"
    # the cores are the plan's from the start and a pod's spines come with its leaves (docs/growth.md):
    # growth adds spines only to pods the smaller fabric had no leaf in, and never a core
    assert {n: up_big.get(n) for n in up_small} == up_small
    added = {s.name: s for s in f_big.switches if s.role != "leaf" and s.name not in up_small}
    assert not any(s.role == "core" for s in added.values()), f"cores added: {sorted(added)[:3]}"
    pods = {s.pod for s in f_small.switches if s.role == "leaf"}
    assert not any(s.pod in pods for s in added.values()), f"spines added to existing pods: {sorted(added)[:3]}"
    assert [h.name for h in f_small.hosts if h.role == "compute"] == \
        [h.name for h in f_big.hosts if h.role == "compute"][:len(f_small.hosts) - sum(
            h.role == "storage" for h in f_small.hosts)]


@st.composite
def planned_fabrics(draw):
    platform = draw(st.sampled_from(sorted(PLATFORMS)))
    topology = draw(st.sampled_from(["rail-optimized", "fat-tree"]))
    ratio = draw(st.sampled_from([1, 2]))
    tiers = draw(st.sampled_from(["auto", 2, 3]))
    su = draw(st.sampled_from([2, 4])) * ratio
    per_unit = su if topology == "rail-optimized" else (4 if ratio == 1 else 5)
    planned_units = draw(st.integers(2, 6 if tiers != 2 else 4))
    present = draw(st.integers(1, planned_units - 1))
    extra = draw(st.integers(0, per_unit - 1))  # the last unit may be partly filled
    nodes = min((present - 1) * per_unit + max(1, extra), planned_units * per_unit)
    planes = draw(st.sampled_from([1, 1, 2])) if platform != "opensm" else 1
    storage = draw(st.sampled_from([0, 0, 3])) if platform in ("opensm", "eos") and planes == 1 else 0
    leaf_subnet = platform != "opensm" and draw(st.booleans())
    cluster = draw(st.booleans())  # with a storage network (BGP to the host) and the out-of-band one
    return dict(platform=platform, topology=topology, ratio=ratio, tiers=tiers, su=su, storage=storage,
                leaf_subnet=leaf_subnet, planes=planes, cluster=cluster), nodes, per_unit, planned_units * per_unit


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planned_fabrics())
def test_a_planned_fabric_grows_by_pure_addition(case) -> None:
    """Kinds, topologies, tiers, ratios and network planes, alone or with a storage network (BGP to
    the host) and the out-of-band network: N nodes' cabling, names, addresses, ASNs and GUIDs are a
    subset of N + one unit's; the cores (and two tiers' spines) do not change, and three tiers' spines
    come only with a new pod."""
    options, nodes, per_unit, planned = case
    topology = options.pop("topology")
    platform = options.pop("platform")
    small = inventory(platform, topology, nodes, planned, **options)
    big = inventory(platform, topology, min(nodes + per_unit, planned), planned, **options)
    assert_pure_addition(small, big)


def test_the_property_check_catches_an_unplanned_growth() -> None:
    """Without a plan the same growth re-cables: the check above must fail on it."""
    small = inventory("eos", "rail-optimized", 8, None, su=4)
    big = inventory("eos", "rail-optimized", 16, None, su=4)
    with pytest.raises(AssertionError, match="existing cables moved|changed"):
        assert_pure_addition(small, big, warned=True)


def test_more_nodes_than_planned_is_a_located_error(tmp_path: Path) -> None:
    from fabgen.errors import InventoryError
    from fabgen.inventory.loader import load

    path = tmp_path / "inv.yaml"
    path.write_text(inventory("opensm", "rail-optimized", 12, 8, su=4))
    with pytest.raises(InventoryError) as err:
        validate(load(path))
    text = str(err.value)
    assert re.search(r"inv\.yaml:\d+:\d+: .*12 nodes are attached, more than the 8 this fabric is planned for", text)
    assert "planned_nodes" in text


def moved_cables(small: str, big: str) -> int:
    """Existing cables missing from the grown fabric, counted by building both."""
    _, _, c_small, _, _ = identities(small)
    _, _, c_big, _, _ = identities(big)
    return sum(1 for k in c_small if k not in c_big)


@pytest.mark.parametrize("platform,topology,nodes,su", [
    ("nvue", "rail-optimized", 64, 64), ("opensm", "rail-optimized", 16, 8), ("eos", "fat-tree", 32, 4),
])
def test_unplanned_growth_that_recables_is_warned_with_the_count(platform, topology, nodes, su) -> None:
    small = inventory(platform, topology, nodes, None, su=su)
    validated, f, *_ = identities(small)
    (warning,) = [w for w in validated.warnings["f"] if "growing this fabric" in w]
    m = re.search(r"by one (scalable unit|leaf) \(to ([\d,]+) nodes\).* move ([\d,]+) of its ([\d,]+) cables", warning)
    assert m, warning
    grown = int(m.group(2).replace(",", ""))
    assert moved_cables(small, inventory(platform, topology, grown, None, su=su)) == int(m.group(3).replace(",", ""))
    assert int(m.group(4).replace(",", "")) == len(f.links)
    assert "planned_nodes" in warning and warning.startswith("fabrics[0] (line ")
    # the key that avoids it: planned for the grown size, no warning and no cable moves
    planned = inventory(platform, topology, nodes, grown, su=su)
    assert not [w for w in identities(planned)[0].warnings.get("f", []) if "growing" in w]
    assert moved_cables(planned, inventory(platform, topology, grown, grown, su=su)) == 0


def test_growth_into_a_third_tier_is_warned_with_renames() -> None:
    validated, *_ = identities(inventory("opensm", "rail-optimized", 64, None, su=8))
    (warning,) = [w for w in validated.warnings["f"] if "growing this fabric" in w]
    assert "take it from 2 to 3 tiers" in warning and "rename" in warning and "spine and core tiers" in warning


def test_growth_that_only_adds_a_pod_moves_no_cable() -> None:
    """Three tiers: the next unit opens a new pod with its own spines; no existing cable moves. Without
    a plan the spines and cores still follow the present leaves in the switch order, so the warning
    says it moves no cable and counts what it re-addresses (tests/test_growth_planes.py)."""
    from fabgen.topology.growth import growth_warnings

    validated = validate(load_text((INVENTORIES / "roce-3tier.yaml").read_text(), "roce-3tier.yaml"))
    validated.settle(growth_warnings(validated))  # the stage after validation
    (warning,) = [w for w in validated.warnings.get("eth", []) if "growing" in w]
    assert "would move no cable but re-address" in warning and "cables" not in warning


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@pytest.mark.parametrize("tiers", [2, 3])
def test_names_never_depend_on_how_many_switches_exist(platform: str, tiers: int) -> None:
    """From one unit to the most the tier count holds, every name keeps its width."""
    names: dict[str, str] = {}
    for nodes in (1, 4, 40, 120):
        try:
            _, f, *_ = identities(inventory(platform, "rail-optimized", nodes, None, su=4, tiers=tiers))
        except Exception as exc:  # the largest may not fit two tiers
            assert "two tiers" in str(exc) and tiers == 2
            continue
        w = name_widths(f.plan)
        for s in f.switches:
            key = re.sub(r"\d+", "#", s.name) + "/" + str(s.index) + s.role
            assert names.setdefault(key, s.name) == s.name
            for part, digits in re.findall(r"(su|spine|pod|core)(\d+)", s.name):
                assert len(digits) == getattr(w, "unit" if part == "su" else part)


def review(tmp_path: Path, small: str, big: str, capsys) -> str:
    from fabgen.cli import main

    (tmp_path / "a.yaml").write_text(small)
    (tmp_path / "b.yaml").write_text(big)
    try:
        main(["diff", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), "--no-files"])
    except SystemExit as exc:
        assert not exc.code
    return capsys.readouterr().out


ALTERING = ("Devices changed", "Devices removed", "Links re-cabled", "Links removed", "ASNs changed",
            "Addresses changed", "Addresses removed", "Fabric intent changed")


@pytest.mark.parametrize("platform,topology,tiers,nodes,planned,step", [
    ("opensm", "rail-optimized", 3, 8, 16, 4), ("eos", "fat-tree", 2, 16, 40, 4),
    ("sonic", "rail-optimized", 2, 4, 12, 4), ("nvue", "rail-optimized", 3, 4, 12, 4),
])
def test_a_planned_growth_reviews_as_additions_only(tmp_path: Path, capsys, platform, topology, tiers, nodes,
                                                    planned, step) -> None:
    small = inventory(platform, topology, nodes, planned, su=4, tiers=tiers)
    out = review(tmp_path, small, inventory(platform, topology, nodes + step, planned, su=4, tiers=tiers), capsys)
    assert "Devices added (" in out and "Links added (" in out
    for heading in ALTERING:
        assert f"{heading} (" not in out, f"{heading} in a planned growth:\n{out[:3000]}"
    # the cores (and two tiers' spines) are all there from the start; three tiers' spines come with new pods
    upper = [line for line in out.splitlines() if "core switches:" in line or ("spine switches:" in line and tiers < 3)]
    assert not upper, upper


def test_the_review_check_catches_unplanned_growth(tmp_path: Path, capsys) -> None:
    small = inventory("eos", "fat-tree", 32, None, su=4, tiers=2)
    out = review(tmp_path, small, inventory("eos", "fat-tree", 36, None, su=4, tiers=2), capsys)
    assert "Links re-cabled (" in out and "Devices changed (" in out


def test_validate_and_the_report_say_what_the_plan_completes_to(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fabgen.cli import app
    from fabgen.pipeline import render_to

    result = CliRunner().invoke(app, ["validate", str(INVENTORIES / "spectrumx-1su.yaml")])
    assert result.exit_code == 0, result.output
    assert ("sx: rail-optimized, 2 tier(s), 64 nodes, 512 endpoints at 400G: 8 leaf, 16 spine, 0 core switches "
            "(planned for 256 nodes: 32 leaf, 16 spine, 0 core switches)") in result.output
    render_to(INVENTORIES / "spectrumx-1su.yaml", tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())["fabrics"]["sx"]
    assert report["planned"] == {"nodes": 256, "pods": 0, "scalable_units": 4,
                                 "switches": {"core": 0, "leaf": 32, "spine": 16}}
    assert report["switches"] == {"core": 0, "leaf": 8, "spine": 16}
    assert "Planned for 256 nodes (4 scalable units): 32 leaf, 16 spine and 0 core switches" in \
        (tmp_path / "report.md").read_text()


@pytest.mark.parametrize("platform,topology", [("eos", "rail-optimized"), ("nvue", "fat-tree"),
                                               ("sonic", "rail-optimized")])
def test_a_planned_multi_plane_fabric_grows_by_pure_addition(platform: str, topology: str) -> None:
    """Every plane of a two-plane fabric keeps its cables, names, addresses and ASNs when a unit is
    added, and the check sees the planes: without a plan, the same growth moves cables."""
    small = inventory(platform, topology, 6, 24, planes=2)
    big = inventory(platform, topology, 10, 24, planes=2)
    _, f, cables, ids, _ = identities(small)
    assert {s.name.split("-")[1] for s in f.switches} == {"plane1", "plane2"}
    assert len(ids["loopbacks"]) == len(f.switches) == len(set(ids["loopbacks"].values()))
    assert_pure_addition(small, big)
    # without a plan no plane's addresses move (each plane has its part of the pools,
    # test_growth_planes.py), but the spine tier grows under the present leaves: the check sees it
    with pytest.raises(AssertionError, match="existing cables moved|changed|spines added"):
        assert_pure_addition(inventory(platform, topology, 6, None, planes=2),
                             inventory(platform, topology, 40, None, planes=2), warned=True)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_growth_checks_beside_the_build_warn_as_validate_does(workers: str, monkeypatch, tmp_path) -> None:
    """Validation leaves the growth checks to the stage after it (topology/growth.py), which a
    render runs beside the build; the warnings are those the checks give when run at once, in the
    same place among a fabric's warnings."""
    from fabgen import parallel
    from fabgen.pipeline import render_to
    from fabgen.topology.growth import growth_warnings

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)
    monkeypatch.setenv("FABGEN_WORKERS", workers)
    text = inventory("opensm", "rail-optimized", 64, None, su=8)
    at_once = validate(load_text(text, "grow.yaml"))
    assert at_once.pending and not any("growing this fabric" in w for w in at_once.warnings.get("f", []))
    at_once.settle(growth_warnings(at_once))
    assert any("growing this fabric" in w for w in at_once.warnings["f"]) and not at_once.pending
    deferred = validate(load_text(text, "grow.yaml"))
    fabrics, _ = build(deferred)
    assert deferred.warnings == at_once.warnings and not deferred.pending
    expected = build(at_once)[0]["f"].warnings
    assert fabrics["f"].warnings == expected
    inv = tmp_path / "grow.yaml"
    inv.write_text(text)
    result = render_to(inv, tmp_path / "out")
    assert result.fabrics["f"].warnings == expected


def nvl72_inventory(platform: str, trays: int, planned: int, su: int, planes: int = 1) -> str:
    kind, plat, model = PLATFORMS[platform]
    node = "gb300-nvl72" if planes > 1 else "gb200-nvl72"
    lines = ["version: 1", "cluster: grow", "node_groups:",
             f"  - {{name: gb, model: {node}, count: {trays}, hostname: 'gb{{n:04d}}', management: 10.20.0.0/16}}",
             "fabrics:", "  - name: f", f"    kind: {kind}", f"    platform: {plat}", "    topology: rail-optimized",
             f"    switch_model: {model}", "    node_groups: [gb]", f"    scalable_unit: {su}",
             f"    planned_nodes: {planned}", "    management: 10.30.0.0/16"]
    if planes > 1:
        lines.append(f"    planes: {planes}")
    if kind != "infiniband":
        lines += ["    ethernet:", "      pools: {loopbacks: 10.255.0.0/16, links: 10.252.0.0/15, hosts: 10.0.0.0/12}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("platform,su,planes", [("opensm", 36, 1), ("nvue", 72, 2), ("eos", 36, 1)])
@pytest.mark.parametrize("racks", [1, 2, 3, 5])
def test_nvl72_rail_groups_grow_by_a_rack_by_pure_addition(platform: str, su: int, planes: int, racks: int) -> None:
    """Units of spine-leaf groups (several leaves per rail, docs/hardware.md), planned for three
    units: every rack added, also one that opens a unit, only adds cables, switches and addresses."""
    planned = 3 * su
    small = nvl72_inventory(platform, 18 * racks, planned, su, planes)
    big = nvl72_inventory(platform, 18 * (racks + 1), planned, su, planes)
    _, f, *_ = identities(small)
    assert f.plan.rail_groups and f.plan.tiers == 3
    assert_pure_addition(small, big)


def test_the_nvl72_example_grows_a_rack_by_pure_addition() -> None:
    """inventories/era-2-4-5-800.yaml plans its GPU fabric for the two racks NVIDIA's one-rack leaves
    are built for (planned_nodes: 36): a second rack moves no cable and no identifier, the out-of-band
    management switches' addresses among them; without the plan the out-of-band network's blocks follow
    the racks present and those two switches re-address."""
    text = (INVENTORIES / "era-2-4-5-800.yaml").read_text()
    one, plan = "    count: 18                          # one NVL72 rack\n", "    planned_nodes: 36 "
    assert one in text and text.count(plan) == 1
    assert_pure_addition(text, text.replace(one, "    count: 36\n"))
    unplanned = re.sub(r"    planned_nodes: 36 .*\n(?:\s+#.*\n)*", "", text)
    assert "planned_nodes" not in unplanned
    with pytest.raises(AssertionError, match=r"management of existing devices changed: .*oob-gpu-mgmt0001"):
        assert_pure_addition(unplanned, unplanned.replace(one, "    count: 36\n"), warned=True)
