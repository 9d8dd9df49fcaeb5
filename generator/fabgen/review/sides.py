"""The two sides of `fabgen diff` between two inventories, rendered only as far as the review needs.

A review shows what differs and folds devices that received the same change into one diff
(diff.py). Rendering both inventories in full to find that out was most of a 32k-GPU review:
two renders of 9,000 files, most of them switch configs that a fabric-wide change alters
alike. So both sides are prepared (everything up to the structured configs), and for the
switch-config targets, whose structured config holds one item per switch and the target's
shared data beside them, the structured configs are compared before anything is rendered:

* a switch whose item and whose target's shared data are equal on both sides has equal
  files: it is not rendered (the review shows only what differs);
* switches whose configs changed the same way are one group: the same changed records (the
  dict or list holding each changed value, so what a config writes beside it on the line
  counts) with the switch's own name and every address abstracted, and the same shape of
  config (its JSON without digits: a shared value is written once per use, and the lines
  around a change are part of the diff). Only the group's first switch is rendered, on both
  sides; the others `StandIn` for it, and the review names them all beside the first one's
  real diff, as it does when it folds rendered files;
* switches on one side only are rendered (new or deleted files).

Every other target renders in full, unless its structured config is the same on both sides
(then its files are too, and neither side renders it); of the hosts target, only the nodes
whose netplan differs (or that one side only has); of ansible, the structured configs of the
switches rendered. manifest.json is left out: it hashes every file, and the review never
shows it. The old side is prepared and rendered in a forked child on the other core and
answers the parent's requests over a pipe; without fork both sides run here in turn.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import hashlib
import json
import marshal
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import orjson

from fabgen import parallel
from fabgen.rendered.paths import ADDRESS, DEVICE_FILE
from fabgen.spec.platforms import PLATFORMS
from fabgen.targets.base import made

Progress = Callable[[str], None]
GROUPED = tuple(name for name, p in PLATFORMS.items() if p.one_item_per_switch)  # targets: one item per switch
Key = tuple[str, str]  # (target, fabric)
# (target, place) -> a digest of its structured config; ("hosts/nodes", place) -> a digest per node
Others = dict[tuple[str, int], bytes | dict[str, bytes]]


class StandIn(bytes):
    """A file that was not rendered because the file at `of` (same kind, first switch of its group)
    shows its change. Its bytes only make the two sides unequal."""

    of: str

    def __new__(cls, side: str, of: str) -> StandIn:
        obj = super().__new__(cls, f"<{side} side, the same change as {of}>".encode())
        obj.of = of
        return obj


def source_of(path: str, a: bytes | None, b: bytes | None) -> str:
    """The file whose change `path` shows: the first switch of its group for a stand-in, else itself."""
    stand_in = a if isinstance(a, StandIn) else b if isinstance(b, StandIn) else None
    return stand_in.of if stand_in is not None else path


def _places(structured: list[tuple[str, Any]]) -> Iterator[tuple[str, int, Any]]:
    """(target, its n-th structured config, config): a target's place, the same on both sides."""
    seen: dict[str, int] = {}
    for tname, data in structured:
        n = seen[tname] = seen.get(tname, -1) + 1
        yield tname, n, data


def _sonic(item: Any) -> bool:
    """A SONiC item: (name, config_db, the neutral config the config_db was made from)."""
    return isinstance(item, tuple) and len(item) == 3 and isinstance(item[2], dict)


def _name(item: Any) -> str:
    return item["name"] if isinstance(item, dict) else item[0]


def _shared_ids(tname: str, data: dict[str, Any]) -> dict[int, tuple]:
    """Objects the items share with the target's shared data (SONiC's tables, targets/sonic.py
    `shared_tables_ids`), each with a name that is the same on both sides: digested once, with
    the shared data, and by that name inside an item."""
    if tname != "sonic":
        return {}
    shared = data["shared"]
    out: dict[int, tuple] = {id(t): ("tables", name) for name, t in shared["tables"].items()}
    out.update((id(t), ("port_tables", key, name)) for key, tables in shared["port_tables"].items()
               for name, t in tables.items())
    return out


