"""The pipeline (docs/architecture.md): one direction, one function a stage, each timed.

load -> validate -> build -> check -> allocate -> structure -> render -> write. `render_to`
runs them in that order, one a line, and writes the files; `run` is the same but the write,
every file in memory; `prepare` stops after structure (what `fabgen diff` compares). There is
no intent stage: each target's `structure` pulls the intent it needs (fabgen/intent) from a
fabric's Context, so intent is computed inside structure, by every target that reads it.

Where each stage runs is the scheduler's (fabgen.parallel): the growth checks beside build, the
checks beside allocate, structure and render, the targets marked apart in a process of their
own, the render on two cores, and which error a user sees when the work fails first. This
module says only what runs when. The timings are what benchmarks/ reports.
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

from fabgen.addressing import Allocation, allocate, allocate_routed_oob
from fabgen.check.cluster import check_cluster
from fabgen.check.fabric import TopologyError, check
from fabgen.errors import InventoryError, OutputError
from fabgen.inventory.check_oob import routed_northsouth
from fabgen.inventory.loader import Loaded, load
from fabgen.inventory.validate import Validated, validate
from fabgen.output import MANIFEST, Staging, manifest, manifest_of
from fabgen.parallel import Job, Scheduler, Write, alongside, render_all, render_written
from fabgen.spec.model import Fabric
from fabgen.targets import CLUSTER, Context, Target, registry
from fabgen.topology.analysis import summarize
from fabgen.topology.build import build_planes, plane_names
from fabgen.topology.growth import growth_warnings
from fabgen.topology.oob import build_oob

STAGES = ("load", "validate", "build", "check", "allocate", "structure", "render", "write")

Progress = Callable[[str], None]
InventoryFile = str | Path | Loaded  # a file, or one already loaded (fabgen.api)
# what a check running aside finds: the error a user must see, also when the work failed first
FINDINGS = (InventoryError, TopologyError)


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


@dataclass
class Prepared:
    """Everything before the render: the structured config of every target (but those made
    apart, when a render makes them in a process of its own)."""

    loaded: Loaded
    validated: Validated
    fabrics: dict[str, Fabric]
    contexts: dict[str, Context]
    targets: dict[str, Target]
    structured: list[tuple[str, object]]
    timings: dict[str, float]
    work: Scheduler = field(default_factory=Scheduler)  # the checks aside and the targets made apart

    def checked(self) -> None:
        """Wait for a check running aside and raise what it found (before anything leaves)."""
        self.work.checked()

    def release(self) -> None:
        """Stop what still runs aside or apart (the work failed first)."""
        self.work.release()


# make(targets, contexts): structure and render the targets made apart, in their own process
Apart = Callable[[dict[str, Target], dict[str, Context]], list[tuple[str, Any]]]


@dataclass
class _Clock:
    """Each stage's time, summed over its runs (check runs up to three times), and `progress`
    told as a stage starts."""

    timings: dict[str, float]
    progress: Progress | None = None

    @contextmanager
    def stage(self, name: str, told: bool = True) -> Iterator[None]:
        if told and self.progress:
            self.progress(name)
        t0 = time.perf_counter()
        yield
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0


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


# The whole pipeline ----------------------------------------------------------------------------

def render_to(inventory: InventoryFile, out: str | Path, force: bool = False,
              progress: Progress | None = None) -> Result:
    """The whole pipeline, writing into OUT: each render process writes the files it renders
    into the temporary tree (so they never cross the pipe between processes, and they write
    side by side), then the manifest, then the tree is swapped in. `Result.files` holds each
    file's (sha256, size) here, not its content. The "render" stage includes writing the files;
    "write" is the manifest and the swap. The targets marked apart are structured, rendered
    and written in a process of their own, started before the switch configs are structured."""
    staging = Staging(Path(out), force)  # refuses a foreign OUT before doing the work
    clock = _Clock({}, progress)
    with no_cycle_collection():
        loaded = _load(inventory, clock)
        validated = _validate(loaded, clock)
        _inputs_outside(Path(out), Path(loaded.file), validated)
        with staging.writing(), _scheduler().running() as work:
            staging.begin()  # after validation: bad input makes nothing, not even OUT's parents
            p = _prepare(loaded, validated, clock, work, apart=_make_apart(staging.write))
            files = _render(p, clock, staging.write)
            _checked(p, clock)  # the structural check, run beside allocate and structure: before the swap
            _write(files, p, staging, clock)
    return Result(p.validated, p.fabrics, p.contexts, files, p.timings, p)


def run(inventory: InventoryFile, progress: Progress | None = None) -> Result:
    """The whole pipeline but the final write: every file of the render, in memory."""
    clock = _Clock({}, progress)
    with no_cycle_collection():
        loaded = _load(inventory, clock)
        validated = _validate(loaded, clock)
        with _scheduler().running() as work:
            p = _prepare(loaded, validated, clock, work, apart=_make_apart(None))
            files = _render(p, clock)
            _checked(p, clock)
        files[MANIFEST] = manifest(files, loaded.sha256)
    return Result(p.validated, p.fabrics, p.contexts, files, p.timings, p)


def prepare(inventory: InventoryFile, progress: Progress | None = None,
            checked: bool = True, beside: bool = False) -> Prepared:
    """load, validate, build, check, allocate, structure: what `fabgen diff` compares before it
    decides what to render. A review passes checked=False: the check proves the builder (every
    link once, balanced uplinks) and every render, the one that is deployed, runs it; at 32k
    GPUs it is half a second of a review's ten. `beside`: a large fabric's check runs in a
    forked process while the rest goes on; the caller must call `checked()` (or `release()`)."""
    clock = _Clock({}, progress)
    loaded = _load(inventory, clock)
    validated = _validate(loaded, clock)
    with _scheduler(beside).running() as work:  # on success the checks aside run on
        return _prepare(loaded, validated, clock, work, checked)


def _prepare(loaded: Loaded, validated: Validated, clock: _Clock, work: Scheduler, checked: bool = True,
             apart: Apart | None = None) -> Prepared:
    """build, check, allocate, structure. With `apart`, the targets marked apart are structured
    and rendered by it in a forked process while the others are structured here."""
    targets = registry()
    fabrics, contexts = build(validated, clock.timings, clock.progress, checked, work)
    here = _start_apart(targets, fabrics, contexts, work, apart)
    structured = _structure(here, contexts, clock)
    return Prepared(loaded, validated, fabrics, contexts, targets, structured, clock.timings, work)


def build(validated: Validated, timings: dict[str, float] | None = None, progress: Progress | None = None,
          checked: bool = True, work: Scheduler | None = None) -> tuple[dict[str, Fabric], dict[str, Context]]:
    """build, check (unless `checked` is False), allocate: the topology and its identifiers for
    every fabric. With `work` (a Scheduler that runs checks beside), a large fabric's checks run
    in forked processes beside allocate and what follows: the caller joins them
    (`Scheduler.checked`) before it writes or returns anything."""
    clock = _Clock({} if timings is None else timings, progress)
    work = Scheduler() if work is None else work
    fabrics = _build(validated, clock)
    if checked:
        _check(fabrics, clock, work)
    contexts = _contexts(validated, fabrics, _allocate(validated, fabrics, clock))
    _check_cluster(validated, fabrics, contexts, clock, work)
    return fabrics, contexts


def _scheduler(beside: bool = True) -> Scheduler:
    """The forks of one render; a check's finding is what a user sees."""
    return Scheduler(beside, FINDINGS)


