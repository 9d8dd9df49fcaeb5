"""`fabgen lab`: a render folder to lab topologies users boot with their own images.

Read as emulate reads a render (rendered/read.py through its manifest, emulate/read.py's strict
reading of tables, configs and netplans), sampled as emulate samples a fabric too large for one
machine (emulate/sample.py), then written as containerlab's, netlab's and NVIDIA Air's files into
a new directory, all at once (output.Staging) or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fabgen.emulate import inputs, sample
from fabgen.emulate.model import TranslateError
from fabgen.emulate.read import BadInput, Fabric, _plan, _tables, fabrics_of, overlay_of, read_fabric
from fabgen.errors import OutputError, printable
from fabgen.lab import writers
from fabgen.lab.model import build, numberings
from fabgen.lab.ports import Numbering
from fabgen.output import Staging

MAX_SWITCHES = 16  # a cEOS or SONiC-VS container takes about 1-2 GB: a laptop's lab
MAX_NODES = 8
NO_FABRIC = ("the render has no routed RoCE or Spectrum-X fabric to boot (northsouth, InfiniBand and out-of-band "
             "networks are not in the lab)")


def _render(render: Path, trust_edited: bool) -> tuple[dict[str, bytes], list[str]]:
    """The render's files as its manifest lists them, and the notes on files trusted though edited."""
    from fabgen.rendered import read as rendered

    try:
        files = rendered.read_render(render)
        edited = rendered.trusted(render, files, trust_edited, "lab")
    except rendered.NotARender as exc:
        raise BadInput(str(exc)) from None
    if "report.json" not in files:
        raise BadInput(f"{printable(str(render))}: no report.json: not a render")
    return files, edited


def _name(files: dict[str, bytes]) -> str:
    """The lab's name: the render's cluster name (report.json), held to the device-name rule."""
    try:
        cluster = json.loads(files["report.json"]).get("cluster", "fabgen")
        return inputs.name(cluster, inputs.DEVICE, "report.json: cluster", "cluster name")
    except (ValueError, AttributeError, RecursionError) as exc:
        raise BadInput(f"report.json: not a fabgen report ({str(exc)[:100]})") from None
    except TranslateError as exc:
        raise BadInput(str(exc)) from None


def _hosts_of(f: Fabric) -> dict[str, set[str]]:
    """The nodes cabled to each device of the fabric."""
    hosts_of: dict[str, set[str]] = {}
    for c in f.cables:
        for dev, far in ((c["a_device"], c["z_device"]), (c["z_device"], c["a_device"])):
            if far in f.hosts:
                hosts_of.setdefault(dev, set()).add(far)
    return hosts_of


def _sampled(fabs: list[Fabric], budget: int, node_budget: int,
             read: Callable[[Fabric], Fabric]) -> tuple[list[Fabric], list[str]]:
    """The fabrics whole while they fit in `budget` switches (and nodes that run BGP) and
    `node_budget` nodes; one that does not as emulate's sample (sample.choose: the top tier whole,
    then whole pods or leaves in order, then their nodes while they fit). Where a sample keeps
    every switch (only nodes were left out) the next fabric's switches are still taken; once a
    sample leaves a switch out, the rest is left out. A node kept on one fabric keeps its cables
    to the switches kept on another, so every planned cable among the lab's devices is a link.
    Each fabric is `read` when its turn comes: one left out is never read past its tables' bounds."""
    kept: list[Fabric] = []
    notes: list[str] = []
    cuts: list[tuple[Fabric, set[str], set[str]]] = []
    used, spent = [0, 0], False
    for f in fabs:
        if spent or used[0] >= budget:  # no switch fits any more: left out unread
            notes.append(f"fabric {f.name} left out: the budget is spent; give it with --fabric")
            continue
        f = read(f)
        size = (sample.routers_of(f), len(f.hosts))
        if used[0] + size[0] <= budget and used[1] + size[1] <= node_budget:
            kept.append(f)
            used = [used[0] + size[0], used[1] + size[1]]
        else:
            keep, nodes = sample.choose(f.plan, _hosts_of(f), budget - used[0], node_budget - used[1], 1 << 30)
            if not any(f.plan.roles.get(d) == "leaf" for d in keep):
                notes.append(f"fabric {f.name} left out: its top tier alone is more than the {budget - used[0]} "
                             f"switches left of --max-switches {budget}; give it with --fabric")
                continue
            kept.append(f)
            cuts.append((f, keep, nodes))
            used = [used[0] + len(keep) + len(nodes & set(f.plan.asn)), used[1] + len(nodes)]
            spent = len(keep) < len(f.routers)
    if not kept:
        raise BadInput(f"--max-switches {budget}: not even one fabric's top tier fits; give one fabric or plane "
                       "(--fabric NAME-plane1) or a larger budget")
    held = {h for f in kept if all(f is not c[0] for c in cuts) for h in f.hosts} | {h for c in cuts for h in c[2]}
    said = []
    for f, keep, nodes in cuts:
        switches, left = sample.restrict(f, keep, nodes | (held & set(f.hosts)), _plan)
        said.append(f"fabric {f.name} sampled: {len(f.routers)} of {len(f.routers) + switches} switches, "
                     f"{len(f.hosts)} of {len(f.hosts) + left} nodes (plane by plane the top tier whole, then whole "
                     "pods or leaves in order, their nodes in order while they fit, as fabgen emulate samples); "
                     "cables to what is left out are not in the lab, and the kept switches' configs still name "
                     "those ports and neighbours")
    return kept, said + notes


