"""Validate loaded inventory data: schema first, then cross-field checks.

Every problem is located through the loader's position table and reported together
with the others of the same stage. Catalog names and keys get a "did you mean" hint.
"""

from __future__ import annotations

import os
import re
import string
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from pydantic import ValidationError

from fabgen.errors import InventoryError, Problem
from fabgen.inventory.catalog import NODES, PLATFORMS_BY_KIND, SWITCHES, Nic, NodeModel, PortMode, SwitchModel
from fabgen.inventory.defaults import with_default_pools
from fabgen.inventory.loader import Loaded, PathT, format_path
from fabgen.inventory.schema import (DEVICE_PATTERN, DOMAIN_PATTERN, ENV_PATTERN, PRINTABLE_PATTERN, NAME_PATTERN,
                                     NAME_RULE, NCCL_VERSION_PATTERN, SKU_PATTERN, TEXT_PATTERN, USER_PATTERN,
                                     Inventory)
from fabgen.topology.build import PLANE_SUFFIX, plane_names
from fabgen.topology.oob import SWITCH_GROUP
from fabgen.topology.growth import check_growth
from fabgen.topology.sizing import Plan, SizingError, parse_ratio, plan

# Node ports of one fabric, all planes: the largest fabric benchmarked (benchmarks/, 131,072 GPUs of
# DGX B300 on four Spectrum-X planes). The spine and core tiers are built for the plan, so the bound
# applies before anything is sized or built, and an input with a zero too many is answered at once.
MAX_ENDPOINTS = 524_288
MAX_FABRIC_NAME = 40  # device names are '<fabric>-su01-leaf1' and must stay DNS labels
# top-level folders of OUT that are not a fabric's (a fabric's files go to OUT/<fabric>/)
RESERVED_FOLDERS = frozenset({"ansible", "hosts", "host-groups", "slurm"})
_NAME_RE = re.compile(NAME_PATTERN)
_PORT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9/_.:-]{0,62}")


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
    # growth checks left to run (validate(defer_growth=True)): (fabric, place among its warnings,
    # the check, returning located warnings); the pipeline runs them beside the build
    pending: list[tuple[str, int, Callable[[], list[str]]]] = field(default_factory=list)

    def growth_warnings(self) -> list[list[str]]:
        """Run the pending growth checks: each one's located warnings, in `pending` order."""
        return [check() for _, _, check in self.pending]

    def settle(self, found: list[list[str]]) -> None:
        """File the pending checks' warnings where validate would have filed them (one check per
        fabric, so each place is still right)."""
        for (fabric, place, _), notes in zip(self.pending, found):
            if notes:
                self.warnings.setdefault(fabric, [])[place:place] = notes
        self.pending.clear()


