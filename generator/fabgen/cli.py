"""The `fabgen` command line: thin; every decision lives in the pipeline stages."""

from __future__ import annotations

import gc
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Optional

import typer

from fabgen._version import __version__
from fabgen.errors import InventoryError, OutputError, printable, printable_lines

app = typer.Typer(
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    no_args_is_help=True,
    help="Turn one GPU-cluster inventory into every file its network needs.\n\n"
         "Start with `fabgen validate inventory.yaml`, then `fabgen render inventory.yaml -o out/`.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"fabgen {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(verbose: bool = typer.Option(False, "--verbose", "-v",
                                          help="add the YAML parser's own words to syntax errors"),
             _version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                           help="print fabgen's version and exit")) -> None:
    """Options for every command."""
    if verbose:
        from fabgen.inventory import loader

        loader.VERBOSE = True


def _fail_inventory(exc: InventoryError, what: str = "the inventory") -> None:
    for p in exc.problems:
        typer.echo(p.format(), err=True)
    n = len(exc.problems)
    typer.echo(f"fabgen: {n} problem{'s' if n != 1 else ''} in {what}; nothing written", err=True)
    raise typer.Exit(2)


class _Progress:
    """A one-line stage display on a terminal; silent in CI and pipes, unless `plain`: then each
    stage from PLAIN_AFTER seconds on is a line on stderr with the seconds since the start (a long
    review in a pipe or a CI log shows it is moving; a quick one, or a bad input's one-line
    message, stays as it is)."""

    PLAIN_AFTER = 2.0

    def __init__(self, plain: bool = False) -> None:
        self.status = None
        self.plain = plain and not sys.stderr.isatty()
        self.start = time.monotonic()
        if sys.stderr.isatty():
            from rich.console import Console

            self.status = Console(stderr=True).status("fabgen: starting")

    def __enter__(self) -> _Progress:
        if self.status:
            self.status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.status:
            self.status.__exit__(None, None, None)

    def __call__(self, stage: str) -> None:
        if self.status:
            self.status.update(f"fabgen: {stage}")
        elif self.plain and time.monotonic() - self.start >= self.PLAIN_AFTER:
            typer.echo(printable(f"fabgen: {time.monotonic() - self.start:6.1f} s  {stage}"), err=True)


@app.command()
def render(
    inventory: Path = typer.Argument(..., help="inventory YAML file (format version 1)"),
    out: Path = typer.Option(Path("out"), "--out", "-o", help="output directory; replaced atomically"),
    force: bool = typer.Option(False, "--force", help="replace files fabgen wrote into OUT even if they were "
                               "edited since (never a file it did not write)"),
    timings: bool = typer.Option(False, "--timings", help="print the time each pipeline stage took"),
) -> None:
    """Render every file of every fabric in INVENTORY into OUT."""
    import signal

    from fabgen.api import render as api_render
    from fabgen.check.fabric import TopologyError

    def _terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # like Ctrl-C: the temporary tree is removed, OUT stays as it was

    signal.signal(signal.SIGTERM, _terminate)
    if _COMMAND_LINE[0]:
        # The render pauses the cycle collector (pipeline.no_cycle_collection); turned back on,
        # its first pass would scan every object the render made (0.6 s at 64k GPUs) just
        # before the program leaves: as a program of its own, fabgen leaves it off.
        gc.disable()
    try:
        with _Progress() as progress:
            result = api_render(inventory, out, force=force, progress=progress)
    except KeyboardInterrupt:
        typer.echo("fabgen: interrupted; nothing written", err=True)
        raise typer.Exit(130) from None
    except InventoryError as exc:
        _fail_inventory(exc)
    except OutputError as exc:
        typer.echo(printable(f"fabgen: {exc}; nothing written"), err=True)
        raise typer.Exit(2) from None
    except TopologyError as exc:
        typer.echo(f"fabgen: internal error, please report it with the inventory: {exc}", err=True)
        raise typer.Exit(1) from None
    for w in result.warnings:
        typer.echo(printable(f"{inventory}: warning: fabric {w.fabric}: {w.text}"), err=True)
    typer.echo(printable(f"fabgen: wrote {len(result.files)} files to {out}"))
    if timings:
        for stage, seconds in result.timings.items():
            typer.echo(f"  {stage:<10} {seconds * 1000:9.1f} ms")
    if _COMMAND_LINE[0]:
        leave(0)


_COMMAND_LINE = [False]  # main() runs as the program (not called by a test or another program)


def leave(code: int) -> None:
    """End the program without freeing the render object by object: at 64k GPUs that took a
    second after every file was written; the system takes the memory back at once. Only
    after a render, when nothing is left to clean up (no temporary directory, no child)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@app.command()
def validate(inventory: Path = typer.Argument(..., help="inventory YAML file"),
             strict: bool = typer.Option(False, "--strict", help="a warning fails too (exit 1): for CI"),
             fmt: str = typer.Option("text", "--format", help="text, or json: sizes and warnings with their "
                                     "inventory key and location, on stdout")) -> None:
    """Check INVENTORY, print the size of each fabric and every warning render would print; writes nothing.
    Exit 0: valid; 1: valid with warnings and --strict; 2: invalid (every problem located)."""
    from fabgen.api import validate as api_validate

    if fmt not in ("text", "json"):
        typer.echo(f"fabgen: --format must be text or json, not {fmt!r}", err=True)
        raise typer.Exit(2)
    try:
        result = api_validate(inventory)
    except InventoryError as exc:
        if fmt == "json":
            typer.echo(json.dumps({"valid": False, "problems": [p.as_dict() for p in exc.problems]}, indent=2))
        _fail_inventory(exc)
    if fmt == "json":
        typer.echo(json.dumps(result.as_dict(), indent=2))
    else:
        for line in result.size_lines():
            typer.echo(line)
        for w in result.warnings:
            typer.echo(printable(f"{inventory}: warning: fabric {w.fabric}: {w.text}"), err=True)
        typer.echo(printable(f"{inventory}: valid"))
    if strict and result.warnings:
        if fmt == "text":
            typer.echo(f"fabgen: {len(result.warnings)} warning(s) and --strict", err=True)
        raise typer.Exit(1)


@app.command()
def diff(
    old: Path = typer.Argument(..., help="inventory YAML or rendered directory (before); with --base, the "
                               "inventory (after)"),
    new: Optional[Path] = typer.Argument(None, help="inventory YAML or rendered directory (after)"),
    base: Optional[str] = typer.Option(None, "--base", help="compare the inventory with itself at this git "
                                       "revision (e.g. origin/main), side files included"),
    format: str = typer.Option("text", "--format", help="text or markdown (for a pull-request comment)"),
    exit_code: bool = typer.Option(False, "--exit-code", help="exit 1 when anything differs, 0 when nothing does"),
    no_files: bool = typer.Option(False, "--no-files", help="the review summary only, without per-file diffs"),
    stat: bool = typer.Option(False, "--stat", help="the summary and changed files per kind, without diffs"),
    output: Optional[Path] = typer.Option(None, "--output", help="also write the whole review, never truncated, "
                                       "to this file"),
    max_lines: int = typer.Option(5_000, "--max-lines", min=0, help="text: a review longer than this prints its "
                                  "summary and leaves the file diffs to --output (0: no limit)"),
) -> None:
    """Review summary (devices, links, addresses, ASNs, intent) then per-file diffs of two renders.
    `fabgen diff --base origin/main inventory.yaml` reviews the inventory against its own past."""
    from fabgen.review import gitbase

    if (base is None) == (new is None):
        typer.echo("fabgen: give OLD and NEW, or --base REF and one inventory", err=True)
        raise typer.Exit(2)
    if base is None:
        return _diff(old, new, format, exit_code, no_files, stat, output, max_lines)  # type: ignore[arg-type]  # OLD and NEW are given when --base is not
    if not old.is_file():
        typer.echo(printable(f"fabgen: {old}: --base needs an inventory file"), err=True)
        raise typer.Exit(2)
    try:
        with gitbase.inventory_at(base, old) as before:
            _diff(before, old, format, exit_code, no_files, stat, output, max_lines, (f"{old}@{base}", str(old)))
    except gitbase.BaseError as exc:
        typer.echo(printable(f"fabgen: {exc}"), err=True)
        raise typer.Exit(2) from None


def _diff(old: Path, new: Path, format: str, exit_code: bool, no_files: bool, stat: bool, output: Optional[Path],
          max_lines: int = 0, shown_names: Optional[tuple[str, str]] = None) -> None:
    from fabgen.rendered.read import NotARender
    from fabgen.review import compare as differ
    from fabgen.review.format import format_markdown, format_text

    if format not in ("text", "markdown"):
        typer.echo(f"fabgen: --format must be text or markdown, not {format!r}", err=True)
        raise typer.Exit(2)
    for side in (old, new):
        if not side.exists():
            typer.echo(printable(f"fabgen: {side}: no such inventory or directory"), err=True)
            raise typer.Exit(2)
    if output is not None:
        _check_review_output(output, (old, new))
    try:
        with _Progress(plain=True) as progress:
            sides = list(differ.load_sides(old, new, progress))
            progress("comparing")
            differ.check_sides(list(zip((old, new), sides)))
            review = _compared(differ, sides, (old, new))
            progress("folding the review")
            names, files = shown_names or (str(old), str(new)), not no_files
            if format == "markdown":
                shown = format_markdown(review, *names, files=files, stat=stat)
                whole = format_markdown(review, *names, files=files, stat=stat, limit=None) if output else shown
            else:
                whole = format_text(review, *names, files=files, stat=stat)
                shown = format_text(review, *names, files=files, stat=stat, limit=max_lines or None,
                                    whole_to=str(output) if output else None)
    except InventoryError as exc:
        _fail_inventory(exc)
    except NotARender as exc:
        typer.echo(printable(f"fabgen: {exc}"), err=True)
        raise typer.Exit(2) from None
    except OSError as exc:
        where = exc.filename or f"{old} or {new}"
        typer.echo(printable(f"fabgen: {where}: cannot read it ({exc.strerror or exc})"), err=True)
        raise typer.Exit(2) from None
    if output is not None:
        _write_review(output, printable_lines(whole))
    typer.echo(printable_lines(shown), nl=False)
    if exit_code and review.differs:
        raise typer.Exit(1)


def _compared(differ, sides: list, paths: tuple[Path, Path]):
    """differ.compare, where a render folder's file of a shape no check foresaw is one line
    naming the folders, never a traceback (every file the review parses is checked first)."""
    if not any(p.is_dir() for p in paths):
        return differ.compare(*sides)
    try:
        return differ.compare(*sides)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        folders = " or ".join(str(p) for p in paths if p.is_dir())
        raise differ.NotARender(f"{folders}: a file of the render is not what fabgen writes "
                                f"({type(exc).__name__}: {exc})") from None


def _format_or_exit(fmt: str, choices: tuple[str, ...]) -> None:
    """A --format outside `choices`: one line, exit 2."""
    if fmt not in choices:
        typer.echo(f"fabgen: --format must be {', '.join(choices[:-1])} or {choices[-1]}, not {fmt!r}", err=True)
        raise typer.Exit(2)


def _render_dir_or_exit(render_dir: Path) -> None:
    """RENDER_DIR of emulate and verify: a directory, or one line and exit 2."""
    if not render_dir.is_dir():
        typer.echo(printable(f"fabgen: {render_dir}: not a directory (give the OUT of fabgen render)"), err=True)
        raise typer.Exit(2)


def _check_review_output(path: Path, sides: tuple[Path, ...], option: str = "--output") -> None:
    """--output (--chart) never replaces an input of the command, a file inside a render folder under
    review, or anything but a plain file (a link is not followed)."""
    why = None
    if path.is_symlink():
        why = "is a symbolic link; give a plain file name"
    elif path.exists() and not path.is_file():
        why = "not a regular file; give a file name"
    else:
        target = path.absolute().resolve()
        for side in sides:
            real = side.absolute().resolve()
            if target == real or (side.is_dir() and real in target.parents) or \
                    (path.exists() and side.is_file() and os.path.samefile(path, side)):
                why = f"is {'inside ' if target != real else ''}{side}, an input of this command; give another file"
    if why:
        typer.echo(printable(f"fabgen: {option} {path}: {why}"), err=True)
        raise typer.Exit(2)


def _write_review(path: Path, text: str, option: str = "--output") -> None:
    """--output: the whole review in a file the user named (replaced if it is a plain file;
    _check_review_output refused anything else before the review began)."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        typer.echo(printable(f"fabgen: {option} {path}: cannot write it ({exc.strerror or exc})"), err=True)
        raise typer.Exit(2) from None


def _size_option(text: str) -> float:
    """'1GB', '810 GB', '512MiB', '1e9' -> bytes."""
    import re

    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?(?:e[0-9]+)?)\s*([kMGT]i?B|B)?\s*", text)
    if not m:
        raise typer.BadParameter(f"{text!r} is not a size: write e.g. 1GB, 810GB or 512MiB")
    scale = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
             "kiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[m.group(2) or "B"]
    value = float(m.group(1)) * scale
    if not 0 < value <= 1e15:
        raise typer.BadParameter(f"{text!r}: give a size above 0 and at most 1 PB")
    return value


