"""`fabgen verify --running DIR`: each switch's running configuration held against the rendered one,
by meaning, not text (docs/verify.md, "Running configuration").

DIR holds one file a switch, named after it as the plan names it: `<device>.cfg` or `.txt` (EOS
`show running-config`), `<device>.yaml` or `.nvue.yaml` (NVUE `nv config show -o yaml`),
`<device>.json` or `<device>/config_db.json` (SONiC `show runningconfiguration all`, or
/etc/sonic/config_db.json). Each is read
as its platform's structure: EOS as a tree of config lines (hier_config), NVUE as the YAML object
tree, SONiC as config_db tables, keys and fields. What the plan has and the switch lacks is
`config-missing`, what the switch has beyond the plan `config-extra`, a value that differs
`config-different`; a planned switch without a file is `no-config` (reported apart). Each switch
that differs gets its remediation: EOS config commands (hier_config's remediation), NVUE `nv set` /
`nv unset` commands, SONiC a JSON Patch for `config apply-patch`.

Every file is untrusted: bounded in size before it is read, never through a link, its platform
checked against the plan's, a parse error refused with its line (RunningError, exit 2).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabgen.errors import printable
from fabgen.spec.platforms import PLATFORMS
from fabgen.verify.cabling import Finding, Verdict
from fabgen.verify.untrusted import MAX_DEPTH, Refused, lines, load

# One running config: the largest rendered switch config is about 140 KB (a SONiC config_db of
# 128 ports, golden/fattree-2to1); a switch's defaults add tens of KB. 4 MiB is more than twenty
# times that, and keeps a file of the smallest YAML values near 1.3 million objects to parse.
MAX_CONFIG = 4 * 1024 * 1024
# A switch that differs in more settings runs another config, not the plan drifted: no line-by-line
# remediation (hier_config's negation rebuilds its section's index a line, quadratic in the lines
# removed: 1,000 take a fraction of a second, 6,000 twelve seconds).
MAX_REMEDIATED = 1_000
# The file names a platform's running config may take in DIR, and what each holds.
SUFFIXES = {"eos": (".cfg", ".txt"), "nvue": (".nvue.yaml", ".yaml", ".yml"), "sonic": (".json",)}
WHAT = {"eos": "EOS show running-config", "nvue": "NVUE nv config show -o yaml",
        "sonic": "SONiC config_db JSON (show runningconfiguration all)"}
NAMES = {"eos": "an Arista EOS", "nvue": "a Cumulus Linux (NVUE)", "sonic": "a SONiC"}
# A value fabgen leaves to the deploy (a secret from the environment): any value the switch holds matches it.
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}")
# How EOS shows a secret the deploy gave it in clear (targets/eos.py): a TACACS+ or RADIUS `key 0`
# as `key 7` (or 8a) with the encrypted key, SNMPv3 passphrases as localized hashes after the
# engine ID (EOS User Manual, "tacacs-server host", "snmp-server user"): (rendered, shown) regexes.
_EOS_SHOWN = ((re.escape(" key 0 "), r"\ key\ (?:0|7|8a)\ "),
              (re.escape(" v3 auth "), r"\ v3(?:\ localized\ \S+)?\ auth\ "))
# a rendered switch config's suffix -> its platform: each platform's own `config_file` (spec/platforms.py)
_SUFFIX_OF = {p.config_file: name for name, p in PLATFORMS.items() if p.config_file and name in SUFFIXES}
_CONFIG = re.compile(r"^(?P<f>[^/]+)/switches/(?P<d>[^/]+?)(?P<s>"
                     + "|".join(re.escape(s) for s in sorted(_SUFFIX_OF)) + ")$")


TOP = "top level"  # where a difference outside every section is


class RunningError(Refused):
    """A running config verify will not read: one line naming the file (and the line)."""


@dataclass
class Diff:
    """One difference of one switch: where (a section or path), what the plan has, what the switch has."""

    kind: str  # config-missing, config-extra, config-different
    where: str
    expected: str
    found: str


@dataclass
class Result:
    """One switch's differences and the remediation that makes its running config the plan's."""

    diffs: list[Diff] = field(default_factory=list)
    remedy: list[str] = field(default_factory=list)
    note: str = ""  # why there is no remediation


# ---------------------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Planned:
    device: str
    fabric: str
    platform: str
    path: str  # the rendered config's path in the render


def planned(files: dict[str, bytes], fabric: str | None = None) -> dict[str, Planned]:
    """Every switch of the render with a config verify compares: device -> where its config is."""
    out: dict[str, Planned] = {}
    for path in sorted(files):
        m = _CONFIG.match(path)
        if m is None or (fabric is not None and m["f"] != fabric and not m["f"].startswith(f"{fabric}-plane")):
            continue
        out[m["d"]] = Planned(m["d"], m["f"], _SUFFIX_OF[m["s"]], path)
    return out


# ---------------------------------------------------------------------------------------------- the files


def _at(path: Path) -> str:
    """A path as a message names it: a newline in a file's name is written as its escape."""
    return printable(str(path))


