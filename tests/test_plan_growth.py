"""A plan buys for growth exactly what moving nothing requires (docs/growth.md): three tiers build the
cores for the plan and each present pod's spines, never the spines of a pod with no leaf; two tiers
build every planned spine (each leaf cables to all of them). The BOM says what is bought now
(bom.csv) and what the plan adds later (bom-later.csv)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from test_growth import assert_pure_addition, inventory

from conftest import INVENTORIES
from fabgen.inventory.loader import load_text
from fabgen.inventory.validate import validate
from fabgen.pipeline import build
from fabgen.spec import layout
from fabgen.spec.model import Fabric
from fabgen.targets.fabric import bill_of_materials, later_materials

GB200 = (INVENTORIES / "gb200-superpod-2su.yaml").read_text()


def gb200(trays: int, planned: int | None = 16 * 144) -> str:
    """The 2-SU GB200 SuperPOD inventory with `trays` compute trays, planned for 16 units."""
    text = GB200.replace("count: 288 ", f"count: {trays} ")
    assert text != GB200 or trays == 288
    if planned is not None:
        text = text.replace("    scalable_unit: 144", f"    scalable_unit: 144\n    planned_nodes: {planned}")
    return text


def fabrics(text: str) -> dict[str, Fabric]:
    return build(validate(load_text(text, "plan.yaml")))[0]


def spines_without_leaf(f: Fabric) -> list[str]:
    """Spines whose pod holds no leaf of the fabric built."""
    pods = {s.pod for s in f.switches if s.role == "leaf"}
    return [s.name for s in f.switches if s.role == "spine" and s.pod not in pods]


def rows(bom: list[dict[str, Any]]) -> Counter[tuple[str, str, str]]:
    return Counter({(r["category"], r["part"], r["description"]): r["quantity"] for r in bom})


def test_a_16_su_plan_buys_no_spine_without_a_leaf() -> None:
    (f,) = fabrics(gb200(288)).values()
    p = f.plan
    assert p.tiers == 3 and p.planned and p.pods > len({s.pod for s in f.switches if s.role == "leaf"})
    assert not spines_without_leaf(f)
    roles = Counter(s.role for s in f.switches)
    pods = {s.pod for s in f.switches if s.role == "leaf"}
    assert roles["spine"] == len(pods) * p.spines_per_pod
    assert roles["core"] == p.cores  # the cores are the plan's, their ports for every planned pod
    for core in (s for s in f.switches if s.role == "core"):  # cabled to the present pods only
        cabled = {lk.a for lk in f.links_of(core.name)}
        assert cabled == {s.name for s in f.switches if s.role == "spine" and s.plane == core.plane}
    (switch,) = [r for r in bill_of_materials(f) if r["category"] == "switch"]
    assert switch["quantity"] == len(f.switches) == roles["leaf"] + roles["spine"] + roles["core"]


def test_the_check_catches_the_spines_of_every_planned_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building every planned pod's spines (as before) fails the check above."""
    monkeypatch.setattr(layout, "present_pods", lambda plan: list(range(1, plan.pods + 1)))
    (f,) = fabrics(gb200(288)).values()
    assert spines_without_leaf(f)
    with pytest.raises(AssertionError):
        test_a_16_su_plan_buys_no_spine_without_a_leaf()


def test_now_and_later_add_up_to_the_completed_plan() -> None:
    """bom.csv of the present fabric and bom-later.csv together are the bom.csv of the fabric with
    every planned node attached; what is bought now holds the cores, later no core."""
    (small,) = fabrics(gb200(288)).values()
    (full,) = fabrics(gb200(16 * 144)).values()
    now, later = rows(bill_of_materials(small)), rows(later_materials(small))
    assert now + later == rows(bill_of_materials(full))
    (switch_later,) = [r for r in later_materials(small) if r["category"] == "switch"]
    assert "core" not in switch_later["notes"] and "spine" in switch_later["notes"]
    assert later_materials(full) == []  # nothing planned beyond it
    (unplanned,) = fabrics(gb200(288, None)).values()
    assert later_materials(unplanned) == []


@pytest.mark.parametrize("trays", [288 + 144, 288 + 18, 16 * 144])
def test_growing_a_16_su_plan_only_adds(trays: int) -> None:
    """A unit (new pods, with their spines), a rack of it, or the whole plan: every existing cable,
    name, address and GUID stays, no core is added and no spine joins an existing pod
    (assert_pure_addition)."""
    assert_pure_addition(gb200(288), gb200(trays))


