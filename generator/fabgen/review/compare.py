"""fabgen diff OLD NEW: what a reviewer needs before anything touches a switch.

Each side is an inventory (rendered in memory through the same pipeline) or a rendered
directory; nothing is re-implemented. The review summary comes first:
* fabric sizes that changed (switches per role, nodes, GPUs, links per tier), from report.json;
* devices added, removed, extended and changed (hostlist lines per role) (a device's files: its switch
  config, a node's netplan; a node group's shared host files count for the group); unchanged ones are
  not listed. A device is *extended* when all that changed is additions: new links on ports that
  were unused, new neighbours, new addresses, nothing existing altered (read from its structured
  config and the cabling). Growing a planned fabric reviews as added and extended only;
* links re-cabled, keyed by their lower end (node NIC, or the lower-tier switch port),
  with the far end before and after; links added and removed;
* addresses added, removed and changed and ASNs changed per device and interface, read from
  each Ethernet fabric's address plan (<fabric>/addresses.csv);
* management addresses moved: each BMC's (the out-of-band fabric's address plan) and each
  device's `ansible_host` (ansible/inventory.yml), devices moved alike folded into one line;
* fabric intent changed (QoS, pools, ASN plan, subnet-manager choices) from report.json;
then unified diffs per file, folded: files whose change is the same once their owner's name and
addresses are abstracted show once, with the list of owners. manifest.json, the Ansible
copies of the configs and the NetBox export are left out of the file diffs (they repeat what
the summary, the configs and the cabling plan say). Markdown is cut to one pull-request comment;
`--output` keeps the whole review.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabgen.errors import printable
from fabgen.rendered.paths import ADDRESS, COUNTED, DEVICE_FILE, GROUP_FILE
from fabgen.rendered.read import NotARender, Progress, check_render, is_number, quiet, read_render
from fabgen.review.unified import HUNK, file_diff

HOST_VARS = re.compile(r"^ansible/(host_vars/(?P<g>[^/]+)\.yml|configs/(?P<c>[^/]+)\.json)$")
LIST_LIMIT = 50


def load_side(path: Path, progress: Progress = quiet) -> dict[str, bytes]:
    """Files of a rendered directory, or of an inventory rendered in memory."""
    if path.is_dir():
        return read_render(path, progress)
    from fabgen.pipeline import run

    return run(path, progress=lambda stage: progress(f"{path.name}: {stage}")).files


def load_sides(old: Path, new: Path, progress: Progress = quiet) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Both sides. Two inventories are rendered only as far as the review needs, the old one on
    the other core (diffsides.py: switches whose configs change alike render once, unchanged
    ones not at all); a rendered directory is read as it is."""
    if not old.is_dir() and not new.is_dir():
        from fabgen.review.sides import load_inventories

        return load_inventories(old, new, progress)
    return load_side(old, progress), load_side(new, progress)


def check_sides(sides: list[tuple[Path, dict[str, bytes]]]) -> None:
    """Check, on each rendered-directory side, the files the review will read: those that differ
    between the sides (a file equal on both is never parsed, so it cannot break the review)."""
    (p_old, old), (p_new, new) = sides
    changed = {p for p in set(old) | set(new) if old.get(p) != new.get(p)} | {"report.json"}
    for root, files in sides:
        if root.is_dir():
            check_render(root, {p: files[p] for p in changed if p in files})


def _device_of(path: str) -> str | None:
    for rx in DEVICE_FILE:
        m = rx.match(path)
        if m:
            return m.group("d")
    m = GROUP_FILE.match(path)
    return f"node group {m.group('g')}" if m else None


def _devices(files: dict[str, bytes], lines: dict[str, list[str]]) -> set[str]:
    """Every device a side has that the review may name: every device with files, and both ends
    of every cable of the changed cabling plans (`lines`: their rows; switches without files of
    their own, like InfiniBand ones, count too; a plan equal on both sides adds and removes no
    device)."""
    out = {d for p in files if (d := _device_of(p))}
    for rows in lines.values():  # both ends of each row, found in C: a grown plan has 100,000 rows
        for a, z in _ENDS.findall("\n".join(rows)):
            out.add(a)
            out.add(z)
    return out


_ENDS = re.compile(r"^([^,\n]*),[^,\n]*,([^,\n]*),", re.M)


