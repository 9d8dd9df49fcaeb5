"""Edges of the sizing rules that a mutation run of spec/sizing.py (docs/internals/mutation.md)
found untested: storage NICs on a pinned single switch, a single leaf filled exactly, rail groups
pinned to two tiers. Expected values follow from the rules in sizing.py's docstring and the switch's
port count, not from the code under test."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from readback import read_cabling

from fabgen.errors import InventoryError
from fabgen.pipeline import render_to
from fabgen.spec.sizing import SizingError, leaf_split, name_widths, parse_ratio, plan


def fat(nodes: int, k: int = 64, rails: int = 8, ratio: Fraction = Fraction(1), tiers: str | int = "auto",
        storage: int = 0, **kw):
    return plan(topology="fat-tree", radix=k, speed=400, nodes=nodes, rails=rails, ratio=ratio, tiers=tiers,
                storage=storage, **kw)


# --- storage NICs on a pinned single switch ------------------------------------------------------

def test_a_pinned_single_switch_counts_the_storage_nics() -> None:
    """tiers: 1 gives all 64 ports to NICs: seven DGX (56) and eight storage NICs fill it; a ninth
    storage NIC is refused under `tiers`, naming the NICs counted with the storage ones."""
    one = fat(7, tiers=1, storage=8)
    assert (one.tiers, one.leaves, one.storage, one.storage_leaves, one.spines) == (1, 1, 8, 0, 0)
    assert one.endpoints + one.storage == 64 == one.down
    with pytest.raises(SizingError) as e:
        fat(7, tiers=1, storage=9)
    assert e.value.field == "tiers" and "at most 64 NICs" in e.value.message and "has 65" in e.value.message
    with pytest.raises(SizingError) as e:  # the storage NICs alone can overflow it too
        fat(1, tiers=1, storage=57)
    assert e.value.field == "tiers"


STORAGE_ON_ONE_SWITCH = """version: 1
cluster: t
node_groups:
  - {{name: gpu, model: dgx-h100, count: {gpus}}}
  - {{name: store, model: storage-server, role: storage, count: 2}}
node_models:
  storage-server:
    gpus: 0
    vendor: custom
    nics:
      - {{rdma: mlx5_0, netdev: enp1s0f0np0, speed: 400}}
      - {{rdma: mlx5_1, netdev: enp1s0f1np1, speed: 400}}
fabrics:
  - name: f
    kind: roce
    platform: eos
    topology: fat-tree
    switch_model: arista-7060x5
    node_groups: [gpu, store]
    tiers: 1
