"""A real NetBox imports fabgen's NetBox files, as docs/netbox.md tells a user to.

NetBox (the PyPI package, in the Makefile's NETBOX_VENV) with PostgreSQL and Redis from Debian
(tests/netbox_server.py, started by conftest.py while the suite runs); each render goes into a
database of its own through NetBox's bulk-import pages (tests/netbox_import.py). Asserted from
what NetBox then holds: every row of every file imported, every cable between its two planned
interfaces, every planned address on its planned interface and VRF, NVL72 trays in their racks;
a grown cluster's growth files (fabgen netbox-growth) add exactly the new objects; a device-type
file without u_height (what fabgen wrote before) is refused by NetBox.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IN_CI, INVENTORIES, NETBOX_VENV, ROOT

pytestmark = pytest.mark.integration

DATA = Path(__file__).parent / "data"
DRIVER = Path(__file__).parent / "netbox_import.py"
FABGEN = [sys.executable, "-m", "fabgen"]


@pytest.fixture(scope="module")
def netbox():
    if not (NETBOX_VENV / ".installed").exists():
        if IN_CI:
            raise RuntimeError(f"CI must have NetBox in {NETBOX_VENV} (`make test` builds it)")
        pytest.skip(f"NetBox is not installed in {NETBOX_VENV} (make {NETBOX_VENV}/.installed)")
    from netbox_server import shared

    nb = shared(NETBOX_VENV)
    nb.ready()
    return nb


def _render(inventory: Path, out: Path) -> Path:
    subprocess.run([*FABGEN, "render", str(inventory), "-o", str(out)], check=True, capture_output=True, timeout=300,
                   cwd=ROOT)
    return out


def _import(netbox, database: str, folder: Path) -> list[dict]:
    env = netbox.database(database)
    res = subprocess.run([str(NETBOX_VENV / "bin" / "python"), str(DRIVER), "import", str(folder)], env=env,
                         capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def _dump(netbox, database: str) -> dict:
    res = subprocess.run([str(NETBOX_VENV / "bin" / "python"), str(DRIVER), "dump"], env=netbox.env(database),
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def _rows(folder: Path, name: str) -> list[dict[str, str]]:
    path = next(folder.glob(f"[0-9][0-9]-{name}.csv"), None)
    return list(csv.DictReader(path.open())) if path else []


def _all_imported(result: list[dict], folder: Path) -> None:
    files = sorted(p.name for p in folder.glob("*.csv"))
    assert [r["file"] for r in result] == files, result  # every file, none stopped by an error
    for r in result:
        assert r.get("errors") is None and r["imported"] == r["rows"] > 0, r


def _holds_plan(held: dict, folder: Path) -> None:
    """What NetBox holds is the plan of FOLDER's files, object by object."""
    devices = _rows(folder, "devices")
    assert set(held["devices"]) == {d["name"] for d in devices}
    for d in devices:
        assert held["devices"][d["name"]]["type"] == d["device_type"]
        assert held["devices"][d["name"]]["rack"] == d.get("rack", "")
    types = {t["model"]: float(t["u_height"]) for t in _rows(folder, "device-types")}
    assert all(types[v["type"]] == v["u_height"] for v in held["devices"].values())
    assert held["racks"] == sorted(r["name"] for r in _rows(folder, "racks"))
    planned = sorted([[f"{c['side_a_device']}:{c['side_a_name']}"], [f"{c['side_b_device']}:{c['side_b_name']}"]]
                     for c in _rows(folder, "cables"))
    assert held["cables"] == planned  # every cable terminates on exactly its two planned interfaces
    ports = {(i["device"], i["name"]): i for i in _rows(folder, "interfaces") + _rows(folder, "virtual-interfaces")}
    assert {(i[0], i[1]) for i in held["interfaces"]} == set(ports)
    for dev, name, _type, lag, parent, _vrf in held["interfaces"]:
        assert lag == ports[dev, name].get("lag", "") and parent == ports[dev, name].get("parent", "")
    addresses = sorted([a["address"], a["vrf"], a["role"], a["device"], a["interface"]]
                       for a in _rows(folder, "ip-addresses"))
    assert held["addresses"] == addresses
    assert held["vrfs"] == sorted(v["name"] for v in _rows(folder, "vrfs"))


