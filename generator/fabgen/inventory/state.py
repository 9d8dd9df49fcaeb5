"""What the cross-field checks share (`Checks`: the inventory, where to report, what earlier checks
found) and the bounds they hold the inventory to."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fabgen.errors import Problem
from fabgen.inventory.loader import Loaded, PathT, format_path
from fabgen.spec.catalog import NodeModel, SwitchModel
from fabgen.spec.schema import NAME_PATTERN, Inventory
from fabgen.spec.sizing import Plan

# Node ports of one fabric, all planes: the largest fabric benchmarked (benchmarks/, 131,072 GPUs of
# DGX B300 on four Spectrum-X planes). The spine and core tiers are built for the plan, so the bound
# applies before anything is sized or built, and an input with a zero too many is answered at once.
MAX_ENDPOINTS = 524_288
MAX_FABRIC_NAME = 40  # device names are '<fabric>-su01-leaf1' and must stay DNS labels
# top-level folders of OUT that are not a fabric's (a fabric's files go to OUT/<fabric>/)
RESERVED_FOLDERS = frozenset({"ansible", "hosts", "host-groups", "slurm", "provisioning"})
NAME_RE = re.compile(NAME_PATTERN)
PORT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9/_.:-]{0,62}")

# The names a switch gives its own network devices, and fabgen's switch configs derive, by what
# they are: Cumulus Linux (NVUE) makes a tenant's VRF a Linux device beside its ports, bonds, SVIs,
# bridge and VXLAN device, where one name can be only one of them; EOS names the same things
# Ethernet1, Port-Channel1, Vlan20, Vxlan1 (SONiC: Ethernet0, PortChannel1, Vlan20). Tenant VRFs
# and a custom switch's port names are checked against every platform's, ignoring case: the same
# tenants are rendered for either, and 'Vlan30' reads as the SVI either way.
SWITCH_PORT = r"swp\d+(s\d+)?|ethernet\d+"
SWITCH_NAMES = (
    (r"all|default", "the kernel's own 'all' (/proc/sys/net/ipv4/conf/all)"),
    (r"lo|loopback\d*", "the loopback"),
    (r"eth\d+|management\d+", "a management port (eth0 on Cumulus Linux, Management1 on EOS)"),
    (SWITCH_PORT, "a switch port (swp1, swp1s0 on Cumulus Linux, Ethernet1 on EOS)"),
    (r"bond\d+|port-?channel\d+|peerlink(\.\d+)?", "a bond (a node's leg: bond<n> on NVUE, Port-Channel<n> on EOS, "
     "PortChannel<n> on SONiC; MLAG's peerlink)"),
    (r"vlan\d+(_l3|-v\d+)?", "a VLAN's interface (vlan<id> on Cumulus Linux, Vlan<id> on EOS; vlan<id>-v0, "
     "Cumulus's anycast-gateway device of it)"),
    (r"tunl\d+|dummy\d+|pimreg\d*|ipmr-lo", "a kernel device Cumulus Linux creates (tunl0, dummy0, pimreg, "
     "ipmr-lo)"),
    (r"vxlan\d*|vni\d*|nve\d*", "a VXLAN device (vxlan48 on Cumulus Linux, Vxlan1 on EOS)"),
    (r"br_[a-z0-9_-]*|bridge", "a bridge (br_default on Cumulus Linux)"),
)


def switch_name(name: str) -> str | None:
    """What a switch calls its own device of this name (a port, bond, SVI, bridge, VXLAN device,
    the loopback), or None where no switch device is so named."""
    return next((what for rx, what in SWITCH_NAMES if re.fullmatch(rx, name, re.I)), None)


@dataclass(frozen=True)
class Validated:
    """A valid inventory with its hardware resolved and every fabric sized."""

    loaded: Loaded
    inventory: Inventory
    switch_models: dict[str, SwitchModel]
    node_models: dict[str, NodeModel]
    plans: dict[str, Plan]  # by fabric name
    members: dict[str, list[tuple[str, str, NodeModel]]]  # fabric -> (hostname, group, model), compute nodes
    storage: dict[str, list[tuple[str, str, NodeModel]]]  # fabric -> the same, storage nodes
    guid_maps: dict[str, dict[tuple[str, str], int]]  # fabric -> (device, port) -> real GUID
    warnings: dict[str, list[str]]  # fabric -> located warnings (inventory asks for what cannot work)
    managed: dict[str, Any] = field(default_factory=dict)  # oob fabric -> its Layout (topology/oob.py)
    # the growth checks of unplanned fabrics, left to the stage after validation that may compare
    # plans (topology/growth.py, run by the pipeline beside the build); it files them with `settle`
    pending: list[PendingGrowth] = field(default_factory=list)
    macs: dict[str, str] = field(default_factory=dict)  # switch -> management MAC (provisioning.mac_map)

    def settle(self, found: list[list[str]]) -> None:
        """File the growth checks' warnings where validate would have filed them (one check per
        fabric, so each place is still right)."""
        for p, notes in zip(self.pending, found):
            if notes:
                self.warnings.setdefault(p.fabric, [])[p.place:p.place] = notes
        self.pending.clear()


@dataclass(frozen=True)
class PendingGrowth:
    """What the growth check of one unplanned fabric needs: its spec, its plan, the sizing rules
    that size it for more nodes, and where its warnings point (`located`: the prefix)."""

    fabric: str
    place: int  # among the fabric's warnings
    spec: Any
    plan: Plan
    rules: dict[str, Any]
    located: str


Member = tuple[str, str, NodeModel]  # (hostname, node group, node model)


@dataclass
class Checks:
    """What the cross-field checks share: the inventory, where to report, and what earlier checks found.

    Each check below is one concern and reads what the checks before it recorded here, so a rule is
    found by its function's name instead of by scrolling one long function.
    """

    loaded: Loaded
    inv: Inventory
    problems: list[Problem] = field(default_factory=list)
    switch_models: dict[str, SwitchModel] = field(default_factory=dict)
    node_models: dict[str, NodeModel] = field(default_factory=dict)
    groups: dict[str, Any] = field(default_factory=dict)  # node group name -> NodeGroup
    owners: dict[str, tuple[int, str]] = field(default_factory=dict)  # hostname -> (group index, group)
    owners_ci: dict[str, tuple[int, str]] = field(default_factory=dict)  # lower-case hostname -> (index, hostname)
    hostnames: dict[str, list[str]] = field(default_factory=dict)  # node group -> its hostnames
    attached: dict[tuple[str, str], str] = field(default_factory=dict)  # (node group, role) -> fabric
    plans: dict[str, Plan] = field(default_factory=dict)  # fabric -> sized plan
    members: dict[str, list[Member]] = field(default_factory=dict)
    storage: dict[str, list[Member]] = field(default_factory=dict)
    switches: dict[str, list[str]] = field(default_factory=dict)  # fabric -> its switch names (sized ones)
    guid_maps: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)  # fabric -> its real GUIDs
    taken: list = field(default_factory=list)  # data pools handed out, (path, network)
    warnings: dict[str, list[str]] = field(default_factory=dict)  # fabric -> located warnings
    managed: dict[str, Any] = field(default_factory=dict)  # oob fabric -> its Layout: blocks and places
    manager: dict[str, str] = field(default_factory=dict)  # fabric -> the out-of-band network managing it
    group_models: dict[str, Any] = field(default_factory=dict)  # node group -> its model as its nodes are
    pending: list = field(default_factory=list)  # growth checks: (fabric, place among its warnings, check)
    macs: dict[str, str] = field(default_factory=dict)  # switch -> management MAC (provisioning.mac_map)

    def report(self, path: PathT, message: str, key: bool = False) -> None:
        line, col = self.loaded.where(path, key=key)
        self.problems.append(Problem(line, col, format_path(path), message, self.loaded.file))

    def located(self, path: PathT, message: str) -> str:
        """A warning's text: report.json and the command line both carry where it comes from."""
        line, col = self.loaded.where(path)
        return f"{format_path(path)} (line {line}, column {col}): {message}"

    def warner(self, fabric: str):
        """A warn(path, message) that files a located warning under `fabric`."""
        return lambda path, msg: self.warnings.setdefault(fabric, []).append(self.located(path, msg))