# The stages, in order --------------------------------------------------------------------------

def _load(inventory: InventoryFile, clock: _Clock) -> Loaded:
    with clock.stage("load"):
        return inventory if isinstance(inventory, Loaded) else load(inventory)


def _validate(loaded: Loaded, clock: _Clock) -> Validated:
    with clock.stage("validate"):
        return validate(loaded)  # its growth checks run beside the build


def _build(validated: Validated, clock: _Clock) -> dict[str, Fabric]:
    """The topologies; the growth checks validate left (warnings for unplanned fabrics) run
    beside them and are filed before anything reads the warnings."""
    fabrics: dict[str, Fabric] = {}
    with alongside(*_growth(validated)) as growth:
        with clock.stage("build"):
            _topologies(validated, fabrics)
        if growth is not None:
            validated.settle(growth.join())
    first_plane = {spec.name: plane_names(spec)[0] for spec in validated.inventory.fabrics}
    for name, notes in validated.warnings.items():  # an inventory fabric's warnings
        fabrics[first_plane[name]].warnings.extend(notes)
    return fabrics


def _check(fabrics: dict[str, Fabric], clock: _Clock, work: Scheduler) -> None:
    """The structural check of every fabric (fabgen.check.fabric): beside the work, or here."""
    with clock.stage("check"):
        def check_all() -> None:
            for f in fabrics.values():
                check(f)
        work.check(check_all, _devices(fabrics))