def _table_lines(files: dict[str, bytes], name: str) -> dict[str, list[str]]:
    """The rows (header left out) of each fabric's <name>.csv among `files`, split once."""
    return {p: data.decode().split("\n")[1:] for p, data in files.items() if _is_table(p, name)}


def _is_table(path: str, name: str) -> bool:
    return path.endswith(f"/{name}.csv") and path.count("/") == 1


def _rows_apart(old: dict[str, list[str]], new: dict[str, list[str]]) -> tuple[list, list]:
    """Rows of each fabric's table (`_table_lines` of both sides) that only the old side has and
    that only the new side has, as (fabric, fields): a row on both sides changes nothing, and at
    32k GPUs parsing only the difference is what keeps a review of a growth fast. fabgen's CSV
    fields hold no commas."""
    only_old: list = []
    only_new: list = []
    for path in sorted(set(old) | set(new)):
        fabric = path.split("/")[0]
        a, b = set(old.get(path, ())), set(new.get(path, ()))
        only_old += [(fabric, line.split(",")) for line in sorted(a - b) if line]
        only_new += [(fabric, line.split(",")) for line in sorted(b - a) if line]
    return only_old, only_new


def _cabling(rows: list) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(fabric, a device, a port) -> (z device, z port), from cabling.csv rows."""
    return {(fabric, r[0], r[1]): (r[2], r[3]) for fabric, r in rows}


def _configs(files: dict[str, bytes], side: str) -> dict[str, dict[str, Any]]:
    """device -> its ansible/configs/<device>.json (JSON after a comment line). Parsed only for
    the devices that may have grown: at 32k GPUs parsing all of them took seconds."""
    out = {}
    for path, data in files.items():
        m = re.match(r"^ansible/configs/(.+)\.json$", path)
        if m:
            text = data.decode()
            try:
                out[m.group(1)] = json.loads(text.split("\n", 1)[1] if text.startswith("#") else text)
            except ValueError as exc:
                raise NotARender(f"{path} ({side} side): not what fabgen writes ({exc})") from None
    return out


def _identity(rows: list) -> dict[str, dict[str, Any]]:
    """device -> {'asn': ..., 'addresses': {interface: address}, 'bmc': {its BMC ports}} from rows of
    each Ethernet fabric's address plan (<fabric>/addresses.csv: device, role, asn, interface,
    address, ...; the out-of-band fabric's BMC rows have the role 'bmc')."""
    out: dict[str, dict[str, Any]] = {}
    for _, r in rows:
        entry = out.setdefault(r[0], {"asn": r[2] or None, "addresses": {}, "bmc": set()})
        entry["addresses"][r[3]] = r[4]
        if r[1] == "bmc":
            entry["bmc"].add(r[3])
    return out


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    """Nested intent -> {'qos.ecn.min_kbytes': 150, 'subnet_manager.partitions.tenant-a.pkey': ...}."""
    if isinstance(d, list) and d and all(isinstance(x, dict) and isinstance(x.get("name"), str) for x in d):
        d = {x["name"]: {k: v for k, v in x.items() if k != "name"} for x in d}
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: d}


# What a fabric is, named first in a review (report.json's keys; planes from network_plane)
DESIGN = ("kind", "platform", "platform_version", "switch_model", "planes", "topology", "tiers", "link_speed_gbps")
# report.json's intent keys -> the inventory key a reviewer edits (prefix rewrites, first match);
# keys derived from others (bytes of a KB figure, the ToS of a DSCP, the DSCP map) are not listed,
# so one inventory edit is one line of the review
INTENT_KEYS = (
    ("qos.ecn.min_kbytes", "ethernet.qos.ecn.min_threshold_kbytes"),
    ("qos.ecn.max_kbytes", "ethernet.qos.ecn.max_threshold_kbytes"),
    ("qos.watchdog.", "ethernet.qos.pfc_watchdog."), ("qos.mtu", "ethernet.mtu"), ("qos.host_mtu", "ethernet.host_mtu"),
    ("qos.", "ethernet.qos."), ("addressing.pools.", "ethernet.pools."), ("addressing.", "ethernet."),
    ("asn.", "ethernet.asn."), ("bgp_password_env", "ethernet.bgp_password.env"),
    ("subnet_manager.engine", "infiniband.routing_engine (resolved)"), ("subnet_manager.", "infiniband."),
    ("oob.vlan", "oob_vlan"), ("oob.prefix", "management.prefix"), ("oob.gateway", "management.gateway"),
    ("oob.design", "oob_design"), ("oob.routed.", "oob_routed."),
)
# counted or read off the plan (the managed switches, each node model's out-of-band ports and nodes,
# a routed design's pair): sizes, not intent
DERIVED = re.compile(r"^(qos\.ecn\.(min|max)_bytes|qos\.host_tos|qos\.dscp_to_tc\..*|qos\.no_drop|"
                     r"subnet_manager\.upstream_engine|oob\.managed_switches|oob\.node_ports(\..*)?|"
                     r"oob\.routed\.pair)$")