def overlay_names(files: dict[str, bytes], fabric: str | None) -> list[str]:
    """The render's GPU overlay fabrics (emulate's `overlay_of`), by their inventory names."""
    return sorted(name for name, _ in overlay_of(files, fabric))


def lab(render: Path, fabric: str | None = None, max_switches: int = MAX_SWITCHES, max_nodes: int = MAX_NODES,
        trust_edited: bool = False) -> dict[str, bytes]:
    """Every file of the lab (path under OUT -> bytes), or BadInput naming what is wrong."""
    files, edited = _render(render, trust_edited)
    name = _name(files)
    try:  # a GPU overlay fabric (host_addressing evpn) is left out: its routing is not read here yet
        chosen = fabrics_of(files, fabric, overlay=True)
    except BadInput as exc:
        if "has no RoCE or Spectrum-X fabric" in str(exc):  # emulate's words: said as the lab's
            raise BadInput(NO_FABRIC) from None
        raise
    skipped = [f"fabric {name} left out: the GPU EVPN overlay (host_addressing evpn) is not in the lab yet"
               for name in overlay_names(files, fabric)]
    for f in list(chosen):
        if f.platform not in writers.CLAB_KIND:
            chosen.remove(f)
            skipped.append(f"fabric {f.name} left out: platform {f.platform} has no lab image")
    if not chosen:
        raise BadInput("; ".join([NO_FABRIC, *skipped]))
    try:
        inputs.tables_fit(files, _tables([p for f in chosen for p in f.planes]))
    except TranslateError as exc:
        raise BadInput(str(exc)) from None
    numbered: dict[str, Numbering] = {}

    def read(f: Fabric) -> Fabric:  # each switch's port names from the whole fabric, before its sample
        f = read_fabric(files, f)
        numbered.update(numberings(f))
        return f

    fabs, notes = _sampled(chosen, max_switches, max_nodes, read)
    notes = [*edited, *skipped, *notes, "fabrics: " + ", ".join(f.name for f in fabs)]
    bgp = sorted({h.name for f in fabs for h in f.hosts.values() if h.frr})
    if bgp:
        notes.append(f"{len(bgp)} node(s) run BGP in the plan (hosts/<node>/frr.conf), which the node image does not "
                     "start: their sessions to the leaves stay down unless the image runs FRR with that file")
    the_lab = build(name, fabs, numbered, notes)
    return writers.containerlab(the_lab, files) | writers.netlab(the_lab) | writers.air(the_lab)


def write(out: Path, files: dict[str, bytes]) -> None:
    """Every file under OUT at once (a temporary tree beside it, renamed into place), or none."""
    try:
        Staging(out).commit(files)
    except OutputError as exc:
        raise BadInput(f"-o {printable(str(out))}: {exc}") from None
