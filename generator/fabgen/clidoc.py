"""docs/reference/commands/<command>.md, one page per command, generated from the command line
itself (its arguments, options, defaults and help), so the reference cannot drift from it:

    python -m fabgen.clidoc docs/reference/commands

tests/test_docs.py regenerates the pages and compares them with the files in docs/."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

from typer.models import ArgumentInfo, OptionInfo

from fabgen.cli import app


def _text(value: str | None) -> str:
    return " ".join((value or "").split())


def _default(info: Any) -> str:
    if info.default is ...:
        return "required"
    if info.default is False:
        return "off"
    if info.default in (None, [], ()):
        return "none"
    return f"`{info.default}`"


def _commands() -> list[tuple[str, Any]]:
    return sorted(((c.name or c.callback.__name__.replace("_", "-"), c.callback) for c in app.registered_commands
                   if not c.hidden and c.callback is not None), key=lambda x: x[0])  # @app.command() sets each callback


def page(name: str, callback: Any) -> str:
    """The markdown page of one command, from its function's parameters (typer's ArgumentInfo and
    OptionInfo: names, defaults, help) and its docstring."""
    params = inspect.signature(callback).parameters.items()
    args = [(n, p.default) for n, p in params if isinstance(p.default, ArgumentInfo)]
    opts = [(n, p.default) for n, p in params if isinstance(p.default, OptionInfo)]
    usage = " ".join([f"fabgen {name}", *(f"{n.upper()}" if i.default is ... else f"[{n.upper()}]" for n, i in args),
                      "[OPTIONS]" if opts else ""]).rstrip()
    lines = [f"# fabgen {name}", "", "Generated from the command line by `python -m fabgen.clidoc`; do not edit.", "",
             "```text", usage, "```", "", inspect.cleandoc(callback.__doc__ or ""), ""]
    if args:
        lines += ["## Arguments", "", "| argument | default | meaning |", "|---|---|---|"]
        lines += [f"| `{n.upper()}` | {_default(i)} | {_text(i.help)} |" for n, i in args]
        lines.append("")
    if opts:
        lines += ["## Options", "", "| option | default | meaning |", "|---|---|---|"]
        for n, i in opts:
            decls = i.param_decls or (f"--{n.replace('_', '-')}",)
            lines.append(f"| {', '.join(f'`{d}`' for d in decls)} | {_default(i)} | {_text(i.help)} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def pages() -> dict[str, str]:
    """file name -> text, a page per command and an index."""
    out = {f"{name}.md": page(name, callback) for name, callback in _commands()}
    index = ["# Commands", "", "Generated from the command line by `python -m fabgen.clidoc`; do not edit.", "",
             "Options of every command: `--verbose` (`-v`, the YAML parser's own words in syntax errors), "
             "`--version`, `--install-completion` and `--show-completion` (bash, zsh, fish, PowerShell), "
             "`--help`.", "", "| command | what it does |", "|---|---|"]
    for name, callback in _commands():
        first = _text(inspect.cleandoc(callback.__doc__ or "").split("\n\n")[0])
        index.append(f"| [`fabgen {name}`]({name}.md) | {first} |")
    out["index.md"] = "\n".join(index) + "\n"
    return out


def main(argv: list[str]) -> None:
    target = Path(argv[0]) if argv else Path("docs/reference/commands")
    target.mkdir(parents=True, exist_ok=True)
    for name, text in pages().items():
        (target / name).write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