def _digest(obj: Any) -> bytes:
    """What a structured config is, in 16 bytes: equal configs digest equal on both sides.

    Plain data (the CSV rows of the cabling, the address plan, NetBox) by marshal's version 2,
    which writes values only (no references, so not who else holds an object): at 131,072 GPUs
    of four planes pickle took 17 of the review's 66 CPU-seconds, its memo of every tuple most
    of it (2 million NetBox rows: pickle 1.9 s, marshal 0.4 s); anything marshal cannot write
    (the YAML writer's shapes) by pickle. The first byte says which, so they never collide."""
    try:
        blob, kind = marshal.dumps(obj, 2), b"m"
    except ValueError:  # an object marshal does not write
        blob, kind = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), b"p"
    h = hashlib.blake2b(kind, digest_size=16)
    h.update(blob)
    return h.digest()


def _part_digest(part: Any, ids: dict[int, tuple]) -> bytes:
    """A shared table stands for itself by name (its content is in the shared data's digest)."""
    token = ids.get(id(part))
    return _digest(("shared", token) if token is not None else part)


def _file_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class LocalSide:
    """One inventory, prepared and rendered in this process."""

    def __init__(self, path: Path, progress: Progress):
        self.path, self.progress = path, progress
        self.prepared: Any = None
        self.blobs: dict[Key, tuple[str, dict[str, Any]]] = {}
        self.rendered: dict[str, bytes] = {}

    def prepare(self) -> None:
        from fabgen.pipeline import prepare

        self.prepared = prepare(self.path, self.progress, checked=False)  # pipeline.prepare says why
        # the review compares every switch's structured config: made once here, kept for the review
        self.prepared.structured[:] = [(t, made(d)) for t, d in self.prepared.structured]
        self.blobs = {(t, d["fabric"]): (t, d) for t, d in self.prepared.structured if t in GROUPED}

    def others(self) -> Others:
        """A digest of every other target's structured config, by target and place: a target whose
        config is the same on both sides writes the same files, so neither side renders it."""
        out: Others = {}
        for tname, n, data in _places(self.prepared.structured):
            if tname == "ansible":  # every switch's config, rendered with the switches; the rest here
                out[("ansible", -1)] = _digest({k: v for k, v in data.items() if k != "configs"})
            elif tname == "hosts":  # a node's netplan follows from its item (fabrics named) and the cluster
                out[(tname, n)] = _digest({k: v for k, v in data.items() if k != "nodes"})
                nodes = {it[0]: _digest((data["cluster"], it)) for it in data["nodes"]}
                out[("hosts/nodes", n)] = nodes
            elif tname not in GROUPED:
                out[(tname, n)] = _digest(data)
        return out

    def table(self) -> tuple[dict[Key, tuple[bytes, dict[str, dict[tuple, bytes]]]], Others]:
        """Per switch-config blob: a digest of its shared data, and of each part of each switch's
        item (`_parts`), so only the parts that changed travel between the sides; and `others`."""
        out = {}
        for key, (tname, data) in self.blobs.items():
            ids = _shared_ids(tname, data)
            shared = {k: v for k, v in data.items() if k != "switches"}
            out[key] = (_digest(shared), {_name(it): {p: _part_digest(v, ids) for p, v in _parts(it)}
                                          for it in data["switches"]})
        return out, self.others()

    def changes(self, request: dict, theirs: dict[Key, tuple[Any, dict]], half: int) -> dict[Key, dict]:
        """How each changed switch changed (`_change`), from this side's parts and the other side's
        (`theirs`, the new side), with the shape (`_profile`) of every other switch from `half`:
        the new side shapes the rest meanwhile, so both cores share the work."""
        mine = self.objects(request)
        return {key: _changes(key, mine[key], theirs[key], self.blobs[key][1], half) for key in request}

    def shapes(self, request: dict, half: int) -> dict[Key, dict[str, bytes]]:
        """The shapes of every other changed switch from `half` (the other side's share)."""
        out = {}
        for key, (_, names) in request.items():
            tname, data = self.blobs[key]
            ids = _shared_ids(tname, data)
            share = set(sorted(names)[half::2])
            out[key] = {_name(it): _profile(it, ids) for it in data["switches"] if _name(it) in share}
        return out

    def objects(self, request: dict[Key, tuple[bool, dict[str, list[tuple]]]]) -> dict[Key, tuple[Any, dict]]:
        """The shared data (when asked) and the named parts of the named items of each blob."""
        out = {}
        for key, (want_shared, wanted) in request.items():
            data = self.blobs[key][1]
            items = {}
            for it in data["switches"]:
                paths = wanted.get(_name(it))
                if paths is not None:
                    parts = dict(_parts(it))
                    items[_name(it)] = {p: parts.get(p, _MISSING_PART) for p in paths}
            out[key] = ({k: v for k, v in data.items() if k != "switches"} if want_shared else None, items)
        return out

    def render(self, selection: dict[Key, list[str]] | None, skip: set[tuple[str, int]],
               nodes: dict[tuple[str, int], set[str]] | None = None) -> None:
        """With no selection, every target not in `skip` but the switch configs and ansible (which
        wait for the groups), of the hosts target only the `nodes` named; with one, the selected
        switches of each blob, and ansible with the structured configs of the switches rendered.
        The files add up in `rendered`."""
        from fabgen.pipeline import render_prepared

        structured = []
        grouped = {_name(it) for _, data in self.blobs.values() for it in data["switches"]}
        for tname, n, data in _places(self.prepared.structured):
            if tname in GROUPED or tname == "ansible":
                if selection is None:
                    continue
                if tname in GROUPED:
                    keep = set(selection.get((tname, data["fabric"]), ()))
                    data = {**data, "switches": [it for it in data["switches"] if _name(it) in keep]}
                else:  # a switch's structured config only where its configs render
                    selected = {n for names in selection.values() for n in names}
                    data = {**data, "configs": {n: c for n, c in data["configs"].items()
                                                if n not in grouped or n in selected}}
                    if ("ansible", -1) in skip:  # host_vars unchanged: only those beside the configs
                        # (the target's shard picks configs by host; its inventory and group_vars are small)
                        data = {**data, "hosts": {n: hv for n, hv in data["hosts"].items() if n in data["configs"]}}
            else:
                if selection is not None:
                    continue
                if tname == "hosts":
                    differ = (nodes or {}).get(("hosts/nodes", n))
                    if differ is not None:  # only the nodes whose netplan differs or is on one side
                        data = {**data, "nodes": [it for it in data["nodes"] if it[0] in differ]}
                    if (tname, n) in skip:
                        data = {**data, "groups": []}
                elif (tname, n) in skip:
                    continue
            structured.append((tname, data))
        self.rendered.update(render_prepared(self.prepared, structured, self.progress))

    def digests(self) -> dict[str, bytes]:
        return {p: _file_digest(b) for p, b in self.rendered.items()}

    def files(self, wanted: list[str]) -> dict[str, bytes]:
        return {p: self.rendered[p] for p in wanted}


