"""Validate loaded inventory data: schema first, then cross-field checks.

Every problem is located through the loader's position table and reported together
with the others of the same stage. Catalog names and keys get a "did you mean" hint.

The checks live in modules by concern (docs/architecture.md): check_nodes, check_fabrics,
check_oob, check_names, check_cluster, check_infiniband, sharing `state.Checks`; messages.py
words the problems, custom_models.py resolves the hardware."""

from __future__ import annotations

from pydantic import ValidationError

from fabgen.errors import InventoryError, Problem
from fabgen.inventory.check_baseline import check_baseline
from fabgen.inventory.check_cluster import check_addressing, check_management_and_platform
from fabgen.inventory.check_fabrics import check_border_names, check_fabric, check_segment_ids
from fabgen.inventory.check_infiniband import check_infiniband, read_guid_maps
from fabgen.inventory.check_names import check_subnet_manager_names, check_switch_names
from fabgen.inventory.check_nodes import check_node_groups, check_unattached
from fabgen.inventory.check_oob import check_oob
from fabgen.inventory.check_provisioning import check_provisioning
from fabgen.inventory.custom_models import resolve_models
from fabgen.inventory.defaults import with_default_pools
from fabgen.inventory.loader import Loaded
from fabgen.inventory.messages import schema_problems
from fabgen.inventory.state import Checks, Validated
from fabgen.spec.schema import Inventory


def validate(loaded: Loaded) -> Validated:
    """Schema, then cross-field checks; raises InventoryError with every problem found. The
    growth checks of unplanned fabrics (warnings only, never problems; they compare the cabling
    of two plans) are left in `pending` for the stage after validation
    (topology/growth.growth_warnings, which the pipeline runs beside the build)."""
    c = Checks(loaded, _schema(loaded))
    c.switch_models, c.node_models = resolve_models(c.inv, c.report)
    check_node_groups(c)
    for i, f in enumerate(c.inv.fabrics):  # the out-of-band networks last: they take the others' switches
        if f.role != "oob":
            check_fabric(c, i, f)
    for i, f in enumerate(c.inv.fabrics):
        if f.role == "oob":
            check_oob(c, i, f)
    check_switch_names(c)
    check_border_names(c)
    check_segment_ids(c)
    check_subnet_manager_names(c)
    read_guid_maps(c)  # before check_addressing: its storage-server warning counts the GUIDs left synthetic
    check_addressing(c)
    check_management_and_platform(c)
    # warnings are a fabric's (the pipeline files them by fabric): the site baseline's go to the first
    check_baseline(c.inv.baseline, c.inv.fabrics, c.report, c.warner(c.inv.fabrics[0].name))
    check_unattached(c)
    for i, f in enumerate(c.inv.fabrics):
        check_infiniband(c, i, f)
    check_provisioning(c)
    if c.problems:
        raise InventoryError(c.problems)
    v = Validated(loaded, c.inv, c.switch_models, c.node_models, c.plans, c.members, c.storage, c.guid_maps,
                  c.warnings, c.managed, c.pending, c.macs)
    return v


def _schema(loaded: Loaded) -> Inventory:
    """The version gate and the pydantic schema; every schema problem at once."""
    data = loaded.data
    if not isinstance(data, dict):
        raise InventoryError([Problem(1, 1, "", "the inventory must be a mapping starting with 'version: 1'",
                                      loaded.file)])
    # a boolean or a fraction equal to 1 (true, 1.0) is left to the schema, which names it
    if "version" in data and data["version"] != 1 and not isinstance(data["version"], bool):
        line, col = loaded.where(("version",))
        raise InventoryError([Problem(line, col, "version", f"unsupported format version {data['version']!r}; "
                                      "this fabgen reads version 1", loaded.file)])
    try:
        return with_default_pools(Inventory.model_validate(data))
    except ValidationError as exc:
        raise InventoryError(schema_problems(loaded, exc)) from None
