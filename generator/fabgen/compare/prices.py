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
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from fabgen.errors import InventoryError, Problem
from fabgen.inventory.loader import load, load_text
from fabgen.inventory.messages import PATTERN_RULES, schema_problems
from fabgen.spec.schema import PRINTABLE_PATTERN

DEFAULT = Path(__file__).with_name("prices.yaml")
MAX_BYTES = 1024 * 1024  # a price list of every part of every option is a few hundred entries, tens of kB
MAX_ENTRIES = 10_000
CURRENCY_PATTERN = r"^[A-Z]{3}$"
PATTERN_RULES.setdefault(CURRENCY_PATTERN, "is not an ISO 4217 currency code: three capital letters, e.g. USD "
                         "(quote it if YAML reads it otherwise)")


def _text(n: int) -> type:
    return Annotated[str, StringConstraints(max_length=n, pattern=PRINTABLE_PATTERN)]  # type: ignore[return-value]  # a pydantic constrained type, a value to mypy


class _Strict(BaseModel):
    # strict: `price: true` is not $1, `price: "5"` is not 5; the inventory's own rules for text
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Price(_Strict):
    part: _text(200) = Field(min_length=1, description="the bom.csv `part` text, exactly")  # type: ignore[valid-type]
    kind: Literal["infiniband", "roce", "spectrum-x"] | None = Field(
        default=None, description="only for options of this kind (wins over an entry without a kind)")
    price: float | None = Field(ge=0, le=1e9, allow_inf_nan=False, description="per unit, in the list's currency "
                                "(empty: not priced yet, as --prices-template writes it)")
    source: _text(500) = Field(default="", description="where the figure comes from")  # type: ignore[valid-type]


class PriceList(_Strict):
    currency: str = Field(pattern=CURRENCY_PATTERN, description="ISO 4217 code, e.g. USD")
    estimate: bool = Field(default=True, description="true: list prices or estimates, not a quote")
    note: _text(2000) = Field(default="", description="printed with every comparison")  # type: ignore[valid-type]
    prices: list[Price] = Field(default_factory=list, max_length=MAX_ENTRIES)

    def lookup(self, part: str, kind: str) -> Price | None:
        """The entry for `part` in an option of `kind`: the kind's own entry first."""
        index = self.__dict__.get("_index")
        if index is None:  # built once (the model is frozen; a BOM asks for every row)
            index = {}
            for p in self.prices:
                index.setdefault((p.part, p.kind), p)
            self.__dict__["_index"] = index
        return index.get((part, kind)) or index.get((part, None))


def read(path: str | Path | None) -> tuple[PriceList, str]:
    """The price list at `path` (default: the bundled estimates) and the name it is shown by."""
    start = "start with 'currency: USD' and a 'prices:' list (docs/compare.md)"
    loaded = (load(path, "price list", MAX_BYTES, start) if path is not None
              else load_text(DEFAULT.read_text(encoding="utf-8"), "built-in price list", "price list", MAX_BYTES,
                             start))
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
        raise InventoryError(problems[:100])
    return prices, "built-in estimates" if path is None else str(path)


def template(data: dict, currency: str = "USD") -> str:
    """A price list with every part the comparison's options need and no prices: fill it in and
    give it to --prices. Parts are listed once per kind where the kind changes the price of the
    same part (NICs, cables), else once."""
    import yaml

    kinds: dict[str, set[str]] = {}
    category: dict[str, str] = {}
    for fabric in data["fabrics"].values():
        for o in fabric["options"]:
            for line in o["cost"]["lines"]:
                kinds.setdefault(line["part"], set()).add(o["kind"])
                category[line["part"]] = line["category"]
    order = {"switch": 0, "nic": 1, "cable": 2, "transceiver": 3}
    entries = []
    for part in sorted(kinds, key=lambda p: (order.get(category[p], 9), p)):
        per_kind = category[part] in ("nic", "cable") and len(kinds[part]) > 1
        each: list[str | None] = [*sorted(kinds[part])] if per_kind else [None]
        for kind in each:
            entries.append({"part": part, **({"kind": kind} if kind else {}), "price": None, "source": ""})
    head = ("# Every part the options of `fabgen compare` need, without prices: fill in `price` (per unit)\n"
            "# and `source`, then run fabgen compare --prices THIS_FILE. An empty price stays unpriced.\n")
    return head + yaml.safe_dump({"currency": currency, "estimate": True, "note": "", "prices": entries},
                                 sort_keys=False, allow_unicode=True, width=120)
