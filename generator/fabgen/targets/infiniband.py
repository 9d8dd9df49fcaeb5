"""InfiniBand (Quantum-2) target: subnet-manager files for UFM (NVIDIA's SM) or upstream OpenSM.

The subnet-manager intent (routing engine, SHARP, adaptive routing, the InfiniBand side of
NCCL) is decided in `intent/infiniband.py`; this module spells it:
* opensm.conf carries only keys the target SM knows (`UPSTREAM_KEYS`, checked against
  `opensm -c` in the tests; `NVIDIA_ONLY_KEYS` with their source); booleans are written
  `TRUE`/`FALSE`, the only spelling OpenSM reads as true (osm_subnet.c).
* for a ufm fabric, `opensm.upstream.conf` is the same intent for upstream OpenSM: what
  the simulator test runs, and a fallback SM.
* topology.net is the fabric in ibnetdiscover format (the format ibsim reads), with GUID
  lines so that the simulator, the GUID files and node-name-map agree. Port numbers are
  the switch's logical port order at the fabric speed (IB1/c/j -> 2(c-1)+j on Quantum-2).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from fabgen.context import Context
from fabgen.formats.templating import render as render_template
from fabgen.intent.infiniband import CONF_DIR, DEVICE_ID, nccl_settings, options, resolved  # noqa: F401  (read here)
from fabgen.targets.base import Target

if TYPE_CHECKING:
    from fabgen.spec.schema import InfinibandOptions

# Keys upstream OpenSM 3.3 reads (a subset of `opensm -c` output); tests check each one.
UPSTREAM_KEYS = (
    "sm_priority", "lmc", "routing_engine", "root_guid_file", "cn_guid_file", "io_guid_file",
    "partition_config_file", "qos", "qos_policy_file", "sweep_interval", "node_name_map_name",
)
# Keys only NVIDIA's subnet manager (UFM / MLNX OpenSM) reads; upstream drops them with
# "Unrecognized token". Source: MLNX SM release notes 5.10-5.12 (sharp_enabled: 0 ignore,
# 1 disable, 2 enable).
NVIDIA_ONLY_KEYS = {"sharp_enabled": "MLNXSM RN v5.11/v5.12, NVIDIA SHARP docs"}

MTU_CODE = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}  # IBTA, include/iba/ib_types.h
# IBTA rate codes for 4x EDR/HDR/NDR/XDR (opensm include/iba/ib_types.h IB_PATH_RECORD_RATE_*_GBS;
# 800 Gb/s is 23 in the XDR additions). Validation accepts exactly these rates (IB_RATES).
RATE_CODE = {100: 16, 200: 17, 400: 21, 800: 23}
SPEED_TEXT = {100: "4xEDR", 200: "4xHDR", 400: "4xNDR", 800: "4xXDR"}
VENDOR_ID = 0x2C9
# SHARP generation of the switch ASIC (NVIDIA SHARP docs: SHARPv3 on Quantum-2, SHARPv4 on
# Quantum-X800); sharp_am manages both with the same sharp_am.cfg keys.
SHARP_GENERATION = {"qm9700": "SHARPv3 (Quantum-2)", "qm9790": "SHARPv3 (Quantum-2)",
                    "q3400": "SHARPv4 (Quantum-X800)"}
CA_DEVICE_ID = 0x1021  # ConnectX-7


def _guid(value: int) -> str:
    return f"0x{value:016x}"


def _nic_guids(guids: dict[str, int], hosts: Iterable[Any]) -> list[tuple[str, str]]:
    return [(_guid(guids[f"{h.name}/{n.rdma}"]), f"{h.name} {n.rdma}") for h in hosts for n in h.model.nics]


def _conf(ctx: Context, r: dict[str, Any], profile: str) -> list[tuple[str, str, str]]:
    """(key, value, comment) in the order an engineer reads them."""
    d = CONF_DIR[profile]
    rows = [
        ("sm_priority", str(r["sm_priority"]), "15 = primary; give the standby 14"),
        ("lmc", "0", "ftree and lash fall back to minhop with LMC > 0"),
        ("routing_engine", r["engine"] if profile == ctx.fabric.spec.platform else r["upstream_engine"],
         "tried in order; minhop only if all fail"),
        ("root_guid_file", f"{d}/root_guids.conf", "top-tier switches"),
        ("cn_guid_file", f"{d}/cn_guids.conf", "compute NIC ports"),
    ]
    if any(h.role == "storage" for h in ctx.fabric.hosts):
        rows.append(("io_guid_file", f"{d}/io_guids.conf", "storage NIC ports: routed, but not balanced as compute"))
    rows += [
        ("partition_config_file", f"{d}/partitions.conf", ""),
        ("node_name_map_name", f"{d}/node-name-map", "names in logs and diagnostics"),
        ("qos", "TRUE" if r["qos"] else "FALSE", "TRUE is the only spelling OpenSM reads as true"),
    ]
    if r["qos"]:
        rows.append(("qos_policy_file", f"{d}/qos-policy.conf", ""))
    if profile == "ufm":
        rows.append(("sharp_enabled", "2" if r["sharp"] else "1", "NVIDIA SM only: 2 enable, 1 disable"))
    return rows


def _partitions(ctx: Context, ib: InfinibandOptions, guids: dict[str, int]) -> list[dict[str, Any]]:
    f = ctx.fabric
    out = [{"name": "Default", "pkey": "0x7fff", "flags": ["ipoib", f"mtu={MTU_CODE[4096]}"],
            "members": ["ALL=full"], "comment": "always present: without it every port is a limited member"}]
    hosts_by_group: dict[str, list] = {}
    for h in f.hosts:
        hosts_by_group.setdefault(h.group, []).append(h)
    for p in ib.partitions:
        flags = []
        if p.ipoib:
            flags += ["ipoib", f"mtu={MTU_CODE[p.mtu]}", f"rate={RATE_CODE[p.rate or f.plan.speed]}"]
        flags += [f"sl={p.service_level}", f"defmember={p.membership}"]
        if p.node_groups == "all":
            members = [f"ALL_CAS={p.membership}"]
            comment = "every compute NIC of the fabric"
        else:
            members = [_guid(guids[f"{h.name}/{nic.rdma}"]) for g in p.node_groups for h in hosts_by_group.get(g, [])
                       for nic in h.model.nics]
            comment = "node groups " + ", ".join(p.node_groups)
        out.append({"name": p.name, "pkey": f"0x{p.pkey:04x}", "flags": flags, "members": members,
                    "comment": comment})
    return out


def _topology(ctx: Context, guids: dict[str, int]) -> list[dict[str, Any]]:
    f = ctx.fabric
    speed_text = SPEED_TEXT.get(f.plan.speed, "4xNDR")
    model = f.switch_model
    nports = model.radix(f.plan.speed)
    number = model.port_numbers(f.plan.speed)
    sid = {s.name: f"S-{guids[s.name]:016x}" for s in f.switches}
    records = []
    for s in f.switches:
        ports: list[dict[str, Any]] = []
        for lk in f.links_of(s.name):
            mine_a = lk.a == s.name
            local, peer, peer_port = (lk.a_port, lk.z, lk.z_port) if mine_a else (lk.z_port, lk.a, lk.a_port)
            if peer in sid:
                ports.append({"port": number[local], "peer": sid[peer],
                              "peer_port": number[peer_port], "peer_guid": "",
                              "desc": peer, "speed": speed_text})
            else:
                g = guids[f"{peer}/{peer_port}"]
                ports.append({"port": number[local], "peer": f"H-{g:016x}", "peer_port": 1,
                              "peer_guid": f"({g:x})", "desc": f"{peer} {peer_port}", "speed": speed_text})
        ports.sort(key=lambda p: p["port"])
        g = guids[s.name]
        records.append({"type": "Switch", "nports": nports, "id": sid[s.name], "guid": _guid(g),
                        "devid": f"0x{DEVICE_ID.get(model.key, 0xD2F2):x}", "desc": f"{s.name}", "ports": ports})
    for h in f.hosts:
        for nic in h.model.nics:
            g = guids[f"{h.name}/{nic.rdma}"]
            lk = f.links[f.ports[h.name][nic.rdma]]
            records.append({"type": "Ca", "nports": 1, "id": f"H-{g:016x}", "guid": _guid(g),
                            "devid": f"0x{CA_DEVICE_ID:x}", "desc": f"{h.name} {nic.rdma}",
                            "ports": [{"port": 1, "peer": sid[lk.z], "peer_port": number[lk.z_port],
                                       "peer_guid": "", "local_guid": f"({g:x})", "desc": lk.z,
                                       "speed": speed_text}]})
    return records


def structure(ctx: Context) -> dict[str, Any]:
    f = ctx.fabric
    ib = options(ctx)
    r = resolved(ctx)
    guids = ctx.allocation.guids
    top = "core" if f.plan.tiers == 3 else "spine" if f.plan.tiers == 2 else "leaf"
    data: dict[str, Any] = {
        "fabric": f.name, "cluster": ctx.cluster, "platform": f.spec.platform, "resolved": r,
        "root_guids": [(_guid(guids[s.name]), s.name) for s in f.by_role(top)],
        "cn_guids": _nic_guids(guids, (h for h in f.hosts if h.role == "compute")),
        "io_guids": _nic_guids(guids, (h for h in f.hosts if h.role == "storage")),
        "node_name_map": [(_guid(guids[s.name]), s.name) for s in f.switches] + _nic_guids(guids, f.hosts),
        "partitions": _partitions(ctx, ib, guids),
        "topology": _topology(ctx, guids),
        "nccl": nccl_settings(ctx),
        "synthetic_guids": ctx.allocation.synthetic_guids,
        "profiles": {f.spec.platform: _conf(ctx, r, f.spec.platform)},
        "sharp_generation": SHARP_GENERATION.get(f.switch_model.key, ""),
    }
    if f.spec.platform == "ufm":
        data["profiles"]["opensm"] = _conf(ctx, r, "opensm")
    return data


def topology_text(data: dict[str, Any]) -> str:
    """topology.net in ibnetdiscover's format, by f-strings: templates/infiniband/topology.net.j2
    renders the same bytes (a test compares them), but a 128k-GPU fabric's file is 73 MB of
    port lines, 2.5 s through Jinja2 and a third of that here."""
    out = ["#", f"# Topology of fabric {data['fabric']} ({data['cluster']}) in ibnetdiscover format, generated by "
           "fabgen", f"# {len(data['topology'])} nodes; ibsim reads this file; GUIDs match the GUID files and "
           "node-name-map", "#"]
    for r in data["topology"]:
        out += ["", "vendid=0x2c9", f"devid={r['devid']}", f"sysimgguid={r['guid']}"]
        if r["type"] == "Switch":
            out.append(f"switchguid={r['guid']}({r['guid'][2:].replace('0x', '')})")
            out.append(f"Switch\t{r['nports']} \"{r['id']}\"\t\t# \"{r['desc']}\" enhanced port 0 lid 0 lmc 0")
            out += [f"[{p['port']}]\t\"{p['peer']}\"[{p['peer_port']}]{p['peer_guid']}\t\t# \"{p['desc']}\" lid 0 "
                    f"{p['speed']}" for p in r["ports"]]
        else:
            out += [f"caguid={r['guid']}", f"Ca\t{r['nports']} \"{r['id']}\"\t\t# \"{r['desc']}\""]
            out += [f"[{p['port']}]{p['local_guid']}\t\"{p['peer']}\"[{p['peer_port']}]\t\t# lid 0 lmc 0 "
                    f"\"{p['desc']}\" lid 0 {p['speed']}" for p in r["ports"]]
    return "\n".join(out) + "\n"


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    base = f"{data['fabric']}/infiniband"
    for profile, rows in data["profiles"].items():
        name = "opensm.conf" if profile == data["platform"] else "opensm.upstream.conf"
        yield f"{base}/{name}", render_template("infiniband/opensm.conf.j2", profile=profile, rows=rows,
                                                install_path=f"{CONF_DIR[profile]}/opensm.conf", **data).encode()
    for name, key, what in (("root_guids.conf", "root_guids", "top-tier switch node GUIDs (root_guid_file)"),
                            ("cn_guids.conf", "cn_guids", "compute NIC port GUIDs (cn_guid_file)"),
                            ("io_guids.conf", "io_guids", "storage NIC port GUIDs (io_guid_file)")):
        if not data[key]:
            continue
        yield f"{base}/{name}", render_template("infiniband/guids.conf.j2", rows=data[key], what=what,
                                                **data).encode()
    yield f"{base}/node-name-map", render_template("infiniband/node-name-map.j2", **data).encode()
    yield f"{base}/partitions.conf", render_template("infiniband/partitions.conf.j2", **data).encode()
    yield f"{base}/topology.net", topology_text(data).encode()
    if data["resolved"]["qos"]:
        yield f"{base}/qos-policy.conf", render_template("infiniband/qos-policy.conf.j2", **data).encode()
    if data["resolved"]["sharp"]:
        yield f"{base}/sharp_am.cfg", render_template("infiniband/sharp_am.cfg.j2", **data).encode()


TARGET = Target("infiniband", lambda ctx: ctx.fabric.spec.kind == "infiniband", structure, render)
