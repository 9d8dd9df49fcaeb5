"""Capital cost of one option from its bill of materials and a price list.

    total          = sum of quantity x unit price over the bill of materials
    per GPU        = total / GPUs on the fabric
    per GPU-month  = total / GPUs / amortization months
    per GPU-hour   = per GPU-month / 730   (8,760 hours a year / 12)

Parts the price list does not price are listed and the total is marked incomplete: a
missing price is never guessed and never counted as zero. An option is *priced* when its
switches are and the unpriced parts are at most MAX_UNPRICED_SHARE of its bill of materials
(by quantity); only a priced option has a total, per-GPU figures, a rank and a chart point
(otherwise they are null and the option is listed as "not priced: ..."). NICs that ship inside
the nodes (bom.csv category `included`) are the same for every option and are not priced.
"""

from __future__ import annotations

from typing import Any

from fabgen.compare.prices import PriceList

HOURS_PER_MONTH = 730
MAX_UNPRICED_SHARE = 0.10
FORMULAS = {
    "total": "sum(quantity x unit price) over the option's bill of materials",
    "per_gpu": "total / GPUs",
    "per_gpu_month": "total / GPUs / amortization months",
    "per_gpu_hour": f"per GPU-month / {HOURS_PER_MONTH} hours",
    "priced": f"switches priced and at most {MAX_UNPRICED_SHARE:.0%} of the bill of materials (by quantity) "
              "unpriced; otherwise no total, per-GPU figure, rank or chart point",
}


def cost(bom: list[dict[str, Any]], kind: str, gpus: int, prices: PriceList, months: int) -> dict[str, Any]:
    lines, missing, total = [], [], 0.0
    for row in bom:
        if row["category"] == "included":  # ships inside the nodes: the same for every option, never bought
            continue
        entry = prices.lookup(row["part"], kind)
        unit = None if entry is None else entry.price  # a template's empty price is not a price
        amount = None if unit is None else unit * row["quantity"]
        if amount is None:
            missing.append(row["part"])
        else:
            total += amount
        lines.append({"category": row["category"], "part": row["part"], "quantity": row["quantity"],
                      "unit_price": unit, "amount": None if amount is None else round(amount, 2),
                      "source": "" if entry is None else entry.source})
    units = sum(line["quantity"] for line in lines)
    unpriced = sum(line["quantity"] for line in lines if line["unit_price"] is None)
    switches = all(line["unit_price"] is not None for line in lines if line["category"] == "switch")
    share = 1.0 if not units else round(1 - unpriced / units, 4)
    priced = switches and 1 - share <= MAX_UNPRICED_SHARE
    per_gpu = total / gpus if gpus and priced else None
    return {
        "total": round(total, 2) if priced else None, "priced_subtotal": round(total, 2),
        "complete": not missing, "priced": priced, "priced_share": share, "switches_priced": switches,
        "missing": sorted(set(missing)),
        "per_gpu": None if per_gpu is None else round(per_gpu, 2),
        "per_gpu_month": None if per_gpu is None else round(per_gpu / months, 2),
        "per_gpu_hour": None if per_gpu is None else round(per_gpu / months / HOURS_PER_MONTH, 4),
        "lines": lines,
    }


def rank(options: list[dict[str, Any]]) -> None:
    """Each priced option's place by cost per GPU-hour (1 = cheapest; ties share a place); an
    option that is not priced has no place (None)."""
    key = "per_gpu_hour" if any(o["cost"]["per_gpu_hour"] is not None for o in options) else "total"  # no GPUs
    values = sorted({o["cost"][key] for o in options if o["cost"]["priced"] and o["cost"][key] is not None})
    for o in options:
        v = o["cost"][key]
        o["rank"] = values.index(v) + 1 if o["cost"]["priced"] and v is not None else None
