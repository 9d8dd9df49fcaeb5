"""fabgen's Python API: what the command line runs, for programs, notebooks and CI scripts.

    import fabgen
    result = fabgen.validate("cluster.yaml")          # or a mapping: fabgen.validate({...})
    for w in result.warnings: print(w.fabric, w.path, w.line, w.message)
    rendered = fabgen.render("cluster.yaml", "out/")   # the files written, with their digests

Both raise `fabgen.InventoryError` for bad input: its `problems` are every located problem
(file, line, column, inventory key, message), as the command line prints them. `render` raises
`fabgen.OutputError` where OUT cannot be written safely (docs/reference/api.md). An inventory
given as a mapping is read as if it were a file named `<mapping>` in the working directory
(side files such as a `guid_map` are found from there); any Mapping and Sequence will do (an
OrderedDict, a tuple), and a value that is no data (a set, bytes, an object) is an InventoryError.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Union

import yaml

from fabgen.errors import LOCATED, InventoryError, OutputError, Problem
from fabgen.inventory.loader import MAX_DEPTH, Loaded, PathT, format_path, load, load_text

Source = Union[str, Path, Mapping[str, Any]]
__all__ = ["validate", "render", "Validation", "Rendered", "FabricSize", "Warning", "InventoryError", "OutputError"]



@dataclass(frozen=True)
class Warning:  # noqa: A001 (a field of results, never raised)
    """One warning of one fabric; `path`, `line` and `column` locate it in the inventory where it
    concerns a key (empty and 0 where it concerns the fabric as built)."""

    fabric: str
    message: str
    path: str = ""
    line: int = 0
    column: int = 0

    @classmethod
    def parse(cls, fabric: str, text: str) -> Warning:
        m = LOCATED.match(text)
        if not m:
            return cls(fabric, text)
        return cls(fabric, m["msg"], m["path"], int(m["line"]), int(m["col"]))

    @property
    def text(self) -> str:
        """As the command line prints it."""
        return f"{self.path} (line {self.line}, column {self.column}): {self.message}" if self.path else self.message


@dataclass(frozen=True)
class FabricSize:
    """One inventory fabric as validated: its planes summed (the nodes are the same on each)."""

    name: str
    role: str
    kind: str
    topology: str
    tiers: int
    planes: int
    nodes: int
    endpoints: int
    speed_gbps: int
    switches: dict[str, int]  # leaf, spine, core (role oob: access)
    planned_nodes: int  # the plan's nodes (the nodes present when nothing more is planned)
    planned_switches: dict[str, int] = field(default_factory=dict)
    switch_management_ports: int = 0  # role oob: the managed switches' management ports


@dataclass(frozen=True)
class Validation:
    inventory: str
    fabrics: list[FabricSize]
    warnings: list[Warning]

    def as_dict(self) -> dict[str, Any]:
        return {"valid": True, "inventory": self.inventory, "fabrics": [asdict(f) for f in self.fabrics],
                "warnings": [asdict(w) for w in self.warnings]}

    def size_lines(self) -> list[str]:
        """One line per fabric, as `fabgen validate` prints them."""
        out = []
        for f in self.fabrics:
            if f.role == "oob":
                out.append(f"{f.name} (oob): {f.switches['access']} access switches at {f.speed_gbps}G for "
                           f"{f.endpoints} node ports and {f.switch_management_ports} switch management ports")
                continue
            role = f" ({f.role})" if f.role != "compute" else ""
            each = f" ({f.planes} planes, each {f.endpoints // f.planes} at {f.speed_gbps}G)" if f.planes > 1 else ""
            s = f.switches
            line = (f"{f.name}{role}: {f.topology}, {f.tiers} tier(s), {f.nodes} nodes, {f.endpoints} endpoints at "
                    f"{f.speed_gbps}G{each}: {s['leaf']} leaf, {s['spine']} spine, {s['core']} core switches")
            if f.planned_switches:
                p = f.planned_switches
                line += (f" (planned for {f.planned_nodes} nodes: {p['leaf']} leaf, {p['spine']} spine, {p['core']} "
                         "core switches)")
            out.append(line)
        return out


@dataclass(frozen=True)
class Rendered(Validation):
    out: Path = Path()
    files: dict[str, tuple[str, int]] = field(default_factory=dict)  # path in OUT -> (sha256, bytes)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per pipeline stage
    # the render's own objects, freed with this result: the command line leaves without freeing
    # them (a second at 64k GPUs), a program frees them when it drops the result
    result: Any = field(default=None, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "out": str(self.out), "files": {k: list(v) for k, v in self.files.items()}}


MAPPING = "<mapping>"  # the file name of an inventory given as a mapping
# Python writes no int of more than 4,300 digits as text (CVE-2020-10735), so YAML cannot hold
# one; no inventory number comes near a thousand bits
MAX_INT_BITS = 1024


def load_source(inventory: Source) -> Loaded:
    """A path, or a mapping read as YAML text would be (positions refer to its YAML dump)."""
    if isinstance(inventory, Mapping):
        return _load_mapping(inventory)
    return load(inventory)


def _load_mapping(inventory: Mapping[str, Any]) -> Loaded:
    """The mapping as plain data dumped to YAML and loaded back, so it is checked as a file is.
    A value that is not data is written as null and reported where the dump has it."""
    bad: list[tuple[PathT, str]] = []
    data = _plain(inventory, (), bad, set())
    text = yaml.safe_dump(data, sort_keys=False)
    if not bad:
        return load_text(text, MAPPING)
    try:
        loaded = load_text(text, MAPPING)
    except InventoryError as exc:
        raise InventoryError(exc.problems + [Problem(1, 1, format_path(p), m, MAPPING) for p, m in bad]) from None
    raise InventoryError([Problem(*loaded.where(p), format_path(p), m, MAPPING) for p, m in bad])


def _plain(value: Any, path: PathT, bad: list[tuple[PathT, str]], seen: set[int]) -> Any:
    """`value` as the dict, list, str, int, float, bool and None that YAML writes: a Mapping or
    Sequence of any class (an OrderedDict, a tuple) is as good as a dict or a list, a str or int
    subclass (an enum member) as its value; anything else (a set, bytes, an object, a container
    holding itself) is noted in `bad` with its path and replaced by None."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and \
            operator.index(value).bit_length() > MAX_INT_BITS:
        bad.append((path, f"a number of {operator.index(value).bit_length()} bits: no inventory value is that long"))
        return None
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, numbers.Integral):
        return operator.index(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, (Mapping, Sequence)) and not isinstance(value, (bytes, bytearray, memoryview)):
        if id(value) in seen or len(path) > MAX_DEPTH:
            bad.append((path, "the value holds itself: give plain data" if id(value) in seen else
                        f"nesting deeper than {MAX_DEPTH} levels: an inventory is a few levels deep"))
            return None
        seen.add(id(value))
        try:
            if isinstance(value, Mapping):
                return _plain_mapping(value, path, bad, seen)
            return [_plain(v, (*path, i), bad, seen) for i, v in enumerate(value)]
        finally:
            seen.discard(id(value))
    bad.append((path, f"{_what(value)} is not inventory data: give a mapping, a list, text, a number, true or "
                      "false, or None"))
    return None


