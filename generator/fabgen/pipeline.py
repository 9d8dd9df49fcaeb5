"""The pipeline (docs/architecture.md), one direction, one stage per module, timed per stage.

load -> validate -> build -> check -> allocate -> structure -> render -> write.
`run` returns the rendered files; `render_to` also writes them. The timings are what
benchmarks/ reports.
"""

from __future__ import annotations

import gc
from collections import Counter
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from fabgen.addressing import allocate
from fabgen.inventory.loader import load
from fabgen.inventory.validate import Validated, validate
from fabgen.output import MANIFEST, manifest
from fabgen.platforms import CLUSTER, Context, registry
from fabgen.topology.analysis import summarize
from fabgen.parallel import Aside, render_all, render_written
from fabgen.topology.build import build_planes, plane_names
from fabgen.topology.check import check
from fabgen.topology.model import Fabric
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
    prepared: "Prepared | None" = None


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
    fabrics: dict[str, Fabric] = {}
    with _timed(timings, "build", progress):
        for spec in inv.fabrics:
            model = validated.switch_models[spec.switch_model]
            if spec.role == "oob":
                fabrics[spec.name] = build_oob(spec, validated.plans[spec.name], model, validated.members[spec.name],
                                               validated.storage[spec.name], validated.managed[spec.name])
                continue
            for f in build_planes(spec, validated.plans[spec.name], model,
                                  validated.members[spec.name], validated.storage[spec.name]):
                fabrics[f.name] = f
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
                aside.append(Aside(check_all, sum(len(f.switches) + len(f.hosts) for f in fabrics.values())))
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
    return fabrics, contexts


def run(inventory: str | Path, progress: Callable[[str], None] | None = None) -> Result:
    """The whole pipeline but the final write: every file of the render, in memory."""
    with no_cycle_collection():
        return _run(inventory, progress)


@dataclass
class Prepared:
    """Everything before the render: the structured config of every target."""

    loaded: object
    validated: Validated
    fabrics: dict[str, Fabric]
    contexts: dict[str, Context]
    targets: dict
    structured: list[tuple[str, object]]
    timings: dict[str, float]
    aside: list[Aside] = field(default_factory=list)  # the check, when it runs beside the work

    def checked(self) -> None:
        """Wait for a check running aside and raise what it found (before anything leaves)."""
        for a in self.aside:
            a.join()

    def release(self) -> None:
        """Stop a check still running aside (the work failed first)."""
        for a in self.aside:
            a.cancel()


def prepare(inventory: str | Path, progress: Callable[[str], None] | None = None,
            checked: bool = True, beside: bool = False) -> Prepared:
    """load, validate, build, check, allocate, structure: what `fabgen diff` compares before it
    decides what to render. A review passes checked=False: the check proves the builder (every
    link once, balanced uplinks) and every render, the one that is deployed, runs it; at 32k
    GPUs it is half a second of a review's ten. `beside`: a large fabric's check runs in a
    forked process while the rest goes on; the caller must call `checked()` (or `release()`)."""
    timings: dict[str, float] = {}
    with _timed(timings, "load", progress):
        loaded = load(inventory)
    with _timed(timings, "validate", progress):
        validated = validate(loaded)
    aside: list[Aside] = []
    targets = registry()
    try:
        fabrics, contexts = build(validated, timings, progress, checked, aside if beside else None)
        structured = _structure(targets, contexts, timings, progress)
    except BaseException:
        for a in aside:
            a.cancel()
        raise
    return Prepared(loaded, validated, fabrics, contexts, targets, structured, timings, aside)


def _structure(targets: dict, contexts: dict[str, Context], timings: dict[str, float],
               progress: Callable[[str], None] | None) -> list[tuple[str, object]]:
    structured: list[tuple[str, object]] = []
    with _timed(timings, "structure", progress):
        ctx_list = list(contexts.values())
        for t in targets.values():
            if t.scope == CLUSTER:
                structured.append((t.name, t.structure(ctx_list, structured)))
                continue
            structured += [(t.name, t.structure(ctx)) for ctx in ctx_list if t.applies(ctx)]
    return structured


def render_prepared(p: Prepared, structured: list[tuple[str, object]] | None = None,
                    progress: Callable[[str], None] | None = None) -> dict[str, bytes]:
    """The files of `structured` (default: all of `p`'s), on one or two cores."""
    files: dict[str, bytes] = {}
    with _timed(p.timings, "render", progress):
        jobs: list = [(p.targets[tname].render, data, p.targets[tname].shard)
                      for tname, data in (p.structured if structured is None else structured)]
        for path, content in render_all(jobs, _size(p)):
            if path in files:
                raise AssertionError(f"two targets write {path}")
            files[path] = content
    return dict(sorted(files.items()))  # in path order, whichever process rendered a file


@contextmanager
def _released(p: Prepared) -> Iterator[None]:
    try:
        yield
    finally:
        p.release()


def _size(p: Prepared) -> int:
    """Devices to render (switch configs and per-node files): whether splitting pays."""
    return sum(len(f.switches) + len(f.hosts) for f in p.fabrics.values())


def _run(inventory: str | Path, progress: Callable[[str], None] | None) -> Result:
    p = prepare(inventory, progress, beside=True)
    try:
        files = render_prepared(p, progress=progress)
        with _timed(p.timings, "check", None):
            p.checked()
    finally:
        p.release()
    files[MANIFEST] = manifest(files, p.loaded.sha256)
    return Result(p.validated, p.fabrics, p.contexts, files, p.timings, p)


def render_to(inventory: str | Path, out: str | Path, force: bool = False,
              progress: Callable[[str], None] | None = None) -> Result:
    """The whole pipeline, writing into OUT: each render process writes the files it renders
    into the temporary tree (so they never cross the pipe between the two, and the two write
    side by side), then the manifest, then the tree is swapped in. `Result.files` holds each
    file's (sha256, size) here, not its content. The "render" stage includes writing the files;
    "write" is the manifest and the swap."""
    from fabgen.output import Staging, manifest_of

    staging = Staging(Path(out), force)  # refuses a foreign OUT before doing the work
    with no_cycle_collection():
        p = prepare(inventory, progress, beside=True)
        with staging.writing(), _released(p):
            staging.begin()
            with _timed(p.timings, "render", progress):
                jobs: list = [(p.targets[t].render, data, p.targets[t].shard) for t, data in p.structured]
                entries = render_written(jobs, _size(p), staging.write)
            digests = dict(entries)
            if len(digests) != len(entries):
                twice = min(path for path, n in Counter(path for path, _ in entries).items() if n > 1)
                raise AssertionError(f"two targets write {twice}")
            with _timed(p.timings, "check", None):
                p.checked()  # the structural check, run beside allocate and structure: before the swap
            with _timed(p.timings, "write", progress):
                text = manifest_of(digests, p.loaded.sha256)
                digests[MANIFEST] = staging.write(MANIFEST, text)
                staging.finish()
    return Result(p.validated, p.fabrics, p.contexts, digests, p.timings, p)