def files_of(folder: Path, plan: dict[str, Planned]) -> dict[str, tuple[Path, str]]:
    """device -> (its file, the platform its name says); every file must name a switch of the plan
    with its platform's suffix, and a switch only once (all named before any is read)."""
    out: dict[str, tuple[Path, str]] = {}
    for path in sorted(folder.iterdir()):
        name = path.name
        if path.is_dir() and not path.is_symlink():  # the render's own layout: <switch>/config_db.json
            path, name = path / "config_db.json", f"{name}.json"
        suffix = next((s for p in SUFFIXES.values() for s in p if name.endswith(s) and len(name) > len(s)), None)
        if suffix is None:
            raise RunningError(f"{_at(path)}: not <device>.cfg/.txt (EOS), <device>.yaml/.nvue.yaml (NVUE) or "
                               "<device>.json or <device>/config_db.json (SONiC)")
        device = name[:-len(suffix)]
        platform = next(p for p, s in SUFFIXES.items() if suffix in s)
        if device not in plan:
            raise RunningError(f"{_at(path)}: {device!r} is no switch of the plan (name each file after its switch)")
        want = plan[device].platform
        if platform != want:
            raise RunningError(f"{_at(path)}: {NAMES[platform]} file for {device}, {NAMES[want]} switch in the plan "
                               f"(give {device}{SUFFIXES[want][0]}: {WHAT[want]})")
        if device in out:
            raise RunningError(f"{_at(path)}: a second running config of {device} (beside {out[device][0].name})")
        out[device] = (path, platform)
    return out


def check_dir(files: dict[str, bytes], folder: Path, fabric: str | None, read: Callable[[Path], str],
              v: Verdict) -> None:
    """Each planned switch's running config in `folder` against its rendered config, into `v`; one
    switch's files in memory at a time."""
    every = planned(files)
    plan = planned(files, fabric)
    if not plan:
        fabrics = sorted({p.fabric for p in every.values()})
        raise RunningError("--running: the render has no EOS, SONiC or NVUE switch config"
                           + (f" in fabric {fabric} ({', '.join(fabrics) or 'none'})" if fabric else ""))
    given = files_of(folder, every)  # a file of another fabric's switch is no typo: named, not held
    others = sorted(set(given) - set(plan))
    if others:
        v.notes.append(f"--running: {len(others)} running config(s) of switches outside --fabric {fabric} not "
                       f"held: {', '.join(others[:6])}")
    for device, p in sorted(plan.items()):
        if device not in given:
            v.findings.append(Finding("no-config", p.fabric, device, "", f"its running config ({WHAT[p.platform]})",
                                      "no file"))
            continue
        path = given[device][0]
        result = compare(p.platform, files[p.path].decode("utf-8"), read(path), _at(path))
        v.configs += 1
        for d in result.diffs:
            v.findings.append(Finding(d.kind, p.fabric, device, d.where, d.expected, d.found))
        if result.remedy:
            v.remedies[device] = (REMEDY[p.platform], result.remedy)
        if result.note:
            v.notes.append(result.note)


def compare(platform: str, rendered: str, running: str, where: str) -> Result:
    """The differences of one switch, and its remediation."""
    return {"eos": eos, "nvue": nvue, "sonic": sonic}[platform](rendered, running, where)


REMEDY = {"eos": "EOS config commands (configure; hier_config's remediation)",
          "nvue": "NVUE commands (nv set / nv unset, then nv config apply)",
          "sonic": "JSON Patch (RFC 6902) for `config apply-patch`"}