def _plain_mapping(value: Mapping[Any, Any], path: PathT, bad: list[tuple[PathT, str]], seen: set[int]) -> dict:
    """A mapping's keys as text or whole numbers (as a YAML file's keys are), its values plain."""
    out: dict[str | int, Any] = {}
    for key, v in value.items():
        plain_key = _plain_key(key)
        if plain_key is None:
            bad.append((path, f"the key {repr(key)[:60]} ({_what(key)}): keys are text"))
            continue
        out[plain_key] = _plain(v, (*path, plain_key), bad, seen)
    return out


def _plain_key(key: Any) -> str | int | None:
    """A key as a YAML file's keys are read (text, or a whole number), None for any other."""
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, numbers.Integral) and not isinstance(key, bool) and \
            operator.index(key).bit_length() <= MAX_INT_BITS:
        return operator.index(key)
    return None


def _what(value: Any) -> str:
    """A value's kind in a message: 'a set', 'bytes', 'a datetime'."""
    name = type(value).__name__
    return name if name == "bytes" else ("an " if name[:1].lower() in "aeiou" else "a ") + name


def validate(inventory: Source) -> Validation:
    """Validate, build, check and allocate (no files): every warning a render would print."""
    from fabgen.inventory.validate import validate as run_validate
    from fabgen.pipeline import build

    loaded = load_source(inventory)
    v = run_validate(loaded)
    _, contexts = build(v)
    return Validation(loaded.file, _sizes(v, contexts), _warnings(contexts))


def render(inventory: Source, out: str | Path, force: bool = False,
           progress: Callable[[str], None] | None = None) -> Rendered:
    """Render every file into OUT (replaced atomically; `force` as `fabgen render --force`);
    `progress(stage)` is called as each stage starts."""
    from fabgen.pipeline import render_to

    result = render_to(load_source(inventory), out, force, progress)
    loaded = result.validated.loaded
    return Rendered(loaded.file, _sizes(result.validated, result.contexts), _warnings(result.contexts), Path(out),
                    {k: tuple(v) for k, v in result.files.items()}, dict(result.timings), result)


def _warnings(contexts: dict[str, Any]) -> list[Warning]:
    """Each warning once: the planes of a fabric warn alike."""
    seen = dict.fromkeys((ctx.fabric.inventory_name, w) for ctx in contexts.values() for w in ctx.summary.warnings)
    return [Warning.parse(fabric, text) for fabric, text in seen]


def _sizes(v: Any, contexts: dict[str, Any]) -> list[FabricSize]:
    from fabgen.topology.build import plane_names

    out = []
    for spec in v.inventory.fabrics:
        p, n = v.plans[spec.name], spec.planes
        if spec.role == "oob":
            ports = sum(sum(nic.role == "oob" for nic in model.nics)  # a GB300 tray's three, a server's one
                        for _, _, model in (*v.members.get(spec.name, []), *v.storage.get(spec.name, [])))
            out.append(FabricSize(spec.name, "oob", spec.kind, "access", 1, 1, p.present_nodes,
                                  ports, p.speed, {"access": p.present_units}, p.nodes,
                                  switch_management_ports=len(v.managed[spec.name].switches)))
            continue
        built = [contexts[name].summary for name in plane_names(spec)]
        count = {r: sum(s.switches[r] for s in built) for r in ("leaf", "spine", "core")}
        planned = {"leaf": n * p.leaves, "spine": n * p.spines, "core": n * p.cores} if p.planned else {}
        # the storage servers count too, as report.md counts them
        out.append(FabricSize(spec.name, spec.role, spec.kind, p.topology, p.tiers, n,
                              p.present_nodes + len(v.storage.get(spec.name, ())),
                              n * p.present_nodes * p.rails + p.storage, p.speed, count, p.nodes, planned))
    return out
