"""Defaults that depend on the whole inventory, filled in right after the schema.

Address pools: every Ethernet fabric (RoCE, Spectrum-X) without its own `ethernet.pools` gets
pools of its own, from its role and its place among the fabrics of that role, so a first
inventory with a compute, a storage and an in-band fabric validates without five overlap errors,
and adding a fabric (of any role, anywhere after) changes no other fabric's defaults. 10.0.0.0/8
is cut into sixteen /12 blocks, each a /13 of links and a /13 of hosts; loopbacks are /16s at
the top, in the sixteenth block (docs/guide/inventory.md, "Default address pools"):

| role | fabrics | block (links, hosts) | loopbacks |
|---|---|---|---|
| compute | 1st-8th | 10.0.0.0/12 + 16 x k: 10.{16k}.0.0/13, 10.{16k+8}.0.0/13 | 10.{255-k}.0.0/16 |
| storage | 1st-4th | 10.128.0.0/12 + 16 x k | 10.{247-k}.0.0/16 |
| inband | 1st-3rd | 10.192.0.0/12 + 16 x k | 10.{243-k}.0.0/16 |

A northsouth fabric (storage and in-band converged) takes a storage fabric's place.

The first compute fabric's are the schema's defaults, as before. A fabric beyond those counts
keeps the schema's and is told to give its own where it overlaps.
"""

from __future__ import annotations

from fabgen.spec.schema import EthernetOptions, Inventory

ETHERNET_KINDS = ("roce", "spectrum-x")
# role -> (first /12 block, first loopback /16's second octet, fabrics with a default)
PLACES = {"compute": (0, 255, 8), "storage": (8, 247, 4), "inband": (12, 243, 3)}


def default_pools(role: str, k: int) -> dict[str, str] | None:
    """The pools of the k-th (0-based) Ethernet fabric of `role`; None beyond the table."""
    block, top, most = PLACES.get(role, (0, 255, 0))
    if k >= most:
        return None
    base = 16 * (block + k)
    return {"links": f"10.{base}.0.0/13", "hosts": f"10.{base + 8}.0.0/13", "loopbacks": f"10.{top - k}.0.0/16"}


def with_default_pools(inv: Inventory) -> Inventory:
    """The inventory with every Ethernet fabric's unset pools taken from `default_pools`."""
    seen: dict[str, int] = {}
    fabrics = []
    changed = False
    for f in inv.fabrics:
        if f.kind not in ETHERNET_KINDS:
            fabrics.append(f)
            continue
        role = "storage" if f.role == "northsouth" else f.role  # a converged fabric takes a storage place
        k = seen[role] = seen.get(role, -1) + 1
        eth = f.ethernet or EthernetOptions()
        pools = eth.pools
        fill = {name: value for name, value in (default_pools(role, k) or {}).items()
                if name not in pools.model_fields_set}
        if not fill or all(getattr(pools, n) == v for n, v in fill.items()):
            fabrics.append(f)
            continue
        new = pools.model_copy(update=fill)
        # still "not given": an overlap message says "(the default)" and the fix is to give pools
        object.__setattr__(new, "__pydantic_fields_set__", set(pools.model_fields_set))
        fabrics.append(f.model_copy(update={"ethernet": eth.model_copy(update={"pools": new})}))
        changed = True
    return inv.model_copy(update={"fabrics": fabrics}) if changed else inv
