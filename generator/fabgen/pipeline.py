"""The pipeline (docs/architecture.md), one direction, one stage per module, timed per stage.

load -> validate -> build -> check -> allocate -> structure -> render -> write.
`run` returns the rendered files; `render_to` also writes them. The timings are what
benchmarks/ reports.
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fabgen.addressing import allocate
from fabgen.check.cluster import check_cluster
from fabgen.check.fabric import TopologyError, check
from fabgen.errors import InventoryError
from fabgen.inventory.loader import Loaded, load
from fabgen.inventory.validate import Validated, validate
from fabgen.output import MANIFEST, manifest
from fabgen.parallel import Aside, render_all, render_written
from fabgen.spec.model import Fabric
from fabgen.targets import CLUSTER, Context, registry
from fabgen.topology.analysis import summarize
from fabgen.topology.build import build_planes, plane_names
from fabgen.topology.growth import growth_warnings
from fabgen.topology.oob import build_oob

STAGES = ("load", "validate", "build", "check", "allocate", "structure", "render", "write")


@dataclass
class Result:
    validated: Validated
    fabrics: dict[str, Fabric]
    contexts: dict[str, Context]
    files: dict[str, Any]  # path -> content (run), or (sha256, size) of each file written (render_to)
    timings: dict[str, float] = field(default_factory=dict)
    # the structured configs, kept so that they are freed with the Result (or never: the
    # command line leaves without freeing them, which took a second at 64k GPUs), not inside
    # the timed render
    prepared: Prepared | None = None


@contextmanager
def _timed(timings: dict[str, float], stage: str, progress: Callable[[str], None] | None) -> Iterator[None]:
    if progress:
        progress(stage)
    t0 = time.perf_counter()
    yield
    timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Pause Python's cycle collector for one render.

    A render allocates millions of long-lived objects (graph, structured configs, files) and
    almost no garbage cycles; the collector's full passes scan everything allocated so far,
    so they grow with the fabric and made the build stage superlinear (34 us per GPU at 64k
    GPUs against 12 us at 4k). Reference counting still frees everything as usual; the
    collector is back on, as it was, when the render ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build(validated: Validated, timings: dict[str, float] | None = None,
          progress: Callable[[str], None] | None = None,
          checked: bool = True, aside: list[Aside] | None = None) -> tuple[dict[str, Fabric], dict[str, Context]]:
    """build, check (unless `checked` is False), allocate: the topology and its identifiers for
    every fabric. With `aside` (a list), a large fabric's check runs in a forked process beside
    allocate and what follows (fabgen.parallel.Aside, appended to the list): the caller joins it
    before it writes or returns anything."""
    timings = {} if timings is None else timings
    inv = validated.inventory
    fabrics = _built(validated, timings, progress)
    first_plane = {spec.name: plane_names(spec)[0] for spec in inv.fabrics}  # an inventory fabric's warnings
    for name, notes in validated.warnings.items():
        fabrics[first_plane[name]].warnings.extend(notes)
    if checked:
        with _timed(timings, "check", progress):
            def check_all() -> None:
                for f in fabrics.values():
                    check(f)
            if aside is None:
                check_all()
            else:
                aside.append(Aside(check_all, _devices(fabrics)))
    contexts: dict[str, Context] = {}
    with _timed(timings, "allocate", progress):
        node_prefixes = {g.name: g.management for g in inv.node_groups if g.management}
        number = {spec.name: i + 1 for i, spec in enumerate(inv.fabrics)}  # GUIDs: the inventory's order
        allocations = {name: allocate(f, number[f.inventory_name], validated.guid_maps.get(f.inventory_name),
                                      node_prefixes) for name, f in fabrics.items()}
    for name, f in fabrics.items():
        contexts[name] = Context(inv.cluster, f, allocations[name], summarize(f),
                                 {g.name: g for g in inv.node_groups}, inv.kubernetes)
    for spec in inv.fabrics:
        if spec.planes > 1:
            names = plane_names(spec)
            contexts[names[0]] = replace(contexts[names[0]], planes=tuple(contexts[n] for n in names))
    with _timed(timings, "check", progress):  # one port, one cable, one address across every fabric
        if aside is None:
            check_cluster(validated, fabrics, contexts)
        else:  # joined first: its finding is the one a user saw when it ran here, before the others
            aside.insert(0, Aside(lambda: check_cluster(validated, fabrics, contexts), _devices(fabrics)))
    return fabrics, contexts


def _check_failure(aside: list[Aside]) -> BaseException | None:
    """What a check running aside found, if any: the work failed first, maybe because of it
    (two fabrics cabling one port can break a writer), and the finding is what the user must
    see, not the writer's error. Only a finding: a check that died or failed otherwise leaves
    the work's own error to be seen."""
    for a in aside:
        try:
            a.join()
        except (InventoryError, TopologyError) as exc:
            return exc
        except Exception:  # noqa: BLE001 - not a finding: the work's error stands
            continue
    return None


