"""Ansible pipeline input: OUT/ansible/inventory.yml, host_vars/<device>.yml, group_vars.

Groups, with '-' turned into '_' (Ansible's group-name rule): `fabric_<fabric>`,
`platform_<platform>` (eos, sonic, nvue, ufm, opensm; `linux` for nodes); a multi-plane fabric's
switches are also in `fabric_<fabric>_plane<p>`, its nodes in `fabric_<fabric>` only;
`role_<leaf|spine|core|node>`, `nodes_<group>` per node group, and `subnet_manager` with
`sm_<ufm|opensm>` for the InfiniBand subnet-manager hosts the inventory names (their
host_vars list the SM files with where they are installed). Every switch gets
small host_vars: fabric, platform, role, the paths of its rendered files relative to the
render directory (`fabgen_files`) and `fabgen_config_file`, the path of its structured
config (`ansible/configs/<device>.json`: `fabgen_config`, the platform-neutral config its
files were rendered from, the NVUE tree for Spectrum-X; NVUE's are written by the NVUE target
with the switch's files, from the tree it makes there: `fabgen.formats.configfile`). The config stays out of host_vars
because Ansible loads every host's variables to build its inventory: inlined, a 32k-GPU
render took `ansible-inventory --list` 193 s and 3.2 GB. A play that needs the config reads
it with `lookup('file', fabgen_out ~ '/' ~ fabgen_config_file) | from_json`. Both are
written as JSON (a YAML subset, and far faster to write); a node group's files sit in
group_vars/nodes_<group>.yml, the node's own netplan named by a per-host pattern
(`hosts/{{ inventory_hostname }}/...`). `fabgen_out` points at the render directory, wherever
it is moved. Where the inventory gives management prefixes (fabrics[].management
for switches, node_groups[].management for nodes), each device gets `ansible_host`, its
allocated management address (`addressing.management_addresses`); elsewhere device names
must resolve. Every file starts with a comment and a YAML document start, and group_vars
indent their lists: ansible-lint's production profile and yamllint take them as written
(tests/test_ansible_lint.py).
The playbooks under the repository's ansible/ folder deploy these files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fabgen.context import Context
from fabgen.formats import yamlout
from fabgen.formats.configfile import config_file
from fabgen.spec.model import Fabric
from fabgen.targets.base import CLUSTER, Target


def group(name: str) -> str:
    return name.replace("-", "_")


def structure(contexts: list[Context], structured: list[tuple[str, Any]]) -> dict[str, Any]:
    configs = _configs(structured)
    sm_files: dict[str, list[dict[str, str]]] = {}
    role_setups: dict[str, list[str]] = {}  # node group -> roles with a NIC setup script (storage, inband)
    for tname, data in structured:
        if tname == "hosts":
            for g in data["setups"]:
                role_setups.setdefault(g["group"], []).append(g["role"])
        if tname == "infiniband":
            from fabgen.intent.infiniband import deploy_files

            sm_files[data["fabric"]] = deploy_files(data)
    groups: dict[str, list[str]] = {}
    hosts: dict[str, dict[str, Any]] = {}
    management: dict[str, str] = {}
    group_vars: dict[str, dict[str, Any]] = {}
    configs_out: dict[str, dict[str, Any]] = {}
    node_groups: dict[str, _NodeGroup] = {}
    for ctx in contexts:
        f = ctx.fabric
        fab = f"fabric_{group(f.inventory_name)}"
        plane = (f"fabric_{group(f.name)}",) if f.parent else ()  # a plane's switches: its group too
        management.update(ctx.allocation.management)
        for s in f.switches:
            platform, config, files = configs.get(s.name, (f.spec.platform, {}, []))
            for g in (fab, *plane, f"platform_{platform}", f"role_{s.role}"):
                groups.setdefault(g, []).append(s.name)
            hosts[s.name] = {"fabgen_fabric": f.name, "fabgen_platform": platform, "fabgen_role": s.role,
                             "fabgen_files": [{"src": p} for p in files]}
            if config or (config is None and files):  # None: the switch's target writes the file
                hosts[s.name]["fabgen_config_file"] = f"ansible/configs/{s.name}.json"
            if config:
                configs_out[s.name] = {"fabgen_platform": platform, "fabgen_config": config}
        _subnet_managers(f, fab, sm_files, groups, hosts)
        _nodes(f, fab, groups, node_groups)
    for ng, known in node_groups.items():
        base = f"host-groups/{known.group}"
        # a node's own file (its netplan) is named by a pattern Ansible fills per host, so 4,096
        # nodes need no 4,096 host_vars files; nccl.env and hca-setup.sh come with a compute fabric
        group_vars[ng] = {
            "fabgen_fabric": known.compute or known.first, "fabgen_role": "node", "fabgen_node_group": known.group,
            "fabgen_group_files": ([
                {"src": f"{base}/nccl.env", "dest": "/etc/nccl.conf", "mode": "0644"},
                {"src": f"{base}/hca-setup.sh", "dest": "/usr/local/sbin/fabgen-hca-setup.sh",
                 "mode": "0755"}] if known.compute else []) + [
                {"src": f"{base}/{role}-nic-setup.sh", "dest": f"/usr/local/sbin/fabgen-{role}-nic-setup.sh",
                 "mode": "0755"} for role in role_setups.get(known.group, [])],
            "fabgen_files": ([{"src": "hosts/{{ inventory_hostname }}/netplan.yaml",
                               "dest": "/etc/netplan/60-fabgen-rails.yaml", "mode": "0600"}]
                             if known.netplan else []) + ([{"src": "hosts/{{ inventory_hostname }}/frr.conf",
                                                             "dest": "/etc/frr/frr.conf", "mode": "0640"}]
                                                           if known.frr else [])}
    cluster = contexts[0].cluster if contexts else ""
    return {"cluster": cluster, "groups": groups, "hosts": hosts, "group_vars": group_vars,
            "management": management, "configs": configs_out}


def _configs(structured: list[tuple[str, Any]]) -> dict[str, Any]:
    """Each switch's (platform, structured config, files it is rendered to) from the switch
    targets' structures; the config None where the switch's target writes it."""
    configs: dict[str, Any] = {}
    for tname, data in structured:
        if tname == "eos":
            configs.update({sw["name"]: ("eos", sw, [f"{data['fabric']}/switches/{sw['name']}.cfg"])
                            for sw in data["switches"]})
        elif tname == "sonic":
            # the platform-neutral structured config the config_db was built from: a third of
            # the size of the config_db itself, which is in fabgen_files
            configs.update({name: ("sonic", sw, [f"{data['fabric']}/switches/{name}/config_db.json"])
                            for name, _, sw in data["switches"]})
        elif tname in ("nvue", "oob"):  # out-of-band access switches run NVUE too
            # each tree is made by the render piece that writes the switch (targets.Deferred), which
            # writes its configs/<device>.json too (`config_file`): here only the names
            configs.update({s.name: ("nvue", None, [f"{data['fabric']}/switches/{s.name}.nvue.yaml",
                                                    f"{data['fabric']}/switches/{s.name}.nvue.sh"])
                            for s in data["switches"].devices})
    return configs


def _subnet_managers(f: Fabric, fab: str, sm_files: dict[str, list[dict[str, str]]], groups: dict[str, list[str]],
                     hosts: dict[str, dict[str, Any]]) -> None:
    """An InfiniBand fabric's subnet-manager hosts into the Ansible groups, with their host_vars
    (`sm_files`: each fabric's SM files)."""
    ib = f.spec.infiniband
    for k, sm in enumerate(ib.subnet_managers if ib else []):
        for g in (fab, "subnet_manager", f"sm_{f.spec.platform}"):
            groups.setdefault(g, []).append(sm)
        hosts[sm] = {"fabgen_fabric": f.name, "fabgen_platform": f.spec.platform, "fabgen_role": "subnet-manager",
                     "fabgen_sm_rank": k + 1, "fabgen_files": sm_files.get(f.name, [])}


@dataclass
class _NodeGroup:
    """What a node group's Ansible variables follow from, across the fabrics it is on."""

    group: str
    first: str  # the first fabric it is on
    compute: str | None = None  # its compute fabric: nccl.env and hca-setup.sh
    netplan: bool = False  # on an Ethernet fabric whose ports the host configures
    frr: bool = False  # on a fabric with BGP to the host: its frr.conf
    members: set[str] = field(default_factory=set)


def _nodes(f, fab: str, groups: dict[str, list[str]], node_groups: dict[str, _NodeGroup]) -> None:
    """A fabric's nodes into the Ansible groups: its fabric group, and once per node its node
    group, platform_linux and role_node."""
    if f.plane > 0:  # a node once, with the first plane
        return
    role = f.spec.role
    for h in f.hosts:
        if (role == "compute" and h.role != "compute") or h.role == "switch":
            continue  # storage servers on a compute fabric; switches' management ports on the oob network
        ng = f"nodes_{group(h.group)}"
        groups.setdefault(fab, []).append(h.name)
        known = node_groups.setdefault(ng, _NodeGroup(h.group, f.inventory_name))
        if known.compute is None and role == "compute":
            known.compute = f.inventory_name
        known.netplan = known.netplan or (f.spec.kind != "infiniband" and role != "oob")
        known.frr = known.frr or bool(f.spec.ethernet and f.spec.ethernet.host_routing == "bgp")
        if h.name not in known.members:
            known.members.add(h.name)
            for g in ("platform_linux", "role_node", ng):
                groups.setdefault(g, []).append(h.name)


def _yaml(head: str, data: Any) -> bytes:
    return (head + yamlout.dump(data)).encode()


def _vars_yaml(head: str, data: dict[str, Any]) -> bytes:
    """group_vars with each list's items indented under their key, as ansible-lint (its yamllint
    rules: `indentation` with indented sequences) wants a vars file."""
    return (head + yamlout.dump(data, indent_sequences=True)).encode()


def _json_yaml(head: str, data: dict[str, Any]) -> bytes:
    """host_vars as JSON, which is YAML (flow style): json's C encoder writes the structured
    config of a 32k-GPU fabric ten times faster than any YAML emitter. One line per key, per
    key of fabgen_config and per file of a list (a subnet manager's dozen files on one line
    broke ansible-lint's 160-column limit), so a diff of two renders stays readable."""
    lines = []
    for key, value in data.items():
        if key == "fabgen_config" and isinstance(value, dict) and value:
            inner = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            lines.append(f" {json.dumps(key)}: {{\n{inner}\n }}")
        elif isinstance(value, list) and len(value) > 1:
            inner = ",\n".join(f"  {json.dumps(v)}" for v in value)
            lines.append(f" {json.dumps(key)}: [\n{inner}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return (head + "{\n" + ",\n".join(lines) + "\n}\n").encode()


def _host_entry(name: str, management: dict[str, str]) -> dict[str, str] | None:
    address = management.get(name)
    return {"ansible_host": address} if address else None


def shard(data: dict[str, Any], part: int, parts: int) -> dict[str, Any]:
    """Every parts-th device's host_vars; the inventory and group_vars in part 0 only."""
    names = list(data["hosts"])[part::parts]
    return {**data, "hosts": {n: data["hosts"][n] for n in names},
            "configs": {n: data["configs"][n] for n in names if n in data["configs"]}, "whole": part == 0}


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    # the comment, then a document start: yamllint's default rules ask every file for one
    head = f"# generated by fabgen for {data['cluster']}\n---\n"
    for name, hv in data["hosts"].items():
        yield f"ansible/host_vars/{name}.yml", _json_yaml(head, hv)
    for name, config in data["configs"].items():
        yield config_file(name, config["fabgen_platform"], config["fabgen_config"])
    if not data.get("whole", True):
        return
    # ansible_host once per device, where it is first listed (its fabric group)
    seen: set[str] = set()
    children = {}
    for g, members in data["groups"].items():
        children[g] = {"hosts": {h: (None if h in seen else _host_entry(h, data["management"])) for h in members}}
        seen.update(members)
    inventory = {"all": {"vars": {"fabgen_out": "{{ inventory_dir }}/.."}, "children": children}}
    yield "ansible/inventory.yml", _yaml(head, inventory)
    for name, gv in data["group_vars"].items():
        yield f"ansible/group_vars/{name}.yml", _vars_yaml(head, gv)
    yield from playbooks()


def playbooks() -> Iterable[tuple[str, bytes]]:
    """The deploy playbooks fabgen ships, beside the inventory they read, so that a render folder
    deploys with the playbooks of the fabgen that wrote it: `ansible-playbook -i
    OUT/ansible/inventory.yml OUT/ansible/deploy-eos.yml`; and what they need: the collections
    (requirements.yml) and the Python packages (requirements.txt)."""
    from fabgen.formats.templating import playbooks_dir

    root = playbooks_dir()
    for path in sorted([*root.glob("*.yml"), *root.glob("tasks/*.yml"), root / "requirements.txt"]):
        yield f"ansible/{path.relative_to(root).as_posix()}", path.read_bytes()


TARGET = Target("ansible", lambda ctx: True, structure, render, shard, scope=CLUSTER,
                reads=("eos", "sonic", "nvue", "oob", "hosts", "infiniband"))
