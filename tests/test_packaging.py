"""A non-editable install into a fresh virtualenv renders with its packaged templates."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import INVENTORIES, ROOT

pytestmark = pytest.mark.integration


def test_wheel_install_renders(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", ".venv-*", "out", "golden", "__pycache__",
                                                            "*.egg-info", "build", "dist"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(src)], check=True)
    shutil.rmtree(src)  # the installed copy must not reach back into a checkout
    out = tmp_path / "out"
    run = subprocess.run([str(env_dir / "bin" / "fabgen"), "render", str(INVENTORIES / "superpod-4su.yaml"),
                          "-o", str(out)], capture_output=True, text=True, cwd=tmp_path,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert run.returncode == 0, run.stderr
    expected = (ROOT / "golden" / "superpod-4su" / "compute" / "topology.dot").read_bytes()
    assert (out / "compute" / "topology.dot").read_bytes() == expected
    # the built-in price list is package data: compare works from the installed copy
    bought = ROOT / "tests" / "data" / "compare-8node-bought-nics.yaml"  # the published build: NICs bought
    cmp = subprocess.run([str(env_dir / "bin" / "fabgen"), "compare", str(bought)],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert cmp.returncode == 0, cmp.stderr
    assert "built-in estimates" in cmp.stdout and "$490,000" in cmp.stdout
    where = subprocess.run([str(py), "-c",
                            "import fabgen.formats.templating as r; print(r.templates_dir(), r.playbooks_dir())"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout.split()
    assert all(w.startswith(str(env_dir)) for w in where), where
    # the yamllint configuration is package data, found as docs/reference/outputs.md says
    lint_config = subprocess.run([str(py), "-c", "from importlib.resources import files; "
                                  "print(files('fabgen.formats') / 'yamllint.yaml')"],
                                 capture_output=True, text=True, cwd=tmp_path, check=True).stdout.strip()
    assert lint_config.startswith(str(env_dir)), lint_config
    assert Path(lint_config).read_bytes() == (ROOT / "generator/fabgen/formats/yamllint.yaml").read_bytes()
    # the deploy playbooks are package data, written beside the inventory they read, and run from there
    version = subprocess.run([str(env_dir / "bin" / "fabgen"), "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("fabgen ") and version.returncode == 0
    playbook = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent))
    for book in ("deploy-eos.yml", "deploy-nvue.yml", "deploy-sonic.yml", "deploy-sm.yml", "deploy-hosts.yml",
                 "stage.yml", "requirements.yml", "tasks/guard.yml"):
        assert (out / "ansible" / book).read_bytes() == (ROOT / "ansible" / book).read_bytes(), book
        if book.endswith(".yml") and book not in ("requirements.yml", "tasks/guard.yml"):
            check = subprocess.run([playbook, "-i", "ansible/inventory.yml", "--syntax-check", f"ansible/{book}"],
                                   cwd=out, capture_output=True, text=True, timeout=300)
            assert check.returncode == 0, check.stdout[-1500:] + check.stderr[-1500:]


def test_the_sdist_holds_the_docs_the_playbooks_and_no_goldens(tmp_path: Path) -> None:
    """The source distribution (hatchling, the build backend) carries what a user reads and runs:
    the package, templates, playbooks, examples and docs; not the goldens or the tests."""
    import tarfile

    hatchling = shutil.which("hatchling", path=str(Path(sys.executable).parent))
    assert hatchling, "hatchling is a test dependency"
    subprocess.run([hatchling, "build", "-t", "sdist", "-d", str(tmp_path)], cwd=ROOT, check=True, capture_output=True,
                   timeout=300)
    (sdist,) = tmp_path.glob("fabgen-*.tar.gz")
    tops = {name.split("/")[1] for name in tarfile.open(sdist).getnames() if name.count("/") >= 1}
    assert {"generator", "templates", "ansible", "inventories", "docs", "README.md", "pyproject.toml"} <= tops
    assert not tops & {"golden", "tests", "benchmarks"}