@pytest.mark.parametrize("platform,topology,planes", [
    ("eos", "rail-optimized", 1), ("opensm", "fat-tree", 1), ("nvue", "rail-optimized", 2),
    ("sonic", "fat-tree", 2),
])
def test_three_tier_plans_build_present_pods_only_on_every_plane(platform: str, topology: str, planes: int) -> None:
    """Classic pods of whole units, one plane or two: no spine without a leaf on any plane, and a new
    pod only adds."""
    small = inventory(platform, topology, 4, 40, tiers=3, planes=planes)
    built = fabrics(small)
    assert len(built) == planes
    for f in built.values():
        assert f.plan.tiers == 3 and f.plan.pods > 1
        assert not spines_without_leaf(f)
        assert sum(s.role == "core" for s in f.switches) == f.plan.cores
    assert_pure_addition(small, inventory(platform, topology, 24, 40, tiers=3, planes=planes))


def test_two_tier_plans_build_every_planned_spine() -> None:
    """Two tiers: each leaf cables to every spine, so the plan's spines are all there from the start
    and growth buys none (bom-later.csv has leaves, no spine)."""
    (f,) = fabrics(inventory("eos", "rail-optimized", 8, 24, tiers=2)).values()
    assert f.plan.tiers == 2 and f.plan.planned
    assert sum(s.role == "spine" for s in f.switches) == f.plan.spines
    (switch_later,) = [r for r in later_materials(f) if r["category"] == "switch"]
    assert switch_later["notes"].endswith(" leaf")


MIXED = """version: 1
cluster: mix
node_groups:
  - {name: old, model: dgx-h100, count: 8, hostname: 'h{n:03d}'}
  - {name: new, model: dgx-b200, count: NEW, hostname: 'b{n:03d}'}
fabrics:
  - name: ib
    kind: infiniband
    platform: opensm
    topology: rail-optimized
    switch_model: qm9700
    node_groups: [old, new]
    scalable_unit: 32
    planned_nodes: 128
"""


def test_a_plan_of_mixed_models_names_the_model_its_absent_nodes_are_counted_as() -> None:
    """The inventory lists no model for the nodes it does not list; bom-later.csv counts them as the
    last present node's. Where the present nodes mix models, validate says so at planned_nodes,
    naming the model the completion used, and bom.csv plus bom-later.csv are the bom.csv of the plan
    filled with that model; one model: no warning."""
    from fabgen.topology.build import build_complete, stand_in

    validated = validate(load_text(MIXED.replace("NEW", "8"), "mix.yaml"))
    (f,) = build(validated)[0].values()
    (said,) = [w for w in validated.warnings["ib"] if "absent nodes" in w]
    last = stand_in(f)
    assert last is not None and last.model.key == "dgx-b200"
    assert said.startswith("fabrics[0].planned_nodes (line 14") and "mix dgx-b200 and dgx-h100" in said
    assert f"the plan's 112 absent nodes as {last.model.key}, the model of the last present node ({last.name}" in said
    done = build_complete(f)
    assert done is not None and {h.model.key for h in done.hosts[16:]} == {last.model.key}
    (filled,) = fabrics(MIXED.replace("NEW", "120")).values()
    assert rows(bill_of_materials(f)) + rows(later_materials(f)) == rows(bill_of_materials(filled))
    one = validate(load_text(MIXED.replace("NEW", "8").replace("model: dgx-h100", "model: dgx-b200"), "one.yaml"))
    assert not [w for w in one.warnings.get("ib", []) if "absent nodes" in w]


def test_a_row_the_completed_plan_needs_fewer_of_is_not_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The present fabric is a part of the completed plan, so no row shrinks; were one to (a
    completion that lost nodes), bom.csv and bom-later.csv would not add up to it: the render
    stops, naming the row, instead of dropping it."""
    from fabgen.targets import fabric as fabric_target

    (f,) = fabrics(MIXED.replace("NEW", "8")).values()
    (fewer,) = fabrics(MIXED.replace("NEW", "4")).values()
    monkeypatch.setattr(fabric_target, "build_complete", lambda _: fewer)
    with pytest.raises(AssertionError, match=r"ib: the completed plan needs fewer than bought now of .*dgx-b200"):
        later_materials(f)