class _Remote:
    """The old side in a forked child: `ask` sends a request, `answer` waits for its result."""

    def __init__(self, path: Path):
        self.to_child_r, self.to_child_w = os.pipe()
        self.to_parent_r, self.to_parent_w = os.pipe()
        # room for the groups of a large fabric, so the child goes on rendering instead of
        # waiting for the parent to read them
        with contextlib.suppress(OSError, AttributeError):
            fcntl.fcntl(self.to_parent_w, fcntl.F_SETPIPE_SZ, 1 << 20)
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.to_child_w)
            os.close(self.to_parent_r)
            os._exit(_serve(LocalSide(path, lambda stage: None), self.to_child_r, self.to_parent_w))
        os.close(self.to_child_r)
        os.close(self.to_parent_w)

    def ask(self, method: str, *args: Any) -> None:
        parallel.send(self.to_child_w, (method, args))

    def answer(self) -> Any:
        status, value = parallel.receive(self.to_parent_r)
        if status != "ok":
            raise _ChildFailed(value)
        return value

    def close(self) -> None:
        for fd in (self.to_child_w, self.to_parent_r):
            os.close(fd)
        if not os.waitpid(self.pid, os.WNOHANG)[0]:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)


class _Here:
    """The old side in this process, behind the same ask/answer calls as the child."""

    def __init__(self, side: LocalSide):
        self.side = side
        self.results: collections.deque[Any] = collections.deque()

    def ask(self, method: str, *args: Any) -> None:
        self.results.append(getattr(self.side, method)(*args))

    def answer(self) -> Any:
        return self.results.popleft()

    def close(self) -> None:
        pass