def _words(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------------------------------------- EOS

# Top-level lines a switch adds to `show running-config` on its own, when the plan does not write
# them (docs/verify.md, "What a switch adds on its own": seen in published EOS 4.2x-4.33 output).
EOS_DEFAULTS = ("no aaa root", "no service interface inactive port-id allocation disabled",
                "transceiver qsfp default-mode 4x10G")
# Top-level sections a switch shows whether configured or not: left out when they hold only these children.
EOS_DEFAULT_SECTIONS = {"system l1": {"unsupported speed action error", "unsupported error-correction action error"}}
# Rendered lines a switch does not show because they are its default (an interface is up unless shut).
EOS_UNSHOWN = {"no shutdown"}


def _head(text: str) -> str:
    """The first line that is not blank or a YAML comment (what a file holds, at a glance)."""
    return next((ln.strip() for ln in text[:4096].splitlines() if ln.strip() and not ln.startswith("#")), "")


def _eos_refuse(text: str, where: str) -> None:
    """Refuse a file that is not an EOS running config, or was cut short (EOS ends it with `end`)."""
    head = _head(text)
    if head.startswith(("{", "[")):
        raise RunningError(f"{where}: JSON, not EOS `show running-config` text (SONiC's config_db is <device>.json)")
    if head.startswith(("- header:", "- set:", "---")):
        raise RunningError(f"{where}: NVUE YAML, not EOS `show running-config` text")
    body = [ln for ln in lines(text, where, RunningError) if ln.strip()]
    if not body or body[-1].strip() != "end":
        raise RunningError(f"{where}:{len(body)}: no `end` line at the end: not a whole `show running-config` "
                           "(cut short?)")
    for n, ln in enumerate(text.splitlines(), 1):
        if "\t" in ln or (ln and not ln.isprintable()):
            raise RunningError(f"{where}:{n}: a control character in the line: not EOS `show running-config` text")
        if len(ln) - len(ln.lstrip(" ")) > 3 * MAX_DEPTH:  # EOS indents 3 a level; a section nests a few
            raise RunningError(f"{where}:{n}: indented more than {3 * MAX_DEPTH} spaces: sections nested deeper "
                               f"than {MAX_DEPTH} levels are no EOS config")


def _eos_driver() -> Any:
    """hier_config's Arista EOS driver, and EOS's own removal of an account: `no username NAME` (EOS
    User Manual, "username"), not the account's line with `no` before it."""
    from hier_config import Platform, get_hconfig_driver
    from hier_config.models import MatchRule, NegationSubRule

    driver = get_hconfig_driver(Platform.ARISTA_EOS)
    driver.rules.negation_sub.append(NegationSubRule(
        match_rules=(MatchRule(re_search=r"^username \S+ (privilege|role|secret|nopassword)\b"),),
        search=r"^(no username \S+) .*$", replace=r"\1"))
    return driver


def eos(rendered: str, running: str, where: str) -> Result:
    """EOS as trees of config lines (hier_config, its Arista EOS driver); the remediation is its own."""
    from hier_config import WorkflowRemediation, get_hconfig

    _eos_refuse(running, where)
    driver = _eos_driver()
    try:
        run = get_hconfig(driver, running)
    except Exception as exc:  # noqa: BLE001  # hier_config's parse errors have no common type
        raise RunningError(f"{where}: not EOS `show running-config` text ({exc})") from None
    plan = get_hconfig(driver, rendered)
    _secrets(plan, run)
    _eos_defaults(plan, run)
    result = Result()
    _eos_diff(plan, run, (), result)
    if len(result.diffs) > MAX_REMEDIATED:
        result.note = (f"{where}: {len(result.diffs):,} differences, more than the {MAX_REMEDIATED:,} a remediation is "
                       "written for: deploy the rendered config (a full replace) instead")
    elif result.diffs:
        remedy = WorkflowRemediation(run, plan).remediation_config
        result.remedy = [c.indentation + c.text for c in remedy.all_children_sorted()]
    return result


def _secrets(plan: Any, run: Any) -> None:
    """A rendered line that holds a value the deploy fills (a password hash, a key) takes the running
    line that matches it around the value: the secret is not fabgen's to check."""
    for child in list(plan.all_children()):
        if "{{" not in child.text:
            continue
        parts = _PLACEHOLDER.split(child.text)
        text = ".+".join(re.escape(p) for p in parts)
        for rendered, shown in _EOS_SHOWN:
            text = text.replace(rendered, shown)
        pattern = re.compile(text)
        parent = run
        for text in list(child.path())[:-1]:
            parent = parent.get_child(equals=text)
            if parent is None:
                break
        if parent is None:
            continue
        found = next((c for c in parent.children if pattern.fullmatch(c.text)), None)
        if found is not None:
            child.text = found.text


def _eos_defaults(plan: Any, run: Any) -> None:
    """Drop what a switch adds on its own, where the plan does not say otherwise."""
    def default(child: Any) -> bool:
        if plan.get_child(equals=child.text) is not None:
            return False
        kids = {c.text for c in child.children}
        section = EOS_DEFAULT_SECTIONS.get(child.text)
        return (child.text in EOS_DEFAULTS or (section is not None and kids <= section)
                or (child.text.startswith("interface ") and not kids))
    kept = [c for c in run.children if not default(c)]
    if len(kept) < len(run.children):  # one rebuild: a child's delete() rebuilds its parent's index
        run.children.clear()
        run.children.extend(kept)
    for tree in (plan, run):  # absent or written, the same (`shutdown` against it is still found)
        for section in tree.children:
            if section.text.startswith("interface "):
                for child in list(section.children):
                    if child.text in EOS_UNSHOWN:
                        child.delete()


def _eos_diff(plan: Any, run: Any, path: tuple[str, ...], result: Result) -> None:
    """The differences under one section: a section on one side only is one finding; lines on one side
    that share their first two words with none on the other are one thing (a neighbour, a user)
    missing or extra; a missing and an extra line alike to their last words are one value changed."""
    where = " > ".join(path) or TOP
    ours = {c.text: c for c in plan.children}
    theirs = {c.text: c for c in run.children}
    for text in (t for t in ours if t in theirs):  # the plan's order: the report is the same every run
        if ours[text].children or theirs[text].children:
            _eos_diff(ours[text], theirs[text], (*path, text), result)
    missing = [t for t in ours if t not in theirs]
    extra = [t for t in theirs if t not in ours]
    for a, b in _pairs(missing, extra):
        result.diffs.append(Diff("config-different", where, a, b))
        missing.remove(a)
        extra.remove(b)
    for kind, side, other, nodes in (("config-missing", missing, theirs, ours), ("config-extra", extra, ours, theirs)):
        known = {_key(t) for t in other}
        for key, group in _groups(side):
            whole = key not in known and len(group) > 1
            for text in ([key] if whole else group):
                lines_of = group if whole else [text]
                size = sum(1 + sum(1 for _ in nodes[t].all_children()) for t in lines_of)
                shown = f"{text} ({_words(size, 'line')})" if size > 1 else text
                result.diffs.append(Diff(kind, where, shown if kind == "config-missing" else "nothing",
                                         "nothing" if kind == "config-missing" else shown))


def _key(text: str) -> str:
    return " ".join(text.split()[:2])


def _groups(texts: list[str]) -> Iterator[tuple[str, list[str]]]:
    keys: dict[str, list[str]] = {}
    for t in texts:
        keys.setdefault(_key(t), []).append(t)
    yield from keys.items()


def _pairs(missing: list[str], extra: list[str]) -> list[tuple[str, str]]:
    """A missing and an extra line that are one setting changed: the same words but the values, each the
    other's only such line (`random-detect ecn minimum-threshold 150000 ...` against `... 200000 ...`)."""
    def shape(t: str) -> tuple[str, ...]:  # the words without digits, and how many words
        words = t.split()
        return (words[0], *(w for w in words[1:] if not re.search(r"\d", w)), str(len(words)))
    ours: dict[tuple[str, ...], list[str]] = {}
    theirs: dict[tuple[str, ...], list[str]] = {}
    for t in missing:
        ours.setdefault(shape(t), []).append(t)
    for t in extra:
        theirs.setdefault(shape(t), []).append(t)
    pairs = [(ours[s][0], theirs[s][0]) for s in ours if len(ours[s]) == 1 and len(theirs.get(s, ())) == 1]
    # then a setting of one line whose value is words (`description ...`, `hostname ...`): the only
    # missing and the only extra line that start with its first word
    paired = {a for a, _ in pairs} | {b for _, b in pairs}
    mine: dict[str, list[str]] = {}
    other: dict[str, list[str]] = {}
    for side, texts in ((mine, missing), (other, extra)):
        for t in texts:
            if t not in paired:
                side.setdefault(t.split()[0], []).append(t)
    pairs += [(m[0], other[w][0]) for w, m in mine.items() if len(m) == 1 and len(other.get(w, ())) == 1]
    return pairs


# ---------------------------------------------------------------------------------------------- NVUE


def _yaml(text: str, where: str) -> Any:
    """YAML within bounds: no anchors or aliases (NVUE writes none; an alias bomb expands when walked)."""
    import yaml

    lines(text, where, RunningError)
    try:
        loader = yaml.CSafeLoader(text) if yaml.__with_libyaml__ else yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _no_aliases(node, where)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except RecursionError:
        raise RunningError(f"{where}: YAML nested too deep") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise RunningError(f"{where}{at}: not YAML ({exc.problem or exc.context})") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise RunningError(f"{where}: not YAML ({exc})") from None


def _no_aliases(node: Any, where: str) -> None:
    """Refuse a document whose nodes repeat (an alias) or nest past MAX_DEPTH, level by level."""
    seen: set[int] = set()
    level, depth = [node], 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            raise RunningError(f"{where}: YAML nested deeper than {MAX_DEPTH} levels")
        below: list[Any] = []
        for n in level:
            if id(n) in seen:
                raise RunningError(f"{where}:{n.start_mark.line + 1}: a YAML alias (NVUE writes none)")
            seen.add(id(n))
            if isinstance(n.value, list):
                for item in n.value:
                    below.extend(item if isinstance(item, tuple) else (item,))
        level = below


def nvue_tree(doc: Any, where: str) -> dict[str, Any]:
    """The configuration tree of `nv config show -o yaml` (or a startup.yaml): its `- set:` entries
    merged, the `- header:` left out."""
    if not isinstance(doc, list) or not all(isinstance(d, dict) and len(d) == 1 for d in doc):
        raise RunningError(f"{where}: not NVUE's YAML (a list of `- header:` and `- set:` entries)")
    tree: dict[str, Any] = {}
    for n, entry in enumerate(doc):
        (op, body), = entry.items()
        if op == "header":
            continue
        if op != "set" or not isinstance(body, dict):
            raise RunningError(f"{where}: entry {n}: `{str(op)[:40]}` where `- set:` with an object belongs")
        _merge(tree, _keys(body))
    return tree


def _merge(into: dict[str, Any], more: dict[str, Any]) -> None:
    for k, v in more.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


def _scalar(v: Any) -> str:
    """A leaf as NVUE means it: `on` and true, 9216 and "9216" are one value."""
    if isinstance(v, bool):
        return "on" if v else "off"
    return "" if v is None else str(v)


def _nv_path(path: tuple[str, ...]) -> str:
    return " ".join(shlex.quote(str(p)) for p in path)


def _leaves(tree: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, value) of every leaf; an empty object is a leaf (`address: {10.0.0.1/31: {}}`)."""
    if isinstance(tree, dict) and tree:
        for k, v in tree.items():
            yield from _leaves(v, (*path, str(k)))
    else:
        yield path, tree


def _nv_set(path: tuple[str, ...], value: Any) -> str:
    if isinstance(value, dict):  # an empty object: the path is the value
        return f"nv set {_nv_path(path)}"
    return f"nv set {_nv_path(path)} {shlex.quote(_scalar(value))}"


def nvue(rendered: str, running: str, where: str) -> Result:
    """NVUE as its object tree: a subtree on one side only is one finding, a leaf that differs one."""
    head = _head(running)
    if head.startswith("{"):
        raise RunningError(f"{where}: JSON, not NVUE's YAML (SONiC's config_db is <device>.json)")
    if re.match(r"!|hostname |interface |router ", head):
        raise RunningError(f"{where}: EOS configuration text, not NVUE's YAML (nv config show -o yaml)")
    run = nvue_tree(_yaml(running, where), where)
    plan = nvue_tree(_yaml(rendered, "the rendered config"), "the rendered config")
    result = Result()
    unset: list[str] = []
    sets: list[str] = []
    _nvue_diff(plan, run, (), result, sets, unset)
    result.remedy = unset + sets + (["nv config apply"] if unset or sets else [])
    return result


def _keys(tree: Any) -> Any:
    """Every key as text: `3:` and `"3":` are one traffic class, `on:` one word."""
    if isinstance(tree, dict):
        return {_scalar(k): _keys(v) for k, v in tree.items()}
    return tree


def _nvue_diff(plan: Any, run: Any, path: tuple[str, ...], result: Result, sets: list[str],
               unset: list[str]) -> None:
    where = " ".join(path) or TOP
    if isinstance(plan, dict) and isinstance(run, dict) and (plan or run):
        for k in plan:
            if k not in run:
                n = sum(1 for _ in _leaves(plan[k], ()))
                result.diffs.append(Diff("config-missing", where, _shown(k, plan[k], n), "nothing"))
                sets.extend(_nv_set(p, v) for p, v in _leaves(plan[k], (*path, str(k))))
        for k in run:
            if k not in plan:
                n = sum(1 for _ in _leaves(run[k], ()))
                result.diffs.append(Diff("config-extra", where, "nothing", _shown(k, run[k], n)))
                unset.append(f"nv unset {_nv_path((*path, str(k)))}")
        for k in (k for k in plan if k in run):
            _nvue_diff(plan[k], run[k], (*path, str(k)), result, sets, unset)
        return
    if plan == {} and run == {}:
        return
    if isinstance(plan, dict) or isinstance(run, dict) or not _same(plan, run):
        parent = " ".join(path[:-1]) or TOP
        result.diffs.append(Diff("config-different", parent, f"{path[-1]}: {_flat(plan)}", f"{path[-1]}: {_flat(run)}"))
        if isinstance(run, dict) and run:
            unset.append(f"nv unset {_nv_path(path)}")
        sets.extend(_nv_set(p, v) for p, v in _leaves(plan, path))


def _same(plan: Any, run: Any) -> bool:
    text = _scalar(plan)
    if "{{" in text:
        parts = _PLACEHOLDER.split(text)
        return re.fullmatch(".+".join(re.escape(p) for p in parts), _scalar(run), re.S) is not None
    return text == _scalar(run)


def _flat(v: Any) -> str:
    """A value as a finding shows it: an object of bare keys (`state: {down: {}}`) by its keys."""
    if isinstance(v, dict):
        if v and all(x == {} for x in v.values()):
            return ", ".join(v)
        return "{}" if not v else _words(sum(1 for _ in _leaves(v, ())), "setting")
    return _scalar(v)


def _shown(key: Any, value: Any, leaves: int) -> str:
    if isinstance(value, dict) and value:
        return f"{key} ({_words(leaves, 'setting')})"
    return f"{key}: {_flat(value)}"


# ---------------------------------------------------------------------------------------------- SONiC

# Tables and fields SONiC writes into config_db on its own (sonic-buildimage's
# files/build_templates/init_cfg.json.j2, and VERSIONS from db_migrator): not findings where the plan
# does not name them.
SONIC_TABLES = frozenset({
    "AUTO_TECHSUPPORT", "AUTO_TECHSUPPORT_FEATURE", "BANNER_MESSAGE", "BGP_DEVICE_GLOBAL", "CRM", "FEATURE",
    "FLEX_COUNTER_TABLE", "KDUMP", "PASSW_HARDENING", "SYSLOG_CONFIG", "SYSLOG_CONFIG_FEATURE", "SYSTEM_DEFAULTS",
    "VERSIONS"})
SONIC_FIELDS = {
    ("DEVICE_METADATA", "localhost"): frozenset({"default_bgp_status", "mac", "synchronous_mode", "timezone"}),
    ("NTP", "global"): frozenset({"admin_state", "authentication", "dhcp", "server_role", "src_intf", "vrf"}),
}


def _pointer(*parts: str) -> str:
    """An RFC 6901 JSON pointer (a key of config_db holds `/`: `Ethernet0|10.0.0.0/31`)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def sonic_db(text: str, where: str) -> dict[str, dict[str, dict[str, str]]]:
    """config_db as table -> key -> field -> value, every level its type checked."""
    if _head(text).startswith(("- header:", "- set:", "---", "!", "hostname ")):
        raise RunningError(f"{where}: not JSON: an NVUE or EOS configuration, not SONiC's config_db")
    doc = load(text, where, RunningError)
    if not isinstance(doc, dict):
        raise RunningError(f"{where}: not SONiC's config_db (an object of tables at the top)")
    for table, keys in doc.items():
        if not isinstance(keys, dict):
            raise RunningError(f"{where}: at [{json.dumps(table[:40])}]: not a table (an object of keys)")
        for key, fields in keys.items():
            if not isinstance(fields, dict):
                raise RunningError(f"{where}: at [{json.dumps(table[:40])}][{json.dumps(key[:40])}]: "
                                   "not an entry (an object of fields)")
    return doc


def _text(v: Any) -> str:
    return json.dumps(v) if isinstance(v, (list, dict)) else str(v)


def sonic(rendered: str, running: str, where: str) -> Result:
    """SONiC as config_db: an entry on one side only is one finding, a field that differs one; the
    remediation a JSON Patch, as `config apply-patch` takes it."""
    run = sonic_db(running, where)  # load() refuses JSON nested past MAX_DEPTH
    plan = sonic_db(rendered, "the rendered config")
    result = Result()
    ops: list[dict[str, Any]] = []
    for table in sorted(plan.keys() | run.keys()):
        ours, theirs = plan.get(table), run.get(table, {})
        if ours is None:
            if table in SONIC_TABLES:
                continue
            for key in sorted(theirs):
                result.diffs.append(Diff("config-extra", table, "nothing", _entry(key, theirs[key])))
            ops.append({"op": "remove", "path": _pointer(table)})
            continue
        if table not in run:
            for key in sorted(ours):
                result.diffs.append(Diff("config-missing", table, _entry(key, ours[key]), "nothing"))
            ops.append({"op": "add", "path": _pointer(table), "value": ours})
            continue
        _sonic_table(table, ours, theirs, result, ops)
    result.remedy = json.dumps(ops, indent=2, sort_keys=True).splitlines() if ops else []  # escapes every control
    return result


def _same_db(plan: Any, run: Any) -> bool:
    """A config_db value: a secret's reference (the baseline's TACACS+ key, SNMP passphrases, the
    BGP password) matches any value the switch holds, which is never shown."""
    if isinstance(plan, str) and "{{" in plan:
        return _same(plan, run)
    return _text(plan) == _text(run)


def _entry(key: str, fields: dict[str, Any]) -> str:
    return f"{key} ({_words(len(fields), 'field')})" if fields else key


def _sonic_table(table: str, ours: dict[str, Any], theirs: dict[str, Any], result: Result,
                 ops: list[dict[str, Any]]) -> None:
    for key in sorted(ours.keys() | theirs.keys()):
        a, b = ours.get(key), theirs.get(key)
        if b is None:
            result.diffs.append(Diff("config-missing", table, _entry(key, a or {}), "nothing"))
            ops.append({"op": "add", "path": _pointer(table, key), "value": a})
            continue
        if a is None:
            if table in SONIC_TABLES:  # SONiC's own rows beside the plan's (FEATURE's other features)
                continue
            result.diffs.append(Diff("config-extra", table, "nothing", _entry(key, b)))
            ops.append({"op": "remove", "path": _pointer(table, key)})
            continue
        box = SONIC_FIELDS.get((table, key), frozenset())
        if table in SONIC_TABLES:  # and their fields (FEATURE|sflow's auto_restart, the banner's logout)
            box = box | (b.keys() - a.keys())
        for f in sorted(a.keys() | b.keys()):
            here = f"{table}|{key}"
            if f not in b:
                result.diffs.append(Diff("config-missing", here, f"{f}: {_text(a[f])}", "nothing"))
                ops.append({"op": "add", "path": _pointer(table, key, f), "value": a[f]})
            elif f not in a:
                if f not in box:
                    result.diffs.append(Diff("config-extra", here, "nothing", f"{f}: {_text(b[f])}"))
                    ops.append({"op": "remove", "path": _pointer(table, key, f)})
            elif not _same_db(a[f], b[f]):
                result.diffs.append(Diff("config-different", here, f"{f}: {_text(a[f])}", f"{f}: {_text(b[f])}"))
                ops.append({"op": "replace", "path": _pointer(table, key, f), "value": a[f]})