def _built(validated: Validated, timings: dict[str, float], progress: Callable[[str], None] | None
           ) -> dict[str, Fabric]:
    """The topologies; the growth checks validate left (warnings for unplanned fabrics) run
    beside them and are filed before anything reads the warnings."""
    fabrics: dict[str, Fabric] = {}
    growth = None
    if validated.pending:
        growth = Aside(lambda: growth_warnings(validated),
                       sum(p.leaves + p.spines + p.cores + p.nodes for p in validated.plans.values()))
    try:
        with _timed(timings, "build", progress):
            _topologies(validated, fabrics)
        if growth is not None:
            validated.settle(growth.join())
    finally:
        if growth is not None:
            growth.cancel()
    return fabrics


def _topologies(validated: Validated, fabrics: dict[str, Fabric]) -> None:
    """Every fabric's topology (each network plane its own), by name into `fabrics`."""
    for spec in validated.inventory.fabrics:
        model = validated.switch_models[spec.switch_model]
        if spec.role == "oob":
            fabrics[spec.name] = build_oob(spec, validated.plans[spec.name], model, validated.managed[spec.name])
            continue
        for f in build_planes(spec, validated.plans[spec.name], model,
                              validated.members[spec.name], validated.storage[spec.name]):
            fabrics[f.name] = f


def _inputs_outside(out: Path, inventory: Path, validated: Validated) -> None:
    """Refuse to render into the folder that holds the inventory or a file it names (a GUID map, an
    rdma_links file): OUT is replaced whole, and an input inside it is not fabgen's to replace,
    whatever a manifest says."""
    from fabgen.errors import OutputError

    base = inventory.parent
    inputs = [inventory] + [base / f.infiniband.guid_map for f in validated.inventory.fabrics
                            if f.infiniband and f.infiniband.guid_map]
    inputs += [base / g.rdma_links for g in validated.inventory.node_groups if g.rdma_links]
    root = out.absolute().resolve()
    for path in inputs:
        real = path.absolute().resolve()
        if real == root or root in real.parents:
            raise OutputError(f"{path} is inside {out}, which a render replaces whole: render into another directory")


def run(inventory: str | Path, progress: Callable[[str], None] | None = None) -> Result:
    """The whole pipeline but the final write: every file of the render, in memory."""
    with no_cycle_collection():
        return _run(inventory, progress)


@dataclass
class Prepared:
    """Everything before the render: the structured config of every target (but those made
    apart, when a render makes them in a process of its own)."""

    loaded: object
    validated: Validated
    fabrics: dict[str, Fabric]
    contexts: dict[str, Context]
    targets: dict
    structured: list[tuple[str, object]]
    timings: dict[str, float]
    aside: list[Aside] = field(default_factory=list)  # the check, when it runs beside the work
    apart: Aside | None = None  # the targets made apart: their files, or what writing them returned
    checking: bool = False  # `checked` runs: an error now is the checks' own

    def checked(self) -> None:
        """Wait for a check running aside and raise what it found (before anything leaves)."""
        self.checking = True
        for a in self.aside:
            a.join()

    def made_apart(self) -> list[tuple[str, Any]]:
        """Wait for the targets made apart: [(path, their files or what writing each returned)]."""
        return self.apart.join() if self.apart is not None else []

    def release(self) -> None:
        """Stop what still runs aside or apart (the work failed first)."""
        for a in [*self.aside, *([self.apart] if self.apart else [])]:
            a.cancel()

    def check_failure(self) -> BaseException | None:
        """What a check aside found (the work failed first): `_check_failure`."""
        return _check_failure(self.aside)