"""


def test_storage_nics_on_a_pinned_single_switch_render_after_the_compute_nics(tmp_path: Path) -> None:
    """Seven DGX (56 NICs) and two dual-port storage servers on one 64-port switch: every NIC is
    cabled to that switch, the storage ones on the ports after the compute ones."""
    inv = tmp_path / "ok.yaml"
    inv.write_text(STORAGE_ON_ONE_SWITCH.format(gpus=7))
    out = tmp_path / "out"
    render_to(inv, out)
    rows = [r for r in read_cabling(out, "f") if r["tier"] == "node-leaf"]
    assert len(rows) == 7 * 8 + 2 * 2 and {r["z_device"] for r in rows} == {"f-leaf01"}
    assert not [r for r in read_cabling(out, "f") if r["tier"] != "node-leaf"]
    port = {r["a_device"] + "/" + r["a_port"]: int(r["z_port"].removeprefix("Ethernet").split("/")[0]) for r in rows}
    assert len(set(port.values())) == len(port)
    compute = [p for name, p in port.items() if name.startswith("gpu")]
    storage = [p for name, p in port.items() if name.startswith("store")]
    assert max(compute) < min(storage) and sorted(compute + storage) == list(range(1, 61))


def test_storage_nics_that_overflow_a_pinned_single_switch_are_refused_before_rendering(tmp_path: Path) -> None:
    """Eight DGX fill the 64 ports; the four storage NICs do not fit: a located problem at `tiers`,
    nothing written (no traceback at render)."""
    inv = tmp_path / "full.yaml"
    inv.write_text(STORAGE_ON_ONE_SWITCH.format(gpus=8))
    out = tmp_path / "out"
    with pytest.raises(InventoryError) as err:
        render_to(inv, out)
    (problem,) = err.value.problems
    assert problem.path == "fabrics[0].tiers" and "has 68" in problem.message
    assert not out.exists()


# --- a single leaf filled exactly ----------------------------------------------------------------

@pytest.mark.parametrize("ratio, down", [(Fraction(1), 32), (Fraction(3), 48)])
def test_an_exactly_full_single_leaf_is_one_switch_and_one_more_nic_makes_two_tiers(ratio: Fraction,
                                                                                   down: int) -> None:
    """A 64-port leaf keeps down = 64 * p / (p + q) ports for NICs at p:q (32 at 1:1, 48 at 3:1).
    Endpoints that fill them exactly still fit one switch (auto); one NIC more, compute or storage,
    makes a leaf layer under spines."""
    nodes = down // 8
    one = fat(nodes, ratio=ratio)
    assert (one.tiers, one.leaves, one.spines, one.endpoints) == (1, 1, 0, down)
    grown = fat(nodes + 1, ratio=ratio)
    assert grown.tiers == 2 and grown.leaves == 2 and grown.spines >= 1
    with_storage = fat(nodes, ratio=ratio, storage=1)
    assert with_storage.tiers == 2 and with_storage.storage_leaves >= 1 and with_storage.spines >= 1
    fewer = fat(nodes - 1, ratio=ratio, storage=8)  # storage filling the last eight ports: still one switch
    assert (fewer.tiers, fewer.leaves, fewer.storage_leaves) == (1, 1, 0)


# --- rail groups pinned to two tiers --------------------------------------------------------------

def gb200(units: int, tiers: str | int = "auto"):
    """DGX GB200 SuperPOD units: 144 trays of four rails, 8 NVL72 racks, one leaf per rack and rail."""
    return plan(topology="rail-optimized", radix=64, speed=400, nodes=144 * units, rails=4, ratio=Fraction(1),
                scalable_unit=144, tiers=tiers, domain=18)


def test_rail_groups_pinned_to_two_tiers_build_one_spine_layer_while_the_leaves_fit() -> None:
    """Two units are 2 x 4 rails x 8 leaves = 64 leaves: auto builds three tiers (spine-leaf groups),
    `tiers: 2` one spine layer of 64-port spines, each leaf's 18 uplinks one to each of 18 spines."""
    assert gb200(2).tiers == 3
    two = gb200(2, tiers=2)
    assert (two.tiers, two.leaves, two.pods, two.cores) == (2, 64, 1, 0)
    assert (two.up, two.spines, two.leaf_spine_width, two.spine_down) == (18, 18, 1, 64)


def test_rail_groups_refuse_two_tiers_that_cannot_hold_their_leaves_and_one_switch() -> None:
    """Three units are 96 leaves, more than a 64-port spine has ports: `tiers: 2` is refused under
    `tiers`; `tiers: 1` always is, a unit of several leaves per rail being no single switch."""
    with pytest.raises(SizingError) as e:
        gb200(3, tiers=2)
    assert e.value.field == "tiers" and "at most 64 leaves" in e.value.message and "needs 96" in e.value.message
    with pytest.raises(SizingError) as e:
        gb200(1, tiers=1)
    assert e.value.field == "tiers" and e.value.message.startswith("tiers: 1 is one switch")


# --- every plan holds together ---------------------------------------------------------------------
# What each Plan field must be, from the rules of sizing.py's docstring (inputs carried through,
# down:up at the ratio, units holding the nodes, storage leaves, one spine layer or pods under cores),
# checked over a spread of shapes. A field dropped, swapped or miscounted breaks one of these.

COUNTS = ("tiers", "radix", "speed", "nodes", "rails", "endpoints", "unit_nodes", "units", "leaves_per_unit", "down",
          "up", "leaves", "pods", "units_per_pod", "spines_per_pod", "leaf_spine_width", "spine_down", "spine_up",
          "cores_per_plane", "spine_core_width", "storage", "storage_leaves", "present_nodes", "present_units",
          "domain", "group_leaves")


