"""The subnet-manager intent of an InfiniBand fabric, and the InfiniBand half of NCCL.

Decisions:
* routing engine: `ufm` -> `ar_updn` (NVIDIA SM >= 5.10 default, adaptive routing);
  `opensm` -> `ftree`; both with `updn` as the fallback before minhop. A single-switch
  fabric uses minhop (there is no tree to route).
* SHARP and adaptive routing: on with ufm, off with upstream OpenSM (it has neither).
* file locations: where each SM reads its files (`CONF_DIR`, `deploy_files`), for opensm.conf
  and for the SM hosts' playbook.
* NCCL: the service level the SM routes, adaptive routing when the SM does it, CollNet when
  SHARP is on. The InfiniBand target, the hosts and the report read these; none re-derives them.
"""

from __future__ import annotations

from typing import Any

from fabgen.context import Context
from fabgen.spec.schema import InfinibandOptions

# Quantum-2 (public ibnetdiscover dumps). Quantum-X800's device ID is in no public source found;
# its switches get Quantum-2's: topology.net's devid and the IBNL
# node type in validate/ibdm.topo are comments to ibsim, OpenSM's routing and ibdmchk.
DEVICE_ID = {"qm9700": 0xD2F2, "qm9790": 0xD2F2}
# Where each subnet manager reads its files: opensm.conf names them, the SM hosts' playbook
# installs them there (UFM: /opt/ufm/files/conf, UFM Enterprise user guide, "Configuration files")
CONF_DIR = {"opensm": "/etc/opensm", "ufm": "/opt/ufm/files/conf/opensm"}


def options(ctx: Context) -> InfinibandOptions:
    return ctx.fabric.spec.infiniband or InfinibandOptions()


def resolved(ctx: Context) -> dict[str, Any]:
    """Concrete subnet-manager intent: every 'auto' decided."""
    ib = options(ctx)
    platform = ctx.fabric.spec.platform
    tiers = ctx.fabric.plan.tiers
    nvidia = platform == "ufm"
    sharp = nvidia if ib.sharp is None else ib.sharp
    ar = nvidia if ib.adaptive_routing is None else ib.adaptive_routing
    if tiers == 1:
        engine = "minhop"
        upstream = "minhop"
    else:
        chosen = ib.routing_engine
        if chosen == "auto":
            chosen = "ar_updn" if nvidia and ar else ("updn" if nvidia else "ftree")
        engine = chosen if chosen in ("updn", "minhop") else f"{chosen},updn"
        upstream = {"ar_updn": "ftree", "ar_ftree": "ftree"}.get(chosen, chosen)
        upstream = upstream if upstream in ("updn", "minhop") else f"{upstream},updn"
    return {"engine": engine, "upstream_engine": upstream, "sharp": sharp, "adaptive_routing": ar,
            "service_level": ib.service_level, "qos": ib.qos, "sm_priority": ib.sm_priority}


def nccl_settings(ctx: Context) -> dict[str, str]:
    """The InfiniBand half of nccl.env, decided once for every host of the fabric."""
    r = resolved(ctx)
    out = {"NCCL_IB_SL": str(r["service_level"]),
           "NCCL_IB_ADAPTIVE_ROUTING": "1" if r["adaptive_routing"] else "0"}
    if r["sharp"]:
        out["NCCL_COLLNET_ENABLE"] = "1"
    return out


SHARP_DIR = {"ufm": "/opt/ufm/files/conf/sharp"}


def deploy_files(data: dict[str, Any]) -> list[dict[str, str]]:
    """The files a subnet-manager host installs, with where: the paths opensm.conf names
    (CONF_DIR), and sharp_am.cfg where UFM's SHARP aggregation manager reads it. The same
    conditions as `render`, read from the same structured config."""
    base = f"{data['fabric']}/infiniband"
    conf = CONF_DIR[data["platform"]]
    names = ["opensm.conf", *(f"{k}.conf" for k in ("root_guids", "cn_guids", "io_guids") if data[k]),
             "partitions.conf", "node-name-map", *(["qos-policy.conf"] if data["resolved"]["qos"] else [])]
    out = [{"src": f"{base}/{name}", "dest": f"{conf}/{name}", "mode": "0644"} for name in names]
    if data["resolved"]["sharp"] and data["platform"] in SHARP_DIR:
        out.append({"src": f"{base}/sharp_am.cfg", "dest": f"{SHARP_DIR[data['platform']]}/sharp_am.cfg",
                    "mode": "0644"})
    return out
