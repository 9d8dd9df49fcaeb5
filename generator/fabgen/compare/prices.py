"""Price lists: what each part of a bill of materials costs, with where the figure comes from.

A price list is YAML (docs/compare.md):

    currency: USD
    prices:
      - part: MQM9700-NS2F            # the `part` column of bom.csv, exactly
        price: 65000                  # per unit
        source: "where the figure comes from"
      - part: "ConnectX-7 (single-port, network module)"
        kind: spectrum-x              # optional: the price when the option is of this kind
        price: 3906

An entry with a `kind` wins over one without for options of that kind: the same card costs
differently as an InfiniBand HCA and as an Ethernet NIC in the published comparisons, and a
cable's price there includes its optics. A part no entry prices is reported as missing and
its option's total is marked incomplete; fabgen never guesses a price. A bad price list is
located errors (file:line:col), like a bad inventory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabgen.errors import InventoryError, Problem
from fabgen.inventory.loader import load, load_text
from fabgen.inventory.validate import schema_problems

DEFAULT = Path(__file__).with_name("prices.yaml")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Price(_Strict):
    part: str = Field(min_length=1, max_length=200, description="the bom.csv `part` text, exactly")
    kind: Literal["infiniband", "roce", "spectrum-x"] | None = Field(
        default=None, description="only for options of this kind (wins over an entry without a kind)")
    price: float = Field(ge=0, le=1e9, description="per unit, in the list's currency")
    source: str = Field(default="", max_length=500, description="where the figure comes from")


class PriceList(_Strict):
    currency: str = Field(min_length=3, max_length=3, pattern=r"^[A-Z]{3}$", description="ISO 4217 code")
    estimate: bool = Field(default=True, description="true: list prices or estimates, not a quote")
    note: str = Field(default="", max_length=2000, description="printed with every comparison")
    prices: list[Price] = Field(default_factory=list)

    def lookup(self, part: str, kind: str) -> Price | None:
        """The entry for `part` in an option of `kind`: the kind's own entry first."""
        general = None
        for p in self.prices:
            if p.part == part and p.kind == kind:
                return p
            if p.part == part and p.kind is None:
                general = p
        return general


def read(path: str | Path | None) -> tuple[PriceList, str]:
    """The price list at `path` (default: the bundled estimates) and the name it is shown by."""
    loaded = load(path) if path is not None else load_text(DEFAULT.read_text(encoding="utf-8"), "built-in price list")
    if not isinstance(loaded.data, dict):
        raise InventoryError([Problem(1, 1, "", "a price list is a mapping with currency and prices", loaded.file)])
    try:
        prices = PriceList.model_validate(loaded.data)
    except ValidationError as exc:
        raise InventoryError(schema_problems(loaded, exc, PriceList)) from None
    seen: dict[tuple[str, str | None], int] = {}
    problems = []
    for i, p in enumerate(prices.prices):
        key = (p.part, p.kind)
        if key in seen:
            line, col = loaded.where(("prices", i))
            problems.append(Problem(line, col, f"prices[{i}]", f"{p.part!r}{' for ' + p.kind if p.kind else ''} is "
                                    f"priced twice (first at prices[{seen[key]}])", loaded.file))
        seen.setdefault(key, i)
    if problems:
        raise InventoryError(problems)
    return prices, "built-in estimates" if path is None else str(path)
