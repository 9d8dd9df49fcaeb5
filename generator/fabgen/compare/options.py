"""The fabrics that could carry one inventory fabric's nodes, each sized by the render's own rules.

An option is the inventory with that fabric's `kind`, `platform` and `switch_model` replaced
and its kind-specific keys (`infiniband`, `ethernet`, `platform_version`, `management`)
dropped; everything that shapes the fabric stays: the node groups, `topology`,
`oversubscription`, `tiers`, `scalable_unit`, `planned_nodes`. The option is then validated,
built and counted by the same code `render` runs, so its bill of materials is the bom.csv
that rendering the option writes (tests/test_compare.py renders every option to prove it).

Which options: every switch model (the catalog's and the inventory's `switch_models`) that
serves the kind and platform and has ports at the nodes' NIC speed; on Ethernet, where the node
models split their NICs (`plane_rdma`), also the plane counts every model splits into (2 and 4
for DGX B300, 2 for a GB300 tray) where the switch has ports at the split speed (docs/planes.md);
where the nodes are NVL72 trays on a rail-optimized fabric, each also with NVIDIA's SuperPOD unit
of 8 racks (spine-leaf groups, docs/hardware.md). InfiniBand is one option
per switch model: UFM and OpenSM run on hosts and need the same hardware (the inventory's
own InfiniBand platform is kept, otherwise `ufm`). An option that the sizing rules cannot
build (too many endpoints for that radix, a scalable unit that does not fit) is listed with
the reason, never dropped silently.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from fabgen.errors import InventoryError
from fabgen.intent.northsouth import with_border
from fabgen.inventory.loader import Loaded
from fabgen.inventory.validate import Validated, validate
from fabgen.spec.catalog import PLATFORMS_BY_KIND, SwitchModel
from fabgen.spec.platforms import KINDS
from fabgen.spec.sizing import Plan
from fabgen.targets.fabric import bill_of_materials, later_materials
from fabgen.topology.analysis import Summary, summarize
from fabgen.topology.build import build_planes

KIND_SPECIFIC = ("infiniband", "ethernet", "platform_version", "management")


@dataclass(frozen=True)
class Choice:
    """What an option changes in the inventory's fabric."""

    kind: str
    platform: str
    switch_model: str
    planes: int = 1  # network planes (Ethernet): each NIC split into one port per plane
    racks_per_unit: int = 0  # NVL72 trays: a scalable unit of this many racks (0: the inventory's unit)
    scalable_unit: int = 0  # its nodes

    @property
    def label(self) -> str:
        planes = f" / {self.planes} planes" if self.planes > 1 else ""
        unit = f" / SU of {self.racks_per_unit} racks" if self.racks_per_unit else ""
        return f"{self.kind} / {self.platform} / {self.switch_model}{planes}{unit}"


@dataclass(frozen=True)
class Option:
    """One choice, sized: the render's plan, summary and bill of materials."""

    fabric: str
    choice: Choice
    current: bool  # the inventory's own choice
    plan: Plan
    summary: Summary
    bom: list[dict[str, Any]]
    model: SwitchModel
    bom_later: list[dict[str, Any]] = field(default_factory=list)  # planned_nodes: bom-later.csv's rows


@dataclass(frozen=True)
class NotAnOption:
    fabric: str
    choice: Choice
    reason: str


PLANE_COUNTS = (1, 2, 4)
SUPERPOD_RACKS = 8  # NVIDIA's DGX SuperPOD GB200 scalable unit: 8 NVL72 racks (RA-11338-001)


