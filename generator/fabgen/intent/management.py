"""The management plane of a fabric's switches, decided once for every platform.

A config applied by full replace keeps the switch reachable only if it carries the
out-of-band port's address (the switch's `ansible_host`), the management VRF, a default
route in that VRF and, where the platform keeps accounts in the config, the operator's
accounts. This is that intent; EOS, SONiC and NVUE only spell it.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fabgen.intent import secret_ref
from fabgen.intent.baseline import secret_name, secret_text, users_of
from fabgen.inventory.management import gateway_of, services_of, vrf_of
from fabgen.spec.model import Fabric
from fabgen.spec.schema import Baseline

ROLES = {"admin", "read-only"}
# A routed out-of-band network's uplinks (oob_design routed) in its cabling.csv, NetBox and the BOM:
# their tier, and their medium (100G SR4 multimode: fabgen's pick; NVIDIA's output has no cabling plan
# for them)
OOB_UPLINK_TIER = "access-uplink"
OOB_UPLINK_MEDIA = "mmf"


def oob_uplinks(ctx: Any) -> list[tuple[str, str, str, str, int]]:
    """A routed out-of-band network's uplinks, on its own context: (access switch, its port, pair
    leaf, its port, the access switch's uplink speed), switch by switch; none otherwise."""
    r = ctx.oob_routed
    f = ctx.fabric
    if r is None or f.spec.role != "oob":
        return []
    return [(name, u["port"], u["peer"], u["peer_port"], f.switch_model.uplink_speed)
            for name, a in r.access.items() for u in a["uplinks"]]


def plane(fabric: Fabric, site: Baseline | None = None) -> dict[str, Any] | None:
    """Fabric-wide settings (one object every switch shares; each switch's own address is
    the allocation's), or None without a management block. The accounts are the management
    block's, else the baseline's (the fabric's, then the site's)."""
    m = fabric.spec.management
    if m is None:
        return None
    net = ipaddress.IPv4Network(m.prefix)
    accounts = m.users or users_of(site, fabric.spec.baseline)
    users = [{"name": u.name, "role": u.role, "password_source": secret_name(u.password_hash),
              "password": secret_text(u.password_hash),
              "ssh_key_env": u.ssh_key.env if u.ssh_key else None,
              "ssh_key": secret_ref(u.ssh_key.env) if u.ssh_key else None} for u in accounts]
    return {"prefix": str(net), "prefix_len": net.prefixlen,
            "gateway": str(ipaddress.IPv4Address(gateway_of(m))),
            "vrf": vrf_of(m, fabric.spec.platform),
            **services_of(m, site, fabric.spec.baseline), "domain": m.domain,
            "users": users}