def _allocate(validated: Validated, fabrics: dict[str, Fabric], clock: _Clock) -> dict[str, Allocation]:
    """Every fabric's identifiers (addresses, ASNs, GUIDs), by fabric name."""
    inv = validated.inventory
    with clock.stage("allocate"):
        node_prefixes = {g.name: g.management for g in inv.node_groups if g.management}
        number = {spec.name: i + 1 for i, spec in enumerate(inv.fabrics)}  # GUIDs: the inventory's order
        return {name: allocate(f, number[f.inventory_name], validated.guid_maps.get(f.inventory_name),
                               node_prefixes) for name, f in fabrics.items()}


def _contexts(validated: Validated, fabrics: dict[str, Fabric],
              allocations: dict[str, Allocation]) -> dict[str, Context]:
    """What a target may read of each fabric; a multi-plane fabric's first plane also holds
    every plane's (the hosts' files cover them all)."""
    inv = validated.inventory
    real = validated.guid_maps
    contexts = {name: Context(inv.cluster, f, allocations[name], summarize(f, real.get(f.inventory_name)),
                              {g.name: g for g in inv.node_groups}, inv.kubernetes, inv.baseline,
                              inv.provisioning, validated.macs)
                for name, f in fabrics.items()}
    for spec in inv.fabrics:
        if spec.planes > 1:
            names = plane_names(spec)
            contexts[names[0]] = replace(contexts[names[0]], planes=tuple(contexts[n] for n in names))
    for spec in inv.fabrics:  # a routed out-of-band network: one set of numbers for both its ends
        if spec.role == "oob" and spec.oob_design == "routed":
            ns = routed_northsouth(inv, spec)
            assert ns is not None  # validate refused it otherwise
            routed = allocate_routed_oob(fabrics[spec.name], allocations[spec.name], fabrics[ns.name],
                                         allocations[ns.name], inv.provisioning.server if inv.provisioning else None)
            for name in (spec.name, ns.name):
                contexts[name] = replace(contexts[name], oob_routed=routed)
    return contexts


def _check_cluster(validated: Validated, fabrics: dict[str, Fabric], contexts: dict[str, Context],
                   clock: _Clock, work: Scheduler) -> None:
    """One port, one cable, one address across every fabric (fabgen.check.cluster). Joined
    first: its finding is the one a user saw when it ran here, before the others."""
    with clock.stage("check"):
        work.check(lambda: check_cluster(validated, fabrics, contexts), _devices(fabrics), first=True)


def _start_apart(targets: dict[str, Target], fabrics: dict[str, Fabric], contexts: dict[str, Context],
                 work: Scheduler, apart: Apart | None) -> dict[str, Target]:
    """The targets to structure here: every one, or with `apart` those not marked apart, the
    others handed to `apart` in a process of their own (`Scheduler.apart`)."""
    if apart is None:
        return targets
    away = {n: t for n, t in targets.items() if t.apart}
    here = {n: t for n, t in targets.items() if not t.apart}
    work.apart(lambda: apart(away, contexts), _devices(fabrics))
    return here


def _structure(targets: dict[str, Target], contexts: dict[str, Context],
               clock: _Clock | None = None) -> list[tuple[str, object]]:
    """Every target's structured config, for each fabric it applies to; a cluster-wide target
    is handed only the structured configs it names (`Target.reads`)."""
    structured: list[tuple[str, object]] = []
    with (clock or _Clock({})).stage("structure"):
        ctx_list = list(contexts.values())
        for t in targets.values():
            if t.scope == CLUSTER:
                structured.append((t.name, t.structure(ctx_list, [(n, d) for n, d in structured if n in t.reads])))
                continue
            structured += [(t.name, t.structure(ctx)) for ctx in ctx_list if t.applies(ctx)]
    return structured