class _ChildFailed(Exception):
    """The old side's child failed; that side is prepared here again, to fail the usual way."""


def _serve(side: LocalSide, inbox: int, outbox: int) -> int:
    """The child: answer the parent's requests until it closes the pipe."""
    try:
        while True:
            try:
                method, args = parallel.receive(inbox)
            except RuntimeError:  # the parent closed the pipe: done
                return 0
            try:
                result = ("ok", getattr(side, method)(*args))
            except BaseException as exc:  # noqa: BLE001 - the parent reports it, by preparing this side itself
                parallel.send(outbox, ("error", f"{type(exc).__name__}: {exc}"))
                return 0
            parallel.send(outbox, result)
    except BaseException:  # noqa: BLE001 - a closed pipe: the parent has gone
        return 1


def load_inventories(old: Path, new: Path, progress: Progress) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Both sides' files as far as the review needs them (module docstring), stand-ins included.
    The cycle collector pauses meanwhile, as for a render (pipeline.py says why); the forked
    child inherits the pause."""
    from fabgen.pipeline import no_cycle_collection

    with no_cycle_collection():
        return _load(old, new, progress)


def _load(old: Path, new: Path, progress: Progress) -> tuple[dict[str, bytes], dict[str, bytes]]:
    here = LocalSide(new, lambda stage: progress(f"{new.name}: {stage} (and {old.name} beside it)"))
    if (os.cpu_count() or 1) >= 2 and hasattr(os, "fork"):
        with parallel.single_process():
            remote = _Remote(old)
            try:
                return _sides(remote, here, progress, old.name)
            except _ChildFailed:
                pass
            finally:
                remote.close()
    there = LocalSide(old, lambda stage: progress(f"{old.name}: {stage}"))
    return _sides(_Here(there), LocalSide(new, lambda stage: progress(f"{new.name}: {stage}")), progress, old.name)


def _sides(old: Any, new: LocalSide, progress: Progress, old_name: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
    old.ask("prepare")
    new.prepare()
    old.answer()
    old.ask("table")
    (t_new, x_new), (t_old, x_old) = new.table(), old.answer()
    skip = {k for k in set(x_old) & set(x_new) if x_old[k] == x_new[k] and k[0] != "hosts/nodes"}
    nodes_old: dict[tuple[str, int], set[str]] = {}
    nodes_new: dict[tuple[str, int], set[str]] = {}
    for k in (k for k in set(x_old) | set(x_new) if k[0] == "hosts/nodes"):
        a, b = x_old.get(k, {}), cast("dict[str, bytes]", x_new.get(k, {}))  # a digest per node
        differ = {n for n in set(a) | set(b) if a.get(n) != b.get(n)}
        nodes_old[k], nodes_new[k] = differ & set(a), differ & set(b)
    request = _request(t_old, t_new)
    old.ask("changes", request, new.objects(request), 0)
    old.ask("render", None, skip, nodes_old)
    progress(f"{old_name}: grouping the switches that change alike")
    shapes = new.shapes(request, 1)  # the other half is the old side's, meanwhile
    new.render(None, skip, nodes_new)  # the targets grouping does not decide
    changes = old.answer()
    old.answer()
    groups = {key: _group(changes[key], shapes[key]) for key in request}
    sel_old, sel_new = _selection(t_old, t_new, groups)
    old.ask("render", sel_old, skip)
    new.render(sel_new, skip)
    old.answer()
    old.ask("digests")
    digests = old.answer()
    mine = {p: _file_digest(b) for p, b in new.rendered.items()}
    old.ask("files", [p for p, d in digests.items() if mine.get(p) != d])
    theirs = old.answer()
    old_files = {p: theirs[p] if p in theirs else new.rendered[p] for p in digests}
    new_files = dict(new.rendered)
    _stand_ins(groups, old_files, new_files)
    return old_files, new_files


def _request(t_old: dict, t_new: dict) -> dict[Key, tuple[bool, dict[str, list[tuple]]]]:
    """Per blob on both sides: whether its shared data changed, and each changed switch with the
    paths of its changed parts (none when only the shared data changed)."""
    request: dict[Key, tuple[bool, dict[str, list[tuple]]]] = {}
    for key in sorted(set(t_old) & set(t_new)):
        (s_old, i_old), (s_new, i_new) = t_old[key], t_new[key]
        changed = {}
        for n in sorted(set(i_old) & set(i_new)):
            a, b = i_old[n], i_new[n]
            paths = [p for p in sorted(set(a) | set(b), key=repr) if a.get(p) != b.get(p)]
            if paths or s_old != s_new:
                changed[n] = paths
        if changed:
            request[key] = (s_old != s_new, changed)
    return request


_MISSING_PART = "<no such part>"


def _parts(item: Any) -> list[tuple[tuple, Any]]:
    """An item cut two levels deep (a tuple's elements or a dict's values, and the values of those
    that are dicts), each part with its path: digested one by one, so a fabric-wide change to one
    setting moves one small part per switch between the sides, not the whole config. A SONiC
    item's third element (the neutral config its config_db was made from) is left out: the
    render writes the config_db only."""
    if _sonic(item):
        item = item[:2]
    top = enumerate(item) if isinstance(item, (list, tuple)) else item.items()
    out: list[tuple[tuple, Any]] = []
    for k, v in top:
        if isinstance(v, dict) and v:
            out += [((k, k2), v2) for k2, v2 in v.items()]
        else:
            out.append(((k,), v))
    return out


def _selection(t_old: dict, t_new: dict, groups: dict[Key, list[list[str]]]) -> tuple[dict, dict]:
    """What each side renders of each switch-config blob: the first switch of every group, and the
    switches only that side has. A blob on one side only renders in full there."""
    sel_old: dict[Key, list[str]] = {}
    sel_new: dict[Key, list[str]] = {}
    for key in set(t_old) | set(t_new):
        if key not in t_old or key not in t_new:
            (sel_new if key in t_new else sel_old)[key] = sorted((t_new if key in t_new else t_old)[key][1])
            continue
        firsts = [g[0] for g in groups.get(key, ())]
        names_old, names_new = set(t_old[key][1]), set(t_new[key][1])
        sel_old[key] = sorted(set(firsts) | (names_old - names_new))
        sel_new[key] = sorted(set(firsts) | (names_new - names_old))
    return sel_old, sel_new


def _stand_ins(groups: dict[Key, list[list[str]]], old: dict[str, bytes], new: dict[str, bytes]) -> None:
    """Every other switch of a group gets the first one's changed files, as stand-ins."""
    of_device: dict[tuple[str, str], list[str]] = {}
    for path in set(old) | set(new):
        m = DEVICE_FILE[0].match(path)
        if m and old.get(path) != new.get(path):
            of_device.setdefault((path.split("/", 1)[0], m.group("d")), []).append(path)
    def stand_in(path: str, mine: str) -> None:
        if path in old:
            old[mine] = StandIn("old", path)
        if path in new:
            new[mine] = StandIn("new", path)

    for (_, fabric), members in groups.items():
        for first, *rest in members:
            prefix = f"{fabric}/switches/{first}"
            config = f"ansible/configs/{first}.json"
            changed_config = old.get(config) != new.get(config)
            for name in rest:
                for path in of_device.get((fabric, first), ()):
                    stand_in(path, f"{fabric}/switches/{name}{path[len(prefix):]}")
                if changed_config:
                    stand_in(config, f"ansible/configs/{name}.json")


