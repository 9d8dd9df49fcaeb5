"""Targets: each turns built, allocated fabrics into a structured config and then files.

A target is data plus two functions (netlab and hier_config keep platforms the same way):
`structure` turns the intent (fabgen/intent) into the target's own structured config and
returns plain data; `render` only formats it. Per-fabric targets (switch configs, subnet
manager, hosts, cabling) and cluster-wide ones (Slurm, the report, Ansible) are the same
kind of object in one registry, so the pipeline has no special cases. The registry refuses
unknown names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from fabgen.context import Context

__all__ = ["Context", "Target", "every_other", "registry", "get"]


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


def every_other(key: str) -> Callable[[Any, int, int], Any]:
    """Shard a target's data by taking every parts-th item of data[key]."""
    def shard(data: dict[str, Any], part: int, parts: int) -> dict[str, Any]:
        return {**data, key: data[key][part::parts]}
    return shard


def registry() -> dict[str, Target]:
    """Every target, per-fabric ones first, then the cluster-wide ones in the order they
    read each other (the report reads the fabric target's bill of materials, Ansible every
    device's files). A new output is one module with a TARGET and one line here."""
    from fabgen import report
    from fabgen.platforms import ansible, eos, fabric, hosts, infiniband, kubernetes, netbox, nvue, slurm, sonic

    targets = [fabric.TARGET, infiniband.TARGET, eos.TARGET, sonic.TARGET, nvue.TARGET, nvue.OOB_TARGET, hosts.TARGET,
               slurm.TARGET, kubernetes.TARGET, netbox.TARGET, report.TARGET, ansible.TARGET]
    return {t.name: t for t in targets}


def get(name: str) -> Target:
    targets = registry()
    if name not in targets:
        raise KeyError(f"unknown target {name!r}; known: {', '.join(sorted(targets))}")
    return targets[name]