MIN_EFFICIENCY = 0.01  # below 1% no fabric is worth comparing; tiny values overflowed the estimates


def _efficiency_option(values: list[str]) -> dict[str, float]:
    out = {}
    for item in values:
        key, _, value = item.partition("=")
        if key not in ("link", "infiniband", "roce", "spectrum-x"):
            raise typer.BadParameter(f"{item!r}: KIND=VALUE with KIND one of link, infiniband, roce, spectrum-x")
        try:
            if not re.fullmatch(r"[0-9.eE+-]+", value, re.ASCII):
                raise ValueError(value)
            number = float(value)
        except ValueError:
            raise typer.BadParameter(f"{item!r}: VALUE must be a number between 0 and 1") from None
        if not MIN_EFFICIENCY <= number <= 1:  # also refuses nan
            raise typer.BadParameter(f"{item!r}: VALUE must be at least {MIN_EFFICIENCY} and at most 1")
        out[key] = number
    return out


@app.command()
def compare(
    inventory: Path = typer.Argument(..., help="inventory YAML file"),
    prices: Optional[Path] = typer.Option(None, "--prices", help="price list YAML (default: the built-in "
                                          "estimates; docs/compare.md)"),
    months: int = typer.Option(36, "--months", min=1, max=240, help="amortization period in months"),
    fmt: str = typer.Option("table", "--format", help="table, markdown or json"),
    allreduce: str = typer.Option("1GB", "--allreduce", help="all-reduce size for the time estimate (e.g. 1GB, "
                                  "810GB, 512MiB)"),
    efficiency: list[str] = typer.Option([], "--efficiency", help="replace an assumed efficiency: KIND=VALUE "
                                         "(link, infiniband, roce, spectrum-x); repeatable"),
    chart: Optional[Path] = typer.Option(None, "--chart", help="also draw cost per GPU-hour against bus "
                                         "bandwidth to this .svg or .png file"),
    prices_template: Optional[Path] = typer.Option(None, "--prices-template", help="also write a price list of "
                                                   "every part the options need, prices empty, to fill in"),
) -> None:
    """Size every fabric of INVENTORY as each kind, platform and switch model that can carry it; print
    switches, links, optics, cost per GPU-hour and a bandwidth estimate side by side. Writes nothing
    unless --chart is given."""
    from fabgen.compare import compare as run_compare
    from fabgen.compare import output
    from fabgen.compare.prices import read

    _format_or_exit(fmt, ("table", "markdown", "json"))
    if chart is not None and chart.suffix.lower() not in (".svg", ".png"):
        typer.echo(printable(f"fabgen: --chart {chart}: give a file ending in .svg or .png"), err=True)
        raise typer.Exit(2)
    if chart is not None and (chart.is_dir() or not chart.parent.is_dir()):
        typer.echo(printable(f"fabgen: --chart {chart}: not a file in an existing directory"), err=True)
        raise typer.Exit(2)
    if chart is not None:
        _check_review_output(chart, tuple(p for p in (inventory, prices) if p is not None), "--chart")
    if prices_template is not None:
        _check_review_output(prices_template, tuple(p for p in (inventory, prices, chart) if p is not None),
                             "--prices-template")
    message_bytes = _size_option(allreduce)
    assumed = _efficiency_option(efficiency)
    try:
        price_list, name = read(prices)
    except InventoryError as exc:
        _fail_inventory(exc, "the price list")
    try:
        data = run_compare(inventory, price_list, name, months, message_bytes, assumed)
    except InventoryError as exc:
        _fail_inventory(exc)
    if chart is not None:
        from fabgen.compare.chart import ChartUnavailable, draw

        try:
            draw(data, chart)
        except ChartUnavailable as exc:
            typer.echo(f"fabgen: {exc}", err=True)
            raise typer.Exit(2) from None
        except OSError as exc:
            typer.echo(printable(f"fabgen: --chart {chart}: cannot write it ({exc.strerror or exc})"), err=True)
            raise typer.Exit(2) from None
    if prices_template is not None:
        from fabgen.compare.prices import template

        _write_review(prices_template, template(data, price_list.currency), "--prices-template")
    if fmt == "table":
        import shutil

        text = output.to_text(data, columns=shutil.get_terminal_size((0, 0)).columns if sys.stdout.isatty() else 0)
    else:
        text = {"json": output.to_json, "markdown": output.to_markdown}[fmt](data)
    typer.echo(printable_lines(text), nl=False)