# make(targets, contexts): structure and render the targets made apart, in their own process
Apart = Callable[[dict[str, Any], dict[str, Context]], list[tuple[str, Any]]]


def prepare(inventory: str | Path, progress: Callable[[str], None] | None = None,
            checked: bool = True, beside: bool = False) -> Prepared:
    """load, validate, build, check, allocate, structure: what `fabgen diff` compares before it
    decides what to render. A review passes checked=False: the check proves the builder (every
    link once, balanced uplinks) and every render, the one that is deployed, runs it; at 32k
    GPUs it is half a second of a review's ten. `beside`: a large fabric's check runs in a
    forked process while the rest goes on; the caller must call `checked()` (or `release()`)."""
    loaded, validated, timings = _front(inventory, progress)
    return _back(loaded, validated, timings, progress, checked, beside)


def _front(inventory: str | Path | Loaded, progress: Callable[[str], None] | None) -> tuple[Any, Validated, dict[str, float]]:
    timings: dict[str, float] = {}
    with _timed(timings, "load", progress):
        loaded = inventory if isinstance(inventory, Loaded) else load(inventory)
    with _timed(timings, "validate", progress):
        validated = validate(loaded)  # its growth checks run beside the build
    return loaded, validated, timings


def _back(loaded: Any, validated: Validated, timings: dict[str, float], progress: Callable[[str], None] | None,
          checked: bool = True, beside: bool = False, apart: Apart | None = None) -> Prepared:
    """build, check, allocate, structure. With `apart`, the targets marked apart are structured
    and rendered by it in a forked process (fabgen.parallel.Aside) while the others are
    structured here."""
    aside: list[Aside] = []
    made: list[Aside] = []
    targets = registry()
    here = targets
    try:
        fabrics, contexts = build(validated, timings, progress, checked, aside if beside else None)
        if apart is not None:
            away = {n: t for n, t in targets.items() if t.apart}
            here = {n: t for n, t in targets.items() if not t.apart}
            made.append(Aside(lambda: apart(away, contexts), _devices(fabrics)))
        structured = _structure(here, contexts, timings, progress)
    except Exception as exc:
        found = None
        try:
            for a in made:  # not needed any more: the checks get the cores
                a.cancel()
            found = _check_failure(aside)
        finally:
            for a in aside + made:
                a.cancel()
        if found is not None:
            raise found from exc
        raise
    except BaseException:
        for a in aside + made:
            a.cancel()
        raise
    return Prepared(loaded, validated, fabrics, contexts, targets, structured, timings, aside,
                    made[0] if made else None)


def _structure(targets: dict, contexts: dict[str, Context], timings: dict[str, float] | None = None,
               progress: Callable[[str], None] | None = None) -> list[tuple[str, object]]:
    structured: list[tuple[str, object]] = []
    with _timed({} if timings is None else timings, "structure", progress):
        ctx_list = list(contexts.values())
        for t in targets.values():
            if t.scope == CLUSTER:
                structured.append((t.name, t.structure(ctx_list, [(n, d) for n, d in structured if n in t.reads])))
                continue
            structured += [(t.name, t.structure(ctx)) for ctx in ctx_list if t.applies(ctx)]
    return structured


def _make_apart(write: Callable[[str, bytes], Any] | None) -> Apart:
    """The work of the process that makes the targets apart: structure each, render it on that
    one process and write each file (`write`) or return it, one structured config at a time:
    only what a later target reads is kept (`Target.kept`), so the process never holds every
    fabric's cabling at once (at 131,072 GPUs of four planes it held 2.6 GB, NetBox's rows
    included, when NetBox was made here)."""
    def make(targets: dict[str, Any], contexts: dict[str, Context]) -> list[tuple[str, Any]]:
        read = {name for t in targets.values() for name in t.reads}
        ctx_list = list(contexts.values())
        kept: list[tuple[str, object]] = []
        out: list[tuple[str, Any]] = []
        for t in targets.values():
            if t.scope == CLUSTER:
                made: Iterable[object] = [t.structure(ctx_list, [(n, d) for n, d in kept if n in t.reads])]
            else:
                made = (t.structure(ctx) for ctx in ctx_list if t.applies(ctx))
            for data in made:
                out += [(path, content if write is None else write(path, content)) for path, content in t.render(data)]
                if t.name in read:
                    kept.append((t.name, data if t.kept is None else t.kept(data)))
                del data
        return out
    return make


