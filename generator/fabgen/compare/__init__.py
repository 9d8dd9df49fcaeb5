"""`fabgen compare`: the inventory's fabrics sized as every kind that can carry them, side by side.

load -> validate -> for each fabric and each choice (options.py): validate, build, count as
`render` would -> price (cost.py) -> estimate (estimate.py) -> one plain data structure
(`compare`) that output.py formats as a table, Markdown or JSON and chart.py draws.
docs/compare.md documents the JSON keys and every formula.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabgen.compare import cost as costing
from fabgen.compare import estimate
from fabgen.compare.options import NotAnOption, Option, options
from fabgen.compare.prices import PriceList
from fabgen.inventory.loader import load
from fabgen.inventory.validate import validate

FORMAT_VERSION = 1


def compare(inventory: str | Path, prices: PriceList, price_list_name: str, months: int = 36,
            message_bytes: float = 1e9, efficiency: dict[str, float] | None = None) -> dict[str, Any]:
    """The comparison as plain data (the JSON output). Raises InventoryError for a bad inventory."""
    eff = {"link": estimate.LINK_EFFICIENCY, **estimate.FABRIC_EFFICIENCY, **(efficiency or {})}
    loaded = load(inventory)
    validated = validate(loaded)
    found = options(loaded, validated)
    fabrics: dict[str, Any] = {}
    for _i, spec in enumerate(validated.inventory.fabrics):
        if spec.role == "oob":
            continue
        mine = [o for o in found if o.fabric == spec.name]
        sized = [o for o in mine if isinstance(o, Option)]
        kinds = [o.choice.kind for o in sized]
        need = estimate.needs(kinds)
        members = validated.members[spec.name]
        gpus_per_node = sum(m.gpus for _, _, m in members) / len(members)
        plan = validated.plans[spec.name]
        fabrics[spec.name] = {
            "nodes": plan.present_nodes, "gpus": sum(m.gpus for _, _, m in members),
            "link_speed_gbps": plan.speed * spec.planes, "nics_per_node": plan.rails, "topology": spec.topology,
            "tiers_requested": spec.tiers, "oversubscription_requested": float(spec.oversubscription),
            "planned_nodes": spec.planned_nodes,
            "options": [_option(o, need, gpus_per_node, prices, months, message_bytes, eff, spec.role)
                        for o in sized],
            "role": spec.role,
            "not_options": [{"kind": o.choice.kind, "platform": o.choice.platform,
                             "switch_model": o.choice.switch_model, "planes": o.choice.planes,
                             "racks_per_unit": o.choice.racks_per_unit, "reason": o.reason}
                            for o in mine if isinstance(o, NotAnOption)],
        }
    for f in fabrics.values():
        costing.rank(f["options"])
    return {
        "format": FORMAT_VERSION, "cluster": validated.inventory.cluster,
        "currency": prices.currency, "price_list": price_list_name, "prices_are_estimates": prices.estimate,
        "price_note": prices.note, "amortization_months": months, "hours_per_month": costing.HOURS_PER_MONTH,
        "allreduce_bytes": message_bytes,
        "formulas": {**costing.FORMULAS,
                     "busbw_per_gpu": "link Gb/s / 8 x NICs per GPU x link efficiency x fabric efficiency "
                                      "/ oversubscription (fabric efficiency 1 on one switch)",
                     "busbw_per_node": "busbw per GPU x GPUs per node",
                     "allreduce_seconds": "bytes x 2(n-1)/n / busbw per node, n = GPUs",
                     "allreduce_seconds_sharp": "bytes / busbw per node (InfiniBand with SHARP)"},
        "assumptions": {"efficiency": eff, "sources": estimate.SOURCES},
        "fabrics": fabrics,
    }


def _option(o: Option, need: dict[str, dict[str, list[str]]], gpus_per_node: float, prices: PriceList,
            months: int, message_bytes: float, eff: dict[str, float], role: str = "compute") -> dict[str, Any]:
    s = o.summary
    by: dict[str, dict[str, int]] = {"cable": {}, "transceiver": {}, "nic": {}, "included": {}}
    for r in o.bom:  # a part may have a row per tier or per node model: summed
        if r["category"] in by:
            by[r["category"]][r["part"]] = by[r["category"]].get(r["part"], 0) + r["quantity"]
    estimated = estimate.performance(o, round(gpus_per_node), o.plan.rails * o.choice.planes, message_bytes, eff)
    if role != "compute":  # NCCL runs on the compute fabric only: no all-reduce estimate for the others
        estimated = {**estimated, "busbw_per_gpu_gbs": None, "busbw_per_node_gbs": None, "allreduce_seconds": None,
                     "allreduce_seconds_sharp": None}
    return {
        "label": o.choice.label,
        "kind": o.choice.kind, "platform": o.choice.platform, "switch_model": o.choice.switch_model,
        "planes": o.choice.planes, "link_speed_gbps": o.plan.speed,
        "scalable_unit": o.plan.unit_nodes if o.plan.topology == "rail-optimized" else 0,
        "leaves_per_rail": max(1, o.plan.group_leaves) if o.plan.topology == "rail-optimized" else 0,
        "switch_part": o.model.part, "current": o.current, "tiers": s.tiers,
        "switches": {**s.switches, "total": sum(s.switches.values())},
        "links": s.links, "cables": by["cable"], "transceivers": by["transceiver"], "nics": by["nic"],
        "nics_included": by["included"],  # ship inside the nodes: the same on every option, never priced
        "switch_ports": {"used": s.ports_used, "total": s.ports_total},
        "bisection_bandwidth_gbps": s.bisection_gbps, "oversubscription": s.oversubscription,
        "switch_hops": estimate.hops(o.plan),
        "needs": need[o.choice.kind]["all"], "needs_only_this": need[o.choice.kind]["only_this"],
        "cost": costing.cost(o.bom, o.choice.kind, s.gpus, prices, months),
        # planned_nodes: what the plan buys later (bom-later.csv), priced apart and never in `cost`
        "cost_later": costing.cost(o.bom_later, o.choice.kind, 0, prices, months) if o.bom_later else None,
        # every plane port carries traffic: a node's ports are its NICs times the planes
        "estimate": estimated,
    }