@app.command()
def emulate(
    render_dir: Path = typer.Argument(..., help="the OUT of fabgen render"),
    fabric: Optional[str] = typer.Option(None, "--fabric", help="emulate this Ethernet fabric (or one plane of it) "
                                         "only; default: every RoCE and Spectrum-X fabric"),
    fail: list[str] = typer.Option([], "--fail", help="after convergence take DEVICE:PORT (or a whole DEVICE) "
                                   "down and check again; repeatable"),
    fmt: str = typer.Option("text", "--format", help="text or json"),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=10, max=3600, help="seconds the run may take "
                                            "to settle, per phase (default 300, 1200 beyond 100 routers)"),
    save_state: Optional[Path] = typer.Option(None, "--save-state", help="write each switch's FRR state once "
                                              "converged (<device>.bgp.json, .routes.json, .bfd.json) into this new "
                                              "directory: what fabgen verify --frr reads"),
    # the default is emulate.run.MAX_ROUTERS (not imported here: the CLI loads emulation lazily)
    max_routers: int = typer.Option(320, "--max-routers", min=4, max=4000, help="beyond this many FRR instances "
                                    "(switches and routing nodes) emulate a sample chosen from the plan: the top tier "
                                    "whole, then whole pods or leaves in order"),
    # the default is emulate.run.MAX_HOSTS
    max_nodes: int = typer.Option(128, "--max-nodes", min=1, max=8192, help="beyond this many nodes (a namespace "
                                  "each) emulate a sample, as for --max-routers"),
    # the default is emulate.run.MAX_SESSIONS
    max_sessions: int = typer.Option(4096, "--max-sessions", min=1, max=100000, help="beyond this many BGP sessions "
                                     "(FRR holds about 0.7 MB per peer) emulate a sample, as for --max-routers"),
    trust_edited: bool = typer.Option(False, "--trust-edited", help="emulate render files changed since fabgen wrote "
                                      "them (or not written by it); they are still checked value by value, and the "
                                      "report names them"),
    show_progress: bool = typer.Option(False, "--progress", help="where stderr is no terminal (a CI log, a VM's "
                                       "console), print each stage with its seconds on stderr"),
) -> None:
    """Bring the Ethernet fabrics of RENDER_DIR up in network namespaces with FRR, from the rendered
    files, and check sessions, routes, ECMP widths and host reachability against the plan. Needs
    root and FRR; creates nothing outside the namespaces it removes. Exit 0: every check passed;
    1: a check failed; 2: bad input, or the machine cannot run it."""
    from fabgen.emulate.lab import LabError
    from fabgen.emulate.read import BadInput
    from fabgen.emulate.run import emulate as run_emulate

    _format_or_exit(fmt, ("text", "json"))
    _render_dir_or_exit(render_dir)
    try:
        with _Progress(plain=show_progress) as progress:
            result = run_emulate(render_dir, fabric, fail, timeout, progress=progress, save_state=save_state,
                                 max_routers=max_routers, max_hosts=max_nodes, max_sessions=max_sessions,
                                 trust_edited=trust_edited)
    except KeyboardInterrupt:
        typer.echo("fabgen: interrupted; every namespace and process of the run removed", err=True)
        raise typer.Exit(130) from None
    except (BadInput, LabError) as exc:
        typer.echo(printable(f"fabgen: {exc}"), err=True)
        raise typer.Exit(2) from None
    if fmt == "json":
        typer.echo(json.dumps(result.as_dict(), indent=2, sort_keys=True))
    else:
        from fabgen.emulate.report import text

        typer.echo(printable_lines(text(result)), nl=False)
    raise typer.Exit(0 if result.ok else 1)


