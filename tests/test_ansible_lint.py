"""The deploy playbooks and the files fabgen writes for Ansible, read by the real tools beyond
ansible-core's syntax check: ansible-lint's production profile (with its yamllint rules) over
example renders' OUT/ansible, every task's arguments against the documented options of the
module it calls (the installed `ansible` package's collections, as `ansible-doc` gives them),
and the EOS playbook's connection finding its SSH library."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import IN_CI, INVENTORIES, ROOT
from fabgen.formats import yamlout
from fabgen.pipeline import render_to

pytestmark = pytest.mark.integration
BIN = Path(sys.executable).parent
LINT = shutil.which("ansible-lint", path=str(BIN))
DOC = shutil.which("ansible-doc", path=str(BIN))
PLAYBOOK = shutil.which("ansible-playbook", path=str(BIN))
if not (LINT and DOC and PLAYBOOK):
    if IN_CI:
        raise RuntimeError("CI must have ansible and ansible-lint: `make test` installs the test extras")
    pytestmark = [pytestmark, pytest.mark.skip(reason="ansible-lint not installed")]

# one render per kind of Ansible file: EOS, NVUE, SONiC, InfiniBand subnet managers, and a whole
# cluster's node groups (compute, storage, head nodes; FRR on the storage fabric)
RENDERS = ("roce-3tier", "spectrumx-1su", "fattree-2to1", "ib-3tier", "superpod-cluster")
SHIPPED = sorted(p.relative_to(ROOT / "ansible").as_posix()
                 for p in [*(ROOT / "ansible").glob("*.yml"), *(ROOT / "ansible").glob("tasks/*.yml")])


def _env(tmp: Path) -> dict[str, str]:
    """ansible-lint's own yamllint defaults, not a user's configuration (XDG) or an environment's."""
    return {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp)), "ANSIBLE_NOCOLOR": "1",
            "NO_COLOR": "1", "XDG_CONFIG_HOME": str(tmp / "xdg"), "ANSIBLE_HOST_KEY_CHECKING": "False"}


def lint(tmp: Path, *paths: str) -> tuple[int, dict[str, set[str]]]:
    """ansible-lint --profile production over paths (relative to tmp): its exit status and each
    file's findings (rule ids, `yaml[line-length]`)."""
    res = subprocess.run([str(LINT), "--offline", "--profile", "production", "--format", "json",
                          "--project-dir", str(tmp), *paths], cwd=tmp, capture_output=True, text=True,
                         timeout=300, env=_env(tmp))
    found: dict[str, set[str]] = {}
    for item in json.loads(res.stdout or "[]"):
        found.setdefault(item["location"]["path"], set()).add(item["check_name"])
    return res.returncode, found


def test_ansible_lint_production_passes_the_renders_and_refuses_a_broken_file(tmp_path: Path) -> None:
    for case in RENDERS:
        render_to(INVENTORIES / f"{case}.yaml", tmp_path / case)
        for book in SHIPPED:  # the playbooks linted here are the shipped ones, byte for byte
            assert (tmp_path / case / "ansible" / book).read_bytes() == (ROOT / "ansible" / book).read_bytes()
    # a render's Ansible folder spoiled three ways: a command where a module exists, group_vars
    # in the block style yamlout writes elsewhere (lists not indented under their key), a long line
    broken = tmp_path / "broken" / "ansible"
    shutil.copytree(tmp_path / "roce-3tier" / "ansible", broken)
    (broken / "deploy-extra.yml").write_text(
        "---\n- name: Reload\n  hosts: role_node\n  gather_facts: false\n  tasks:\n"
        "    - name: Reload FRR\n      ansible.builtin.command: systemctl reload frr\n      changed_when: true\n")
    gv = yaml.safe_load((broken / "group_vars/nodes_gpu.yml").read_text())
    (broken / "group_vars/nodes_gpu.yml").write_text("---\n" + yamlout.dump(gv))
    hv = broken / "host_vars/eth-su001-leaf1.yml"
    hv.write_text(hv.read_text().replace('"leaf"', '"leaf", "fabgen_note": "' + "x" * 160 + '"'))

    # the playbooks once (every render writes the same), each render's inventory and vars: one run
    # (ansible-lint's start and its syntax check of each playbook are most of the time)
    vars_of = ("inventory.yml", "host_vars", "group_vars")
    status, found = lint(tmp_path, f"{RENDERS[0]}/ansible", *(f"{case}/ansible/{v}" for case in RENDERS[1:]
                                                              for v in vars_of),
                         "broken/ansible/deploy-extra.yml", *(f"broken/ansible/{v}" for v in vars_of))
    assert status != 0
    assert found == {"broken/ansible/deploy-extra.yml": {"command-instead-of-module"},
                     "broken/ansible/group_vars/nodes_gpu.yml": {"yaml[indentation]"},
                     "broken/ansible/host_vars/eth-su001-leaf1.yml": {"yaml[line-length]"}}, found


