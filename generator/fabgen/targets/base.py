"""What a target is (`Target`, its scopes, the sharding helper): the names the pipeline, the
platform modules and the report all read, kept apart from the registry (targets/__init__.py)
so that no module and the registry import each other."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from fabgen.context import Context

FABRIC, CLUSTER = "fabric", "cluster"


@dataclass(frozen=True)
class Target:
    """One kind of output. Per fabric (scope "fabric"): `applies(ctx)` says whether it has
    files for that fabric and `structure(ctx)` decides them. Cluster-wide (scope "cluster"):
    `structure(contexts, structured)` sees every fabric and the structured configs of the
    per-fabric targets (Ansible lists their files; the report their bills of materials)."""

    name: str
    applies: Callable[[Context], bool]
    structure: Callable[..., Any]
    render: Callable[[Any], Iterable[tuple[str, bytes]]]  # (path relative to OUT, content)
    # shard(data, part, parts): the part of data whose files `render` then writes, so that
    # large renders can run on two cores (fabgen.parallel); None: rendered in one piece.
    shard: Callable[[Any, int, int], Any] | None = None
    scope: str = FABRIC
    # cluster-wide targets: the targets whose structured configs `structure` reads (it is given
    # only those, so a missing name shows as a wrong output at once)
    reads: tuple[str, ...] = ()
    # made apart: structured and rendered in a process of its own while the switch configs are
    # structured (fabgen.pipeline); only targets that read nothing but others made apart, and
    # that no target made in the main process reads (tests/test_architecture.py checks both)
    apart: bool = False
    # made apart and read by a cluster-wide target made apart: the part of a structured config
    # that target reads, kept once the config's files are written (the rest is freed then);
    # None keeps it whole
    kept: Callable[[Any], Any] | None = None


def every_other(key: str) -> Callable[[Any, int, int], Any]:
    """Shard a target's data by taking every parts-th item of data[key]."""
    def shard(data: dict[str, Any], part: int, parts: int) -> dict[str, Any]:
        return {**data, key: data[key][part::parts]}
    return shard


class Deferred:
    """A target's items, each made as it is iterated: `make(device)` for each device in order (a
    switch's NVUE tree; a fabric's NetBox rows, one fabric a device). Its render (and each render
    piece, by slicing: `every_other`) makes only the items it writes and drops each once written,
    so no process holds them all (at 131,072 GPUs of four planes NVUE's trees were 1.3 GB in the
    main process, copied page by page into the render child as both touched them). Iterating
    twice makes the items twice: a reader that needs them all at once (`fabgen diff`) takes
    `made()` of the structured config."""

    __slots__ = ("make", "devices")

    def __init__(self, make: Callable[[Any], Any], devices: Sequence[Any]):
        self.make, self.devices = make, devices

    def __iter__(self) -> Iterator[Any]:
        return map(self.make, self.devices)

    def __len__(self) -> int:
        return len(self.devices)

    def __getitem__(self, part: slice) -> Deferred:
        return Deferred(self.make, self.devices[part])


def made(data: Any, depth: int = 2) -> Any:
    """A structured config with every `Deferred` in it (its own value or a value of a dict it
    holds) made, as a list: for a reader that keeps them all (`fabgen diff` compares them)."""
    if isinstance(data, Deferred):
        return list(data)
    if depth == 0 or type(data) is not dict:
        return data
    new = {k: made(v, depth - 1) for k, v in data.items()}
    return data if all(new[k] is v for k, v in data.items()) else new