@app.command()
def verify(
    render_dir: Path = typer.Argument(..., help="the OUT of fabgen render: the plan"),
    ibnetdiscover: list[Path] = typer.Option([], "--ibnetdiscover", help="ibnetdiscover's output (InfiniBand)"),
    lldp: list[Path] = typer.Option([], "--lldp", help="LLDP evidence: a directory of <device>.json/.txt (lldpctl "
                                    "-f json, EOS show lldp neighbors detail | json, NVUE nv show interface "
                                    "--view=lldp -o json, SONiC show lldp table), or one such file named after its "
                                    "device"),
    fabric: Optional[str] = typer.Option(None, "--fabric", help="hold only this fabric (and its planes) to the plan"),
    speed: bool = typer.Option(False, "--speed", help="also hold each link's speed, where the evidence gives it, "
                               "to the plan"),
    frr: Optional[Path] = typer.Option(None, "--frr", help="FRR's state of SONiC and Cumulus switches: a directory of "
                                       "<device>.bgp.json (show bgp ipv4 unicast summary json), .routes.json (show ip "
                                       "route json) and .bfd.json (show bfd peers json); fabgen emulate --save-state "
                                       "writes one"),
    running: Optional[Path] = typer.Option(None, "--running", help="the switches' running configs, held against the "
                                           "rendered ones by meaning: a directory of <device>.cfg (EOS show "
                                           "running-config), <device>.yaml (NVUE nv config show -o yaml) and "
                                           "<device>.json (SONiC show runningconfiguration all); each switch that "
                                           "differs gets its remediation"),
    anta_catalog: Optional[Path] = typer.Option(None, "--anta-catalog", help="write the EOS switches' expected state "
                                                "as an ANTA test catalog to this file (BGP sessions, BFD peers, ECMP "
                                                "widths, LLDP neighbours, port status, lossless QoS and MTU lines)"),
    fmt: str = typer.Option("text", "--format", help="text, markdown (a ticket) or json"),
    trust_edited: bool = typer.Option(False, "--trust-edited", help="use render files changed since fabgen wrote "
                                      "them (or not written by it) as the plan; the report names them"),
) -> None:
    """Hold the built fabric's cabling, from LLDP and ibnetdiscover, against RENDER_DIR's plan: each
    cable from both ends (miswired, not cabled, unplanned, several neighbours; not deployed and
    unverified apart) and the moves that repair it; with --running, each switch's running config
    (missing, extra, different settings, and the remediation). Exit 0: as planned; 1: anything
    differs; 2: bad input."""
    from fabgen.verify import report
    from fabgen.verify.run import BadInput
    from fabgen.verify.run import anta_catalog as anta_catalog_of
    from fabgen.verify.run import verify as run_verify

    _format_or_exit(fmt, ("text", "markdown", "json"))
    _render_dir_or_exit(render_dir)
    try:
        if anta_catalog is not None:
            _check_review_output(anta_catalog, (render_dir, *ibnetdiscover, *lldp, *([frr] if frr else []),
                                                *([running] if running else [])), "--anta-catalog")
            catalog, switches, tests = anta_catalog_of(render_dir, fabric, trust_edited)
        if ibnetdiscover or lldp or frr is not None or running is not None or anta_catalog is None:
            v = run_verify(render_dir, ibnetdiscover, lldp, fabric, speed, frr, trust_edited, running)
    except BadInput as exc:
        typer.echo(printable(f"fabgen: {exc}"), err=True)
        raise typer.Exit(2) from None
    if anta_catalog is not None:
        try:
            anta_catalog.write_text(catalog, encoding="utf-8")
        except OSError as exc:
            typer.echo(printable(f"fabgen: --anta-catalog {anta_catalog}: cannot write it ({exc.strerror or exc})"),
                       err=True)
            raise typer.Exit(2) from None
        typer.echo(printable(f"fabgen: wrote {anta_catalog}: {tests} ANTA tests for {switches} EOS switches"), err=True)
        if not (ibnetdiscover or lldp or frr is not None or running is not None):
            raise typer.Exit(0)
    text = {"text": report.to_text, "markdown": report.to_markdown, "json": report.to_json}[fmt](v)
    typer.echo(printable_lines(text), nl=False)
    raise typer.Exit(1 if v.issues else 0)