def choices(validated: Validated, fabric_index: int) -> list[Choice]:
    """Every kind, platform and switch model that has ports at the nodes' NIC speed, and on
    Ethernet, where every node model splits its NICs (`plane_rdma`), at the speed of each plane
    count's ports too (800G NICs: 1 x 800G, 2 x 400G or 4 x 200G)."""
    spec = validated.inventory.fabrics[fabric_index]
    members = validated.members[spec.name]
    speed = validated.plans[spec.name].speed * spec.planes  # the NICs' own speed
    splits = {1, *PLANE_COUNTS}
    for _, _, m in members:  # the plane counts every node model splits into
        splits &= {1, *m.plane_counts} if m.splits else {1}
    domains = {m.nvlink_domain for _, _, m in members}
    # NVL72 trays: also NVIDIA's SuperPOD unit of 8 racks (spine-leaf groups, docs/hardware.md)
    superpod = (spec.topology == "rail-optimized" and len(domains) == 1 and min(domains) > 1
                and spec.scalable_unit != SUPERPOD_RACKS * min(domains))
    out: list[Choice] = []
    for kind in KINDS:
        platforms = PLATFORMS_BY_KIND[kind]
        if kind == "infiniband":
            platforms = (spec.platform if spec.kind == kind else platforms[0],)
        counts = sorted(splits) if kind != "infiniband" else [1]
        for platform in platforms:
            for key, model in sorted(validated.switch_models.items()):
                serves = kind in model.kinds and (kind == "infiniband" or platform in model.platforms)
                for planes in counts:
                    if serves and speed % planes == 0 and model.mode_for(speed // planes) is not None:
                        out.append(Choice(kind, platform, key, planes))
                        if superpod:
                            out.append(Choice(kind, platform, key, planes, SUPERPOD_RACKS,
                                              SUPERPOD_RACKS * min(domains)))
    return out


def variant(loaded: Loaded, fabric_index: int, choice: Choice) -> Loaded:
    """The inventory as this choice: the one fabric, its node groups, the custom models."""
    data = copy.deepcopy(loaded.data)
    fab = {k: v for k, v in data["fabrics"][fabric_index].items() if k not in KIND_SPECIFIC}
    fab.update(kind=choice.kind, platform=choice.platform, switch_model=choice.switch_model)
    # northsouth.border buys cables and optics (its uplinks): kept, with the tenants it is checked
    # against, where the choice can render it (NVUE; other platforms refuse the key)
    ns = (data["fabrics"][fabric_index].get("ethernet") or {}).get("northsouth")
    if isinstance(ns, dict) and "border" in ns and choice.platform == "nvue":
        fab["ethernet"] = {"northsouth": ns}
    fab.pop("planes", None)
    if choice.planes > 1:
        fab["planes"] = choice.planes
    if choice.scalable_unit:
        fab["scalable_unit"] = choice.scalable_unit
    wanted = set(fab.get("node_groups") or ())
    data["node_groups"] = [g for g in data["node_groups"] if g.get("name") in wanted]
    data["fabrics"] = [fab]
    # what counts nothing and may not hold on another platform: the switch baseline (a key one
    # platform takes, another refuses) and provisioning (its MAC map names the other fabrics' switches)
    fab.pop("baseline", None)
    for key in ("kubernetes", "baseline", "provisioning"):
        data.pop(key, None)
    return Loaded(loaded.file, data, {}, {}, loaded.sha256)


def size(loaded: Loaded, validated: Validated, fabric_index: int, choice: Choice) -> Option | NotAnOption:
    """Validate, build and count one choice exactly as `render` would."""
    spec = validated.inventory.fabrics[fabric_index]
    try:
        v = validate(variant(loaded, fabric_index, choice))
    except InventoryError as exc:
        return NotAnOption(spec.name, choice, "; ".join(dict.fromkeys(p.message for p in exc.problems)))
    fspec = v.inventory.fabrics[0]
    model = v.switch_models[fspec.switch_model]
    # `check` (the built graph's invariants) is left to render: it proves the builder, not the
    # counts, and took a fifth of compare's time at 32k GPUs
    planes = build_planes(fspec, v.plans[fspec.name], model, v.members[fspec.name], v.storage[fspec.name])
    current = (choice.kind, choice.switch_model, choice.planes) == (spec.kind, spec.switch_model, spec.planes) and (
        choice.kind == "infiniband" or choice.platform == spec.platform) and not choice.scalable_unit
    return Option(spec.name, choice, current, planes[0].plan, _summed([with_border(summarize(f), f) for f in planes]),
                  [row for f in planes for row in bill_of_materials(f)], model,
                  [row for f in planes for row in later_materials(f)])


def _summed(summaries: list[Summary]) -> Summary:
    """One summary for all network planes of a fabric: switches, links, ports and bisection add up
    (the nodes and GPUs are the same nodes on every plane)."""
    if len(summaries) == 1:
        return summaries[0]
    first = summaries[0]

    def add(key: str) -> dict[str, int]:
        return {k: sum(getattr(s, key)[k] for s in summaries) for k in getattr(first, key)}

    return replace(first, switches=add("switches"), links=add("links"),
                   bisection_gbps=sum(s.bisection_gbps for s in summaries),
                   ports_used=sum(s.ports_used for s in summaries), ports_total=sum(s.ports_total for s in summaries),
                   endpoints=sum(s.endpoints for s in summaries))


def options(loaded: Loaded, validated: Validated) -> list[Option | NotAnOption]:
    """Every choice for every fabric of the inventory, in fabric, kind and model order."""
    out: list[Option | NotAnOption] = []
    for i, spec in enumerate(validated.inventory.fabrics):
        if spec.role == "oob":  # an access layer: no fabric to choose (docs/cluster.md)
            continue
        out += [size(loaded, validated, i, c) for c in choices(validated, i)]
    return out