def rail(nodes: int, su: int | None = 32, k: int = 64, rails: int = 8, ratio: Fraction = Fraction(1),
         tiers: str | int = "auto", **kw):
    return plan(topology="rail-optimized", radix=k, speed=400, nodes=nodes, rails=rails, ratio=ratio,
                scalable_unit=su, tiers=tiers, **kw)


def check(p, topology: str, k: int, nodes: int, rails: int, ratio: Fraction, tiers: str | int = "auto",
          storage: int = 0, domain: int | None = None, spread: int = 1, pairs: bool = False,
          planned: int | None = None) -> None:
    planned = planned or nodes
    assert all(type(getattr(p, f)) is int for f in COUNTS), {f: getattr(p, f) for f in COUNTS}
    assert (p.topology, p.radix, p.speed, p.nodes, p.rails, p.ratio, p.storage) == (topology, k, 400, planned, rails,
                                                                                     ratio, storage)
    assert p.endpoints == planned * rails and p.present_nodes == nodes and p.planned == (planned != nodes)
    assert p.domain == ((domain or 1) if topology == "rail-optimized" else 1)
    if tiers != "auto":
        assert p.tiers == tiers
    elif topology == "fat-tree" and p.units == 1 and planned * rails + storage <= p.down:
        assert p.tiers == 1  # every endpoint fits one leaf: one switch
    elif p.rail_groups:
        assert p.tiers == (2 if p.units == 1 else 3)  # one unit under one spine layer; groups beyond
    else:
        assert p.tiers == (2 if p.leaves <= k else 3)  # two tiers while one spine layer holds the leaves
    pinned_one = p.tiers == 1 and tiers == 1
    if pinned_one:  # every port to NICs, whole nodes only
        assert p.up == 0 and p.down == k // rails * rails and p.unit_nodes == p.down // rails
    else:
        assert p.down * ratio.denominator == p.up * ratio.numerator and p.down + p.up <= k
    # units hold the planned nodes; the present ones fill the first units
    if p.unit_nodes:
        assert p.units == math.ceil(planned / p.unit_nodes) and p.present_units == math.ceil(nodes / p.unit_nodes)
    else:  # a node's NICs span leaves
        assert p.units == math.ceil(planned * rails / p.down) and p.present_units == math.ceil(nodes * rails / p.down)
    if p.rail_groups:
        assert p.leaves_per_unit == rails * p.group_leaves and p.unit_nodes == p.down * p.group_leaves
        # a leaf takes the most node ports at the ratio that are whole NVLink domains and divide the unit
        pq, qq, dom = ratio.numerator, ratio.denominator, domain or 1
        assert p.down == max(d for d in range(1, k + 1) if d % dom == 0 and p.unit_nodes % d == 0
                             and (d * qq) % pq == 0 and d + d * qq // pq <= k)
    else:
        assert p.leaves_per_unit == (rails if topology == "rail-optimized" else 1)
    # storage leaves: none on one switch; else enough for the NICs, two at least for multi-port
    # servers (spread), an even number for leaf pairs
    if storage == 0 or p.tiers == 1:
        want = 0
    else:
        want = max(math.ceil(storage / p.down), min(2, spread))
        want += want % 2 if pairs else 0
    assert p.storage_leaves == want
    assert p.leaves == p.units * p.leaves_per_unit + p.storage_leaves == p.compute_leaves + p.storage_leaves
    if p.tiers == 1:
        assert (p.leaves, p.pods, p.units_per_pod, p.spines_per_pod, p.leaf_spine_width, p.spine_down, p.spine_up,
                p.cores_per_plane, p.spine_core_width, p.spines, p.cores) == (1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0)
        assert p.endpoints + p.storage <= p.down
    elif p.tiers == 2:
        assert (p.pods, p.units_per_pod, p.spine_up, p.cores_per_plane, p.spine_core_width, p.cores) == (
            1, p.units, 0, 0, 0, 0)
        assert p.spines_per_pod * p.leaf_spine_width == p.up and p.spines == p.spines_per_pod
        assert p.spine_down == p.leaves * p.leaf_spine_width <= k
    else:
        assert p.tiers == 3 and p.spines_per_pod * p.leaf_spine_width == p.up
        assert p.units_per_pod == (1 if p.rail_groups else p.leaves_per_pod // p.leaves_per_unit)
        assert p.pods == math.ceil(p.leaves / p.leaves_per_pod) <= k
        assert p.spine_down == p.spine_up == p.leaves_per_pod * p.leaf_spine_width <= k // 2  # non-blocking spines
        assert p.cores_per_plane * p.spine_core_width == p.spine_up
        assert p.pods * p.spine_core_width <= k  # a core has a port for each pod's spine of its plane
        assert p.spines == p.pods * p.spines_per_pod and p.cores == p.spines_per_pod * p.cores_per_plane
        if not p.rail_groups:
            assert p.units_per_pod <= p.units  # pods of whole units, none larger than the fabric
            assert (p.pods * p.spines_per_pod + p.cores, p.pods, p.units_per_pod, p.spines_per_pod) == \
                fewest_switches(p)


def fewest_switches(p) -> tuple[int, int, int, int]:
    """The docstring's rule for three tiers, searched here on its own: pods of m whole units (at most
    radix/2 leaves, at most radix pods), s spines a pod dividing a leaf's uplinks with at most radix/2
    ports down, the fewest cores a plane that divide a spine's uplinks and hold every pod's; the
    fewest switches win, then the fewest pods (the larger pod), then the smaller m and s."""
    k, best = p.radix, None
    for m in range(1, p.units + 1):
        pod_leaves = m * p.leaves_per_unit
        pods = math.ceil(p.leaves / pod_leaves)
        if pod_leaves > k // 2 or pods > k:
            continue
        for s in (s for s in range(1, p.up + 1) if p.up % s == 0):
            down = pod_leaves * (p.up // s)
            cores = next((c for c in range(1, down + 1) if down % c == 0 and c * k >= pods * down), None)
            if down <= k // 2 and cores is not None:
                key = (pods * s + s * cores, pods, m, s)
                best = key if best is None or key < best else best
    assert best is not None
    return best


CASES = [
    # (topology, nodes, keyword arguments of plan)
    ("fat-tree", 2, {}),
    ("fat-tree", 4, {}),  # 32 NICs: the leaf's 32 node ports exactly
    ("fat-tree", 5, {}),
    ("fat-tree", 3, {"storage": 8}),
    ("fat-tree", 8, {"tiers": 1}),
    ("fat-tree", 7, {"tiers": 1, "storage": 8}),
    ("fat-tree", 40, {"ratio": Fraction(2)}),
    ("fat-tree", 40, {"ratio": Fraction(3), "storage": 10, "storage_spread": 2}),
    ("fat-tree", 40, {"ratio": Fraction(3, 2)}),
    ("fat-tree", 3, {"tiers": 2, "storage": 3, "storage_spread": 2, "storage_pairs": True}),
    ("fat-tree", 3, {"tiers": 3, "storage": 5, "storage_spread": 3, "storage_pairs": True}),
    ("fat-tree", 600, {}),
    ("fat-tree", 2, {"radix": 8}),  # eight NICs a node on an 8-port leaf at 1:1: a node spans two leaves
    ("fat-tree", 2, {"radix": 8, "planned_nodes": 3}),
    ("fat-tree", 2, {"domain": 18}),  # NVLink domains shape rail-optimized units only
    ("fat-tree", 8, {"radix": 9, "rails": 1, "ratio": Fraction(8)}),  # 8 down and 1 up fill the 9 ports
    ("fat-tree", 8 * 64, {"ratio": Fraction(1)}),  # 128 leaves: three tiers
    ("rail-optimized", 33, {}),
    ("rail-optimized", 33, {"su": 33, "ratio": Fraction(3, 2)}),  # 33 node ports, 22 uplinks
    ("rail-optimized", 63, {"su": 63}),  # three leaves of 21 a rail (21 divides 63, no even number does)
    ("rail-optimized", 66, {"su": 66, "ratio": Fraction(3, 2)}),  # two leaves of 33 node ports, 22 up
    ("rail-optimized", 40, {"su": 40, "ratio": Fraction(4, 3)}),  # 40 + 30 ports: two leaves of 20 a rail
    ("rail-optimized", 96, {"su": 96, "ratio": Fraction(3)}),  # two leaves of 48 a rail at 3:1
    ("rail-optimized", 592, {"su": 592, "rails": 1}),  # 37 leaves of 16 (half of 32 used): still taken
    ("rail-optimized", 2048, {"su": 1024, "rails": 1}),  # groups of 32 leaves: half a 64-port spine
    ("rail-optimized", 3, {"su": 3, "radix": 4, "rails": 1}),  # three one-port leaves on 4-port switches
    ("rail-optimized", 144, {"su": 144, "rails": 4, "domain": 18, "storage": 37, "storage_pairs": True}),
    ("rail-optimized", 288, {"su": 144, "rails": 4, "domain": 18, "storage": 37, "storage_pairs": True}),
    ("fat-tree", 1, {"radix": 8, "tiers": 1}),  # one node of eight NICs fills an 8-port switch
    ("fat-tree", 449, {"ratio": Fraction(8)}),  # 56 down, 7 up: one spine a pod or seven
    ("fat-tree", 1000, {"ratio": Fraction(8)}),
    ("fat-tree", 40, {"radix": 16, "rails": 1, "tiers": 3, "storage": 8}),
    ("fat-tree", 300, {"ratio": Fraction(2), "tiers": 3}),  # 60 leaves: two pods of 30, not 32 and 28
    ("rail-optimized", 32, {"tiers": 3, "storage": 10}),  # one unit, its storage leaf in a pod of its own
    ("fat-tree", 4, {"rails": 1, "ratio": Fraction(3), "tiers": 3, "storage": 1}),  # likewise: no pod of 2 units
    ("rail-optimized", 256, {}),  # 64 leaves: the most one spine layer of 64-port spines takes
    ("rail-optimized", 257, {}),
    ("rail-optimized", 10, {"su": None}),
    ("rail-optimized", 10, {"su": None, "ratio": Fraction(3)}),
    ("rail-optimized", 100, {"storage": 20}),
    ("rail-optimized", 100, {"storage": 20, "storage_spread": 2}),
    ("rail-optimized", 300, {"tiers": 3, "storage": 7, "storage_pairs": True}),
    ("rail-optimized", 64, {"planned_nodes": 128}),
    ("rail-optimized", 30, {"planned_nodes": 300}),
    ("rail-optimized", 4, {"su": 40}),  # two leaves of 20 nodes per rail
    ("rail-optimized", 144, {"su": 144, "rails": 4, "domain": 18}),  # one GB200 unit: two tiers
    ("rail-optimized", 288, {"su": 144, "rails": 4, "domain": 18}),  # two: spine-leaf groups
    ("rail-optimized", 288, {"su": 144, "rails": 4, "domain": 18, "tiers": 2}),
    ("rail-optimized", 144, {"su": 144, "rails": 4, "domain": 18, "tiers": 3, "storage": 6, "storage_spread": 2}),
    ("rail-optimized", 144, {"su": 144, "rails": 4, "domain": 18, "planned_nodes": 288}),
    ("rail-optimized", 144, {"su": 144, "rails": 4, "domain": 18, "radix": 128}),
    ("rail-optimized", 144, {"su": None, "rails": 4, "domain": 18}),
]


@pytest.mark.parametrize("topology, nodes, kw", CASES, ids=[f"{t}-{n}-{i}" for i, (t, n, _) in enumerate(CASES)])
def test_every_plan_holds_together(topology: str, nodes: int, kw: dict) -> None:
    kw = dict(kw)
    k, rails, ratio = kw.pop("radix", 64), kw.pop("rails", 8), kw.pop("ratio", Fraction(1))
    args = dict(radix=k, speed=400, nodes=nodes, rails=rails, ratio=ratio, **kw)
    if topology == "rail-optimized":
        args["scalable_unit"] = args.pop("su", 32)
    p = plan(topology=topology, **args)
    check(p, topology, k, nodes, rails, ratio, tiers=kw.get("tiers", "auto"), storage=kw.get("storage", 0),
          domain=kw.get("domain"), spread=kw.get("storage_spread", 1), pairs=kw.get("storage_pairs", False),
          planned=kw.get("planned_nodes"))


def test_a_plan_exactly_the_size_present_is_no_plan_and_one_smaller_is_refused() -> None:
    p = rail(64, planned_nodes=64)
    assert (p.nodes, p.present_nodes, p.planned) == (64, 64, False)
    with pytest.raises(SizingError) as e:
        rail(65, planned_nodes=64)
    assert e.value.field == "planned_nodes"
    assert e.value.message.startswith("65 nodes are attached, more than the 64 this fabric is planned for")
    assert e.value.message.endswith("or attach fewer nodes")


def test_a_plan_too_large_is_blamed_on_planned_nodes_and_other_errors_keep_their_key() -> None:
    """Planned beyond three tiers: the fault is `planned_nodes` (the nodes present would fit),
    saying the plan's size; an error of another key stays that key's with or without a plan."""
    with pytest.raises(SizingError) as e:
        rail(32, planned_nodes=32 * 257)  # 257 units; three tiers of 64-port switches hold 256
    assert e.value.field == "planned_nodes" and e.value.message.startswith(f"planned for {32 * 257} nodes: ")
    assert "hold at most 256 (65536 endpoints at 1:1)" in e.value.message
    with pytest.raises(SizingError) as e:
        rail(32, planned_nodes=64, su=32, ratio=Fraction(3))
    assert e.value.field == "scalable_unit"


def test_two_tier_limits_are_said_in_units_endpoints_and_ratio() -> None:
    """A 64-port spine takes 64 leaves: 8 rail-optimized units of 8 leaves (32 nodes of 8 NICs, 2048
    endpoints), or 64 fat-tree leaves; the ratio is written as given (3 or 1.5)."""
    with pytest.raises(SizingError) as e:
        rail(32 * 9, tiers=2)
    assert e.value.field == "tiers"
    assert ("two tiers of 64-port switches hold at most 8 scalable units (2048 endpoints at 1:1); this fabric "
            "needs 9 (2304 endpoints): use tiers: 3 or auto") in e.value.message
    with pytest.raises(SizingError) as e:
        fat(8 * 65, tiers=2)
    assert "hold at most 64 leaves (2048 endpoints at 1:1); this fabric needs 130 (4160 endpoints)" in e.value.message
    with pytest.raises(SizingError) as e:
        fat(6 * 65, tiers=2, ratio=Fraction(3), storage=48)
    assert ("hold at most 64 leaves (3072 endpoints at 3:1); this fabric needs 65 and 1 storage leaves "
            "(3168 endpoints)") in e.value.message
    with pytest.raises(SizingError) as e:  # eight NICs a node over 4-port leaves: a node spans two
        fat(9, k=8, tiers=2)
    assert "two tiers of 8-port switches hold at most 8 leaves (32 endpoints at 1:1); this fabric needs 18 " \
           "(72 endpoints)" in e.value.message
    with pytest.raises(SizingError) as e:
        rail(32 * 257, storage=10)
    assert e.value.field == "node_groups" and e.value.message == (
        "65802 endpoints need 257 scalable units and 1 storage leaves; three tiers of 64-port switches hold "
        "at most 256 (65536 endpoints at 1:1)")
    with pytest.raises(SizingError) as e:
        fat(600, tiers=2, ratio=Fraction(3, 2))
    assert "endpoints at 1.5:1)" in e.value.message


def test_impossible_ratios_and_units_name_their_key_and_a_way_out() -> None:
    with pytest.raises(SizingError) as e:
        fat(4, k=8, ratio=Fraction(8))
    assert e.value.field == "oversubscription" and "8:1 cannot be built with whole ports on a 8-port switch" in \
        e.value.message and "at least 8 downlinks and 1 uplinks" in e.value.message
    with pytest.raises(SizingError) as e:
        fat(4, ratio=Fraction(2), tiers=1)
    assert e.value.field == "oversubscription" and "leave oversubscription at 1 with tiers: 1" in e.value.message
    with pytest.raises(SizingError) as e:
        rail(8, tiers=1)
    assert e.value.field == "tiers" and "use topology: fat-tree, or tiers: auto" in e.value.message
    # one switch: whole nodes only where the ports do not divide by the NICs a node
    for nodes, k, rails, said in ((9, 64, 8, "one 64-port arista-7060x5 takes at most 64 NICs; this fabric has 72 "),
                                  (8, 60, 8, "one 60-port arista-7060x5 takes at most 56 NICs of whole nodes; this "
                                             "fabric has 64 "),
                                  (1, 4, 8, "one 4-port arista-7060x5 takes at most 4 NICs; this fabric has 8 ")):
        with pytest.raises(SizingError) as e:
            plan(topology="fat-tree", radix=k, speed=400, nodes=nodes, rails=rails, ratio=Fraction(1), tiers=1,
                 model="arista-7060x5")
        assert e.value.field == "tiers" and e.value.message == said + "(use tiers: auto or 2)"
    with pytest.raises(SizingError) as e:
        rail(36, su=27, rails=4, domain=18)
    assert e.value.field == "scalable_unit" and "use a multiple of 18 (e.g. 18 or 36)" in e.value.message
    with pytest.raises(SizingError) as e:
        rail(36, su=10, rails=4, domain=18)
    assert "use a multiple of 18 (e.g. 18 " in e.value.message  # never 0, which is no unit
    with pytest.raises(SizingError) as e:
        rail(30, su=31, ratio=Fraction(3))
    assert e.value.field == "scalable_unit"
    assert "a leaf with 31 node ports would need 31/3 uplinks; use a multiple of 3 (e.g. 30 or 33)" in e.value.message
    with pytest.raises(SizingError) as e:
        rail(10, su=None, rails=4, domain=36, k=64)  # 32 node ports a leaf: no whole 36-node rack
    assert e.value.field == "switch_model"
    assert "a leaf needs 36 node ports per rail and their uplinks at 1:1; a 64-port switch has 32 node ports" in \
        e.value.message
    with pytest.raises(SizingError) as e:
        rail(10, su=None, rails=4, domain=54, k=64, ratio=Fraction(3))  # 48 node ports and 16 up at 3:1
    assert e.value.message.endswith("at 3:1; a 64-port switch has 48 node ports")
    for su, domain, tail in ((45, 1, ""), (74, 2, " in whole NVLink domains of 2")):
        with pytest.raises(SizingError) as e:  # 15 (or 2) node ports a leaf would use less than half of 32
            rail(su, su=su, rails=1, domain=domain)
        assert e.value.field == "scalable_unit" and e.value.message == (
            f"{su} nodes per unit are more than one leaf takes (32 ports down at 1:1 on a switch), and no whole "
            f"number of leaves per rail, each at least half used, holds them{tail}: use a multiple of 32, or at "
            "most 32 for one leaf per rail")
    with pytest.raises(SizingError) as e:  # 66 per unit: no leaf of at least 16 node ports divides it in racks of 6
        rail(66, su=66, rails=4, domain=6, ratio=Fraction(1))
    assert e.value.field == "scalable_unit"
    assert "66 nodes per unit are more than one leaf takes (30 ports down at 1:1 on a switch)" in e.value.message
    assert "in whole NVLink domains of 6: use a multiple of 30, or at most 30 for one leaf per rail" in e.value.message


def test_rail_groups_that_outgrow_their_spines_or_cores_are_refused() -> None:
    with pytest.raises(SizingError) as e:
        rail(64 * 33 * 2, su=64 * 33, rails=1, k=64, tiers=3)  # 66 leaves a group: more than 32 spine ports down
    assert e.value.field == "scalable_unit" and "a spine-leaf group of 66 leaves" in e.value.message
    with pytest.raises(SizingError) as e:
        rail(144 * 17, su=144, rails=4, domain=18)
    assert e.value.field == "node_groups"
    assert "2448 nodes need 68 spine-leaf groups; core groups of 64-port switches join at most 64 (16 units of " \
           "144 nodes at 1:1)" in e.value.message


def test_leaf_split_and_ratios_as_written() -> None:
    assert leaf_split(10, Fraction(1)) == (5, 5)  # no alignment asked: every port used
    assert leaf_split(10, Fraction(1), 2) == (4, 4)
    assert leaf_split(64, Fraction(3, 2), 8) == (24, 16)  # down a multiple of 3 and of 8, up 2/3 of it
    assert (parse_ratio(1.5), parse_ratio(2), parse_ratio(3), parse_ratio(0.5)) == (
        Fraction(3, 2), Fraction(2), Fraction(3), Fraction(1, 2))


def test_switch_places_run_leaves_then_spines_then_cores() -> None:
    p = rail(300, tiers=3)
    places = ([p.switch_place("leaf", i) for i in range(1, p.leaves + 1)]
              + [p.switch_place("spine", i) for i in range(1, p.spines + 1)]
              + [p.switch_place("core", i) for i in range(1, p.cores + 1)])
    assert places == list(range(p.leaves + p.spines + p.cores))


def test_name_widths_hold_the_largest_fabric_of_the_radix_and_tier_count() -> None:
    """Names never change as a fabric grows: a width holds the largest count the radix builds at that
    tier count. Two tiers of 64-port switches: 64 leaves (8 units of 8), spines up to the 32 uplinks;
    three tiers: 64 pods of 32 leaves (2048 leaves, 256 units), 32 spines a pod, 32 planes of 32
    cores (1024); 128-port switches reach 128 leaves (3 digits). Two digits at least."""
    two = [name_widths(rail(n)) for n in (1, 32, 100, 256)]
    assert all(w == two[0] for w in two)
    w = two[0]
    assert (w.unit, w.rail, w.leaf, w.spine, w.pod, w.core) == (2, 1, 2, 2, 2, 2)
    three = [name_widths(rail(n, tiers=3)) for n in (1, 300, 2000)]
    assert all(x == three[0] for x in three)
    w = three[0]
    assert (w.unit, w.rail, w.leaf, w.spine, w.pod, w.core) == (3, 1, 4, 2, 2, 4)
    w = name_widths(fat(2, k=128, tiers=2))
    assert (w.unit, w.leaf) == (3, 3)
    w = name_widths(fat(3, k=16, rails=1, tiers=3))  # 16 pods of 8 leaves (128), 8 planes of 8 cores (64)
    assert (w.unit, w.leaf, w.pod, w.spine, w.core) == (3, 3, 2, 2, 2)
    w = name_widths(rail(32, su=16, k=16, rails=4))  # rail groups of 2 leaves on 16-port switches: 8 x 16 cores
    assert (w.leaf, w.spine, w.core) == (1, 1, 3)
    w = name_widths(fat(2))  # one switch grows into two tiers: named as two tiers
    assert w == name_widths(fat(2, tiers=2))
    # rail groups: up to 64 groups (a core port each), 16 units of 4 rails, a rail's 8 leaves, 18 spines a
    # group, 18 x 64 cores
    w = name_widths(plan(topology="rail-optimized", radix=64, speed=400, nodes=288, rails=4, ratio=Fraction(1),
                         scalable_unit=144, domain=18))
    assert (w.unit, w.rail, w.leaf, w.spine, w.pod, w.core) == (2, 1, 1, 2, 2, 4)


def test_a_unit_of_nvlink_domains_wider_than_a_leaf_is_refused_not_a_traceback() -> None:
    """72-node NVLink domains on 64-port leaves (32 node ports at 1:1): no leaf holds a whole domain,
    which `scalable_unit` omitted already refuses under switch_model. With scalable_unit: 144 the same
    fabric must be refused too, not end in a ZeroDivisionError."""
    with pytest.raises(SizingError) as e:
        rail(144, su=None, rails=4, domain=72)
    assert e.value.field == "switch_model"
    with pytest.raises(SizingError) as e:
        rail(144, su=144, rails=4, domain=72)
    assert e.value.field in ("scalable_unit", "switch_model")
