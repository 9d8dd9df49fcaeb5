"""Shared fixtures and the --update-golden option."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INVENTORIES = ROOT / "inventories"
GOLDEN = ROOT / "golden"
ERRORS = Path(__file__).resolve().parent / "errors"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden/ and tests/errors/*.expected from the current code; read the diff after")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def example_cases() -> list[str]:
    return sorted(p.stem for p in INVENTORIES.glob("*.yaml"))


def git(cwd: Path, *args: str) -> None:
    """git in a repository a test made, with an identity of its own (CI has none configured)."""
    import subprocess

    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=60)


NETBOX_VENV = ROOT / os.environ.get("NETBOX_VENV", ".venv-netbox")  # the Makefile's NETBOX_VENV


# Test files that start daemons, network namespaces, the EVPN VM or a NetBox: under pytest-xdist
# (`make test` runs two workers, `-n 2`) they run one after another on one worker, in their usual
# order, while the other worker takes the rest test by test (`pytest_xdist_make_scheduler`). They
# share the machine's namespaces, FRR's users, slurmctld's port and the lab checks' before-and-after
# counts (tests/labtrace.py counts one process's labs), so two of them must never run at once.
MACHINE = frozenset({
    "test_emulate.py", "test_hostile_emulate.py", "test_lab_cleanup.py", "test_host_routing.py",
    "test_verify.py", "test_ztp_lab.py", "test_netbox_real.py", "test_plane_pairs.py",
    "test_opensm_ibsim.py", "test_hardware.py", "test_slurm.py", "test_slurm_yaml.py",
    "test_oob_routed.py", "test_gpu_overlay.py", "test_collapsed_pair.py",
})
WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # set in an xdist worker, absent in a plain run


def _machine(nodeid: str) -> bool:
    return nodeid.split("::", 1)[0].rsplit("/", 1)[-1] in MACHINE


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """xdist's scope scheduler with one scope for the machine's tests and one a test for the rest:
    the largest scope is handed out first, so one worker starts on the machine's tests at once.
    (Its `xdist_group` mark does not group under pytest 9.2, which reads a test's id elsewhere.)"""
    from xdist.scheduler import LoadScopeScheduling

    class MachineScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "machine" if _machine(nodeid) else nodeid

    return MachineScheduling(config, log)


def _netbox_wanted(items: list[pytest.Item]) -> bool:
    return (NETBOX_VENV / ".installed").exists() and any(i.path.name == "test_netbox_real.py" for i in items)


def _start_netbox() -> None:
    """A real NetBox's migrations take minutes of one core: started as soon as the process that runs
    the NetBox tests starts testing, so the tests before them run meanwhile (tests/netbox_server.py)."""
    from netbox_server import shared
    from test_netbox_real import prepare

    shared(NETBOX_VENV, prepare)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """A plain run starts NetBox now; an xdist worker when it starts on the machine's tests
    (`pytest_runtest_setup`): the other worker never runs them."""
    if not WORKER and _netbox_wanted(items):
        _start_netbox()


_NETBOX_LOOKED: list[bool] = []


def pytest_runtest_setup(item: pytest.Item) -> None:
    if WORKER and not _NETBOX_LOOKED and _machine(item.nodeid):
        _NETBOX_LOOKED.append(True)
        if _netbox_wanted(item.session.items):
            _start_netbox()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from netbox_server import stop_shared

    stop_shared()