def render_prepared(p: Prepared, structured: list[tuple[str, object]] | None = None,
                    progress: Callable[[str], None] | None = None) -> dict[str, bytes]:
    """The files of `structured` (default: all of `p`'s), on one or two cores, in path order."""
    with _timed(p.timings, "render", progress):
        return _merged(render_all(_jobs(p, structured), _devices(p.fabrics)))


def _jobs(p: Prepared, structured: list[tuple[str, object]] | None = None) -> list:
    """(render, structured config, shard) of every target's structured config."""
    return [(p.targets[t].render, data, p.targets[t].shard)
            for t, data in (p.structured if structured is None else structured)]


@contextmanager
def _released(p: Prepared) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        if p.checking:
            raise  # the checks' own finding (from `checked`): the others wait for no one
        if p.apart is not None:
            p.apart.cancel()  # not needed any more: the checks get the cores
        found = p.check_failure()
        if found is not None:
            raise found from exc
        raise
    finally:
        p.release()


def _devices(fabrics: dict[str, Fabric]) -> int:
    """Devices to render (switch configs and per-node files): whether splitting pays."""
    return sum(len(f.switches) + len(f.hosts) for f in fabrics.values())


def _run(inventory: str | Path, progress: Callable[[str], None] | None) -> Result:
    loaded, validated, timings = _front(inventory, progress)
    p = _back(loaded, validated, timings, progress, beside=True, apart=_make_apart(None))
    with _released(p):
        with _timed(p.timings, "render", progress):
            files = _merged(render_all(_jobs(p), _devices(p.fabrics)), p.made_apart())
        with _timed(p.timings, "check", None):
            p.checked()
    files[MANIFEST] = manifest(files, p.loaded.sha256)
    return Result(p.validated, p.fabrics, p.contexts, files, p.timings, p)


def _merged(*parts: list[tuple[str, Any]]) -> dict[str, Any]:
    """One dict of every (path, value), in path order; a path twice is a bug of two targets."""
    entries = [e for part in parts for e in part]
    merged = dict(sorted(entries))
    if len(merged) != len(entries):
        twice = min(path for path, n in Counter(path for path, _ in entries).items() if n > 1)
        raise AssertionError(f"two targets write {twice}")
    return merged


def render_to(inventory: str | Path, out: str | Path, force: bool = False,
              progress: Callable[[str], None] | None = None) -> Result:
    """The whole pipeline, writing into OUT: each render process writes the files it renders
    into the temporary tree (so they never cross the pipe between processes, and they write
    side by side), then the manifest, then the tree is swapped in. `Result.files` holds each
    file's (sha256, size) here, not its content. The "render" stage includes writing the files;
    "write" is the manifest and the swap. The targets marked apart are structured, rendered
    and written in a process of their own, started before the switch configs are structured."""
    from fabgen.output import Staging, manifest_of

    staging = Staging(Path(out), force)  # refuses a foreign OUT before doing the work
    with no_cycle_collection():
        loaded, validated, timings = _front(inventory, progress)
        _inputs_outside(Path(out), Path(loaded.file), validated)
        with staging.writing():
            staging.begin()  # after validation: bad input makes nothing, not even OUT's parents
            p = _back(loaded, validated, timings, progress, beside=True, apart=_make_apart(staging.write))
            with _released(p):
                with _timed(p.timings, "render", progress):
                    digests = _merged(render_written(_jobs(p), _devices(p.fabrics), staging.write), p.made_apart())
                with _timed(p.timings, "check", None):
                    p.checked()  # the structural check, run beside allocate and structure: before the swap
                with _timed(p.timings, "write", progress):
                    text = manifest_of(digests, p.loaded.sha256)
                    digests[MANIFEST] = staging.write(MANIFEST, text)
                    staging.finish()
    return Result(p.validated, p.fabrics, p.contexts, digests, p.timings, p)
