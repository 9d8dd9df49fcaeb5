"""Checks of an InfiniBand fabric: subnet managers, partitions and PKeys, and its GUID map."""

from __future__ import annotations

from pathlib import Path

from fabgen.inventory.loader import PathT
from fabgen.inventory.messages import did_you_mean
from fabgen.inventory.state import Checks
from fabgen.spec.sizing import Plan

MAX_PKEYS = 128  # PKey table entries of a ConnectX port
IB_RATES = (100, 200, 400, 800)  # Gb/s with an IBTA rate code (targets/infiniband.py RATE_CODE; a test
# keeps the two equal)


def read_guid_maps(c: Checks) -> None:
    """Every InfiniBand fabric's GUID map ((device, port) -> GUID) into c.guid_maps, read before the
    checks across fabrics: the storage-server warning counts only the GUIDs the map leaves synthetic."""
    for i, f in enumerate(c.inv.fabrics):
        fplan = c.plans.get(f.name)
        if f.kind == "infiniband" and f.infiniband is not None and f.infiniband.guid_map is not None and fplan:
            c.guid_maps[f.name] = _read_guid_map(c, ("fabrics", i, "infiniband"), f, f.infiniband.guid_map, fplan)


def check_infiniband(c: Checks, i: int, f) -> None:
    """The infiniband: block (its GUID map is read by `read_guid_maps`)."""
    from fabgen.spec.schema import InfinibandOptions

    path = ("fabrics", i, "infiniband")
    if f.infiniband is not None and f.kind != "infiniband":
        c.report(path, f"the infiniband block applies to kind infiniband only (this fabric is {f.kind})", key=True)
        return
    if f.kind != "infiniband":
        return
    ib = f.infiniband or InfinibandOptions()
    fplan = c.plans.get(f.name)
    _check_subnet_manager_features(c, path, f, ib, fplan)
    if not ib.subnet_managers:
        c.warner(f.name)(path if f.infiniband is not None else ("fabrics", i),
                         f"fabric '{f.name}' names no subnet-manager host: its SM files are rendered, but "
                         "ansible/deploy-sm.yml has no host to install them on (it refuses to run); name the SM "
                         "hosts in infiniband.subnet_managers, master first")
    _check_partitions(c, path, f, ib, fplan)
    _check_pkey_tables(c, path, f, ib)


def _check_subnet_manager_features(c: Checks, path: PathT, f, ib, fplan) -> None:
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


def _check_partitions(c: Checks, path: PathT, f, ib, fplan) -> None:
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


def _check_pkey_tables(c: Checks, path: PathT, f, ib) -> None:
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


def _read_guid_map(c: Checks, path: PathT, f, guid_map: str, fplan: Plan) -> dict[tuple[str, str], int]:
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
