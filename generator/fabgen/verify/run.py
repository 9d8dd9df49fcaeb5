"""`fabgen verify RENDER_DIR`: the built fabric held against its plan (docs/verify.md).

Evidence: `--ibnetdiscover FILE` (infiniband-diags' default output) and `--lldp FILE_OR_DIR`
(a directory holds one file per device, `<device>.json` or `.txt`, named as the plan names the
device: lldpctl's JSON does not carry its own system's name). The render is read through its
manifest. Exit 0: the evidence matches the plan; 1: anything differs; 2: bad input.
"""

from __future__ import annotations

import re
from pathlib import Path

from fabgen.verify import cabling, evidence
from fabgen.verify.plan import read as read_plan

MAX_EVIDENCE = 64 * 1024 * 1024  # one file: ibnetdiscover of 100,000 ports is tens of MB


class BadInput(Exception):
    """Not a render, unreadable or unknown evidence, a --fabric naming nothing: one line."""


def _read(path: Path) -> str:
    from fabgen.manifest import ManifestError, open_plain

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
            seen += rows
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
                seen += evidence.parse(_read(path), str(path), device)
                reporting.add(device)
    except evidence.EvidenceError as exc:
        raise BadInput(str(exc)) from None
    return seen, reporting


def verify(render: Path, ibnetdiscover: list[Path], lldp: list[Path], fabric: str | None = None,
           speed: bool = False) -> cabling.Verdict:
    from fabgen import diff

    if not ibnetdiscover and not lldp:
        raise BadInput("give evidence: --ibnetdiscover FILE and/or --lldp FILE_OR_DIR")
    for path in (*ibnetdiscover, *lldp):
        if not path.exists():
            raise BadInput(f"{path}: no such file or directory")
    try:
        files = diff.read_render(render)
    except diff.NotARender as exc:
        raise BadInput(str(exc)) from None
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