def _inventory_key(key: str) -> str | None:
    """The inventory key an intent key of report.json comes from; None for a derived one."""
    if DERIVED.match(key):
        return None
    for old, new in INTENT_KEYS:
        if key == old or old.endswith(".") and key.startswith(old):
            return new + key[len(old):]
    return key


def _counts(files: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    """fabric -> sizes before/after: switches per role (tier), nodes, GPUs, links (report.json)."""
    if "report.json" not in files:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for name, f in json.loads(files["report.json"]).get("fabrics", {}).items():
        row = {f"{role} switches": n for role, n in (f.get("switches") or {}).items()}
        for k in (k for k in COUNTED if k in f):
            row.update({f"{k} {sub}": v for sub, v in f[k].items()} if isinstance(f[k], dict) else {k: f[k]})
        out[name] = row
    return out


def _intent(files: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    """fabric -> flattened intent from report.json under the inventory's own keys (given only when
    it differs between the sides)."""
    if "report.json" not in files:
        return {}
    rep = json.loads(files["report.json"])
    keep = ("qos", "addressing", "asn", "subnet_manager", "bgp_password_env", "oob")
    out = {}
    for name, f in rep.get("fabrics", {}).items():
        flat = _flat({k: f[k] for k in keep if k in f})
        out[name] = {k: v for key, v in flat.items() if (k := _inventory_key(key)) is not None}
    return out


def _design(files: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    """Inventory fabric -> what it is (DESIGN), from report.json: a multi-plane fabric's planes
    are one fabric of `planes` planes, so splitting a fabric into planes reads as one change."""
    if "report.json" not in files:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for name, f in json.loads(files["report.json"]).get("fabrics", {}).items():
        plane = f.get("network_plane") or {}
        fabric = plane.get("fabric", name) if isinstance(plane, dict) else name
        out.setdefault(str(fabric), {**{k: f.get(k) for k in DESIGN if k in f},
                                     "planes": plane.get("of", 1) if isinstance(plane, dict) else 1})
    return out


Moved = tuple[str, str, str | None, str | None]  # a management address: device, what moved, before, after


@dataclass
class Review:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    extended: list[str] = field(default_factory=list)  # changed by additions only (growth)
    recabled: list[tuple[str, str, str, str]] = field(default_factory=list)  # fabric, a end, before, after
    links_added: list[tuple[str, str, str]] = field(default_factory=list)
    links_removed: list[tuple[str, str, str]] = field(default_factory=list)
    asns: list[tuple[str, Any, Any]] = field(default_factory=list)
    addresses: list[tuple[str, str | None, str | None]] = field(default_factory=list)  # "device port", before, after
    management: list[Moved] = field(default_factory=list)  # what: a BMC's port, or "management" (ansible_host)
    clusters: tuple[str, str] | None = None  # the two sides' cluster names, when they differ
    intent: list[tuple[str, str, Any, Any]] = field(default_factory=list)
    design: list[tuple[str, str, Any, Any]] = field(default_factory=list)  # fabric, DESIGN key, before, after
    grows_unplanned: list[str] = field(default_factory=list)  # fabrics that grew beyond their plan
    counts: list[tuple[str, str, Any, Any]] = field(default_factory=list)  # fabric, what, before, after
    files: list[tuple[str, bytes | None, bytes | None]] = field(default_factory=list)
    folds: list[Fold] | None = field(default=None, repr=False)  # fold()'s result, once
    notes: list[str] = field(default_factory=list)  # said first: render files that no longer match their manifest

    @property
    def differs(self) -> bool:
        return bool(self.files)


def compare(old: dict[str, bytes], new: dict[str, bytes]) -> Review:
    rv = Review(notes=[*getattr(old, "notes", []), *getattr(new, "notes", [])])
    paths = sorted(set(old) | set(new))
    changed_paths = [p for p in paths if old.get(p) != new.get(p)]
    # Only files that differ are parsed: a file equal on both sides adds no device, link, address
    # or ASN to the review (at 32k GPUs this is most of the 9 s the review used to take).
    old_changed = {p: old[p] for p in changed_paths if p in old}
    new_changed = {p: new[p] for p in changed_paths if p in new}
    cab_old, cab_new = _table_lines(old_changed, "cabling"), _table_lines(new_changed, "cabling")
    c_old, c_new = (_cabling(rows) for rows in _rows_apart(cab_old, cab_new))
    dev_old, dev_new = _devices(old, cab_old), _devices(new, cab_new)
    owner = {p: _device_of(p) for p in changed_paths}
    changed_devices = set(owner.values()) - {None}
    _links(rv, c_old, c_new, changed_devices)
    rv.added = sorted(dev_new - dev_old, key=natural)
    rv.removed = sorted(dev_old - dev_new, key=natural)
    rv.changed = sorted((d for d in changed_devices if d in dev_old and d in dev_new), key=natural)

    i_old, i_new = (_identity(rows) for rows in _rows_apart(_table_lines(old_changed, "addresses"),
                                                            _table_lines(new_changed, "addresses")))
    altered = {d for _, a, before, after in rv.recabled for d in (a.split()[0], before.split()[0], after.split()[0])}
    altered |= {a.split()[0] for _, a, _ in rv.links_removed} | {z.split()[0] for _, _, z in rv.links_removed}
    # a node whose BMC moved has changed rows on both sides but may have no changed file of its own
    # (an inventory review renders only the nodes whose netplan differs): its rows say it is on both
    on_both = dev_old & dev_new | set(i_old) & set(i_new)
    _addresses(rv, i_old, i_new, on_both)
    rv.management += _ansible_hosts(old_changed, new_changed, rv.addresses)
    rv.clusters = _clusters(old_changed, new_changed)

    # Only a device that gained a link or an address can have grown; only those configs are parsed.
    gained = {x.split()[0] for _, a, z in rv.links_added for x in (a, z)}
    gained |= {w.split()[0] for w, before, _ in rv.addresses if before is None}
    candidates = [d for d in rv.changed if d in gained and d not in altered]
    # an inventory review renders one switch of each group that changed alike (diffsides.py): the
    # others' configs stand in for that one's, and so does its verdict
    first = {d: _stand_in_owner(f"ansible/configs/{d}.json", old_changed, new_changed) for d in candidates}
    judged = sorted({first[d] for d in candidates}, key=natural)
    k_old, k_new = (_configs({p: files[p] for d in judged if (p := f"ansible/configs/{d}.json") in files}, side)
                    for files, side in ((old_changed, "old"), (new_changed, "new")))
    with_files = set(owner.values())
    verdict = {d: _only_added(d, d in with_files, k_old, k_new) for d in judged}
    grown = {d for d in candidates if verdict[first[d]]}
    rv.extended = [d for d in rv.changed if d in grown]
    rv.changed = [d for d in rv.changed if d not in grown]

    _fabric_changes(rv, old_changed, new_changed)
    _label_roles(rv, {**_roles(old), **_roles(new)})
    rv.files = [(p, old.get(p), new.get(p)) for p in changed_paths]
    return rv


def _links(rv: Review, c_old: dict[tuple[str, str, str], tuple[str, str]],
           c_new: dict[tuple[str, str, str], tuple[str, str]], changed_devices: set[str | None]) -> None:
    """Links re-cabled, added and removed (`_cabling` of both sides), by their lower end; the
    devices at either end join `changed_devices`."""
    moved = [k for k in set(c_old) | set(c_new) if c_old.get(k) != c_new.get(k)]
    for key in sorted(moved, key=lambda k: (k[0], natural(k[1]), natural(k[2]))):
        before, after = c_old.get(key), c_new.get(key)
        changed_devices.update(d for d in (key[1], before and before[0], after and after[0]) if d)
        a = f"{key[1]} {key[2]}"
        if before and after:
            rv.recabled.append((key[0], a, " ".join(before), " ".join(after)))
        elif after:
            rv.links_added.append((key[0], a, " ".join(after)))
        else:
            assert before is not None  # moved: on one side at least
            rv.links_removed.append((key[0], a, " ".join(before)))


def _addresses(rv: Review, i_old: dict[str, dict[str, Any]], i_new: dict[str, dict[str, Any]],
               on_both: set[str]) -> None:
    """ASNs and addresses changed (`_identity` of both sides) of the devices `on_both` sides; a
    BMC's address is a management one."""
    for dev in sorted((set(i_old) | set(i_new)) & on_both, key=natural):
        io, inew = i_old.get(dev), i_new.get(dev)
        if io and inew and io["asn"] != inew["asn"]:
            rv.asns.append((dev, io["asn"], inew["asn"]))
        ao, an = (io or {}).get("addresses", {}), (inew or {}).get("addresses", {})
        bmc = (io or {}).get("bmc", set()) | (inew or {}).get("bmc", set())
        for where in sorted(set(ao) | set(an), key=natural):
            if ao.get(where) != an.get(where):
                if where in bmc:
                    rv.management.append((dev, where, ao.get(where), an.get(where)))
                else:
                    rv.addresses.append((f"{dev} {where}", ao.get(where), an.get(where)))


def _fabric_changes(rv: Review, old: dict[str, bytes], new: dict[str, bytes]) -> None:
    """Sizes, design, growth beyond the plan and intent changed, from both sides' report.json."""
    n_old, n_new = _counts(old), _counts(new)
    for fab in sorted(set(n_old) & set(n_new)):
        for what in n_old[fab]:
            if n_old[fab][what] != n_new[fab].get(what):
                rv.counts.append((fab, what, n_old[fab][what], n_new[fab].get(what)))

    d_old, d_new = _design(old), _design(new)
    for fab in sorted(set(d_old) & set(d_new)):
        for key in DESIGN:  # a key an older render's report.json lacks is not a change
            if key in d_old[fab] and key in d_new[fab] and d_old[fab][key] != d_new[fab][key]:
                rv.design.append((fab, key, d_old[fab].get(key), d_new[fab].get(key)))
    rv.grows_unplanned = _unplanned_growth(old, new)

    t_old, t_new = _intent(old), _intent(new)
    for fab in sorted(set(t_old) & set(t_new)):
        for key in sorted(set(t_old[fab]) | set(t_new[fab])):
            if t_old[fab].get(key) != t_new[fab].get(key):
                rv.intent.append((fab, key, t_old[fab].get(key), t_new[fab].get(key)))


def _unplanned_growth(old: dict[str, bytes], new: dict[str, bytes]) -> list[str]:
    """Fabrics whose nodes grew, past what the old side planned for (report.json's `planned`):
    their growth may re-cable and re-address, which `planned_nodes` avoids. A fabric that did not
    grow is never one (a storage fabric's storage servers are beyond the GPU nodes it plans for)."""
    if "report.json" not in old or "report.json" not in new:
        return []
    a, b = (json.loads(x["report.json"]).get("fabrics", {}) for x in (old, new))
    out = []
    for name in sorted(set(a) & set(b)):
        planned = a[name].get("planned") or {}
        had = planned.get("nodes") if isinstance(planned, dict) else None
        was, now = a[name].get("nodes"), b[name].get("nodes")
        if is_number(had) and is_number(now) and is_number(was) and now > had and now > was:
            out.append(name)
    return out


def _clusters(old: dict[str, bytes], new: dict[str, bytes]) -> tuple[str, str] | None:
    """The two cluster names (report.json) when they differ: a review of two different clusters
    is not a change to one, and says so first."""
    if "report.json" not in old or "report.json" not in new:
        return None
    a, b = (json.loads(x["report.json"]).get("cluster") for x in (old, new))
    if a is None or b is None or a == b:
        return None
    return printable(str(a)), printable(str(b))


_ANSIBLE_HOST = re.compile(r'^ +([^\s:"#]+):(?: null|\n +ansible_host: "([^"\n]*)")$', re.M)


def _ansible_hosts(old: dict[str, bytes], new: dict[str, bytes],
                   addresses: list[tuple[str, str | None, str | None]]) -> list[Moved]:
    """(device, "management", before, after) for each device of both sides' ansible/inventory.yml
    whose ansible_host differs (a fabric's management prefix moved), unless the address plan's
    change of the same device already shows the same move (an out-of-band switch's VLAN address)."""
    path = "ansible/inventory.yml"
    if path not in old or path not in new:
        return []
    a, b = (_hosts_of(x[path].decode(errors="replace")) for x in (old, new))
    shown = {(w.split()[0], _ip(x), _ip(y)) for w, x, y in addresses}
    return [(d, "management", a[d], b[d]) for d in sorted(set(a) & set(b), key=natural)
            if a[d] != b[d] and (d, _ip(a[d]), _ip(b[d])) not in shown]


def _hosts_of(text: str) -> dict[str, str | None]:
    """device -> its ansible_host (None where it has none), from the inventory fabgen writes (a
    device listed in several groups carries its address once)."""
    out: dict[str, str | None] = {}
    for name, address in _ANSIBLE_HOST.findall(text):
        if address or name not in out:
            out[name] = address or None
    return out


def _ip(text: str | None) -> str | None:
    return text.split("/")[0] if text else None


def _roles(files: dict[str, bytes]) -> dict[str, str]:
    """fabric -> its role (compute, storage, inband, oob), from report.json."""
    if "report.json" not in files:
        return {}
    return {name: f.get("role", "compute") for name, f in json.loads(files["report.json"]).get("fabrics", {}).items()}


def _label_roles(rv: Review, roles: dict[str, str]) -> None:
    """Name each fabric with its role where it is not compute (`storage (storage)`), so a review of a
    whole cluster says which network a change is on."""
    label = {f: f"{f} ({r})" for f, r in roles.items() if r != "compute"}
    if not label:
        return
    for name in ("recabled", "links_added", "links_removed", "counts", "intent", "design"):
        setattr(rv, name, [(label.get(t[0], t[0]), *t[1:]) for t in getattr(rv, name)])


def _stand_in_owner(path: str, old: dict[str, bytes], new: dict[str, bytes]) -> str:
    """The device whose config file `path` stands in for (itself when the file was rendered)."""
    from fabgen.review.sides import source_of

    source = source_of(path, old.get(path), new.get(path))
    return re.match(r"^ansible/configs/(.+)\.json$", source).group(1)  # type: ignore[union-attr]  # the caller's path is a config's


def _only_added(device: str, has_changed_files: bool, old: dict[str, Any], new: dict[str, Any]) -> bool:
    """True when every change to `device` adds: its structured config gains entries (ports that
    were unused come into use) and nothing it had changes. The text configs are renderings of
    the structured one, so they may differ only when it does; a device without one (an
    InfiniBand switch, whose only change is new cables) may have no changed file."""
    if device not in old and device not in new:  # no structured config, or an unchanged one
        return not has_changed_files
    if device not in old or device not in new:
        return False
    return _grows(old[device].get("fabgen_config"), new[device].get("fabgen_config"))


def _unused(port: Any) -> bool:
    """A port the structured config leaves unused (neutral form, or NVUE's admin-down swp)."""
    return isinstance(port, dict) and (port.get("kind") == "unused"
                                       or port == {"link": {"state": {"down": {}}}, "type": "swp"})


def _grows(a: Any, b: Any) -> bool:
    """b holds everything a holds (dicts: same keys, values grown; lists: every item kept; an
    unused port may be put to use), and possibly more."""
    if a == b:  # equal subtrees are compared in C, not walked
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b and (_unused(v) or _grows(v, b[k])) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        named = {x["name"]: x for x in b if isinstance(x, dict) and "name" in x}
        rest = [json.dumps(x, sort_keys=True) for x in b if not (isinstance(x, dict) and "name" in x)]
        pool: dict[str, int] = {}
        for key in rest:
            pool[key] = pool.get(key, 0) + 1
        for x in a:
            if isinstance(x, dict) and "name" in x:
                if x["name"] not in named or not (_unused(x) or _grows(x, named[x["name"]])):
                    return False
                continue
            key = json.dumps(x, sort_keys=True)
            if not pool.get(key):
                return False
            pool[key] -= 1
        return True
    return a == b


def natural(s: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def compact(devices: list[str], counts: bool = True) -> list[str]:
    """Devices as hostlist expressions, one line per name stem (a role: 'eth-su01-leaf', 'dgx'),
    with its count: 2,560 changed switches read as a handful of lines."""
    from fabgen.formats.hostlist import compress

    stems: dict[str, list[str]] = {}
    for d in devices:
        stems.setdefault(re.sub(r"\d+$", "", d), []).append(d)
    # Stems that differ only in one inner number and list the same tails merge into one line with
    # two ranges, as Slurm's hostlists allow: 128 units' leaves read 'f-su[0001-0128]-leaf[1-8]'.
    # A group's key is (text before the number, its width, text after it); width 0: not merged.
    groups: dict[tuple[str, int, str], list] = {}  # key -> [inner numbers, device count], first seen first
    for stem, names in stems.items():
        expr = compress(names)
        m = re.match(r"^(.*?)(\d+)(\D*)$", stem)
        tail = expr[len(stem):]
        mergeable = len(names) > 1 and m and re.fullmatch(r"\[[^\]]*\]", tail)
        key = (m.group(1), len(m.group(2)), m.group(3) + tail) if mergeable and m else (expr, 0, "")
        entry = groups.setdefault(key, [[], 0])
        if mergeable and m:
            entry[0].append(int(m.group(2)))
        entry[1] += len(names)
    out = []
    for (head, width, rest), (nums, count) in groups.items():
        expr = head + compress([f"x{n:0{width}d}" for n in nums])[1:] + rest if width else head
        out.append(f"{expr} ({count})" if count > 1 and counts else expr)
    return out


def moved_alike(rows: list[Moved]) -> list[str]:
    """Changed addresses, devices whose address moved by the same amount folded into one line with
    their hostlist and the lowest and highest address's move: a new out-of-band prefix moves every
    BMC alike, and a reviewer reads 64 or 64,000 of them as one line. Fewer than FOLD_AT devices, or
    an address that does not parse, one line each."""
    groups: dict[tuple, list[tuple[str, Any, Any]]] = {}
    for dev, what, a, b in rows:
        groups.setdefault((what, _shift(a, b)), []).append((dev, a, b))
    out = []
    for (what, shift), members in groups.items():
        if shift is None or len(members) < FOLD_AT:
            out += [f"{d} {what}: {a} -> {b}" for d, a, b in members]
            continue
        hosts = ",".join(compact([d for d, _, _ in members], counts=False))
        by_address = sorted(members, key=lambda m: ipaddress.ip_interface(str(m[1])))
        (_, a0, b0), (_, a1, b1) = by_address[0], by_address[-1]
        out.append(f"{hosts} {what}: {a0} -> {b0} ... {a1} -> {b1} ({len(members)}, each moved alike)")
    return out


FOLD_AT = 3  # devices moved alike from which the review folds them into one line


def _shift(a: Any, b: Any) -> tuple[int, int, int, int] | None:
    """How an address moved (its version, prefix lengths, and the difference of the two addresses),
    or None."""
    try:
        x, y = ipaddress.ip_interface(str(a)), ipaddress.ip_interface(str(b))
    except ValueError:
        return None
    if x.version != y.version:
        return None
    return x.version, x.network.prefixlen, y.network.prefixlen, int(y.ip) - int(x.ip)


def verdict(rv: Review) -> str:
    """The review in one line, the first a reviewer reads: what kind of change this is, with counts."""
    if not rv.differs:
        return "no differences"
    out = []
    if rv.design:
        fabrics = list(dict.fromkeys(fab for fab, *_ in rv.design))
        keys = list(dict.fromkeys(k for _, k, *_ in rv.design))
        out.append(f"changes the design of {', '.join(fabrics)} ({', '.join(keys)})")
    readdressed = sum(1 for _, a, b in ((w, a, b) for w, a, b in rv.addresses) if a is not None and b is not None)
    moved = len(rv.recabled) + len(rv.links_removed)
    managed = sum(1 for _, _, a, b in rv.management if a is not None and b is not None)
    if moved or readdressed or rv.asns or managed:
        bits = [f"re-cables {len(rv.recabled):,} links" if rv.recabled else "",
                f"removes {len(rv.links_removed):,} links" if rv.links_removed else "",
                f"re-addresses {readdressed:,} ports" if readdressed else "",
                f"moves {managed:,} management addresses" if managed else "",
                f"changes {len(rv.asns):,} ASNs" if rv.asns else ""]
        text = " and ".join(b for b in bits if b)
        if rv.grows_unplanned and not rv.design:
            text += f": set planned_nodes on {', '.join(rv.grows_unplanned)} to grow without it"
        out.append(text)
    elif rv.added or rv.extended:
        out.append(f"adds {len(rv.added):,} devices and {len(rv.links_added):,} links and alters nothing that exists"
                   + (f" except {len(rv.changed):,} devices' configs" if rv.changed else ""))
    elif rv.removed:
        out.append(f"removes {len(rv.removed):,} device{'s' if len(rv.removed) != 1 else ''}")
    if rv.removed and (moved or readdressed or rv.asns or managed):
        out.append(f"removes {len(rv.removed):,} device{'s' if len(rv.removed) != 1 else ''}")
    if rv.intent and not out:
        out.append(f"changes {len(rv.intent)} intent setting(s) on {len(rv.changed):,} devices")
    if not out and rv.links_added:
        out.append(f"adds {len(rv.links_added):,} links between existing devices")
    if not out:
        out.append(f"changes {len(rv.changed):,} devices' files, no link, address or ASN")
    if rv.clusters:  # said first: nothing after it is a change to one cluster
        out.insert(0, f"compares two different clusters ({rv.clusters[0]} -> {rv.clusters[1]})")
    return "; ".join(out)


def _owner(path: str) -> str | None:
    """The device or node group a file belongs to (the name its path carries), None for fabric files."""
    device = _device_of(path)
    if device is not None:
        return device
    m = HOST_VARS.match(path)
    if m:
        return m.group("g") or m.group("c")
    m = GROUP_FILE.match(path)
    return m.group("g") if m else None


def file_kind(path: str) -> str:
    """The path with its owner's name as <device>: files of one kind share it."""
    owner = _owner(path)
    return path.replace(owner, "<device>") if owner else path


def _shape(path: str, owner: str, body: str) -> tuple[str, str]:
    """(file kind, change) with the owner's name and every address abstracted: two devices whose
    shapes are equal received the same change, whatever their own names and addresses."""
    kind = file_kind(path)
    lines = [line for line in body.splitlines() if not line.startswith(("--- ", "+++ "))]
    change = HUNK.sub("@@", "\n".join(lines)).replace(owner, "<device>")
    return kind, ADDRESS.sub("<address>", change)


@dataclass
class Fold:
    """One distinct change: the first owner's real diff stands for every owner listed."""

    kind: str  # path with <device> for the owner's name, or the path itself
    body: str  # the first file's unified diff
    owners: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def fold(rv: Review) -> list[Fold]:
    """Per-file diffs grouped by shape, in the order the files first appear (computed once per
    review: the comment and the --output file share it)."""
    if rv.folds is None:
        rv.folds = _fold(rv)
    return rv.folds


def _fold(rv: Review) -> list[Fold]:
    """Files fold by the shape of their change; a stand-in (a switch an inventory review did not
    render because another switch of its group shows the same change) joins that file's fold."""
    from fabgen.review.sides import source_of

    keys: dict[str, tuple[str, str]] = {}
    bodies: dict[str, str] = {}
    for path, a, b in rv.files:
        if source_of(path, a, b) != path:
            continue
        body = file_diff(path, a, b)
        if body:
            owner = _owner(path)
            keys[path] = _shape(path, owner, body) if owner else (path, path)
            bodies[path] = body
    folds: dict[tuple[str, str], Fold] = {}
    for path, a, b in rv.files:
        source = source_of(path, a, b)
        if source not in keys:
            continue
        key, owner = keys[source], _owner(path)
        f = folds.setdefault(key, Fold(key[0] if owner else path, bodies[source]))
        f.paths.append(path)
        if owner:
            f.owners.append(owner)
    return list(folds.values())


