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


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """A real NetBox's migrations take minutes of one core: start them as soon as the run holds a
    NetBox test, so the tests before it run meanwhile (tests/netbox_server.py)."""
    if (NETBOX_VENV / ".installed").exists() and any(i.path.name == "test_netbox_real.py" for i in items):
        from netbox_server import shared
        from test_netbox_real import prepare

        shared(NETBOX_VENV, prepare)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from netbox_server import stop_shared

    stop_shared()