def _changes(key: Key, old: tuple[Any, dict[str, Any]], new: tuple[Any, dict[str, Any]], data: dict[str, Any],
             half: int) -> dict[str, Any]:
    """Per changed switch of one blob: its change (the shared data's and its own changed records,
    name and addresses abstracted) and, for every other switch from `half`, its shape."""
    shared_delta = repr(_delta(old[0], new[0], {})) if old[0] is not None else ""
    ids = _shared_ids(key[0], data)
    items = {_name(it): it for it in data["switches"]}
    share = set(sorted(new[1])[half::2])
    out = {}
    for name in sorted(new[1]):
        a, b = old[1][name], new[1][name]
        records = sorted({r for p in sorted(b, key=repr) for r in _records(a[p], b[p], ids, p)})
        change = ADDRESS.sub("<address>", repr(records).replace(name, "<device>"))
        out[name] = (shared_delta, change, _profile(items[name], ids) if name in share else None)
    return out


def _group(changes: dict[str, Any], shapes: dict[str, bytes]) -> list[list[str]]:
    """Switches with the same change and the same shape, each group sorted, first switch first."""
    by: dict[tuple, list[str]] = {}
    for name in sorted(changes):
        shared_delta, change, shape = changes[name]
        by.setdefault((shared_delta, change, shape if shape is not None else shapes[name]), []).append(name)
    return sorted(by.values())