def _planned_addresses(render: Path) -> set[str]:
    """Every address of every fabric's addresses.csv (the render's own address plan)."""
    return {r["address"] for p in render.glob("*/addresses.csv") for r in csv.DictReader(p.open()) if r["address"]}


def test_nvl72_cluster_imports_whole_and_grows_by_new_objects_only(netbox, tmp_path):
    """Compute InfiniBand, a north-south Spectrum-X fabric with bonds and tenant VRFs, out-of-band:
    imported whole; then the cluster grown by a rack, its growth files imported on top."""
    base = _render(DATA / "netbox-nvl72.yaml", tmp_path / "base")
    _all_imported(_import(netbox, "nvl72", base / "netbox"), base / "netbox")
    held = _dump(netbox, "nvl72")
    _holds_plan(held, base / "netbox")
    assert {a[0] for a in held["addresses"]} == _planned_addresses(base)
    assert held["racks"] and held["vrfs"] and any(i[3] for i in held["interfaces"])  # racks, VRFs, LAGs: there

    grown = _render(DATA / "netbox-nvl72-grown.yaml", tmp_path / "grown")
    subprocess.run([*FABGEN, "netbox-growth", str(base), str(grown), "-o", str(tmp_path / "growth")], check=True,
                   capture_output=True, timeout=300, cwd=ROOT)
    growth = tmp_path / "growth" / "netbox"
    result = subprocess.run([str(NETBOX_VENV / "bin" / "python"), str(DRIVER), "import", str(growth)],
                            env=netbox.env("nvl72"), capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    _all_imported(json.loads(result.stdout), growth)
    after = _dump(netbox, "nvl72")
    _holds_plan(after, grown / "netbox")  # exactly the grown plan: nothing twice, nothing missing
    assert len(after["devices"]) - len(held["devices"]) == len(_rows(growth, "devices")) > 0
    assert len(after["cables"]) - len(held["cables"]) == len(_rows(growth, "cables")) > 0


def test_eos_fabric_addresses_on_loopbacks_and_svis(netbox, tmp_path):
    """A RoCE EOS fabric: leaf SVIs and loopbacks are interfaces NetBox creates from the files, each
    address on its own."""
    out = _render(INVENTORIES / "roce-2node.yaml", tmp_path / "r")
    _all_imported(_import(netbox, "roce", out / "netbox"), out / "netbox")
    held = _dump(netbox, "roce")
    _holds_plan(held, out / "netbox")
    assert {a[0] for a in held["addresses"]} == _planned_addresses(out)
    assert any(a[2] == "loopback" for a in held["addresses"])


def test_netbox_refuses_device_types_without_height(netbox, tmp_path):
    """The check can fail: the device-type file as fabgen wrote it before (no u_height) is refused
    by NetBox, and the import stops there."""
    out = _render(INVENTORIES / "roce-2node.yaml", tmp_path / "r")
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("01-manufacturers.csv", "02-device-roles.csv", "03-device-types.csv", "06-devices.csv"):
        shutil.copy(out / "netbox" / name, broken / name)
    rows = list(csv.reader((broken / "03-device-types.csv").open()))
    cut = rows[0].index("u_height")
    with (broken / "03-device-types.csv").open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([r[:cut] + r[cut + 1:] for r in rows])
    result = _import(netbox, "broken", broken)
    assert [r["file"] for r in result] == ["01-manufacturers.csv", "02-device-roles.csv", "03-device-types.csv"]
    assert "u_height" in " ".join(result[-1]["errors"]) and "imported" not in result[-1]
