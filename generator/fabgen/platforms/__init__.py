"""Platform targets: each turns a built, allocated fabric into a structured config and files.

A target is data plus two functions (netlab and hier_config keep platforms the same way):
`structure` makes every decision and returns plain data; `render` only formats it.
The registry refuses unknown names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from fabgen.addressing import Allocation
from fabgen.topology.analysis import Summary
from fabgen.topology.model import Fabric


@dataclass(frozen=True)
class Context:
    """Everything a target may read about one fabric."""

    cluster: str
    fabric: Fabric
    allocation: Allocation
    summary: Summary
    groups: dict[str, Any] = field(default_factory=dict)  # node group name -> inventory NodeGroup


@dataclass(frozen=True)
class Target:
    name: str
    applies: Callable[[Context], bool]
    structure: Callable[[Context], Any]
    render: Callable[[Any], Iterable[tuple[str, bytes]]]  # (path relative to OUT, content)
    # shard(data, part, parts): the part of data whose files `render` then writes, so that
    # large renders can run on two cores (fabgen.parallel); None: rendered in one piece.
    shard: Callable[[Any, int, int], Any] | None = None


def every_other(key: str) -> Callable[[Any, int, int], Any]:
    """Shard a target's data by taking every parts-th item of data[key]."""
    def shard(data: dict[str, Any], part: int, parts: int) -> dict[str, Any]:
        return {**data, key: data[key][part::parts]}
    return shard


def registry() -> dict[str, Target]:
    from fabgen.platforms import eos, fabric, hosts, infiniband, nvue, sonic

    targets = [fabric.TARGET, infiniband.TARGET, eos.TARGET, sonic.TARGET, nvue.TARGET, hosts.TARGET]
    return {t.name: t for t in targets}


def get(name: str) -> Target:
    targets = registry()
    if name not in targets:
        raise KeyError(f"unknown target {name!r}; known: {', '.join(sorted(targets))}")
    return targets[name]
