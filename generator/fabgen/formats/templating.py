"""One Jinja environment for the whole run, templates compiled once.

Templates only format: every decision is made in the structured config. StrictUndefined
turns a missing key into an error instead of an empty string in a switch config.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

_PACKAGE = Path(__file__).resolve().parents[1]


def templates_dir() -> Path:
    """Inside the wheel: fabgen/templates; in a source checkout: <repo>/templates."""
    packaged = _PACKAGE / "templates"
    if packaged.is_dir():
        return packaged
    return _PACKAGE.parents[1] / "templates"


def playbooks_dir() -> Path:
    """The deploy playbooks: inside the wheel fabgen/ansible; in a source checkout <repo>/ansible."""
    packaged = _PACKAGE / "ansible"
    if packaged.is_dir():
        return packaged
    return _PACKAGE.parents[1] / "ansible"


def _fail(message: str) -> None:
    raise jinja2.TemplateRuntimeError(message)


_DICT_ATTRIBUTES = frozenset(dir(dict))


class _Environment(jinja2.Environment):
    """`x.name` on a structured-config dict, without Jinja's detour through an exception.

    Jinja resolves `x.name` by trying getattr(x, "name") first and the key only after the
    AttributeError; templates read millions of dict keys at 32k GPUs, and that exception was
    a third of the render. For a plain dict and a name that is not one of dict's own
    attributes the result is the same either way (getattr always fails), so look the key up
    first; everything else goes the usual way."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = _Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,
    )
    env.globals["fail"] = _fail
    # free text from the inventory (vendor, part, descriptions) inside a Markdown table cell
    env.filters["md_cell"] = lambda v: str(v).replace("\\", "\\\\").replace("|", "\\|")
    env.filters["tojson_compact"] = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"))
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
