"""Checks that depend on the switch platform: the release a config is written for, and
values a platform takes only at its own granularity.

* NVUE: the object model changed at Cumulus Linux 5.15 (`interface ip` became `ipv4`/`ipv6`,
  `enable on` became `state enabled`, NTP and DNS moved from `service` to `system`, BFD
  settings moved to profiles). fabgen writes both dialects; the versions below are the
  ones its output is validated against with NVIDIA's published object model (PyPI
  `nvueschema`, generated from each release's openapi.json).
* EOS: PFC watchdog timers are seconds with at most two decimals (`priority-flow-control
  pause watchdog default timeout 0.2`): 10 ms steps.
* NVUE: the PFC watchdog has a polling interval and a robustness (how many intervals a
  queue stays paused before it is declared stalled), and no restoration timer.
"""

from __future__ import annotations

from collections.abc import Callable

from fabgen.spec.platforms import PLATFORMS
from fabgen.spec.schema import BFD_CLASSES, BfdClasses, BfdTimers, EthernetOptions, Fabric

Report = Callable[[tuple, str], None]

# the releases of each platform (spec/platforms.py)
VERSIONS = {name: p.versions for name, p in PLATFORMS.items() if p.versions}
DEFAULT_VERSION = {name: p.default_version for name, p in PLATFORMS.items() if p.default_version}
EOS_TIMER_STEP_MS = 10


def version_of(f: Fabric) -> str | None:
    return f.platform_version or DEFAULT_VERSION.get(f.platform)


def nvue_state_dialect(version: str) -> bool:
    """True from Cumulus Linux 5.15 on: `state enabled`, `ipv4`, `system ntp`, BFD profiles."""
    major, minor = (int(x) for x in version.split("."))
    return (major, minor) >= (5, 15)


def check_platform(i: int, f: Fabric, report: Report, warn: Report) -> None:
    path = ("fabrics", i)
    _check_version(path, f, report)
    if f.kind == "infiniband":
        return
    qos = (f.ethernet or EthernetOptions()).qos
    wd = qos.pfc_watchdog
    wpath = (*path, "ethernet", "qos", "pfc_watchdog")
    if qos.mode == "lossy" and "pfc_watchdog" in qos.model_fields_set:
        report(wpath, "lossy mode runs no PFC, so there is no PFC watchdog to set: remove pfc_watchdog (or use "
               "mode lossless)")
        return
    if f.platform == "eos":
        for key in ("detection_ms", "restoration_ms", "poll_interval_ms"):
            value = getattr(wd, key)
            if value % EOS_TIMER_STEP_MS:
                report((*wpath, key), f"EOS takes watchdog timers in seconds with two decimals (10 ms steps): "
                       f"{value} ms cannot be written; use {value // 10 * 10} or {value // 10 * 10 + 10}")
    if f.platform == "nvue":
        _check_nvue_roce_profile(qos, (*path, "ethernet", "qos"), report)
    if qos.lossless_buffer_percent is not None and (f.platform != "nvue" or qos.mode != "lossless"):
        report((*path, "ethernet", "qos", "lossless_buffer_percent"),
               "lossless_buffer_percent sizes NVUE's RoCE lossless traffic pool: "
               + (f"{f.platform} switches take none from fabgen (their buffers stay at the platform's profile)"
                  if f.platform != "nvue" else "lossy mode has no lossless pool") + "; leave it out")
    _check_bfd(path, f, report, warn)
    _check_nvue_bgp(path, f, report)
    if f.platform == "nvue" and wd.enabled:
        if wd.detection_ms % wd.poll_interval_ms:
            report((*wpath, "detection_ms"), f"NVUE declares a queue stalled after a whole number of polling "
                   f"intervals (robustness): {wd.detection_ms} ms is not a multiple of poll_interval_ms "
                   f"({wd.poll_interval_ms} ms)")
        if "restoration_ms" in wd.model_fields_set:
            warn((*wpath, "restoration_ms"), "NVUE's PFC watchdog has no restoration timer: restoration_ms is not "
                 "rendered for this fabric")