@app.command()
def lab(
    render_dir: Path = typer.Argument(..., help="the OUT of fabgen render"),
    output: Path = typer.Option(..., "--output", "-o", help="a new directory for the lab files (containerlab/, "
                                "netlab/, air/)"),
    fabric: Optional[str] = typer.Option(None, "--fabric", help="this Ethernet fabric (or one plane of it) only; "
                                         "default: every RoCE and Spectrum-X fabric"),
    # the defaults are lab.run.MAX_SWITCHES and MAX_NODES (not imported here: the CLI loads the lab lazily)
    max_switches: int = typer.Option(16, "--max-switches", min=2, max=4000, help="beyond this many switches (and "
                                     "nodes that run BGP) write a sample chosen from the plan, as fabgen emulate "
                                     "does: the top tier whole, then whole pods or leaves in order"),
    max_nodes: int = typer.Option(8, "--max-nodes", min=0, max=8192, help="beyond this many nodes write a sample, "
                                  "as for --max-switches"),
    trust_edited: bool = typer.Option(False, "--trust-edited", help="use render files changed since fabgen wrote "
                                      "them (or not written by it); the files' header names them"),
) -> None:
    """Write lab topologies of RENDER_DIR's Ethernet fabrics to boot with your own images: containerlab
    (cEOS, SONiC-VS, Cumulus VX, Linux nodes), netlab and NVIDIA Air, each switch booting its rendered
    config, every planned cable a link. Starts nothing. Exit 0: written; 2: bad input."""
    from fabgen.emulate.read import BadInput
    from fabgen.lab.run import lab as make_lab
    from fabgen.lab.run import write

    _render_dir_or_exit(render_dir)
    if output.exists() or output.is_symlink():
        typer.echo(printable(f"fabgen: --output {output}: exists; give a new directory"), err=True)
        raise typer.Exit(2)
    try:
        files = make_lab(render_dir, fabric, max_switches, max_nodes, trust_edited)
        write(output, files)
    except BadInput as exc:
        typer.echo(printable(f"fabgen: {exc}"), err=True)
        raise typer.Exit(2) from None
    typer.echo(printable(f"fabgen: wrote {len(files)} lab file(s) to {output}"), err=True)