# --- every task's arguments against its module's documented options ---------------------------

# task keywords whose value holds tasks
BLOCKS = ("block", "rescue", "always")


def _tasks(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for task in items or []:
        if any(k in task for k in BLOCKS):
            for k in BLOCKS:
                yield from _tasks(task.get(k, []))
        else:
            yield task


def playbook_tasks(path: Path) -> list[dict[str, Any]]:
    """Every task and handler of a playbook (or of a tasks file: a list of tasks)."""
    data = yaml.safe_load(path.read_text())
    if data and "hosts" not in data[0] and "import_playbook" not in data[0]:
        return list(_tasks(data))
    return [t for play in data for part in ("pre_tasks", "tasks", "post_tasks", "handlers")
            for t in _tasks(play.get(part, []))]


def _templated(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value or "{%" in value
    if isinstance(value, (list, tuple)):
        return any(_templated(v) for v in value)
    if isinstance(value, dict):
        return any(_templated(v) for v in value.values())
    return False


# modules whose arguments are free names (set_fact: the facts it sets)
FREE_KEYS = {"ansible.builtin.set_fact"}


def argument_errors(module: str, args: dict[str, Any], doc: dict[str, Any]) -> list[str]:
    """What the module's documented options refuse in a task's arguments: an unknown name, a
    free-form string to a module without one, a required option missing, and (for values not
    templated, which only run time knows) a wrong type or choice, checked by Ansible's own
    argument-spec validator."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    options = doc.get("options") or {}
    free = options.get("free_form") or options.get("free-form")
    errors = []
    args = dict(args)
    raw = args.pop("_raw_params", None)
    if raw is not None:
        if free is None:
            errors.append(f"{module} takes no free-form argument: {raw!r}")
        elif free.get("choices") and raw not in free["choices"]:
            errors.append(f"{module}: {raw!r} is not one of {free['choices']}")
    if module in FREE_KEYS:
        return errors
    names = {alias: name for name, o in options.items() for alias in [name, *(o.get("aliases") or [])]}
    errors += [f"{module} has no option {k!r}" for k in args if k not in names]
    given = {names[k] for k in args if k in names}
    errors += [f"{module} requires {name!r}" for name, o in options.items()
               if o.get("required") and name not in given and name not in ("free_form", "free-form")
               and raw is None]
    spec = {name: {k: o[k] for k in ("type", "choices", "elements", "aliases") if o.get(k) is not None}
            for name, o in options.items() if name not in ("free_form", "free-form")}
    literal = {k: v for k, v in args.items() if k in names and not _templated(v)}
    result = ArgumentSpecValidator(spec).validate(literal)
    return errors + [f"{module}: {e}" for e in result.errors]


@functools.cache
def _plugin_loader() -> None:
    """Ansible's collection finder, installed once per process (what ansible-playbook does first)."""
    from ansible.plugins.loader import init_plugin_loader

    init_plugin_loader()


def module_calls(paths: list[Path]) -> list[tuple[str, str, dict[str, Any]]]:
    """(where, module, arguments) of every task, split from its keywords by Ansible's own parser."""
    from ansible.parsing.mod_args import ModuleArgsParser

    _plugin_loader()
    calls = []
    for path in paths:
        for task in playbook_tasks(path):
            module, args, _ = ModuleArgsParser(task).parse()
            calls.append((f"{path.name}: {task.get('name', module)}", module, dict(args)))
    return calls


def module_docs(modules: set[str]) -> dict[str, Any]:
    """The installed collections' documentation of each module (ansible-doc, one run)."""
    res = subprocess.run([str(DOC), "--json", "-t", "module", *sorted(modules)], capture_output=True,
                         text=True, timeout=300, env=_env(Path("/nonexistent")))
    assert res.returncode == 0, res.stderr[-2000:]
    return {name: entry["doc"] for name, entry in json.loads(res.stdout).items()}


def test_every_task_gives_its_module_valid_arguments() -> None:
    calls = module_calls([ROOT / "ansible" / book for book in SHIPPED if book != "requirements.yml"])
    modules = {m for _, m, _ in calls}
    # the collections of the `ansible` package the playbooks use, and ansible-core's own: nothing else
    # (deploy-nvue.yml works with ansible.builtin alone: docs/decisions.md)
    assert {m.rsplit(".", 1)[0] for m in modules} <= {"ansible.builtin", "ansible.netcommon", "arista.eos",
                                                       "dellemc.enterprise_sonic"}, modules
    assert {"arista.eos.eos_command", "arista.eos.eos_config", "ansible.builtin.systemd_service"} <= modules
    docs = module_docs(modules)
    errors = [f"{where}: {e}" for where, module, args in calls for e in argument_errors(module, args, docs[module])]
    assert errors == []


def test_requirements_name_every_collection_the_playbooks_use() -> None:
    """requirements.yml names exactly the collections the playbooks' modules and connections come
    from; the NVUE playbook needs none (the `ansible` package has no nvidia.nvue)."""
    books = [ROOT / "ansible" / book for book in SHIPPED if book != "requirements.yml"]
    connections = {play.get("connection", "ssh") for book in books
                   for play in yaml.safe_load(book.read_text()) if "hosts" in play}
    used = {m.rsplit(".", 1)[0] for _, m, _ in module_calls(books)} | {
        c.rsplit(".", 1)[0] for c in connections if "." in c}
    required = {c["name"] for c in yaml.safe_load((ROOT / "ansible" / "requirements.yml").read_text())["collections"]}
    assert used - {"ansible.builtin"} == required
    nvue = ROOT / "ansible" / "deploy-nvue.yml"
    nvue_modules = {m for _, m, _ in module_calls([nvue, ROOT / "ansible" / "tasks" / "guard.yml"])}
    assert {m.rsplit(".", 1)[0] for m in nvue_modules} == {"ansible.builtin"}, nvue_modules
    assert all("connection" not in play for play in yaml.safe_load(nvue.read_text()))


def test_misspelt_or_wrong_arguments_are_refused() -> None:
    docs = module_docs({"arista.eos.eos_command", "arista.eos.eos_config", "ansible.builtin.systemd_service",
                        "ansible.builtin.wait_for_connection", "ansible.builtin.meta", "ansible.builtin.file"})
    cases = {  # each broken task: the words its refusal must hold
        "arista.eos.eos_command": ({"command": ["show version"]}, ["no option 'command'", "requires 'commands'"]),
        "arista.eos.eos_config": ({"src": "x.cfg", "replace": "everything"}, ["replace must be one of"]),
        "ansible.builtin.systemd_service": ({"name": "frr", "state": "reload"}, ["state must be one of"]),
        "ansible.builtin.wait_for_connection": ({"delay": "thirty"}, ["unable to convert to int"]),
        "ansible.builtin.meta": ({"_raw_params": "reset_connections"}, ["is not one of"]),
        "ansible.builtin.file": ({"_raw_params": "/var/lib/fabgen"}, ["takes no free-form argument"]),
    }
    for module, (args, words) in cases.items():
        errors = " | ".join(argument_errors(module, args, docs[module]))
        assert all(w in errors for w in words), (module, errors)
    # the same calls spelt right pass
    assert argument_errors("arista.eos.eos_command", {"commands": ["show version"]},
                           docs["arista.eos.eos_command"]) == []
    assert argument_errors("ansible.builtin.meta", {"_raw_params": "reset_connection"},
                           docs["ansible.builtin.meta"]) == []


# --- the EOS playbook's connection and its SSH library -----------------------------------------

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def connect_as_deploy_eos(tmp: Path, extra_path: str = "") -> subprocess.CompletedProcess[str]:
    """One arista.eos task over the connection and variables deploy-eos.yml sets, to a closed port
    on this machine: it gets as far as opening the SSH socket, or stops on a missing library."""
    play = yaml.safe_load((ROOT / "ansible" / "deploy-eos.yml").read_text())[0]
    keep = ("ansible_network_os", "ansible_network_cli_ssh_type", "ansible_become", "ansible_become_method")
    probe = [{"name": "Probe", "hosts": "switch", "gather_facts": False, "connection": play["connection"],
              "vars": {k: play["vars"][k] for k in keep},
              "tasks": [{"name": "Reconnect", "arista.eos.eos_command": {"commands": ["show version"]}}]}]
    (tmp / "probe.yml").write_text(yaml.safe_dump(probe))
    (tmp / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": {"switch": {
        "ansible_host": "127.0.0.1", "ansible_port": _closed_port(), "ansible_user": "admin",
        "ansible_password": "x", "ansible_command_timeout": 10, "ansible_connect_timeout": 5}}}}))
    env = {**_env(tmp), "ANSIBLE_PERSISTENT_CONNECT_TIMEOUT": "10"}
    if extra_path:
        env["PYTHONPATH"] = extra_path
    return subprocess.run([str(PLAYBOOK), "-i", "hosts.yml", "probe.yml"], cwd=tmp, capture_output=True,
                          text=True, timeout=300, env=env)


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~ \[;]", r.strip(), maxsplit=1)[0].lower() for r in requirements
            if r.strip() and not r.strip().startswith("#")}


