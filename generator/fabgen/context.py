"""What a target may read about one fabric: the built, allocated fabric and its summary.

Below every other layer that decides (intent) or spells (platforms), so both can name it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fabgen.addressing import Allocation
from fabgen.spec.model import Fabric
from fabgen.topology.analysis import Summary


@dataclass(frozen=True)
class Context:
    """Everything a target may read about one fabric."""

    cluster: str
    fabric: Fabric
    allocation: Allocation
    summary: Summary
    groups: dict[str, Any] = field(default_factory=dict)  # node group name -> inventory NodeGroup
    kubernetes: Any = None  # the inventory's KubernetesOptions (cluster-wide)
    baseline: Any = None  # the inventory's site baseline (intent/baseline.py), or None
    provisioning: Any = None  # the inventory's Provisioning (targets/provisioning.py), or None
    macs: dict[str, str] = field(default_factory=dict)  # switch -> management MAC, from the MAC map
    # a multi-plane fabric's first plane: the contexts of all its planes, in order (the hosts'
    # files cover every plane at once); () otherwise
    planes: tuple[Context, ...] = ()
    # a routed out-of-band network (oob_design routed; addressing.RoutedOob): on its own context and
    # on its north-south fabric's, the one set of numbers both ends write; None otherwise
    oob_routed: Any = None

    def plane_contexts(self) -> tuple[Context, ...]:
        """The contexts whose ports a node of this fabric has: all planes, or this one."""
        return self.planes or (self,)
