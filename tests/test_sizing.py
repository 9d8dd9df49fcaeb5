"""Sizing against NVIDIA's published DGX SuperPOD tables and the fat-tree arithmetic,
plus properties that must hold for sizes no table lists."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import yaml

from conftest import INVENTORIES
from fabgen import api
from fabgen.spec.sizing import SizingError, leaf_split, plan


def rail(nodes: int, su: int | None = 32, k: int = 64, rails: int = 8, ratio: Fraction = Fraction(1),
         tiers: str | int = "auto"):
    return plan(topology="rail-optimized", radix=k, speed=400, nodes=nodes, rails=rails, ratio=ratio,
                scalable_unit=su, tiers=tiers)


def fat(nodes: int, k: int = 64, rails: int = 8, ratio: Fraction = Fraction(1), tiers: str | int = "auto"):
    return plan(topology="fat-tree", radix=k, speed=400, nodes=nodes, rails=rails, ratio=ratio, tiers=tiers)


# DGX SuperPOD H100 RA-11333 "compute fabric component count" and DGX SuperPOD B200 RA
# "larger DGX SuperPOD component counts": (nodes, leaf, spine, core, node-leaf, leaf-spine, spine-core)
PUBLISHED = [
    (31, 8, 4, 0, 248, 256, 0),
    (63, 16, 8, 0, 504, 512, 0),
    (95, 24, 16, 0, 760, 768, 0),
    (127, 32, 16, 0, 1016, 1024, 0),
    (64, 16, 8, 0, 512, 512, 0),
    (128, 32, 16, 0, 1024, 1024, 0),
    (256, 64, 32, 0, 2048, 2048, 0),
    (512, 128, 128, 64, 4096, 4096, 4096),
    (1024, 256, 256, 128, 8192, 8192, 8192),
    (2048, 512, 512, 256, 16384, 16384, 16384),
]


@pytest.mark.parametrize("nodes,leaf,spine,core,nl,ls,sc", PUBLISHED)
def test_published_superpod_rows(nodes, leaf, spine, core, nl, ls, sc) -> None:
    p = rail(nodes)
    assert (p.leaves, p.spines, p.cores) == (leaf, spine, core)
    assert p.endpoints == nl
    assert p.leaves * p.up == ls
    assert p.spines * p.spine_up == sc


# DGX SuperPOD B300 on Quantum-X800 (RA-11339-001, "NVIDIA SuperPOD with DGX B300 Systems, NVIDIA
# Quantum-X800 InfiniBand switching and AC Power", Table 3 "Example Compute Fabric Components",
# docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/latest/
# dgx-superpod-architecture.html): 144-port XDR switches, 8 x 800G per DGX B300, 72 nodes per SU.
# (SUs, nodes, leaf, spine, node-leaf and leaf-spine cables); the catalog entries for the switch
# and the node are the hardware issue's, the rules already hold.
B300_XDR = [(1, 72, 8, 4, 576, 576), (2, 144, 16, 8, 1152, 1152), (4, 288, 32, 18, 2304, 2304),
            (8, 576, 64, 36, 4608, 4608), (18, 1296, 144, 72, 10368, 10368)]


@pytest.mark.parametrize("units,nodes,leaf,spine,nl,ls", B300_XDR)
def test_published_b300_quantum_x800_rows(units, nodes, leaf, spine, nl, ls) -> None:
    """The default unit at 1:1 is half the 144-port radix (72 nodes), and the fewest balanced spines
    (a divisor of a leaf's 72 uplinks) give 18 spines for 4 SUs and 36 for 8, as the table does."""
    p = plan(topology="rail-optimized", radix=144, speed=800, nodes=nodes, rails=8, ratio=Fraction(1))
    assert (p.unit_nodes, p.units, p.tiers) == (72, units, 2)
    assert (p.leaves, p.spines, p.cores) == (leaf, spine, 0)
    assert (p.endpoints, p.leaves * p.up) == (nl, ls)


@pytest.mark.parametrize("k", [16, 32, 40, 64, 128])
def test_fat_tree_limits(k: int) -> None:
    """k^2/2 endpoints on two tiers and k^3/4 on three, at 1:1 (Al-Fares et al.)."""
    two = fat(k * k // 2, k=k, rails=1)
    assert (two.tiers, two.leaves, two.spines) == (2, k, k // 2)
    with pytest.raises(SizingError):
        fat(k * k // 2 + 1, k=k, rails=1, tiers=2)
    three = fat(k ** 3 // 4, k=k, rails=1)
    assert (three.tiers, three.leaves, three.spines, three.cores) == (3, k * k // 2, k * k // 2, k * k // 4)
    with pytest.raises(SizingError) as exc:
        fat(k ** 3 // 4 + 1, k=k, rails=1)
    assert exc.value.field == "node_groups"


def test_65536_endpoints_rail_optimized_three_tiers() -> None:
    p = rail(8192)
    assert p.endpoints == 65536
    assert (p.tiers, p.leaves, p.spines, p.cores) == (3, 2048, 2048, 1024)


def _check_balanced_and_minimal(p) -> None:
    k = p.radix
    assert p.down + p.up <= k
    assert Fraction(p.down, p.up) == p.ratio
    if p.tiers == 2:
        assert p.up % p.spines == 0 and p.leaf_spine_width == p.up // p.spines
        assert p.leaves * p.leaf_spine_width <= k
        # fewest: no smaller spine count divides the uplinks and fits the spine radix
        for s in range(1, p.spines):
            assert p.up % s or p.leaves * (p.up // s) > k
    if p.tiers == 3:
        assert p.up % p.spines_per_pod == 0
        assert p.spine_down == p.leaves_per_pod * p.leaf_spine_width <= k // 2
        assert p.spine_up == p.spine_down
        assert p.spine_down % p.cores_per_plane == 0
        assert p.pods * p.spine_core_width <= k
        assert p.pods == math.ceil(p.units / p.units_per_pod)
        # enough spine and core ports for every uplink
        assert p.spines * p.spine_down >= p.leaves * p.up
        assert p.cores * k >= p.spines * p.spine_up


@pytest.mark.parametrize("nodes", [1, 7, 31, 33, 100, 255, 257, 300, 1000, 3000, 8000])
@pytest.mark.parametrize("ratio", [Fraction(1), Fraction(2), Fraction(3), Fraction(3, 2)])
def test_properties_rail_optimized(nodes: int, ratio: Fraction) -> None:
    p = rail(nodes, su=None, ratio=ratio)
    assert p.units == math.ceil(nodes / p.unit_nodes)
    assert p.leaves == p.units * 8
    _check_balanced_and_minimal(p)


@pytest.mark.parametrize("nodes", [1, 2, 5, 9, 64, 65, 256, 257, 1000, 4000])
@pytest.mark.parametrize("k,ratio", [(64, Fraction(1)), (64, Fraction(2)), (128, Fraction(1)), (40, Fraction(3))])
def test_properties_fat_tree(nodes: int, k: int, ratio: Fraction) -> None:
    down = leaf_split(k, ratio, 8)[0]
    capacity = k * (k // 2) * (down // 8)  # nodes three tiers hold: k pods of k/2 leaves
    if nodes > capacity:
        with pytest.raises(SizingError) as exc:
            fat(nodes, k=k, ratio=ratio)
        assert exc.value.field == "node_groups"
        return
    p = fat(nodes, k=k, ratio=ratio)
    if p.tiers == 1:
        assert nodes * 8 <= p.down
        return
    assert p.down % 8 == 0  # a DGX's eight NICs stay on one leaf
    _check_balanced_and_minimal(p)


def test_partly_populated_unit_is_built_in_full() -> None:
    p = rail(33)  # one full unit and one node of the second
    assert (p.units, p.leaves, p.spines) == (2, 16, 8)
    assert p.leaves * p.up == 512


def test_default_scalable_unit_is_half_the_radix_at_one_to_one() -> None:
    assert rail(10, su=None).unit_nodes == 32
    assert rail(10, su=None, ratio=Fraction(3)).unit_nodes == 48


def test_oversubscribed_fat_tree_keeps_nodes_whole() -> None:
    p = fat(40, ratio=Fraction(2))
    assert (p.down, p.up, p.unit_nodes, p.leaves, p.spines) == (40, 20, 5, 8, 4)


def test_single_leaf_fat_tree_is_one_switch_unless_pinned() -> None:
    assert fat(2).tiers == 1 and fat(2).spines == 0
    pinned = fat(2, tiers=2)
    assert (pinned.tiers, pinned.leaves, pinned.spines) == (2, 1, 1)


def test_pinned_single_switch_gives_every_port_to_nics() -> None:
    # eight DGX H100 on one 64-port switch: what auto refuses (it keeps 32 ports for spines)
    assert fat(8).tiers == 2
    one = fat(8, tiers=1)
    assert (one.tiers, one.leaves, one.spines, one.down, one.up, one.unit_nodes) == (1, 1, 0, 64, 0, 8)
    assert fat(7, k=60, tiers=1).down == 56  # whole nodes only: 60 ports hold seven 8-NIC nodes
    with pytest.raises(SizingError) as e:
        fat(9, tiers=1)
    assert e.value.field == "tiers" and "at most 64 NICs" in e.value.message
    with pytest.raises(SizingError) as e:
        rail(8, tiers=1)
    assert e.value.field == "tiers"
    with pytest.raises(SizingError) as e:
        fat(4, ratio=Fraction(2), tiers=1)
    assert e.value.field == "oversubscription"


def test_errors_name_the_key() -> None:
    # a unit larger than a leaf is not an error: two leaves of 20 nodes per rail
    assert (rail(4, su=40).group_leaves, rail(4, su=40).down) == (2, 20)
    with pytest.raises(SizingError) as e:
        rail(4, su=32, ratio=Fraction(3))
    assert e.value.field == "scalable_unit"
    with pytest.raises(SizingError) as e:
        fat(4, ratio=Fraction(137, 100))
    assert e.value.field == "oversubscription"


def test_leaf_split() -> None:
    assert leaf_split(64, Fraction(1)) == (32, 32)
    assert leaf_split(64, Fraction(2), 8) == (40, 20)
    assert leaf_split(64, Fraction(3)) == (48, 16)
    assert leaf_split(4, Fraction(5)) is None


# DGX SuperPOD with DGX GB200 (RA-11338-001, "Compute Fabric"): the SU is 8 NVL72 racks (144
# compute trays, 4 NDR rails each); beyond one SU every SU holds 4 spine-leaf groups (one per rail)
# of 8 leaves (one per rack) and 6 spines, a fully non-blocking fat tree attached to 6 core groups,
# up to 16 SUs (9,216 GPUs). What the text states, per row: leaves, spines, core groups, tiers and
# cables per tier; the core count per group follows fabgen's rule (the fewest that divide a
# spine's 24 uplinks and hold every group's), its table's rows could not be read.
def gb200(units: int, su: int = 144, tiers: str | int = "auto", planned: int | None = None):
    return plan(topology="rail-optimized", radix=64, speed=400, nodes=144 * units, rails=4, ratio=Fraction(1),
                scalable_unit=su, tiers=tiers, domain=18, planned_nodes=planned)


@pytest.mark.parametrize("units", [2, 3, 4, 6, 8, 12, 16])
def test_gb200_superpod_spine_leaf_groups(units: int) -> None:
    p = gb200(units)
    gpus = 576 * units
    assert (p.tiers, p.rail_groups, p.group_leaves) == (3, True, 8)
    assert (p.leaves, p.spines, p.pods) == (32 * units, 24 * units, 4 * units)  # 4 groups of 8 + 6 per SU
    assert (p.down, p.up, p.spines_per_pod, p.leaf_spine_width) == (18, 18, 6, 3)  # a rack down, 18 up
    assert p.spine_down == p.spine_up == 24  # non-blocking spines, half their ports kept for the cores
    fewer = [c for c in range(1, p.cores_per_plane) if 24 % c == 0]  # the fewest per group that hold them all
    assert 24 % p.cores_per_plane == 0 and p.cores_per_plane * 64 >= p.pods * 24 > max(fewer, default=0) * 64
    assert p.cores == 6 * p.cores_per_plane  # six core groups, one per spine position
    # cables per tier: one per GPU on each (a non-blocking fat tree)
    assert (p.endpoints, p.leaves * p.up, p.spines * p.spine_up) == (gpus, gpus, gpus)


def test_gb200_superpod_16_units_fills_the_core_groups() -> None:
    p = gb200(16)
    assert (p.cores_per_plane, p.spine_core_width, p.cores) == (24, 1, 144)  # 64 groups on 64-port cores
    with pytest.raises(SizingError, match="spine-leaf groups; core groups of 64-port switches join at most 64"):
        gb200(17)


def test_one_gb200_unit_is_two_tiers_under_one_spine_layer_and_a_plan_builds_the_groups() -> None:
    """One SU: rail-aligned leaves under one spine layer (RA-11338-001, Figure 9: traffic between
    racks or rails traverses the spine layer); planned for more, or `tiers: 3`, the groups and core
    groups are built from the first unit, so that growth only adds."""
    one = gb200(1)
    assert (one.tiers, one.leaves, one.pods, one.leaves_per_pod) == (2, 32, 1, 32)
    # 576 leaf uplinks over 64-port spines: nine spines, each leaf's 18 uplinks two to each (one 576-port
    # spine would also multiply to 576)
    assert (one.spines, one.spine_down, one.up // one.spines) == (9, 64, 2)
    planned = gb200(1, planned=288)
    assert (planned.tiers, planned.present_units, planned.spines, planned.cores) == (3, 1, 48, 18)
    pinned = gb200(1, tiers=3)
    assert (pinned.tiers, pinned.spines, pinned.pods) == (3, 24, 4)


def test_a_unit_of_several_leaves_per_rail_takes_whole_racks_per_leaf() -> None:
    # GB300 at 400G on an SN5600 (128 ports): a leaf could take 3 racks, but 8 racks split into
    # leaves of 2 racks (36 trays), 4 per rail
    p = plan(topology="rail-optimized", radix=128, speed=400, nodes=144, rails=4, ratio=Fraction(1),
             scalable_unit=144, domain=18)
    assert (p.down, p.group_leaves, p.leaves, p.tiers) == (36, 4, 16, 2)
    with pytest.raises(SizingError, match="whole NVLink domains"):
        gb200(1, su=150)


# NVIDIA ERA-00012 (GB300 NVL72 Enterprise RA, 2-4-5-800, two Spectrum-X planes on SN5600 at 400G)
# Table 11: compute switches of both planes for 1-8 racks; Table 6: leaves and spines at 2, 4 and
# 8 racks (../shared figures: a leaf per rail and plane takes two racks, 36 trays)
ERA_GB300 = {1: 12, 2: 12, 3: 24, 4: 24, 5: 32, 6: 32, 7: 44, 8: 44}
ERA_GB300_TIERS = {2: (8, 4), 4: (16, 8), 8: (32, 12)}


@pytest.mark.parametrize("racks", sorted(ERA_GB300))
def test_published_gb300_spectrum_x_rows(racks: int) -> None:
    """The GB300 two-plane example at 1-8 racks with a leaf per two racks builds NVIDIA's counts:
    spines in pairs (4 a plane at 3-4 racks, where 3 would hold a leaf's 36 uplinks)."""
    inv = yaml.safe_load((INVENTORIES / "gb300-spectrumx-2plane.yaml").read_text())
    inv["node_groups"][0]["count"] = 18 * racks
    inv["fabrics"][0]["scalable_unit"] = 36
    (f,) = api.validate(inv).fabrics
    assert (f.planes, f.endpoints) == (2, 18 * racks * 4 * 2)
    assert sum(f.switches.values()) == ERA_GB300[racks]
    if racks in ERA_GB300_TIERS:
        assert (f.switches["leaf"], f.switches["spine"]) == ERA_GB300_TIERS[racks]


def test_spectrum_x_spines_come_in_pairs_only_where_the_uplinks_allow() -> None:
    """even_spines: the fewest even divisor of a leaf's uplinks that holds them (3 racks of GB300:
    4, not 3); uplinks with no even divisor keep the odd rule; the fewest otherwise."""
    def gb300(nodes: int, even: bool):
        return plan(topology="rail-optimized", radix=128, speed=400, nodes=nodes, rails=4, ratio=Fraction(1),
                    scalable_unit=36, domain=18, even_spines=even)
    assert (gb300(54, False).spines, gb300(54, True).spines) == (3, 4)
    assert (gb300(144, False).spines, gb300(144, True).spines) == (6, 6)
    for nodes in range(1, 3000, 37):
        for ratio in (Fraction(1), Fraction(3), Fraction(5, 3)):
            odd = rail(nodes, su=None, ratio=ratio)
            kw = dict(topology="rail-optimized", radix=64, speed=400, nodes=nodes, rails=8, ratio=ratio)
            even = plan(**kw, even_spines=True)
            if even.tiers != 2:
                continue
            assert even.up % even.spines == 0 and even.spine_down <= 64  # balanced, and the spines hold every leaf
            assert even.spines >= odd.spines
            if any(d % 2 == 0 and even.up % d == 0 and d >= odd.spines for d in range(2, even.up + 1)):
                assert even.spines % 2 == 0, (nodes, ratio)
            else:
                assert even.spines == odd.spines