def test_the_deploy_extra_and_the_renders_requirements_name_the_same_packages() -> None:
    """`pip install fabgen[deploy]` and `pip install -r OUT/ansible/requirements.txt` install the
    same packages, the test extra holds them (this file runs them), and the playbooks are written
    with the requirements into every render."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    listed = _names((ROOT / "ansible" / "requirements.txt").read_text().splitlines())
    assert _names(extras["deploy"]) == listed == {"ansible", "ansible-pylibssh"}
    assert listed <= _names(extras["test"])
    from fabgen.targets.ansible import playbooks

    written = dict(playbooks())
    assert written["ansible/requirements.txt"] == (ROOT / "ansible" / "requirements.txt").read_bytes()


def test_the_eos_playbooks_connection_loads_its_ssh_library(tmp_path: Path) -> None:
    play = yaml.safe_load((ROOT / "ansible" / "deploy-eos.yml").read_text())[0]
    assert play["connection"] == "ansible.netcommon.network_cli"
    assert play["vars"]["ansible_network_cli_ssh_type"] == "libssh"
    # the library the deploy extra and OUT/ansible/requirements.txt name
    requirements = (ROOT / "ansible" / "requirements.txt").read_text()
    assert "ansible-pylibssh" in requirements
    res = connect_as_deploy_eos(tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode != 0  # nothing listens there
    assert "refused" in out.lower() and "not installed" not in out, out[-3000:]

    # without the library (its package shadowed by one that fails to import) the same play stops on it
    fake = tmp_path / "fake"
    (fake / "pylibsshext").mkdir(parents=True)
    (fake / "pylibsshext" / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    hidden = connect_as_deploy_eos(tmp_path, str(fake))
    out = hidden.stdout + hidden.stderr
    assert hidden.returncode != 0 and "refused" not in out.lower()
    assert "pylibssh" in out.lower(), out[-3000:]
