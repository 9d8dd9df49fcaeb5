"""fabgen: one GPU-cluster inventory in, every file its network needs out.

The Python API (docs/reference/api.md): `fabgen.validate(inventory)` and
`fabgen.render(inventory, out)`, an inventory being a path or a mapping; bad input raises
`fabgen.InventoryError` with every located problem.

The names are imported on first use (PEP 562), so that importing a part of fabgen (the
readers: `fabgen verify`, `fabgen emulate`) does not import the API and with it every stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fabgen._version import __version__

if TYPE_CHECKING:
    from fabgen.api import FabricSize, Rendered, Validation, Warning, render, validate
    from fabgen.errors import InventoryError, OutputError

__all__ = ["validate", "render", "Validation", "Rendered", "FabricSize", "Warning", "InventoryError", "OutputError",
           "__version__"]

_FROM = {"validate": "api", "render": "api", "Validation": "api", "Rendered": "api", "FabricSize": "api",
         "Warning": "api", "InventoryError": "errors", "OutputError": "errors"}


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        raise AttributeError(f"module 'fabgen' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"fabgen.{_FROM[name]}"), name)
    globals()[name] = value
    return value