@app.command("netbox-growth")
def netbox_growth(
    before: Path = typer.Argument(..., help="the OUT of the render NetBox already holds"),
    after: Path = typer.Argument(..., help="the OUT of the grown cluster's render"),
    output: Path = typer.Option(..., "--output", "-o", help="a new directory for the growth files"),
) -> None:
    """Write the NetBox files of the objects AFTER adds to BEFORE (each file's new rows, with its
    header), to import after BEFORE's files in the same order. Exit 0: written; 1: AFTER changes
    an object of BEFORE (not a growth); 2: bad input."""
    from fabgen.rendered.read import NotARender
    from fabgen.review.netbox_growth import NotAGrowth, growth, write

    for side in (before, after):
        _render_dir_or_exit(side)
    if output.exists() or output.is_symlink():
        typer.echo(printable(f"fabgen: --output {output}: exists; give a new directory"), err=True)
        raise typer.Exit(2)
    try:
        files = growth(before, after)
    except NotARender as exc:
        typer.echo(printable(f"fabgen: {exc}"), err=True)
        raise typer.Exit(2) from None
    except NotAGrowth as exc:
        typer.echo(printable(f"fabgen: not a growth: {exc}"), err=True)
        raise typer.Exit(1) from None
    try:
        write(files, output)
    except OSError as exc:
        typer.echo(printable(f"fabgen: --output {output}: cannot write it ({exc.strerror or exc})"), err=True)
        raise typer.Exit(2) from None
    rows = sum(data.count(b"\n") - 1 for data in files.values())
    typer.echo(f"fabgen: wrote {len(files)} NetBox file(s), {rows} new object(s), to {printable(str(output))}",
               err=True)


@app.command()
def schema(fmt: str = typer.Option("json", "--format", help="json (JSON Schema) or markdown (docs/inventory.md)")
           ) -> None:
    """Print the inventory format: its JSON Schema, or the reference of every key as Markdown."""
    if fmt == "markdown":
        from fabgen.inventory.reference import markdown

        typer.echo(markdown(), nl=False)
        return
    if fmt != "json":
        typer.echo(f"fabgen: --format must be json or markdown, not {fmt!r}", err=True)
        raise typer.Exit(2)
    from fabgen.spec.schema import json_schema

    typer.echo(json.dumps(json_schema(), indent=2, sort_keys=True))


@app.command()
def version() -> None:
    """Print fabgen's version."""
    typer.echo(__version__)


def main(argv: Optional[list[str]] = None) -> None:
    _COMMAND_LINE[0] = argv is None
    if argv is None:
        from fabgen.allocator import restart

        restart(sys.argv)  # once, before any work: glibc reads its settings only at the start
    app(args=argv)


if __name__ == "__main__":
    main()