def _distance(a: str, b: str) -> int:
    """Edit distance. Kept instead of difflib.get_close_matches, which was tried on every error
    case: difflib ranks by a similarity ratio and breaks ties by list order, so 'qm970' got
    'did you mean qm9790' (both score 0.91) where one deletion makes it qm9700; edit distance
    with a common-prefix tie-break suggests the one a person meant."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def closest(word: Any, options: list[str] | tuple[str, ...]) -> str | None:
    """The option nearest to `word` by edit distance, then longest common prefix; a number among
    numeric options is matched by value (tiers: 4 -> 3, not the first option one edit away)."""
    w = str(word)
    numbers = [str(x) for x in options if str(x).isdigit()]
    if w.isdigit() and numbers:
        return min(numbers, key=lambda o: (abs(int(o) - int(w)), int(o)))
    best = None
    for o in sorted(str(x) for x in options):
        d = _distance(w.lower(), o.lower())
        if d > max(2, len(o) // 3):
            continue
        prefix = len(os.path.commonprefix([w.lower(), o.lower()]))
        key = (d, -prefix)
        if best is None or key < best[0]:
            best = (key, o)
    return best[1] if best else None


def did_you_mean(word: Any, options: list[str] | tuple[str, ...]) -> str:
    text = str(word)
    odd = [c for c in text if not c.isascii()]
    if odd:  # a look-alike (Cyrillic 'р' for 'p'): name the characters, then match their ASCII twins
        named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'UNKNOWN')}" for c in dict.fromkeys(odd))
        match = closest("".join(c if c.isascii() else "?" for c in text), options)
        return f" (it contains {named}{f'; did you mean {match!r}?' if match else ''})"
    match = closest(word, options)
    return f" (did you mean '{match}'?)" if match else ""


def _fields_of(loc: PathT, root: Any = Inventory) -> list[str]:
    """The keys a model at `loc` accepts, for 'unknown key' hints."""
    model: Any = root
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        info = model.model_fields.get(part) if hasattr(model, "model_fields") else None
        if info is None:  # a dict key (switch_models.<name>): the value model stays
            continue
        model = _inner_model(info.annotation)
    return list(model.model_fields) if hasattr(model, "model_fields") else []


def _inner_model(annotation: Any) -> Any:
    from typing import get_args

    if hasattr(annotation, "model_fields"):
        return annotation
    for arg in get_args(annotation):
        inner = _inner_model(arg)
        if inner is not None:
            return inner
    return None


def schema_problems(loaded: Loaded, exc: ValidationError, root: Any = Inventory) -> list[Problem]:
    """pydantic's errors as located problems in `loaded`'s file; `root` is the model validated
    (the inventory, or another file fabgen reads such as a price list)."""
    out = []
    errors = exc.errors(include_url=False)
    # A misspelt key shows up twice: as an unknown key and as the required key it was meant
    # to be. Report it once, as the misspelling.
    meant = {(tuple(e["loc"][:-1]), closest(e["loc"][-1], _fields_of(tuple(e["loc"][:-1]), root)))
             for e in errors if e["type"] == "extra_forbidden"}
    for err in errors:
        if err["type"] == "missing" and (tuple(err["loc"][:-1]), err["loc"][-1]) in meant:
            continue
        loc = tuple(err["loc"])
        etype = err["type"]
        value = err.get("input")
        if etype == "extra_forbidden":
            key = loc[-1]
            hint = did_you_mean(key, _fields_of(loc[:-1], root))
            line, col = loaded.where(loc, key=True)
            out.append(Problem(line, col, format_path(loc), f"unknown key '{key}'{hint}", loaded.file))
            continue
        if etype == "missing":
            line, col = loaded.where(loc[:-1])
            out.append(Problem(line, col, format_path(loc), f"missing required key '{loc[-1]}'", loaded.file))
            continue
        line, col = loaded.where(loc)
        if etype == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            options = re.findall(r"'([^']*)'|\b(\d+)\b", expected)
            flat = [a or b for a, b in options]
            msg = f"{value!r} is not one of {', '.join(flat)}{did_you_mean(value, flat)}"
            if isinstance(value, str) and value in flat and value.isdigit():
                msg = f"the text {value!r} is not one of {', '.join(flat)}: write the number {value} without quotes"
            elif not isinstance(value, str) and str(value) in flat:
                msg = f"{value!r} is not one of {', '.join(flat)}: quote it: \"{value}\""
        elif etype == "string_pattern_mismatch":
            msg = pattern_message(str(err.get("ctx", {}).get("pattern", "")), value)
        elif etype in ("int_type", "float_type", "string_type", "list_type", "dict_type", "model_type",
                       "bool_type", "int_from_float", "model_attributes_type"):
            wanted = {"int_type": "a whole number", "float_type": "a number", "string_type": "a string",
                      "list_type": "a list", "dict_type": "a mapping", "model_type": "a mapping",
                      "model_attributes_type": "a mapping", "bool_type": "true or false",
                      "int_from_float": "a whole number"}[etype]
            msg = f"must be {wanted}, not {_describe(value)}"
            if etype in ("int_type", "float_type") and isinstance(value, str) and _looks_numeric(value):
                msg = f"must be {wanted}, not the text {value!r}: write it without quotes"
                if loc in loaded.numbers:
                    msg = (f"must be {wanted}: YAML 1.1 reads the unquoted {value} as text, not a number (an "
                           "exponent needs a '.' and a sign, as in 1.5e+9): write it as a plain number")
            written = loaded.numbers.get(loc)
            if etype == "string_type" and written is not None and ("." in written or loc[-1] in QUOTED_NUMBERS):
                msg = (f"must be text, not the number {written}" + (f" (YAML reads it as {value!r})"
                       if str(value) != written else "") + f": quote it: \"{written}\"")
            if len(loc) == 3 and loc[0] == "fabrics" and loc[2] == "management":
                msg = f"must be an IPv4 prefix (e.g. 192.168.0.0/24) or a mapping with prefix, gateway, vrf, ntp, " \
                      f"dns, syslog, domain and users; not {_describe(value)}"
        elif etype == "secret_literal":
            msg = err["msg"]  # never the value: it is a secret
        elif etype in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
            ctx = err.get("ctx", {})
            bound = {"greater_than_equal": ("at least", "ge"), "less_than_equal": ("at most", "le"),
                     "greater_than": ("more than", "gt"), "less_than": ("less than", "lt")}[etype]
            msg = f"must be {bound[0]} {ctx.get(bound[1])}, not {value!r}"
        elif etype in ("too_short", "too_long"):
            ctx = err.get("ctx", {})
            n = ctx.get("min_length") if etype == "too_short" else ctx.get("max_length")
            msg = f"needs {'at least' if etype == 'too_short' else 'at most'} {n} item{'s' if n != 1 else ''}"
        else:
            text = err["msg"]
            msg = text[0].lower() + text[1:] if text else etype
            if value is not None and not isinstance(value, (dict, list)):
                msg += f" (got {value!r})"
        out.append(Problem(line, col, format_path(loc), msg, loaded.file))
    return out


# What each pattern of the schema (and of the other files fabgen reads) asks for, in words.
PATTERN_RULES = {
    ENV_PATTERN: "is not an environment variable name: letters, digits and '_', not starting with a digit, "
                 "at most 64",
    USER_PATTERN: "is not a user name: lowercase letters, digits, '_' and '-', starting with a letter or '_', "
                  "at most 32",
    DOMAIN_PATTERN: "is not a DNS domain: labels of letters, digits and '-' joined by '.'",
    DEVICE_PATTERN: "is not a valid device name: letters, digits, '_', '.' and '-', at most 64",
    SKU_PATTERN: "is not a SONiC SKU or platform name (the name of its folder in sonic-buildimage): letters, "
                 "digits, '_', '.', '+' and '-', at most 100",
    NCCL_VERSION_PATTERN: "is not an NCCL version: write 2.x, 2.x.y or the package's 2.x.y-z, quoted "
                          "(e.g. \"2.28.3\")",
    NAME_PATTERN: f"is not a valid name: {NAME_RULE}",
}


def pattern_message(pattern: str, value: Any) -> str:
    """The message for a string that does not match `pattern`: the rule it breaks, in words."""
    if pattern in (TEXT_PATTERN, PRINTABLE_PATTERN):
        if isinstance(value, str) and pattern == TEXT_PATTERN and ("{" in value or "}" in value) and \
                re.fullmatch(PRINTABLE_PATTERN, value):
            return (f"{ascii(value)} contains '{{' or '}}': the deploy playbooks pass configs through Ansible's "
                    "template module, where braces start Jinja; write the text without them")
        return f"{ascii(value)} contains control, invisible or direction-changing characters: write printable " \
               "text only"
    rule = PATTERN_RULES.get(pattern)
    if rule is None:
        rule = f"does not match the pattern {pattern}"
    return f"{value!r} {rule}"


# Text keys whose values are often written as numbers (versions, names of digits): "quote it"
QUOTED_NUMBERS = frozenset({"nccl_version", "platform_version", "cluster", "name", "hostname", "rdma", "netdev"})


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return f"{value!r} ({type(value).__name__.replace('str', 'a string').replace('int', 'a number')})"


def _resolve_models(inv: Inventory, report) -> tuple[dict[str, SwitchModel], dict[str, NodeModel]]:
    switches = dict(SWITCHES)
    nodes = dict(NODES)
    for key, m in inv.switch_models.items():
        if key in SWITCHES:
            report(("switch_models", key), f"'{key}' is a catalog model; give the custom model another name",
                   key=True)
            continue
        for j, platform in enumerate(m.platforms):
            allowed = [p for k in m.kinds for p in PLATFORMS_BY_KIND[k]]
            if platform not in allowed:
                report(("switch_models", key, "platforms", j),
                       f"'{platform}' is not a platform of {', '.join(m.kinds)} "
                       f"(choose from {', '.join(allowed)}){did_you_mean(platform, allowed)}")
        fields = ("n", "i", "c", "j", "j0", "lane", "l", "pair", "sub2")
        why = pattern_problem(m.port_name, fields)
        if why is None:
            names, why = format_all(m.port_name, ({"n": i + 1, "i": i, "c": i // m.ports_per_cage + 1,
                                                   "j": i % m.ports_per_cage + 1, "j0": i % m.ports_per_cage,
                                                   "lane": i, "l": 1, "pair": 1, "sub2": 1} for i in range(m.ports)),
                                    MAX_FIELD_WIDTH)
        if why is None:
            bad = next((n for n in names if not _PORT_RE.fullmatch(n)), None)
            if bad is not None:
                why = (f"gives {bad!r}; port names are letters, digits and '/', '_', '.', ':', '-' (they reach "
                       "switch configs and shell scripts)")
        if why is not None:
            report(("switch_models", key, "port_name"), f"bad port name pattern: {why}; use fields like "
                   "{n} (1-based) or {i} (0-based)")
            continue
        if len(set(names)) != len(names):
            report(("switch_models", key, "port_name"), "the pattern gives the same name to several ports; "
                   "include {n} or {i}")
            continue
        cages = -(-m.ports // m.ports_per_cage)
        sku = _custom_sonic(key, m, cages, report)
        if "sonic" in m.platforms and sku is None:
            continue
        switches[key] = SwitchModel(key, m.vendor, m.part or key, f"custom switch {key}", tuple(m.kinds),
                                    tuple(m.platforms), cages, "cage", m.ports_per_cage,
                                    (PortMode(m.speed, m.ports_per_cage, m.port_name),), m.transceiver, True, sku)
    for key, n in inv.node_models.items():
        if key in NODES:
            report(("node_models", key), f"'{key}' is a catalog model; give the custom model another name",
                   key=True)
            continue
        rdmas = [nic.rdma for nic in n.nics] + [p.rdma for p in n.ports]
        dup = sorted({r for r in rdmas if rdmas.count(r) > 1})
        if dup:
            in_ports = any(p.rdma == dup[0] for p in n.ports)
            report(("node_models", key, "ports" if in_ports else "nics"), f"RDMA device names repeat: {', '.join(dup)}")
            continue
        if not n.nics and not n.ports:
            where = "nics" if "nics" in n.model_fields_set else "ports" if "ports" in n.model_fields_set else None
            report(("node_models", key, where) if where else ("node_models", key),
                   "a node model needs compute NICs (nics) or other ports (ports): it has none", key=where is None)
            continue
        bad = n.plane_rdma and pattern_problem(n.plane_rdma, ("k", "rail", "plane"))
        if bad:
            report(("node_models", key, "plane_rdma"), f"bad plane_rdma pattern '{n.plane_rdma}': {bad}")
            continue
        bad = [(k, j, x.netdev) for k in ("nics", "ports") for j, x in enumerate(getattr(n, k))
               if x.netdev is not None and not _netdev_ok(x.netdev)]
        if bad:
            k, j, name = bad[0]
            report(("node_models", key, k, j, "netdev"), f"{name!r} cannot be a port's interface: {NETDEV_RULE}")
            continue
        nics = tuple(Nic(x.rdma, x.netdev or x.rdma, x.label or x.rdma, x.cage or x.rdma, x.speed,
                         netdev_known=x.netdev is not None) for x in n.nics)
        ports = tuple(Nic(x.rdma, x.netdev or x.rdma, x.label or x.rdma,
                          x.cage or ("RJ45" if x.role == "oob" else x.rdma), x.speed, x.role,
                          netdev_known=x.netdev is not None or x.role == "oob") for x in n.ports)
        nodes[key] = NodeModel(key, n.vendor, n.part or key, f"custom node {key}", n.gpus, n.nic_model,
                               n.transceiver, nics, True, n.nvlink_domain, n.plane_rdma, ports,
                               tuple((r, n.nic_model if "nic_model" in n.model_fields_set else f"{r} NIC",
                                      n.transceiver) for r in ("storage", "inband", "oob")))
    return switches, nodes


NEEDED_PROFILES = ("ingress_lossy_profile", "egress_lossy_profile", "egress_lossless_profile")


def _custom_sonic(key: str, m, cages: int, report):
    """The SonicSku of a custom model that runs SONiC: its identity and buffer tables are the
    user's (from the SKU's files), lanes count from 0 in port order, aliases are the names."""
    from fabgen.inventory.sonic_skus import DYNAMIC_BUFFER_ASICS, SonicSku

    if "sonic" not in m.platforms:
        if m.sonic is not None:
            report(("switch_models", key, "sonic"), "the sonic block applies to models that run platform sonic",
                   key=True)
        return None
    if m.sonic is None:
        report(("switch_models", key), "a SONiC switch model names its SKU: add sonic: {hwsku, platform, asic, "
               "buffer_pools, buffer_profiles} from the SKU's files in sonic-buildimage (port_config.ini, "
               "buffers_defaults_t1.j2)")
        return None
    sk = m.sonic
    missing = [p for p in NEEDED_PROFILES if p not in sk.buffer_profiles]
    pools = set(sk.buffer_pools)
    bad = sorted({row.get("pool", "") for row in sk.buffer_profiles.values()} - pools)
    if missing or bad:
        report(("switch_models", key, "sonic", "buffer_profiles"), "buffer profiles must define "
               f"{', '.join(missing) or ''}{' and ' if missing and bad else ''}"
               f"{'use pools that buffer_pools defines (not ' + ', '.join(bad) + ')' if bad else ''}")
        return None
    dynamic = sk.asic in DYNAMIC_BUFFER_ASICS
    return SonicSku(hwsku=sk.hwsku, platform=sk.platform, asic=sk.asic,
                    buffer_model="dynamic" if dynamic else "traditional",
                    first_lanes=tuple(c * m.ports_per_cage for c in range(cages)), alias="",
                    extra_ports=(), buffer_pools=dict(sk.buffer_pools), buffer_profiles=dict(sk.buffer_profiles),
                    lossy_queue_profile="egress_lossy_profile",
                    cable_lengths={"node-leaf": "5m", "leaf-spine": "40m", "spine-core": "300m", **sk.cable_lengths},
                    default_cable="5m",
                    dynamic_tables={"DEFAULT_LOSSLESS_BUFFER_PARAMETER": {"AZURE": {"default_dynamic_th": "0"}},
                                    "LOSSLESS_TRAFFIC_PATTERN": {"AZURE": {"mtu": "1024",
                                                                           "small_packet_percentage": "50"}}}
                    if dynamic else {},
                    sources=("the inventory's switch_models." + key + ".sonic",))


MAX_FIELD_WIDTH = 63  # a name is at most a DNS label; a wider field could only make it too long


def pattern_problem(pattern: str, fields: tuple[str, ...]) -> str | None:
    """Why a name pattern cannot be used, before anything is formatted: unknown fields,
    conversions, attribute or index access, or a width that would build a huge string."""
    try:
        parsed = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        return f"{exc}"
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in fields:
            return f"unknown field {{{name}}}; the fields are {', '.join('{' + f + '}' for f in fields)}"
        if conversion or "{" in (spec or ""):
            return f"field {{{name}}} takes a format spec only (like {{{name}:03d}})"
        widths = [int(w) for w in re.findall(r"\d+", spec or "")]
        if any(w > MAX_FIELD_WIDTH for w in widths):
            return f"a field width of {max(widths)} makes names longer than {MAX_FIELD_WIDTH} characters"
    return None


def format_all(pattern: str, values: Iterable[dict[str, int]], limit: int) -> tuple[list[str], str | None]:
    """Every name, or the first problem: a format error (whatever it raises) or a name longer
    than `limit`, found at the first name that has it."""
    names = []
    for v in values:
        try:
            name = pattern.format(**v)
        except Exception as exc:  # noqa: BLE001 - any error of a user's format spec is a located problem
            return names, f"{type(exc).__name__}: {exc}"
        if len(name) > limit:
            return names, f"gives {name[:40]!r}..., {len(name)} characters (at most {limit})"
        names.append(name)
    return names, None


def _hostnames(group, report) -> list[str] | None:
    pattern = group.hostname_pattern
    why = pattern_problem(pattern, ("n",))
    if why is None:
        names, why = format_all(pattern, ({"n": n} for n in range(1, group.count + 1)), MAX_FIELD_WIDTH)
    if why is not None:
        report("hostname", f"bad hostname pattern {pattern!r}: {why}; e.g. 'dgx{{n:03d}}'")
        return None
    first, last = names[0], names[-1]
    if group.count > 1 and first == last:
        report("hostname", f"pattern {pattern!r} gives every node the same name; include {{n}}")
        return None
    bad = next((h for h in (first, last) if not _NAME_RE.match(h)), None)
    if bad is None:
        bad = next((h for h in names if not _NAME_RE.match(h)), None)
    if bad is not None:
        report("hostname", f"pattern {pattern!r} gives {bad!r}, not a valid hostname: {NAME_RULE}")
        return None
    return names


Member = tuple[str, str, NodeModel]  # (hostname, node group, node model)


@dataclass
class _Checks:
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
    taken: list = field(default_factory=list)  # data pools handed out, (path, network)
    warnings: dict[str, list[str]] = field(default_factory=dict)  # fabric -> located warnings
    managed: dict[str, Any] = field(default_factory=dict)  # oob fabric -> its Layout: blocks and places
    manager: dict[str, str] = field(default_factory=dict)  # fabric -> the out-of-band network managing it
    group_models: dict[str, Any] = field(default_factory=dict)  # node group -> its model as its nodes are
    pending: list = field(default_factory=list)  # growth checks: (fabric, place among its warnings, check)

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


def validate(loaded: Loaded, defer_growth: bool = False) -> Validated:
    """Schema, then cross-field checks; raises InventoryError with every problem found. The
    growth checks of unplanned fabrics (warnings only, never problems; they enumerate every
    cable twice) are left in `pending` with `defer_growth`, for the caller to run (`settle`)."""
    c = _Checks(loaded, _schema(loaded))
    c.switch_models, c.node_models = _resolve_models(c.inv, c.report)
    _check_node_groups(c)
    for i, f in enumerate(c.inv.fabrics):  # the out-of-band networks last: they take the others' switches
        if f.role != "oob":
            _check_fabric(c, i, f)
    for i, f in enumerate(c.inv.fabrics):
        if f.role == "oob":
            _check_oob(c, i, f)
    _check_switch_names(c)
    _check_subnet_manager_names(c)
    _check_addressing(c)
    _check_management_and_platform(c)
    _check_unattached(c)
    guid_maps = {f.name: _check_infiniband(c, i, f) for i, f in enumerate(c.inv.fabrics)}
    if c.problems:
        raise InventoryError(c.problems)
    v = Validated(loaded, c.inv, c.switch_models, c.node_models, c.plans, c.members, c.storage, guid_maps,
                  c.warnings, c.managed, c.pending)
    if not defer_growth:
        v.settle(v.growth_warnings())
    return v


def _schema(loaded: Loaded) -> Inventory:
    """The version gate and the pydantic schema; every schema problem at once."""
    data = loaded.data
    if not isinstance(data, dict):
        raise InventoryError([Problem(1, 1, "", "the inventory must be a mapping starting with 'version: 1'",
                                      loaded.file)])
    if "version" in data and data["version"] != 1:
        line, col = loaded.where(("version",))
        raise InventoryError([Problem(line, col, "version", f"unsupported format version {data['version']!r}; "
                                      "this fabgen reads version 1", loaded.file)])
    try:
        return with_default_pools(Inventory.model_validate(data))
    except ValidationError as exc:
        raise InventoryError(schema_problems(loaded, exc)) from None


def _check_node_groups(c: _Checks) -> None:
    """Node groups: unique names (also ignoring case), known models, hostnames that never collide."""
    for i, g in enumerate(c.inv.node_groups):
        path = ("node_groups", i)
        if g.name in c.groups:
            c.report((*path, "name"), f"node group '{g.name}' is declared twice")
            continue
        twin = next((n for n in c.groups if n.lower() == g.name.lower()), None)
        if twin is not None:
            c.report((*path, "name"), f"node group '{g.name}' differs from '{twin}' only in case: file names on "
                     "case-insensitive file systems would collide")
            continue
        if g.name == SWITCH_GROUP:
            c.report((*path, "name"), f"'{SWITCH_GROUP}' is the group fabgen gives the switches' management ports "
                     "on the out-of-band network: name the node group otherwise")
        c.groups[g.name] = g
        if g.model not in c.node_models and g.model not in c.inv.node_models:  # declared: reported there
            c.report((*path, "model"), f"unknown node model '{g.model}'{did_you_mean(g.model, list(c.node_models))}; "
                     f"known: {', '.join(sorted(c.node_models))}, or declare it under node_models")
        names = _hostnames(g, lambda k, m, p=path: c.report((*p, k), m))
        if names is not None:
            c.hostnames[g.name] = names
            _claim_hostnames(c, i, g.name, names)


def _hostname_clash(c: _Checks, name: str) -> tuple[str, int, str] | None:
    """('case', group index, that hostname) when `name` is a node's hostname but for case,
    ('same', group index, that group) when it is one exactly, None when it is free."""
    if name.lower() in c.owners_ci and name not in c.owners:
        j, other = c.owners_ci[name.lower()]
        return "case", j, other
    if name in c.owners:
        j, group = c.owners[name]
        return "same", j, group
    return None


def _claim_hostnames(c: _Checks, i: int, group: str, names: list[str]) -> None:
    """Each hostname belongs to one node; the first clash of a group is reported."""
    for h in names:
        clash = _hostname_clash(c, h)
        if clash:
            how, j, other = clash
            c.report(("node_groups", i, "hostname"),
                     f"hostname '{h}' differs from '{other}' only in case; DNS, Slurm and case-insensitive file "
                     "systems see one name" if how == "case" else
                     f"hostname '{h}' is also a node of group '{other}' (node_groups[{j}])")
            return
        c.owners[h] = (i, group)
        c.owners_ci[h.lower()] = (i, h)


def _check_unattached(c: _Checks) -> None:
    """Node groups that would render nothing, and host keys no file of theirs reads: warnings."""
    attached = {g for f in c.inv.fabrics for g in f.node_groups}
    first = c.inv.fabrics[0].name if c.inv.fabrics else ""
    for j, g in enumerate(c.inv.node_groups):
        if g.name not in attached:
            c.warner(first)(("node_groups", j), f"node group '{g.name}' is on no fabric: none of its files are "
                            "rendered; list it in a fabric's node_groups or remove it")
        elif g.role == "storage":
            for key in ("nccl_version", "bootstrap_interface"):
                if key in g.model_fields_set:
                    c.warner(first)(("node_groups", j, key), f"{key} sets NCCL for compute nodes; storage nodes "
                                    "(role storage) get no nccl.env, so it is not rendered")


def _check_fabric(c: _Checks, i: int, f) -> None:
    """One fabric: its identity and hardware, the node groups it attaches, then its size."""
    ok = _check_fabric_name(c, i, f)
    ok = _check_fabric_role(c, i, f) and ok
    ok = _check_fabric_hardware(c, i, f) and ok
    fmembers, fstorage, attached_ok = _attach_node_groups(c, i, f)
    ok = ok and attached_ok
    if ok and fstorage and not fmembers:
        c.report(("fabrics", i, "node_groups"), "every node group of this fabric has role storage; a fabric needs "
                 "at least one compute node group")
        return
    model = c.switch_models.get(f.switch_model)
    if ok and model is not None and fmembers:
        _size_fabric(c, i, f, model, fmembers, fstorage)
    if ok and f.kind != "infiniband":
        _warn_placeholders(c, i, f)


def _warn_placeholders(c: _Checks, i: int, f) -> None:
    """An Ethernet fabric's node ports without a known netdev (no published table, no rdma_links):
    their netplans can only name them after their RDMA devices, which no host has."""
    for j, g in enumerate(c.inv.node_groups):
        nm = c.group_models.get(g.name)
        if g.name not in f.node_groups or nm is None:
            continue
        if f.role == "compute" and not nm.can_split(f.planes):
            continue  # the model cannot split so: reported where the planes are checked
        ports = [n for ns in nm.plane_nics(f.planes) for n in ns] if f.role == "compute" else nm.role_ports(f.role)
        unknown = [n.rdma for n in ports if not n.netdev_known]
        if unknown:
            where = ("node_groups", j, "rdma_links") if g.rdma_links else ("node_groups", j)
            fix = ("its rdma_links file lists no netdev for them (the ports ran InfiniBand, without IPoIB, when it "
                   "was saved?): save it again with them in Ethernet mode" if g.rdma_links else
                   "give node_groups[].rdma_links (the output of `rdma link show` on one node of the group)")
            c.warner(f.name)(where, f"node group '{g.name}' ({nm.key}): no known netdev for {len(unknown)} "
                             f"{f.role} port(s) ({', '.join(unknown[:4])}{', ...' if len(unknown) > 4 else ''}): the "
                             "netplans name them after their RDMA devices, which no host has as interfaces, and "
                             f"the host deploy playbook refuses them; {fix}")


def _check_oob(c: _Checks, i: int, f) -> None:
    """An out-of-band network (topology/oob.py): identity, hardware and node groups as any fabric,
    then the shape (one tier of access switches), the fabrics it manages and its blocks."""
    from fabgen.topology.oob import ACCESS_WIDTH, Layout, access_plan

    path = ("fabrics", i)
    ok = _check_fabric_name(c, i, f)
    ok = _check_fabric_role(c, i, f) and ok
    ok = _check_fabric_hardware(c, i, f) and ok
    fmembers, fstorage, attached_ok = _attach_node_groups(c, i, f)
    if f.topology != "fat-tree" or f.tiers not in ("auto", 1):
        c.report((*path, "topology" if f.topology != "fat-tree" else "tiers"), "an out-of-band network is one tier "
                 "of access switches: leave topology and tiers out")
        ok = False
    if f.planned_nodes is not None:
        c.report((*path, "planned_nodes"), "an out-of-band network follows the plans of the fabrics its nodes and "
                 "switches are on (each BMC at its node's planned place there): set planned_nodes on those fabrics",
                 key=True)
        ok = False
    if f.management is None:
        c.report(path, "an out-of-band network needs management: the management VLAN's prefix and gateway (the "
                 "access switches' and the BMCs' addresses)")
        ok = False
    model = c.switch_models.get(f.switch_model)
    if model is not None and len(model.uplinks) < 2:
        c.report((*path, "switch_model"), f"{f.switch_model} names no uplink ports: an access switch bonds two "
                 "uplinks to the site's management network, so an out-of-band network needs a catalog access "
                 "switch that has them (sn2201)")
        ok = False
    managed = _managed(c, i, f)
    if not (ok and attached_ok and managed is not None and model is not None):
        return
    members = fmembers + fstorage
    speed = model.native.speed
    rails = sorted({len(m.nics) for _, _, m in members}) or [1]
    fast = sorted({n.speed for _, _, m in members for n in m.nics if n.speed != speed})
    if len(rails) > 1 or fast:
        c.report((*path, "node_groups"), f"the attached nodes' out-of-band ports must be one per node kind at "
                 f"{speed}G: found {', '.join(map(str, rails))} per node" + (f", {fast[0]}G" if fast else ""))
        return
    domain = max((m.nvlink_domain for _, _, m in members), default=1)
    most = model.radix(speed) // rails[0] // domain * domain
    per_switch = f.scalable_unit or most
    if per_switch > most or per_switch % domain or per_switch < 1:
        c.report((*path, "scalable_unit"), f"nodes per access switch: at most {most} ({model.radix(speed)} ports, "
                 f"{rails[0]} per node" + (f", whole NVLink racks of {domain}" if domain > 1 else "") + ")")
        return
    layout = Layout()
    _node_blocks(c, i, f, members, fstorage, layout, per_switch, rails[0])
    down = model.radix(speed)
    for owner, planned, rows in managed:
        from fabgen.topology.oob import SWITCH_BLOCK, Block

        layout.blocks.append(Block(owner, SWITCH_BLOCK, planned, down, 1, max(p for _, _, p in rows) + 1 if rows else 0))
        layout.switches += [(len(layout.blocks) - 1, row) for row in _as_managed(rows)]
    longest = max((len(f.name) + len(b.owner) + len(b.kind) + ACCESS_WIDTH + 2 for b in layout.blocks), default=0)
    if longest > 63:
        c.report((*path, "name"), f"access switches are named '<{f.name}>-<fabric>-access0001': {longest} characters, "
                 "more than a hostname's 63; shorten the fabric names")
        return
    big = max((b.switches for b in layout.blocks), default=0)
    if big >= 10 ** ACCESS_WIDTH:
        c.report(path, f"{big} access switches in one block: names hold {10 ** ACCESS_WIDTH - 1}; split the "
                 "out-of-band network into several fabrics")
        return
    c.plans[f.name] = access_plan(layout, model, speed, rails[0], per_switch)
    c.members[f.name], c.storage[f.name] = fmembers, fstorage
    c.managed[f.name] = layout


def _as_managed(rows: list[tuple[str, str, int]]) -> list:
    from fabgen.topology.oob import Managed

    return [Managed(name, platform, place) for name, platform, place in rows]


ROLE_ORDER = ("compute", "storage", "inband")  # where a node's BMC is placed: its first fabric in this order


def _node_blocks(c: _Checks, i: int, f, members: list[Member], fstorage: list[Member], layout, per_switch: int,
                 ports: int) -> None:
    """One block per home fabric of the attached nodes, in inventory order. A node's place is its
    planned place in its home fabric (a storage node after that fabric's planned nodes) where every
    node of that fabric is homed there; where some are homed elsewhere (a storage fabric's DGX,
    homed on their compute fabric), the nodes homed there follow one another, so no port waits for
    a node placed in another block and no other fabric's nodes move them."""
    from fabgen.topology.oob import NODE_BLOCK, Block, Placed

    attached = {h for h, _, _ in members}
    storage = {h for h, _, _ in fstorage}
    homed: set[str] = set()
    blocks: list[tuple[str, int, dict[str, int], bool]] = []  # (home, planned places, host -> place, sized by plan)
    for role in ROLE_ORDER:
        for spec in c.inv.fabrics:
            if spec.role != role or spec.name not in c.plans:
                continue
            p = c.plans[spec.name]
            hosts = [(h, k) for k, (h, _, _) in enumerate(c.members.get(spec.name, []))]
            hosts += [(h, p.nodes + k) for k, (h, _, _) in enumerate(c.storage.get(spec.name, []))]
            mine = [(h, k) for h, k in hosts if h in attached and h not in homed]
            if not mine:
                continue
            if len(mine) == len(hosts):  # every node homed here: each at its planned place, the plan reserved
                places, planned, by_plan = dict(mine), p.nodes + len(c.storage.get(spec.name, [])), True
            else:  # nodes of other homes too: those homed here one after another, in the fabric's order
                places, planned, by_plan = {h: j for j, (h, _) in enumerate(mine)}, len(mine), False
            homed.update(places)
            blocks.append((spec.name, planned, places, by_plan))
    rest = [h for h, _, _ in members if h not in homed]
    if rest:  # nodes on no other fabric: the out-of-band network is their home
        blocks.append((f.name, len(rest), {h: k for k, h in enumerate(rest)}, False))
    order = [x.name for x in c.inv.fabrics]
    # blocks sized by a plan first (their size changes only with the plan), then those sized by the nodes
    # present (a fabric without planned_nodes, or whose nodes are partly homed elsewhere): what grows comes last
    sized = {owner: c.inv.fabrics[order.index(owner)].planned_nodes is not None and planned_by_plan
             for owner, _, _, planned_by_plan in blocks}
    blocks.sort(key=lambda b: (not sized[b[0]], order.index(b[0])))
    by_host = {h: (g, m) for h, g, m in members}
    for b, (owner, planned, places, _) in enumerate(blocks):
        layout.blocks.append(Block(owner, NODE_BLOCK, planned, per_switch, ports, max(places.values()) + 1))
        for h, k in sorted(places.items(), key=lambda kv: kv[1]):
            g, m = by_host[h]
            layout.nodes.append(Placed(h, g, m, b, k, "storage" if h in storage else "compute"))
        if not sized[owner]:
            what = ("has no planned_nodes" if c.inv.fabrics[order.index(owner)].planned_nodes is None or owner == f.name
                    else "has nodes homed on other fabrics, so its block holds what is present")
            c.warner(f.name)(("fabrics", i), f"the out-of-band block of fabric '{owner}' {what}: adding nodes there "
                             "moves the out-of-band addresses of the blocks after it (and the cables of its storage "
                             "servers, which follow its nodes); set planned_nodes on the fabrics, or accept the "
                             "re-addressing")


def _managed(c: _Checks, i: int, f) -> list[tuple[str, int, list[tuple[str, str, int]]]] | None:
    """The switches of the fabrics an oob network manages: per managed fabric its name, its planned
    switch count (every plane) and its present switches as (name, platform, planned place)."""
    from fabgen.topology.build import switch_names

    names = f.manages if f.manages is not None else [x.name for x in c.inv.fabrics if x.role != "oob"]
    by_name = {x.name: x for x in c.inv.fabrics}
    out = []
    for j, name in enumerate(names):
        if name in names[:j]:
            c.report(("fabrics", i, "manages", j), f"fabric '{name}' is listed twice")
            return None
        spec = by_name.get(name)
        if spec is None or spec.role == "oob":
            c.report(("fabrics", i, "manages", j), f"'{name}' is not a fabric this network can manage" +
                     did_you_mean(name, [x.name for x in c.inv.fabrics if x.role != "oob"]))
            return None
        other = c.manager.setdefault(name, f.name)
        if other != f.name:  # two networks would cable every switch's management port twice
            where = ("fabrics", i, "manages", j) if f.manages is not None else ("fabrics", i)
            c.report(where, f"fabric '{name}' is already managed by the out-of-band network '{other}': a switch has "
                     "one management port; give each out-of-band network a `manages` list of its own fabrics")
            return None
        p = c.plans.get(name)
        if p is None:  # not sized: reported there
            return None
        per_plane = p.leaves + p.spines + p.cores
        rows = []
        for k, plane in enumerate(plane_names(spec)):
            for s in switch_names(spec.model_copy(update={"name": plane}), p):
                rows.append((s.name, spec.platform, k * per_plane + p.switch_place(s.role, s.index)))
        out.append((name, per_plane * spec.planes, rows))
    return out


def _check_fabric_name(c: _Checks, i: int, f) -> bool:
    """Fabric names prefix switch names and name OUT's folders: unique ignoring case, short, not reserved."""
    path, ok = ("fabrics", i, "name"), True
    earlier = [x.name for x in c.inv.fabrics[:i]]
    if f.name.lower() in {n.lower() for n in earlier}:
        c.report(path, f"fabric '{f.name}' is declared twice" if f.name in earlier else
                 f"fabric '{f.name}' differs from another fabric's name only in case")
        ok = False
    if f.name.lower() in RESERVED_FOLDERS:
        c.report(path, f"'{f.name}' is a folder fabgen writes at the top of OUT "
                 f"({', '.join(sorted(RESERVED_FOLDERS))}): name the fabric otherwise")
        ok = False
    if len(f.name) > MAX_FABRIC_NAME:
        c.report(path, f"fabric names are at most {MAX_FABRIC_NAME} characters: they prefix "
                 "every switch name, which must stay a valid hostname")
        ok = False
    return ok


def _check_fabric_role(c: _Checks, i: int, f) -> bool:
    """What a role allows: planes and NCCL are the compute fabric's; in-band management and BMCs are
    Ethernet networks (storage may be InfiniBand, as in NVIDIA's InfiniBand storage fabrics); the
    out-of-band keys are the out-of-band network's (elsewhere nothing would read them)."""
    ok = True
    if f.role != "oob":
        for key in ("manages", "oob_vlan"):
            if key in f.model_fields_set:
                c.report(("fabrics", i, key), f"{key} applies to the out-of-band network (role oob); this {f.role} "
                         "fabric has no access ports: remove it", key=True)
                ok = False
    if f.role != "compute" and f.planes > 1:
        c.report(("fabrics", i, "planes"), f"planes split compute NICs; the {f.role} fabric has one plane")
        ok = False
    if f.role == "inband" and f.kind in ("infiniband", "ethernet"):
        c.report(("fabrics", i, "kind"), "an inband fabric is roce or spectrum-x (kind ethernet is the "
                 "out-of-band access layer; InfiniBand carries compute and storage)")
        ok = False
    if (f.role == "oob") != (f.kind == "ethernet"):
        c.report(("fabrics", i, "kind"), "the out-of-band network is kind ethernet with role oob (access switches, "
                 "one management VLAN); " + ("write kind: ethernet" if f.role == "oob" else "write role: oob"))
        ok = False
    return ok


def _check_fabric_hardware(c: _Checks, i: int, f) -> bool:
    """The platform fits the kind, the switch model is known, built for the kind and runs the platform."""
    path, ok = ("fabrics", i), True
    platforms = PLATFORMS_BY_KIND[f.kind]
    if f.platform not in platforms:
        everything = [p for ps in PLATFORMS_BY_KIND.values() for p in ps]
        owner = next((k for k, ps in PLATFORMS_BY_KIND.items() if f.platform in ps), None)
        hint = f" ('{f.platform}' is a {owner} platform)" if owner else did_you_mean(f.platform, everything)
        c.report((*path, "platform"), f"'{f.platform}' is not a platform for kind {f.kind}: choose "
                 f"{' or '.join(platforms)}{hint}")
        ok = False
    model = c.switch_models.get(f.switch_model)
    if model is None and f.switch_model in c.inv.switch_models:
        ok = False  # declared, and already reported where it is declared
    elif model is None:
        c.report((*path, "switch_model"), f"unknown model '{f.switch_model}'"
                 f"{did_you_mean(f.switch_model, list(c.switch_models))}; known: "
                 f"{', '.join(sorted(c.switch_models))}, or declare it under switch_models")
        ok = False
    elif f.kind not in model.kinds:
        fits = sorted(k for k, m in c.switch_models.items() if f.kind in m.kinds)
        c.report((*path, "switch_model"), f"{f.switch_model} is built for {' and '.join(model.kinds)}, not for "
                 f"kind {f.kind} (use {', '.join(fits)})")
        ok = False
    elif f.platform in platforms and f.platform not in model.platforms:
        c.report((*path, "switch_model"), f"{f.switch_model} does not run {f.platform} "
                 f"(it runs {', '.join(model.platforms)})")
        ok = False
    if f.scalable_unit is not None and f.topology != "rail-optimized" and f.role != "oob":
        c.report((*path, "scalable_unit"), "scalable_unit applies to rail-optimized fabrics only")
        ok = False
    return ok


def _attach_node_groups(c: _Checks, i: int, f) -> tuple[list[Member], list[Member], bool]:
    """A fabric's node groups: known, listed once, on one fabric only; split into compute and storage."""
    fmembers: list[Member] = []
    fstorage: list[Member] = []
    seen: set[str] = set()
    ok = True
    for j, gname in enumerate(f.node_groups):
        gpath = ("fabrics", i, "node_groups", j)
        if gname not in c.groups:
            c.report(gpath, f"unknown node group '{gname}'{did_you_mean(gname, list(c.groups))}")
            ok = False
            continue
        if gname in seen:
            c.report(gpath, f"node group '{gname}' is listed twice")
            ok = False
            continue
        seen.add(gname)
        if (gname, f.role) in c.attached:
            c.report(gpath, f"node group '{gname}' is already attached to fabric '{c.attached[gname, f.role]}' "
                     f"for role {f.role}; a node group is on one fabric per role")
            ok = False
            continue
        c.attached[gname, f.role] = f.name
        nm = _group_model(c, gname)
        if nm is None or gname not in c.hostnames:
            ok = False
            continue
        if not nm.role_ports(f.role):
            have = sorted({p.role for p in nm.ports} | ({"compute"} if nm.nics else set()))
            c.report(gpath, f"node group '{gname}' ({nm.key}) has no {f.role} ports for this {f.role} fabric (it has "
                     f"{', '.join(have) or 'none'}){'' if nm.custom else '; declare a node_models entry for others'}")
            ok = False
            continue
        view = nm.for_role(f.role)
        (fstorage if c.groups[gname].role == "storage" else fmembers).extend(
            (h, gname, view) for h in c.hostnames[gname])
    return fmembers, fstorage, ok


NETDEV_RULE = "a Linux interface name is at most 15 characters, and lo is the loopback"


def _netdev_ok(name: str) -> bool:
    return len(name) <= 15 and name not in ("lo", "all", "default") and "/" not in name


def _group_model(c: _Checks, gname: str) -> NodeModel | None:
    """A node group's model as its nodes are: role ports numbered after its compute fabric's plane
    ports (NodeModel.for_planes), netdevs from its rdma_links file. None: reported elsewhere."""
    if gname in c.group_models:
        return c.group_models[gname]
    i, g = next((i, g) for i, g in enumerate(c.inv.node_groups) if g.name == gname)
    nm = c.node_models.get(g.model)
    if nm is not None:
        planes = next((f.planes for f in c.inv.fabrics if f.role == "compute" and gname in f.node_groups), 1)
        nm = nm.for_planes(planes)
        if g.rdma_links is not None:
            nm = _with_rdma_links(c, i, g, nm, planes)
    c.group_models[gname] = nm
    return nm


def _with_rdma_links(c: _Checks, i: int, g, nm: NodeModel, planes: int) -> NodeModel | None:
    """nm with the netdevs of the group's rdma_links file: every device a port of the group uses
    must be in it (the file comes from one of its nodes)."""
    from fabgen.inventory.rdmalinks import read_rdma_links

    path = Path(c.loaded.file).parent / g.rdma_links
    shown = g.rdma_links if Path(g.rdma_links).is_absolute() else str(path)
    found, problems = read_rdma_links(path, shown)
    if problems:
        c.problems.extend(problems)
        return None
    ports = [n for ns in (nm.plane_nics(planes) if planes > 1 and nm.can_split(planes) else (nm.nics,)) for n in ns]
    ports += [n for n in nm.ports if n.role != "oob"]
    bad = sorted({netdev for netdev in found.values() if netdev and not _netdev_ok(netdev)})
    if bad:
        c.report(("node_groups", i, "rdma_links"), f"{shown} gives {bad[0]!r} as a netdev: {NETDEV_RULE}")
        return None
    missing = [n.rdma for n in ports if n.rdma not in found]
    if missing:
        c.report(("node_groups", i, "rdma_links"), f"{shown} lists no {', '.join(missing[:6])}"
                 f"{' and more' if len(missing) > 6 else ''} ({nm.key}'s port names{' on ' + str(planes) + ' planes' if planes > 1 else ''}); "
                 f"it lists {', '.join(sorted(found)[:12])}: take it from a node of this group, or declare a "
                 "node_models entry that names the ports as the node does")
        return None
    return nm.with_netdevs({dev: netdev for dev, netdev in found.items() if netdev})


def _size_fabric(c: _Checks, i: int, f, model: SwitchModel, fmembers: list[Member], fstorage: list[Member]) -> None:
    """The numbers: one link speed, one NIC count per node, ports at that speed, then the sizing plan."""
    path = ("fabrics", i)
    models = {m.key: m for _, _, m in fmembers}
    speeds = sorted({nic.speed for m in [*models.values(), *(m for _, _, m in fstorage)] for nic in m.nics})
    rails = sorted({len(m.nics) for m in models.values()})
    if len(speeds) > 1:
        c.report((*path, "node_groups"), f"the attached nodes mix NIC speeds "
                 f"({', '.join(f'{s}G' for s in speeds)}); one fabric runs one link speed")
        return
    if len(rails) > 1 and f.topology == "rail-optimized":
        what = "compute NICs" if f.role == "compute" else f"{f.role} ports"
        c.report((*path, "node_groups"), f"rail-optimized fabrics need the same number of {what} on every "
                 f"node; these have {', '.join(map(str, rails))}")
        return
    if len(rails) > 1:
        c.report((*path, "node_groups"), f"nodes with different NIC counts ({', '.join(map(str, rails))}) "
                 "cannot share one fabric's leaf layout")
        return
    speed = speeds[0]
    if f.planes > 1:
        if not _planes_fit(c, i, f, models, fstorage, speed):
            return
        speed //= f.planes
    if model.mode_for(speed) is None:
        split = f" split across {f.planes} planes" if f.planes > 1 else ""
        c.report((*path, "switch_model"), f"{f.switch_model} has no {speed}G ports for these nodes' {speed}G NICs"
                 f"{split} (it runs {', '.join(f'{s}G' for s in model.speeds())})")
        return
    # NVLink racks shape the compute fabric's units (jobs are placed by them); a storage or in-band
    # fabric attaches trays like any node
    domain = _nvlink_domain(c, i, f, models) if f.role == "compute" else 1
    if domain is None:
        return
    rules = dict(topology=f.topology, radix=model.radix(speed), speed=speed, rails=rails[0],
                 ratio=parse_ratio(f.oversubscription), scalable_unit=f.scalable_unit, tiers=f.tiers,
                 model=f.switch_model, storage=sum(len(m.nics) for _, _, m in fstorage), domain=domain,
                 storage_spread=max((len(m.nics) for _, _, m in fstorage), default=1))
    try:
        sized = plan(nodes=len(fmembers), planned_nodes=f.planned_nodes, **rules)  # arithmetic only: cheap
    except SizingError as exc:
        c.report((*path, exc.field), exc.message)
        return
    endpoints = (sized.endpoints + sized.storage) * f.planes
    if endpoints > MAX_ENDPOINTS:  # before anything of that size is built
        c.report((*path, "planned_nodes" if f.planned_nodes else "node_groups"),
                 f"{endpoints:,} switch ports for nodes ({'planned ' if f.planned_nodes else ''}nodes x ports x "
                 f"planes) is more than the {MAX_ENDPOINTS:,} one fabric may have (131,072 GPUs on four planes); "
                 "check planned_nodes, or split the cluster into fabrics")
        return
    c.plans[f.name] = sized
    c.members[f.name] = fmembers
    c.storage[f.name] = fstorage
    if f.planned_nodes is None:  # a plan is the final size: growing past it is an error, not a warning
        now = c.plans[f.name]

        def growth() -> list[str]:
            return [c.located(path, m) for m in check_growth(f, now, lambda n: plan(nodes=n, **rules))]
        c.pending.append((f.name, len(c.warnings.get(f.name, [])), growth))


def _planes_fit(c: _Checks, i: int, f, models: dict[str, NodeModel], fstorage: list[Member], speed: int) -> bool:
    """A multi-plane fabric: Ethernet, NICs that split (the model names the ports), a speed that
    divides, no storage nodes (their NICs are not split), and room for the plane suffix."""
    path = ("fabrics", i)
    if f.kind == "infiniband":
        c.report((*path, "planes"), "planes split Ethernet NICs (roce, spectrum-x); an InfiniBand fabric has "
                 "one plane")
        return False
    ok = True
    for key, m in models.items():
        if not m.splits:
            c.report((*path, "node_groups"), f"{key} does not say how its NICs split across planes: declare a "
                     "node_models entry with plane_rdma (the RDMA name pattern of the split ports, e.g. mlx5_{k})")
            ok = False
            continue
        if f.planes not in m.plane_counts:
            c.report((*path, "planes"), f"{key}'s NICs split into {' or '.join(map(str, m.plane_counts))} planes, "
                     f"not {f.planes}")
            ok = False
            continue
        names = [n.rdma for ports in m.plane_nics(f.planes) for n in ports]
        where = ("node_models", key, "plane_rdma") if m.custom else (*path, "planes")
        repeated = sorted({n for n in names if names.count(n) > 1})
        invalid = [n for n in names if not re.fullmatch(DEVICE_PATTERN, n)]
        if repeated or invalid:
            c.report(where, f"{key}'s plane_rdma '{m.plane_rdma}' gives "
                     + (f"the same port name to several ports ({', '.join(repeated[:3])}): use {{k}}, or {{rail}} "
                        "and {plane}" if repeated else f"names that are not device names ({invalid[0]})"))
            ok = False
            continue
        taken = {p.rdma: p.role for p in m.ports if p.role != "oob"}
        shared = [n for n in names if n in taken]
        if shared:  # one port on two fabrics: cabled twice, addressed twice, NCCL on a storage port
            c.report(where, f"{key}'s ports on {f.planes} planes (plane_rdma '{m.plane_rdma}': {names[0]} to "
                     f"{names[-1]}) take the names of its {' and '.join(sorted(set(taken[n] for n in shared)))} "
                     f"ports ({', '.join(shared[:4])}): a port is one cable and one address; give plane_rdma and "
                     "ports names apart")
            ok = False
    if speed % f.planes or speed // f.planes < 100:
        c.report((*path, "planes"), f"{speed}G NICs do not split into {f.planes} ports of at least 100G")
        ok = False
    if fstorage:
        c.report((*path, "node_groups"), "storage nodes on a multi-plane fabric: their NICs are not split across "
                 "planes; attach them to a fabric of their own")
        ok = False
    longest = len(f.name) + len(PLANE_SUFFIX.format(p=f.planes))
    if longest > 40:
        c.report((*path, "name"), f"with {f.planes} planes the fabric's names end in "
                 f"'{PLANE_SUFFIX.format(p=f.planes)}': '{f.name}' leaves {longest} characters, more than 40")
        ok = False
    return ok


def _nvlink_domain(c: _Checks, i: int, f, models: dict[str, NodeModel]) -> int | None:
    """Nodes per NVLink domain of a fabric's compute nodes (1: each node its own). NVL72 racks come
    whole: a group of trays is whole racks, so racks start at the same place in every unit and
    no unit or Slurm block splits one. None: reported."""
    domains = sorted({m.nvlink_domain for m in models.values()})
    if len(domains) > 1 and f.topology == "rail-optimized":
        c.report(("fabrics", i, "node_groups"), f"the attached nodes mix NVLink domain sizes "
                 f"({', '.join(map(str, domains))} nodes): a rail-optimized unit holds whole domains of one size")
        return None
    ok = True
    for j, g in enumerate(c.inv.node_groups):
        d = c.node_models[g.model].nvlink_domain if g.model in c.node_models else 1
        if d > 1 and g.name in f.node_groups and g.count % d:
            whole = g.count // d
            c.report(("node_groups", j, "count"), f"{g.model} comes in NVLink racks of {d}: {g.count} is {whole} "
                     f"rack{'' if whole == 1 else 's'} and {g.count % d} more; use {whole * d or d} or {(whole + 1) * d}")
            ok = False
    d = domains[-1] if domains else 1
    if ok and d > 1 and f.planned_nodes is not None and f.planned_nodes % d:
        whole = f.planned_nodes // d
        c.report(("fabrics", i, "planned_nodes"), f"the nodes come in NVLink racks of {d}: {f.planned_nodes} is "
                 f"{whole} rack{'' if whole == 1 else 's'} and {f.planned_nodes % d} more; plan whole racks: "
                 f"{whole * d or d} or {(whole + 1) * d}")
        ok = False
    if not ok:
        return None
    return d


def _check_switch_names(c: _Checks) -> None:
    """Switch names come from fabric names and share the namespace of hostnames (file names, Ansible
    hosts), so a collision is an inventory error, not a surprise later."""
    from fabgen.topology.build import switch_names

    devices: dict[str, str] = {}  # lower-case switch name -> fabric
    from fabgen.topology.oob import access_names

    for i, f in enumerate(c.inv.fabrics):
        if f.name in c.plans and f.role == "oob":
            c.switches[f.name] = [s.name for s in access_names(f, c.managed[f.name])]
            _claim_switch_names(c, i, f, c.switches[f.name], devices)
        elif f.name in c.plans:
            c.switches[f.name] = [s.name for name in plane_names(f)
                                  for s in switch_names(f.model_copy(update={"name": name}), c.plans[f.name])]
            _claim_switch_names(c, i, f, c.switches[f.name], devices)


def _claim_switch_names(c: _Checks, i: int, f, names: list[str], devices: dict[str, str]) -> None:
    for name in names:
        other = devices.get(name.lower())
        if other is not None and other != f.name:
            c.report(("fabrics", i, "name"), f"switch '{name}' of fabric '{f.name}' is also a switch of fabric "
                     f"'{other}': their configs would overwrite each other; rename one fabric")
            return
        devices[name.lower()] = f.name
        clash = _hostname_clash(c, name)
        if clash:
            how, j, other = clash
            c.report(("node_groups", j, "hostname"),
                     f"hostname '{other}' differs from switch '{name}' of fabric '{f.name}' only in case"
                     if how == "case" else f"hostname '{name}' is also the name of a switch of fabric "
                     f"'{f.name}' (fabrics[{i}]); switch names are '<fabric>-...'")
            return


def _check_subnet_manager_names(c: _Checks) -> None:
    """Subnet-manager hosts join the namespace of nodes and switches (Ansible hosts). An SM host may
    be a node of a node group on the same fabric (a UFM appliance as a node group, its HCA on the
    fabric: docs/cluster.md), but not any other node."""
    fabrics = c.inv.fabrics
    switch_owner = {name: fabric for fabric, names in c.switches.items() for name in names}
    sm_seen: dict[str, str] = {}
    node_names = {h.lower() for h in c.owners} if any(f.infiniband and f.infiniband.subnet_managers
                                                       for f in fabrics) else set()
    for i, f in enumerate(fabrics):
        for k, sm in enumerate(f.infiniband.subnet_managers if f.infiniband else []):
            on_fabric = sm in c.owners and any(owner == f.name for (g, _), owner in c.attached.items()
                                                if g == c.owners[sm][1])
            clash = ("a node of a node group not on this fabric" if sm.lower() in node_names and not on_fabric else
                     f"a switch of fabric '{switch_owner[sm]}'" if sm in switch_owner else
                     f"already a subnet manager of fabric '{sm_seen[sm]}'" if sm in sm_seen else None)
            if clash:
                c.report(("fabrics", i, "infiniband", "subnet_managers", k),
                         f"subnet manager '{sm}' is {clash}; give the SM host its own name")
            sm_seen.setdefault(sm, f.name)


def _check_addressing(c: _Checks) -> None:
    """Ethernet blocks and their pools, node management prefixes apart from every data pool, and a
    bootstrap interface that can reach other nodes."""
    from fabgen.inventory.ethernet import check_ethernet, check_prefix
    from fabgen.inventory.schema import EthernetOptions

    for i, f in enumerate(c.inv.fabrics):
        if f.ethernet is not None and f.kind == "infiniband":
            c.report(("fabrics", i, "ethernet"), "the ethernet block applies to kinds roce and spectrum-x only "
                     "(this fabric is infiniband)", key=True)
        elif f.kind == "ethernet" and f.ethernet is not None:
            c.report(("fabrics", i, "ethernet"), "the ethernet block (pools, QoS, BGP) does not apply to the "
                     "out-of-band network: its addresses come from management.prefix", key=True)
        elif f.kind not in ("infiniband", "ethernet"):
            check_ethernet(i, f.kind, f.ethernet or EthernetOptions(), c.plans.get(f.name), c.report, c.taken,
                           c.warner(f.name), f.planes)
    _check_host_routing(c)
    managed: list = list(c.taken)  # management prefixes may overlap neither each other nor a data pool
    for i, g in enumerate(c.inv.node_groups):
        if g.management is not None:
            check_prefix(("node_groups", i, "management"), g.management, g.count, "nodes", c.report, managed)
    for i, g in enumerate(c.inv.node_groups):
        compute = c.attached.get((g.name, "compute"))
        if g.bootstrap_interface and re.fullmatch(r"lo\d*", g.bootstrap_interface) and compute:
            c.warner(compute)(("node_groups", i, "bootstrap_interface"),
                                         f"NCCL_SOCKET_IFNAME={g.bootstrap_interface} is the loopback interface: "
                                         "NCCL's bootstrap cannot reach other nodes through it; name the "
                                         "management or in-band interface")
    c.taken[:] = managed  # the switch management prefixes checked next are kept apart from these too


def _check_host_routing(c: _Checks) -> None:
    """BGP to the host: storage and in-band fabrics with a /31 per port (the sessions run over them),
    one such fabric per node group (a node runs one BGP speaker with one ASN)."""
    bgp_of: dict[str, str] = {}
    for i, f in enumerate(c.inv.fabrics):
        if f.ethernet is not None and f.ethernet.host_routing != "bgp" and "host" in f.ethernet.asn.model_fields_set:
            c.report(("fabrics", i, "ethernet", "asn", "host"), "asn.host numbers the nodes' BGP speakers, which run "
                     "with host_routing: bgp only; without it nothing reads asn.host: remove it", key=True)
        if f.ethernet is None or f.ethernet.host_routing != "bgp":
            continue
        where = ("fabrics", i, "ethernet", "host_routing")
        if f.role not in ("storage", "inband"):
            c.report(where, f"BGP to the host is for storage and inband fabrics (this one is {f.role}): compute "
                     "rails keep one address and routing table per port")
        elif f.ethernet.host_addressing != "p2p":
            c.report(where, "BGP to the host runs over a /31 per port: set host_addressing: p2p")
        for g in f.node_groups:
            if g in bgp_of and bgp_of[g] != f.name:
                c.report(where, f"node group '{g}' already runs BGP to fabric '{bgp_of[g]}': a node has one BGP "
                         "speaker and one ASN, so BGP to the host on one of its fabrics")
                break
            bgp_of[g] = f.name


def _check_management_and_platform(c: _Checks) -> None:
    """Each fabric's platform values and its switch management network."""
    from fabgen.inventory.management import check_management
    from fabgen.inventory.platform import check_platform

    for i, f in enumerate(c.inv.fabrics):
        warn = c.warner(f.name)
        check_platform(i, f, c.report, warn)
        if f.management is not None and f.name in c.plans:
            p = c.plans[f.name]
            raw = c.loaded.data["fabrics"][i]
            bare = isinstance(raw, dict) and isinstance(raw.get("management"), str)
            if f.role == "oob":  # the access switches and every BMC port of the plan
                layout = c.managed[f.name]
                check_management(i, f, layout.planned_switches + layout.bmc_places, bare, c.report, warn, c.taken,
                                 "access switches, BMCs and their gateway")
            else:
                check_management(i, f, f.planes * (p.leaves + p.spines + p.cores), bare, c.report, warn, c.taken)

MAX_PKEYS = 128  # PKey table entries of a ConnectX port
IB_RATES = (100, 200, 400, 800)  # Gb/s with an IBTA rate code (platforms/infiniband.py RATE_CODE; a test
# keeps the two equal)


def _check_infiniband(c: _Checks, i: int, f) -> dict[tuple[str, str], int]:
    """The infiniband: block; returns the fabric's GUID map ((device, port) -> GUID), empty without one."""
    from fabgen.inventory.schema import InfinibandOptions

    path = ("fabrics", i, "infiniband")
    if f.infiniband is not None and f.kind != "infiniband":
        c.report(path, f"the infiniband block applies to kind infiniband only (this fabric is {f.kind})", key=True)
        return {}
    if f.kind != "infiniband":
        return {}
    ib = f.infiniband or InfinibandOptions()
    fplan = c.plans.get(f.name)
    _check_subnet_manager_features(c, path, f, ib, fplan)
    _check_partitions(c, path, f, ib, fplan)
    _check_pkey_tables(c, path, f, ib)
    if ib.guid_map is None or fplan is None:
        return {}
    return _read_guid_map(c, path, f, ib.guid_map, fplan)


def _check_subnet_manager_features(c: _Checks, path: PathT, f, ib, fplan) -> None:
    """What upstream OpenSM lacks (NVIDIA engines, SHARP, adaptive routing), and ftree's two tiers."""
    if f.platform == "opensm":
        if ib.routing_engine.startswith("ar_"):
            c.report((*path, "routing_engine"), f"{ib.routing_engine} is an NVIDIA subnet manager engine; "
                     "upstream OpenSM (platform opensm) does not have it: use ftree or updn, or platform ufm")
        if ib.sharp:
            c.report((*path, "sharp"), "SHARP needs NVIDIA's subnet manager and sharp_am: use platform ufm")
        if ib.adaptive_routing:
            c.report((*path, "adaptive_routing"), "upstream OpenSM (platform opensm) has no adaptive routing: "
                     "use platform ufm")
    if ib.routing_engine == "ftree" and fplan is not None and fplan.tiers == 1:
        c.report((*path, "routing_engine"), "ftree needs at least two switch tiers; this fabric is one switch")


def _check_partitions(c: _Checks, path: PathT, f, ib, fplan) -> None:
    """Partitions: unique names and PKeys, members attached to this fabric, a rate the fabric runs."""
    names: dict[str, int] = {}
    pkeys: dict[int, int] = {}
    mine = sorted(g for (g, _), owner in c.attached.items() if owner == f.name)
    for j, part in enumerate(ib.partitions):
        pp = (*path, "partitions", j)
        if part.name == "Default" or part.name in names:
            c.report((*pp, "name"), f"partition '{part.name}' is already defined" +
                     (" (Default is always written)" if part.name == "Default" else
                      f" (partitions[{names.get(part.name)}])"))
        names.setdefault(part.name, j)
        if part.pkey in pkeys:
            c.report((*pp, "pkey"), f"PKey 0x{part.pkey:04x} is already used by partitions[{pkeys[part.pkey]}]")
        pkeys.setdefault(part.pkey, j)
        if part.node_groups == []:
            c.report((*pp, "node_groups"), f"partition '{part.name}' has no members: list its node groups, or "
                     "leave node_groups out for all")
        for k, g in enumerate([] if part.node_groups == "all" else part.node_groups):
            if g not in mine:
                c.report((*pp, "node_groups", k), f"node group '{g}' is not attached to fabric '{f.name}'"
                         f"{did_you_mean(g, mine)}")
        if part.rate is not None and (part.rate not in IB_RATES or (fplan and part.rate > fplan.speed)):
            top = fplan.speed if fplan else max(IB_RATES)
            c.report((*pp, "rate"), f"rate {part.rate} is not an InfiniBand rate this fabric runs: choose from "
                     f"{', '.join(str(r) for r in IB_RATES if r <= top)}")


def _check_pkey_tables(c: _Checks, path: PathT, f, ib) -> None:
    """Every member port holds Default plus each of its partitions in its PKey table (ConnectX: 128
    entries, `ibv_devinfo -v` max_pkeys); one partition more and the SM cannot program it."""
    if not ib.partitions:
        return
    per_group = {g: 1 for (g, _), owner in c.attached.items() if owner == f.name}
    for part in ib.partitions:
        for g in (per_group if part.node_groups == "all" else part.node_groups):
            if g in per_group:
                per_group[g] += 1
    full = sorted(g for g, n in per_group.items() if n > MAX_PKEYS)
    if full:
        c.report((*path, "partitions"), f"node group '{full[0]}' would be in {per_group[full[0]]} partitions "
                 f"(with Default); a ConnectX port's PKey table holds {MAX_PKEYS}")


def _read_guid_map(c: _Checks, path: PathT, f, guid_map: str, fplan: Plan) -> dict[tuple[str, str], int]:
    """The GUID map CSV, relative to the inventory; its rows must name this fabric's switches and HCAs."""
    from fabgen.inventory.guidmap import read_guid_map

    map_path = Path(c.loaded.file).parent / guid_map
    try:
        if map_path.exists() and not map_path.is_file():
            what = "a directory" if map_path.is_dir() else "not a regular file"
            c.report((*path, "guid_map"), f"GUID map {guid_map!r} is {what}: give the CSV file")
            return {}
    except OSError as exc:
        c.report((*path, "guid_map"), f"cannot read the GUID map: {exc.strerror or exc}")
        return {}
    known: dict[tuple[str, str], str] = {(name, "0"): "switch" for name in c.switches.get(f.name, [])}
    for host, _, model in c.members.get(f.name, []) + c.storage.get(f.name, []):
        for nic in model.nics:
            known[(host, nic.rdma)] = "adapter"
    shown = guid_map if Path(guid_map).is_absolute() else str(map_path)
    found, map_problems = read_guid_map(map_path, shown, known, f.name)
    if map_problems and not map_path.exists():
        c.report((*path, "guid_map"), f"GUID map {guid_map!r} not found (paths are relative to the inventory)")
        return {}
    c.problems.extend(map_problems)
    return found