def _render(p: Prepared, clock: _Clock, write: Write | None = None) -> dict[str, Any]:
    """Every file, on one or two cores, with those made apart, in path order: its content, or
    with `write` what writing it returned (each process writes the files it rendered)."""
    with clock.stage("render"):
        here = render_all(_jobs(p), _devices(p.fabrics)) if write is None else \
            render_written(_jobs(p), _devices(p.fabrics), write)
        return _merged(here, p.work.made_apart())


def _checked(p: Prepared, clock: _Clock) -> None:
    """Join the checks running aside: a finding stops the render before anything leaves."""
    with clock.stage("check", told=False):
        p.checked()


def _write(files: dict[str, Any], p: Prepared, staging: Staging, clock: _Clock) -> None:
    """The manifest, then the tree swapped in."""
    with clock.stage("write"):
        text = manifest_of(files, p.loaded.sha256)
        files[MANIFEST] = staging.write(MANIFEST, text)
        staging.finish()


# What the stages share -------------------------------------------------------------------------

def render_prepared(p: Prepared, structured: list[tuple[str, object]] | None = None,
                    progress: Progress | None = None) -> dict[str, bytes]:
    """The files of `structured` (default: all of `p`'s), on one or two cores, in path order."""
    with _Clock(p.timings, progress).stage("render"):
        return _merged(render_all(_jobs(p, structured), _devices(p.fabrics)))


def _growth(validated: Validated) -> tuple[Callable[[], list[list[str]]] | None, int]:
    """The growth checks validate left, and their size (every cable of two plans), if any."""
    if not validated.pending:
        return None, 0
    return (lambda: growth_warnings(validated),
            sum(p.leaves + p.spines + p.cores + p.nodes for p in validated.plans.values()))


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
    rdma_links file, a MAC map): OUT is replaced whole, and an input inside it is not fabgen's to replace,
    whatever a manifest says."""
    base = inventory.parent
    inputs = [inventory] + [base / f.infiniband.guid_map for f in validated.inventory.fabrics
                            if f.infiniband and f.infiniband.guid_map]
    inputs += [base / g.rdma_links for g in validated.inventory.node_groups if g.rdma_links]
    inputs += [base / p.mac_map for p in (validated.inventory.provisioning,) if p]
    root = out.absolute().resolve()
    for path in inputs:
        real = path.absolute().resolve()
        if real == root or root in real.parents:
            raise OutputError(f"{path} is inside {out}, which a render replaces whole: render into another directory")


def _make_apart(write: Write | None) -> Apart:
    """The work of the process that makes the targets apart: structure each, render it on that
    one process and write each file (`write`) or return it, one structured config at a time:
    only what a later target reads is kept (`Target.kept`), so the process never holds every
    fabric's cabling at once (at 131,072 GPUs of four planes it held 2.6 GB, NetBox's rows
    included, when NetBox was made here)."""
    def make(targets: dict[str, Target], contexts: dict[str, Context]) -> list[tuple[str, Any]]:
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


def _jobs(p: Prepared, structured: list[tuple[str, object]] | None = None) -> list[Job]:
    """(render, structured config, shard) of every target's structured config."""
    return [(p.targets[t].render, data, p.targets[t].shard)
            for t, data in (p.structured if structured is None else structured)]


def _devices(fabrics: dict[str, Fabric]) -> int:
    """Devices to render (switch configs and per-node files): whether splitting pays."""
    return sum(len(f.switches) + len(f.hosts) for f in fabrics.values())


def _merged(*parts: list[tuple[str, Any]]) -> dict[str, Any]:
    """One dict of every (path, value), in path order; a path twice is a bug of two targets."""
    entries = [e for part in parts for e in part]
    merged = dict(sorted(entries))
    if len(merged) != len(entries):
        twice = min(path for path, n in Counter(path for path, _ in entries).items() if n > 1)
        raise AssertionError(f"two targets write {twice}")
    return merged
