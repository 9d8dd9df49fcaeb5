"""fabgen: one GPU-cluster inventory in, every file its network needs out.

The Python API (docs/reference/api.md): `fabgen.validate(inventory)` and
`fabgen.render(inventory, out)`, an inventory being a path or a mapping; bad input raises
`fabgen.InventoryError` with every located problem."""

__version__ = "0.1.0"

from fabgen.api import FabricSize, Rendered, Validation, Warning, render, validate  # noqa: E402
from fabgen.errors import InventoryError, OutputError  # noqa: E402

__all__ = ["validate", "render", "Validation", "Rendered", "FabricSize", "Warning", "InventoryError", "OutputError",
           "__version__"]
