"""Capital cost of one option from its bill of materials and a price list.

    total          = sum of quantity x unit price over the bill of materials
    per GPU        = total / GPUs on the fabric
    per GPU-month  = total / GPUs / amortization months
    per GPU-hour   = per GPU-month / 730   (8,760 hours a year / 12)

Parts the price list does not price are listed and the total is marked incomplete: a
missing price is never guessed and never counted as zero.
"""

from __future__ import annotations

from typing import Any

from fabgen.compare.prices import PriceList

HOURS_PER_MONTH = 730
FORMULAS = {
    "total": "sum(quantity x unit price) over the option's bill of materials",
    "per_gpu": "total / GPUs",
    "per_gpu_month": "total / GPUs / amortization months",
    "per_gpu_hour": f"per GPU-month / {HOURS_PER_MONTH} hours",
}


def cost(bom: list[dict[str, Any]], kind: str, gpus: int, prices: PriceList, months: int) -> dict[str, Any]:
    lines, missing, total = [], [], 0.0
    for row in bom:
        if row["category"] == "included":  # ships inside the nodes: the same for every option, never bought
            continue
        entry = prices.lookup(row["part"], kind)
        unit = None if entry is None else entry.price
        amount = None if unit is None else unit * row["quantity"]
        if amount is None:
            missing.append(row["part"])
        else:
            total += amount
        lines.append({"category": row["category"], "part": row["part"], "quantity": row["quantity"],
                      "unit_price": unit, "amount": None if amount is None else round(amount, 2),
                      "source": "" if entry is None else entry.source})
    per_gpu = total / gpus if gpus else None
    return {
        "total": round(total, 2), "complete": not missing, "missing": sorted(set(missing)),
        "per_gpu": None if per_gpu is None else round(per_gpu, 2),
        "per_gpu_month": None if per_gpu is None else round(per_gpu / months, 2),
        "per_gpu_hour": None if per_gpu is None else round(per_gpu / months / HOURS_PER_MONTH, 4),
        "lines": lines,
    }