_MISSING = object()


def _records(a: Any, b: Any, ids: dict[int, tuple], path: tuple) -> list[tuple[tuple, str, str]]:
    """Each changed leaf as the record it sits in (the dict or list holding it, before and after):
    what a config writes on the changed line besides the changed value (a neighbor's description
    beside its new address, say) is part of the change a reviewer reads."""
    out = {}
    for leaf, before, after in _delta(a, b, ids, path):
        rel = leaf[len(path):-1]
        if rel in out:
            continue
        x, y = _walk(a, rel), _walk(b, rel)
        if max(_size(x), _size(y)) > RECORD_LIMIT:  # a collection (a table of neighbors), not a record
            out[leaf[len(path):]] = (path + leaf[len(path):], repr(before), repr(after))
        else:
            out[rel] = (path + rel, repr(x), repr(y))
    return list(out.values())


RECORD_LIMIT = 16  # keys or items: more is a collection of records, whose changed entry stands alone


def _size(x: Any) -> int:
    return len(x) if isinstance(x, (dict, list, tuple)) else 0


def _walk(x: Any, rel: tuple) -> Any:
    for k in rel:
        try:
            x = x[k]
        except (KeyError, IndexError, TypeError):
            return "<none>"
    return "<none>" if x is _MISSING_PART else x


def _delta(a: Any, b: Any, ids: dict[int, tuple], path: tuple = ()) -> list:
    """(path, before, after) for every differing leaf; shared objects are not walked (the shared
    data's own difference covers them)."""
    if a is b or id(b) in ids or a == b:
        return []
    a = _MISSING if a is _MISSING_PART else a
    b = _MISSING if b is _MISSING_PART else b
    if isinstance(a, dict) and isinstance(b, dict):
        out: list = []
        for k in list(a) + [k for k in b if k not in a]:
            out += _delta(a.get(k, _MISSING), b.get(k, _MISSING), ids, (*path, k))
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += _delta(x, y, ids, (*path, i))
        return out
    return [(path, "<none>" if a is _MISSING else a, "<none>" if b is _MISSING else b)]


_DIGITS = b"0123456789"


def _profile(item: Any, ids: dict[int, tuple]) -> bytes:
    """The shape of a switch's config: its JSON with the digits left out (names,
    addresses, numbers), shared tables left out. Two switches with the same shape write a shared
    value in the same places (a profile applied to each host port, say), so they may share a
    representative; computed in C (orjson, bytes.translate), since every switch of a blob is shaped
    when the shared data changes (json's encoder took 2.9 of a 131k review's 30 s on each core;
    orjson a quarter of that). Where orjson refuses a value (an int beyond 64 bits), json writes
    it: that switch's shape differs from the others', so it is rendered on its own, never folded
    wrongly."""
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: v for k, v in x.items() if id(v) not in ids}
        return x
    if _sonic(item):
        item = item[2]  # the config_db follows from the neutral config
    top = [strip(x) for x in item] if isinstance(item, (list, tuple)) else strip(item)
    try:
        blob = orjson.dumps(top, default=str, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        blob = json.dumps(top, default=str).encode()
    text = blob.translate(None, _DIGITS)
    return hashlib.blake2b(text, digest_size=16).digest()