def _check_nvue_bgp(path: tuple, f: Fabric, report: Report) -> None:
    """NVIDIA's BGP details that fabgen writes on NVUE only: `multipath aspath-ignore` (any NVUE
    fabric) and the north-south tenant VRFs' loopbacks (a northsouth fabric on NVUE)."""
    eth = f.ethernet
    if eth is None:
        return
    if eth.multipath_aspath_ignore and f.platform != "nvue":
        report((*path, "ethernet", "multipath_aspath_ignore"), "multipath_aspath_ignore is NVUE's `path-selection "
               f"multipath aspath-ignore`; fabgen writes it on Cumulus Linux only, not on {f.platform}: leave it out")
    if eth.announce == "redistribute" and f.platform != "nvue":
        report((*path, "ethernet", "announce"), "announce: redistribute is NVUE's `redistribute connected` through "
               f"NVIDIA's route-map LOOPBACK_BGP; fabgen writes it on Cumulus Linux only, not on {f.platform}: "
               "leave it out (the loopback is then a `network` statement)")
    for key in ("segment_mac", "segment_local_id"):
        if key in eth.northsouth.model_fields_set and (f.platform != "nvue" or f.role != "northsouth"):
            report((*path, "ethernet", "northsouth", key), f"{key} numbers the Ethernet segments of a northsouth "
                   "fabric on Cumulus Linux (NVUE)"
                   + (f"; this fabric's role is {f.role}" if f.role != "northsouth" else f"; not on {f.platform} "
                      "(EOS spells each segment as an identifier of its own)") + ": leave it out")
    evpn = eth.host_addressing == "evpn" or f.role == "northsouth"
    if eth.anycast_mac is not None and (f.platform != "nvue" or not evpn):
        report((*path, "ethernet", "anycast_mac"), "anycast_mac is NVUE's `system global anycast-mac` on an EVPN "
               "fabric (host_addressing evpn, or role northsouth)"
               + (f"; not on {f.platform}" if f.platform != "nvue" else "; this fabric has no EVPN")
               + ": leave it out")
    if eth.northsouth.dscp and (f.platform != "nvue" or f.role != "northsouth"):
        report((*path, "ethernet", "northsouth", "dscp"), "dscp copies the DSCP into the VXLAN header of a "
               "northsouth fabric on Cumulus Linux (NVUE); the GPU overlay (host_addressing evpn) always does"
               + (f"; this fabric's role is {f.role}" if f.role != "northsouth" else f"; not on {f.platform}")
               + ": leave it out")
    if eth.northsouth.vrf_loopbacks and (f.platform != "nvue" or f.role != "northsouth"):
        report((*path, "ethernet", "northsouth", "vrf_loopbacks"), "vrf_loopbacks gives the tenant VRFs of a "
               "northsouth fabric on Cumulus Linux (NVUE) their loopbacks"
               + (f"; this fabric's role is {f.role}" if f.role != "northsouth" else f"; not on {f.platform}")
               + ": leave it out")


