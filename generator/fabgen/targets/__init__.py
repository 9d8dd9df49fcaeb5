"""Targets: each turns built, allocated fabrics into a structured config and then files.

A target is data plus two functions (netlab and hier_config keep platforms the same way):
`structure` turns the intent (fabgen/intent) into the target's own structured config and
returns plain data (or, for the per-device part of large outputs, a `targets.Deferred` that
makes each device's item where it is written); `render` only formats it. Per-fabric targets (switch configs, subnet
manager, hosts, cabling) and cluster-wide ones (Slurm, the report, Ansible) are the same
kind of object in one registry, so the pipeline has no special cases. The registry refuses
unknown names.
"""

from __future__ import annotations

from fabgen.context import Context
from fabgen.targets.base import CLUSTER, FABRIC, Target, every_other  # noqa: F401 (the names platforms read)

__all__ = ["Context", "Target", "every_other", "registry", "get"]


def registry() -> dict[str, Target]:
    """Every target, per-fabric ones first, then the cluster-wide ones in the order they
    read each other (the report reads the fabric target's bill of materials, Ansible every
    device's files). A new output is one module with a TARGET and one line here."""
    from fabgen.targets import (
        ansible,
        eos,
        fabric,
        hosts,
        infiniband,
        kubernetes,
        netbox,
        nvue,
        provisioning,
        report,
        slurm,
        sonic,
    )

    targets = [fabric.TARGET, infiniband.TARGET, eos.TARGET, sonic.TARGET, nvue.TARGET, nvue.OOB_TARGET, hosts.TARGET,
               slurm.TARGET, kubernetes.TARGET, netbox.TARGET, report.TARGET, ansible.TARGET, provisioning.TARGET]
    return {t.name: t for t in targets}


def get(name: str) -> Target:
    targets = registry()
    if name not in targets:
        raise KeyError(f"unknown target {name!r}; known: {', '.join(sorted(targets))}")
    return targets[name]
