"""The QoS intent of an Ethernet fabric: one lossless RoCE convention for every switch and host.

Decisions (docs/decisions.md; sources in docs/sources.md):
* DSCP map: the RoCE DSCP goes to the RoCE class, the CNP DSCP to the CNP class, every
  other DSCP to class 0. Only RoCE is no-drop; EOS's default map (DSCP/8) would have put
  DSCP 24-31 into the no-drop class too, and SONiC's stock map puts DSCP 26 in lossy TC1.
* traffic class n uses queue n and priority group n for the lossless class, 0 otherwise.
* the host's ToS byte is the RoCE DSCP shifted left with ECT(0), what NCCL_IB_TC carries.
* Spectrum-X: adaptive routing on unless the inventory turns it off, never on ports faster
  than Spectrum-4 adapts (800G).
Read by EOS, SONiC, NVUE, the hosts and the report; none of them derives these values again.
"""

from __future__ import annotations

from typing import Any

from fabgen.context import Context
from fabgen.spec.schema import EthernetOptions


def options(ctx: Context) -> EthernetOptions:
    return ctx.fabric.spec.ethernet or EthernetOptions()


def adaptive_routing(ctx: Context) -> tuple[bool, bool]:
    """(on globally, on the switch-to-switch ports) for a Spectrum-X fabric: on unless the
    inventory turns it off; never on ports faster than Spectrum-4 adapts (800G)."""
    if ctx.fabric.spec.kind != "spectrum-x":
        return False, False
    from fabgen.inventory.ethernet import AR_MAX_SPEED

    eth = options(ctx)
    on = True if eth.adaptive_routing is None else eth.adaptive_routing
    return on, on and ctx.fabric.plan.speed <= AR_MAX_SPEED


def qos_intent(ctx: Context) -> dict[str, Any]:
    """The lossless RoCE intent every switch port and every host of the fabric reads."""
    eth = options(ctx)
    q = eth.qos
    dscp_to_tc = [0] * 64
    dscp_to_tc[q.roce_dscp] = q.roce_priority
    dscp_to_tc[q.cnp_dscp] = q.cnp_priority
    return {
        "roce_dscp": q.roce_dscp, "roce_priority": q.roce_priority,
        "cnp_dscp": q.cnp_dscp, "cnp_priority": q.cnp_priority,
        "no_drop": [q.roce_priority],
        "dscp_to_tc": dscp_to_tc,
        "tc_to_queue": list(range(8)),
        "tc_to_pg": [tc if tc == q.roce_priority else 0 for tc in range(8)],
        "roce_bandwidth_percent": q.roce_bandwidth_percent,
        "ecn": {"min_kbytes": q.ecn.min_threshold_kbytes, "max_kbytes": q.ecn.max_threshold_kbytes,
                # KB as NVIDIA counts it (150 KB = 150,000 B in Cumulus's RoCE profile): every
                # target is given bytes, so no two platforms round differently.
                "min_bytes": q.ecn.min_threshold_kbytes * 1000, "max_bytes": q.ecn.max_threshold_kbytes * 1000,
                "probability": q.ecn.probability},
        "watchdog": {"enabled": q.pfc_watchdog.enabled, "detection_ms": q.pfc_watchdog.detection_ms,
                     "restoration_ms": q.pfc_watchdog.restoration_ms,
                     "poll_interval_ms": q.pfc_watchdog.poll_interval_ms, "action": q.pfc_watchdog.action},
        "mode": q.mode,
        # NVUE's traffic pools, only where the inventory sizes them (the RoCE profile's otherwise)
        **({"buffer_pools": {"roce-lossless": q.lossless_buffer_percent,
                             "default-lossy": 100 - q.lossless_buffer_percent}}
           if q.lossless_buffer_percent is not None else {}),
        "mtu": eth.mtu,
        "host_mtu": eth.host_mtu,
        "host_tos": q.roce_dscp * 4 + 2,  # DSCP << 2 with ECT(0): what NCCL_IB_TC carries
    }