def _check_bfd(path: tuple, f: Fabric, report: Report, warn: Report) -> None:
    """BFD timers a fabric's platform can write: SONiC's BGP_PEER_GROUP (frrcfgd) turns BFD on or
    off and carries no timers (sonic-bgp-common.yang: `bfd`, `bfd_check_ctrl_plane_failure`), so
    only FRR's 300 ms x 3 can be rendered there; the overlay class has sessions on EOS and in NVUE's
    GPU overlay (host_addressing evpn) only (elsewhere NVUE and SONiC carry EVPN on the underlay
    sessions), the border class where northsouth.border gives uplinks (timers of one's own warn
    elsewhere; `bfd: true`, which turns every class on, does not)."""
    bfd = (f.ethernet or EthernetOptions()).bfd
    bpath = (*path, "ethernet", "bfd")
    for cls in BFD_CLASSES:
        timers = getattr(bfd, cls)
        # the routed out-of-band classes are NVUE's only (check_oob refuses another platform): their
        # defaults stand on any platform
        default = BfdClasses.model_fields[cls].get_default(call_default_factory=True)
        if f.platform == "sonic" and timers is not None and timers not in (BfdTimers(), default):
            report((*bpath, cls), f"SONiC's config_db turns BFD on or off per peer group and carries no timers "
                   f"(FRR's 300 ms x 3): write {cls}: true or false")
    gpu_overlay = f.ethernet is not None and f.ethernet.host_addressing == "evpn"
    if f.platform != "eos" and not gpu_overlay and bfd.overlay not in (None, BfdTimers()):
        warn((*bpath, "overlay"), f"{f.platform} carries EVPN on the underlay sessions, with no overlay sessions "
             "of their own: overlay is not rendered for this fabric")
    # offload: NVUE's `router bfd offload` (refused elsewhere); 5.13/5.14's object model has no `router bfd`
    # (nvueschema), so there it is not written, warned, and the same inventory renders at every release
    version = version_of(f)
    if bfd.offload and f.platform != "nvue":
        report((*bpath, "offload"), f"offload is NVUE's `router bfd offload`; not on {f.platform}: leave it out")
    elif bfd.offload and (version is None or not nvue_state_dialect(version)):
        warn((*bpath, "offload"), f"offload is NVUE's `router bfd offload`, in Cumulus Linux 5.15 and later; this "
             f"fabric runs {version}: not rendered for this fabric")
    if f.ethernet is not None and f.ethernet.northsouth.border is None and bfd.border not in (None, BfdTimers()):
        warn((*bpath, "border"), "this fabric has no border uplinks (northsouth.border): border is not rendered "
             "for this fabric")


def _check_version(path: tuple, f: Fabric, report: Report) -> None:
    """A platform_version is one of the releases fabgen writes for, on a platform that has several."""
    if f.platform_version is not None:
        known = VERSIONS.get(f.platform)
        if known is None:
            report((*path, "platform_version"), f"platform_version applies to platforms "
                   f"{' and '.join(sorted(VERSIONS))}; {f.platform} configs are written for one release")
        elif f.platform_version not in known:
            report((*path, "platform_version"), f"{f.platform} {f.platform_version!r} is not a release fabgen writes "
                   f"for: choose {', '.join(known)}")


# Cumulus Linux's RoCE profile (`nv set qos roce`, which fabgen renders for every NVUE fabric):
# DSCP 26 to switch priority 3 (RoCE, PFC in lossless mode), DSCP 48 to 6 (CNP, strict), RoCE's
# traffic class 50% of the bandwidth by WRR beside traffic class 0. "Default RoCE Configuration",
# Cumulus Linux 5.14 user guide, Quality of Service / RDMA over Converged Ethernet - RoCE
# (docs.nvidia.com/networking-ethernet-software/cumulus-linux-514). The hosts take the inventory's
# values, so any other value would mark RoCE where the switches run it lossy.
NVUE_ROCE_PROFILE = {"roce_dscp": 26, "roce_priority": 3, "cnp_dscp": 48, "cnp_priority": 6,
                     "roce_bandwidth_percent": 50}


def _check_nvue_roce_profile(qos: object, path: tuple[object, ...], report: Report) -> None:
    """A QoS value that Cumulus's RoCE profile fixes, set otherwise, never reaches an NVUE switch:
    refused where it is written (the hosts would send RoCE the switches do not protect)."""
    for key, fixed in NVUE_ROCE_PROFILE.items():
        value = getattr(qos, key)
        if value != fixed:
            report((*path, key), f"NVUE switches run Cumulus Linux's RoCE profile (qos roce), which fixes {key} at "
                   f"{fixed}; fabgen does not render another value for NVUE, and hosts marking {value} would run "
                   f"lossy there: leave {key} out or set {fixed}")
