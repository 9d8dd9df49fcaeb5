"""`fabgen verify RENDER_DIR`: the built fabric held against its plan (docs/verify.md).

Evidence: `--ibnetdiscover FILE` (infiniband-diags' default output) and `--lldp FILE_OR_DIR`
(a directory holds one file per device, `<device>.json` or `.txt`, named as the plan names the
device: lldpctl's JSON does not carry its own system's name), `--frr DIR` (FRR's state, frr.py)
and `--running DIR` (the switches' running configs, running.py). The render is read through its
manifest. Exit 0: the evidence matches the plan; 1: anything differs; 2: bad input.
"""

from __future__ import annotations

import re
from pathlib import Path

from fabgen.verify import anta, cabling, evidence, frr, state
from fabgen.verify.plan import read as read_plan
from fabgen.verify.untrusted import MAX_ROWS, Refused

MAX_EVIDENCE = 64 * 1024 * 1024  # one file: ibnetdiscover of 100,000 ports is tens of MB


class BadInput(Exception):
    """Not a render, unreadable or unknown evidence, a --fabric naming nothing: one line."""


def _read(path: Path) -> str:
    from fabgen.rendered.manifest import ManifestError, open_plain

    try:
        return open_plain(path, MAX_EVIDENCE).decode("utf-8")
    except (ManifestError, OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read it as evidence ({getattr(exc, 'strerror', None) or exc})") from None


def gather(plan, ibnetdiscover: list[Path], lldp: list[Path]) -> tuple[list[evidence.Seen], set[str]]:
    """Every row of evidence, and the planned devices that gave any."""
    seen: list[evidence.Seen] = []
    reporting: set[str] = set()
    try:
        for path in ibnetdiscover:
            text = _read(path)
            rows = (evidence.ibnetdiscover(text, str(path)) if re.search(r'^(Switch|Ca)\s+\d+\s+"', text, re.M)
                    else evidence.ibnetdiscover_ports(text, str(path)))
            seen += _within(rows, seen, path)
            for s in rows:  # every node ibnetdiscover found is built and answers
                name = plan.device(s.device.split(" ")[0]) or plan.device(s.device)
                if name:
                    reporting.add(name)
        for item in lldp:
            files = sorted(p for p in item.iterdir() if p.suffix in (".json", ".txt")) if item.is_dir() else [item]
            if item.is_dir() and not files:
                raise BadInput(f"{item}: no <device>.json or <device>.txt in it")
            for path in files:
                device = plan.device(path.stem)
                if device is None:
                    raise BadInput(f"{path}: {path.stem} is no device of the plan (name each file after its device)")
                seen += _within(evidence.parse(_read(path), str(path), device), seen, path)
                reporting.add(device)
    except Refused as exc:
        raise BadInput(str(exc)) from None
    return seen, reporting


def _within(rows: list[evidence.Seen], seen: list[evidence.Seen], path: Path) -> list[evidence.Seen]:
    """`rows`, unless with the rows already read they pass MAX_ROWS (the memory a comparison may take)."""
    if len(seen) + len(rows) > MAX_ROWS:
        raise BadInput(f"{path}: with it the evidence passes {MAX_ROWS:,} neighbours seen, the most verify holds "
                       "at once: give the evidence of one fabric (or plane) at a time")
    return rows


def verify(render: Path, ibnetdiscover: list[Path], lldp: list[Path], fabric: str | None = None,
           speed: bool = False, frr: Path | None = None, trust_edited: bool = False,
           running: Path | None = None) -> cabling.Verdict:
    """Cabling from LLDP/ibnetdiscover, FRR's state from `frr` and the switches' running configs from
    `running` (directories), against the plan."""
    if not ibnetdiscover and not lldp and frr is None and running is None:
        raise BadInput("give evidence: --ibnetdiscover FILE, --lldp FILE_OR_DIR, --frr DIR and/or --running DIR")
    for path in (*ibnetdiscover, *lldp, *([frr] if frr else []), *([running] if running else [])):
        if not path.exists():
            raise BadInput(f"{path}: no such file or directory")
    if frr is not None and (frr.is_symlink() or not frr.is_dir()):
        raise BadInput(f"--frr {frr}: give a directory of <device>.bgp.json, .routes.json and .bfd.json")
    if running is not None and (running.is_symlink() or not running.is_dir()):
        raise BadInput(f"--running {running}: give a directory of <device>.cfg (EOS), <device>.yaml (NVUE) and "
                       "<device>.json (SONiC)")
    files, edited = _render(render, trust_edited)
    v = cabling.Verdict()
    if ibnetdiscover or lldp:
        v = _cabling(files, ibnetdiscover, lldp, fabric, speed)
    if frr is not None:
        _frr_state(files, frr, fabric, v)
    if running is not None:
        _running(files, running, fabric, v)
    v.notes[:0] = edited  # the plan came from files edited by hand: the report says so first
    return v


def _render(render: Path, trust_edited: bool = False) -> tuple[dict[str, bytes], list[str]]:
    """The render's files, and the notes that say which of them were edited (refused unless
    `trust_edited`: a plan edited by hand is no plan fabgen made)."""
    from fabgen.rendered import read as rendered

    try:
        files = rendered.read_render(render)
        return files, rendered.trusted(render, files, trust_edited, "verify")
    except rendered.NotARender as exc:
        raise BadInput(str(exc)) from None


def _cabling(files: dict[str, bytes], ibnetdiscover: list[Path], lldp: list[Path], fabric: str | None,
             speed: bool) -> cabling.Verdict:
    plan = read_plan(files)
    only = None
    if fabric is not None:
        only = {f for f in plan.roles if f == fabric or f.startswith(f"{fabric}-plane")}
        if not only:
            raise BadInput(f"--fabric {fabric}: the render has no such fabric ({', '.join(sorted(plan.roles))})")
    seen, reporting = gather(plan, ibnetdiscover, lldp)
    v = cabling.compare(plan, seen, reporting, speed, only)
    if not speed:
        slow = sum(1 for s in seen if s.speed is not None)
        if slow:
            v.notes.append("link speeds in the evidence are not held to the plan (pass --speed to; ibsim reports "
                           "every link at 4xSDR)")
    return v


def _expected(files: dict[str, bytes], fabric: str | None) -> list[state.Expected]:
    try:
        return state.expected(state.fabrics(files, fabric))
    except state.StateError as exc:
        raise BadInput(str(exc)) from None


def _frr_state(files: dict[str, bytes], folder: Path, fabric: str | None, v: cabling.Verdict) -> None:
    expects = _expected(files, fabric)
    known = {e.device for e in expects if e.platform in frr.FRR_PLATFORMS}
    if not known:
        raise BadInput("--frr: the render has no SONiC or Cumulus (NVUE) switch (EOS: --anta-catalog)")
    try:
        frr.check_dir(expects, folder, known, _read, v)
    except Refused as exc:
        raise BadInput(str(exc)) from None


def _running(files: dict[str, bytes], folder: Path, fabric: str | None, v: cabling.Verdict) -> None:
    from fabgen.verify import running  # hier_config, only when asked

    try:
        running.check_dir(files, folder, fabric, lambda path: _read_config(path, running.MAX_CONFIG), v)
    except Refused as exc:
        raise BadInput(str(exc)) from None


def _read_config(path: Path, limit: int) -> str:
    from fabgen.rendered.manifest import ManifestError, open_plain

    try:
        return open_plain(path, limit).decode("utf-8")
    except (ManifestError, OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read it as a running config ({getattr(exc, 'strerror', None) or exc})") \
            from None


def anta_catalog(render: Path, fabric: str | None = None, trust_edited: bool = False) -> tuple[str, int, int]:
    """The ANTA catalog of the render's EOS switches: its text, how many switches and tests."""
    files, _ = _render(render, trust_edited)
    expects = [e for e in _expected(files, fabric) if e.platform == "eos"]
    if not expects:
        raise BadInput("--anta-catalog: the render has no Arista EOS switch (ANTA tests EOS)")
    configs = {e.device: files[f"{e.fabric}/switches/{e.device}.cfg"].decode() for e in expects}
    cat = anta.catalog(expects, configs)
    return anta.dump(cat), len(expects), sum(len(tests) for tests in cat.values())
