"""`fabgen verify --running DIR`: each switch's running config against the rendered one, by meaning.

One golden render a platform is the plan (roce-3tier: EOS, spectrumx-1su: NVUE, fattree-2to1: SONiC).
The rendered configs given back as running configs are as planned (for EOS also with what a switch
adds to `show running-config` on its own). A changed ECN threshold, a missing BGP neighbour and an
extra user on one switch are exactly three findings on that switch, and its remediation, applied to
its running config (hier_config's `future` for EOS, the NVUE commands' set/unset, SONiC's JSON Patch
through jsonpatch, the library `config apply-patch` uses), gives back a config with no finding.
Hostile running configs (huge, truncated, of the wrong platform, names that would forge report
lines, links out of DIR, YAML aliases) are refused in one located line or reported, never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import GOLDEN
from fabgen.rendered.read import read_render
from fabgen.verify import running
from fabgen.verify.cabling import Verdict
from fabgen.verify.run import BadInput, _read_config

CASES = {"eos": ("roce-3tier", "eth-pod01-spine01"), "nvue": ("spectrumx-1su", "sx-spine01"),
         "sonic": ("fattree-2to1", "fabric-leaf001")}
NAME = {"eos": "{}.cfg", "nvue": "{}.yaml", "sonic": "{}.json"}
SECRET = re.compile(r"\{\{.*?\}\}")


@pytest.fixture(scope="module")
def renders() -> dict[str, dict[str, bytes]]:
    """Each platform's golden render, read once."""
    return {p: read_render(GOLDEN / case) for p, (case, _) in CASES.items()}


def plan_of(files: dict[str, bytes]) -> dict[str, running.Planned]:
    return running.planned(files)


def as_shown(platform: str, text: str) -> str:
    """A rendered config as the switch shows it: the deploy's secrets filled in; for EOS with the
    header lines, defaults and unconfigured sections a switch adds, and without the `no shutdown`
    it does not show."""
    text = SECRET.sub("$6$rounds=656000$filled.by.the.deploy", text)
    if platform != "eos":
        return text
    body, section = [], ""
    for ln in text.splitlines():
        section = ln if ln and not ln.startswith(" ") else section
        # an interface is up unless shut: `no shutdown` is not shown there (it is under `management api`)
        if not (ln.strip() == "no shutdown" and section.startswith("interface ")) and not ln.startswith("! generated"):
            body.append(ln)
    assert body[-1] == "end"
    head = ["! Command: show running-config", "! device: x (DCS-7060X6-64PE, EOS-4.33.1F)", "!", "no aaa root", "!",
            "no service interface inactive port-id allocation disabled", "!",
            "transceiver qsfp default-mode 4x10G", "!"]
    tail = ["interface Ethernet65", "!", "system l1", "   unsupported speed action error",
            "   unsupported error-correction action error", "!", "end"]
    return "\n".join(head + body[:-1] + tail) + "\n"


def write_dir(tmp: Path, platform: str, files: dict[str, bytes], shown: bool = True) -> Path:
    folder = tmp / f"running-{platform}"
    folder.mkdir()
    for device, p in plan_of(files).items():
        text = files[p.path].decode()
        (folder / NAME[platform].format(device)).write_text(as_shown(platform, text) if shown else text)
    return folder


def check(files: dict[str, bytes], folder: Path) -> Verdict:
    v = Verdict()
    running.check_dir(files, folder, None, lambda p: _read_config(p, running.MAX_CONFIG), v)
    return v


def fabgen(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "COLUMNS": "200"})


def refused_with(files: dict[str, bytes], folder: Path, *words: str) -> str:
    """The located refusal `check` raises: one line holding every word."""
    with pytest.raises((running.RunningError, BadInput)) as exc:
        check(files, folder)
    text = str(exc.value)
    assert "\n" not in text and all(w in text for w in words), text
    return text


# 1. The rendered config as the running config: as planned ---------------------------------------------


@pytest.mark.parametrize("platform", sorted(CASES))
def test_the_rendered_config_runs_as_planned(platform: str, renders: dict, tmp_path: Path) -> None:
    files = renders[platform]
    for shown in (False, True):
        (tmp_path / str(shown)).mkdir()
        v = check(files, write_dir(tmp_path / str(shown), platform, files, shown))
        assert v.findings == [] and v.remedies == {}, v.findings[:5]
        assert v.configs == len(plan_of(files)) > 1


def test_a_switch_without_a_file_is_no_evidence(renders: dict, tmp_path: Path) -> None:
    files = renders["sonic"]
    folder = write_dir(tmp_path, "sonic", files)
    (folder / "fabric-leaf002.json").unlink()
    v = check(files, folder)
    assert [(f.kind, f.device) for f in v.findings] == [("no-config", "fabric-leaf002")]
    assert v.issues == [] and v.configs == len(plan_of(files)) - 1
    # --fabric: the other fabrics' switches are named in a note, not held (fattree-2to1 has one fabric)
    with pytest.raises(running.RunningError, match="no EOS, SONiC or NVUE switch config in fabric nowhere"):
        running.check_dir(files, folder, "nowhere", lambda p: _read_config(p, running.MAX_CONFIG), Verdict())
    # the render's own layout, <switch>/config_db.json, is read as <switch>.json
    (folder / "fabric-leaf003").mkdir()
    (folder / "fabric-leaf003.json").rename(folder / "fabric-leaf003" / "config_db.json")
    assert check(files, folder).configs == len(plan_of(files)) - 1
    (folder / "fabric-leaf003" / "config_db.json").rename(folder / "fabric-leaf003" / "other.json")
    refused_with(files, folder, "fabric-leaf003/config_db.json", "cannot read it")


# 2. Three hidden edits, exactly found, and the remediation undoes them -----------------------------------


def edit_eos(text: str) -> str:
    text = text.replace("minimum-threshold 200000 bytes", "minimum-threshold 180000 bytes", 1)
    assert "neighbor 172.16.0.3 remote-as" in text
    text = "\n".join(ln for ln in text.splitlines() if "neighbor 172.16.0.3 " not in ln) + "\n"
    return text.replace("\nusername monitor", "\nusername intruder privilege 15 role network-admin secret sha512 $6$x"
                        "\nusername monitor", 1)


def edit_nvue(text: str) -> str:
    text = text.replace("min-threshold: 150000", "min-threshold: 180000", 1)
    neighbour = "              swp1s1:\n                peer-group: LEAVES\n                type: unnumbered\n"
    assert neighbour in text
    text = text.replace(neighbour, "", 1)
    return text.replace("        user:\n", "        user:\n          intruder:\n            role: system-admin\n"
                        "            hashed-password: $6$x\n", 1)


def edit_sonic(text: str) -> str:
    db = json.loads(text)
    db["WRED_PROFILE"]["ROCE_ECN"]["green_min_threshold"] = "180000"
    del db["BGP_NEIGHBOR"]["default|10.0.0.10"]
    # SONiC keeps local accounts in Linux, not config_db: its user in the config is an SNMP user
    db["SNMP_USER"] = {"intruder": {"SNMP_USER_TYPE": "Priv", "SNMP_USER_PERMISSION": "RW"}}
    # and what the box adds on its own stays unreported
    db["DEVICE_METADATA"]["localhost"]["mac"] = "52:54:00:12:34:56"
    db["FEATURE"] = {"bgp": {"state": "enabled", "auto_restart": "enabled"}}
    return json.dumps(db, indent=4)


EDITS = {"eos": (edit_eos, [("config-different", "uc-tx-queue 3", "180000"),
                            ("config-missing", "router bgp", "neighbor 172.16.0.3"),
                            ("config-extra", "top level", "username intruder")]),
         "nvue": (edit_nvue, [("config-different", "qos congestion-control", "180000"),
                              ("config-missing", "router bgp neighbor", "swp1s1"),
                              ("config-extra", "system aaa user", "intruder")]),
         "sonic": (edit_sonic, [("config-different", "WRED_PROFILE|ROCE_ECN", "180000"),
                                ("config-missing", "BGP_NEIGHBOR", "default|10.0.0.10"),
                                ("config-extra", "SNMP_USER", "intruder")])}


def apply_eos(text: str, remedy: list[str], plan: Any = None) -> str:
    from hier_config import Platform, get_hconfig

    future = get_hconfig(Platform.ARISTA_EOS, text).future(get_hconfig(Platform.ARISTA_EOS, "\n".join(remedy)))
    return "\n".join(c.indentation + c.text for c in future.all_children_sorted()) + "\nend\n"


def apply_nvue(text: str, remedy: list[str], plan: dict[str, Any]) -> str:
    """The commands applied to the running tree: `nv unset PATH`, `nv set PATH VALUE`, and `nv set
    PATH KEY` where PATH holds an object of keys (`ip address 10.0.0.1/31`, `link state down`).
    NVUE tells the two apart by its object model; here the plan's tree gives the shape at PATH."""
    import yaml

    tree = running.nvue_tree(yaml.safe_load(text), "running")
    assert remedy[-1] == "nv config apply"
    for line in remedy[:-1]:
        words = shlex.split(line)
        assert words[:2] in (["nv", "set"], ["nv", "unset"]), line
        path = words[2:]
        if words[1] == "unset":
            node = tree
            for k in path[:-1]:
                node = node[k]
            del node[path[-1]]
            continue
        *keys, last = path
        node, shape = tree, plan
        for k in keys[:-1]:
            if not isinstance(node.get(k), dict):
                node[k] = {}
            node, shape = node[k], shape.get(k, {})
        if isinstance(shape.get(keys[-1]), dict):
            if not isinstance(node.get(keys[-1]), dict):
                node[keys[-1]] = {}
            node[keys[-1]][last] = {}
        else:
            node[keys[-1]] = last
    return yaml.safe_dump([{"set": tree}], sort_keys=False)


def apply_sonic(text: str, remedy: list[str], plan: Any = None) -> str:
    import jsonpatch

    return json.dumps(jsonpatch.apply_patch(json.loads(text), json.loads("\n".join(remedy))))


APPLY = {"eos": apply_eos, "nvue": apply_nvue, "sonic": apply_sonic}


@pytest.mark.parametrize("platform", sorted(CASES))
def test_three_edits_are_exactly_three_findings_and_the_remediation_undoes_them(platform: str, renders: dict,
                                                                              tmp_path: Path) -> None:
    files = renders[platform]
    device = CASES[platform][1]
    folder = write_dir(tmp_path, platform, files)
    path = folder / NAME[platform].format(device)
    edit, expected = EDITS[platform]
    edited = edit(path.read_text())
    path.write_text(edited)
    v = check(files, folder)
    assert {f.device for f in v.findings} == {device}, [(f.device, f.kind) for f in v.findings]
    assert len(v.findings) == 3 and len(v.issues) == 3, [f.as_dict() for f in v.findings]
    for kind, where, word in expected:
        assert any(f.kind == kind and where in f.port and word in f.expected + f.found for f in v.findings), \
            (kind, where, word, [f.as_dict() for f in v.findings])
    assert list(v.remedies) == [device]
    _, remedy = v.remedies[device]
    rendered = files[plan_of(files)[device].path].decode()
    shape = running.nvue_tree(yaml.safe_load(rendered), "plan") if platform == "nvue" else None
    repaired = APPLY[platform](edited, remedy, shape)
    assert running.compare(platform, rendered, repaired, "repaired").diffs == []
    # and the remediation is needed: the edited config itself is not the plan
    assert running.compare(platform, rendered, edited, "edited").diffs != []


def test_a_changed_value_is_one_finding_not_two(renders: dict) -> None:
    """A value changed in place (an MTU, an address, a remote AS) is `config-different`, with both values."""
    files = renders["eos"]
    rendered = files[plan_of(files)["eth-pod01-spine01"].path].decode()
    text = SECRET.sub("x", rendered)
    mtu = re.search(r"^   (mtu \d+)$", text, re.M)
    assert mtu is not None
    edited = text.replace(f"   {mtu[1]}\n", "   mtu 1500\n", 1).replace("remote-as 65101", "remote-as 65999", 1)
    diffs = running.compare("eos", rendered, edited, "x").diffs
    assert sorted((d.kind, d.expected, d.found) for d in diffs) == sorted([
        ("config-different", mtu[1], "mtu 1500"),
        ("config-different", "neighbor 172.16.0.1 remote-as 65101", "neighbor 172.16.0.1 remote-as 65999")])


# 3. Hostile running configs -------------------------------------------------------------------------------


def one(tmp: Path, name: str, data: str | bytes) -> Path:
    folder = tmp / "running"
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return folder


def test_hostile_running_configs_are_refused_in_one_located_line(renders: dict, tmp_path: Path) -> None:
    eos, nvue, sonic = renders["eos"], renders["nvue"], renders["sonic"]
    e, n, s = CASES["eos"][1], CASES["nvue"][1], CASES["sonic"][1]
    eos_text = as_shown("eos", eos[plan_of(eos)[e].path].decode())
    nvue_text = nvue[plan_of(nvue)[n].path].decode()
    sonic_text = sonic[plan_of(sonic)[s].path].decode()
    cases: list[tuple[dict, str, str | bytes, list[str]]] = [
        (eos, f"{e}.cfg", "!" * (running.MAX_CONFIG + 1), ["more than the", f"{e}.cfg"]),  # huge
        (eos, f"{e}.cfg", eos_text[: len(eos_text) // 2], ["no `end` line", "cut short"]),  # truncated
        (sonic, f"{s}.json", sonic_text[: len(sonic_text) // 2], [f"{s}.json:", "not JSON"]),
        (nvue, f"{n}.yaml", nvue_text[: nvue_text.index("hashed-password") + 20], [f"{n}.yaml:", "not YAML"]),
        (eos, f"{e}.cfg", nvue_text, ["NVUE YAML, not EOS"]),  # wrong platform, right name
        (eos, f"{e}.yaml", nvue_text, ["a Cumulus Linux (NVUE) file for", "an Arista EOS switch", f"{e}.cfg"]),
        (nvue, f"{n}.yaml", sonic_text, ["JSON, not NVUE's YAML"]),
        (sonic, f"{s}.json", eos_text, ["not JSON", "EOS"]),
        (sonic, f"{s}.cfg", eos_text, ["an Arista EOS file for", "a SONiC switch"]),
        (eos, "nobody.cfg", eos_text, ["'nobody' is no switch of the plan"]),
        (eos, "evil\nfabric: forged.cfg", eos_text, ["is no switch of the plan", "\\n"]),  # a name forging a line
        (eos, f"{e}.cfg", eos_text.replace("hostname", "hostname \x1b[2Jx", 1), ["a control character"]),
        (eos, "notes.md", "hello", ["not <device>.cfg"]),
        (eos, f"{e}.cfg", "".join(" " * i + f"s{i}\n" for i in range(2000)) + "end\n", [":98:", "indented more"]),
        (nvue, f"{n}.yaml", "- set: &a {x: 1}\n- set: *a\n", ["a YAML alias"]),
        (nvue, f"{n}.yaml", "- set:\n    x: " + "[" * 200 + "]" * 200 + "\n", ["nested"]),
        (nvue, f"{n}.yaml", "just: a mapping\n", ["not NVUE's YAML"]),
        (sonic, f"{s}.json", '{"PORT": []}', ['["PORT"]', "not a table"]),
        (eos, f"{e}.cfg", b"\xff\xfe" + eos_text.encode(), ["cannot read it"]),
    ]
    for files, name, data, words in cases:
        folder = tmp_path / re.sub(r"\W", "_", name + str(len(data)))
        folder.mkdir()
        (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
        msg = refused_with(files, folder, *words)
        assert "\x1b" not in msg


def test_links_out_of_the_folder_are_refused(renders: dict, tmp_path: Path) -> None:
    files = renders["eos"]
    e = CASES["eos"][1]
    target = GOLDEN / "roce-3tier" / plan_of(files)[e].path
    folder = tmp_path / "running"
    folder.mkdir()
    (folder / f"{e}.cfg").symlink_to(target)
    refused_with(files, folder, "symbolic link")
    (folder / f"{e}.cfg").unlink()
    (folder / f"{e}.cfg").write_text(as_shown("eos", target.read_text()))
    (folder / f"{e}.txt").write_text("end\n")
    refused_with(files, folder, "a second running config")


def test_names_from_the_running_config_cannot_forge_report_lines(renders: dict, tmp_path: Path) -> None:
    from fabgen.verify import report

    files = renders["nvue"]
    n = CASES["nvue"][1]
    folder = write_dir(tmp_path, "nvue", files)
    path = folder / f"{n}.yaml"
    forged = "x\\nconfig-missing (0):\\n  sx: forged | <b>[link](http://x)</b>"
    path.write_text(path.read_text().replace("        user:\n", f'        user:\n          "{forged}":\n'
                                            "            role: system-admin\n", 1))
    v = check(files, folder)
    assert [f.kind for f in v.findings] == ["config-extra"]
    text, md = report.to_text(v), report.to_markdown(v)
    assert not any(line.startswith(("config-missing (0)", "  sx: forged")) for line in text.splitlines())
    outside, fenced = "".join(md.split("````")[0::2]), md.split("````")[1::2]
    assert "<b>" not in outside and "](http" not in outside  # markup outside the remediation's code block
    assert len(fenced) == 1 and "config-missing (0)" not in fenced[0].replace("'", "").splitlines()
    doc = json.loads(report.to_json(v))
    assert doc["findings"][0]["found"].startswith("x\nconfig-missing")  # JSON keeps the name as it is


# 4. The command line ------------------------------------------------------------------------------------------


def test_the_command_line_exit_codes(renders: dict, tmp_path: Path) -> None:
    files = renders["sonic"]
    folder = write_dir(tmp_path, "sonic", files)
    ok = fabgen("verify", GOLDEN / "fattree-2to1", "--running", folder)
    assert ok.returncode == 0 and "the running config of 6 switch(es) checked, 0 finding(s)" in ok.stdout, ok
    path = folder / "fabric-leaf001.json"
    path.write_text(edit_sonic(path.read_text()))
    bad = fabgen("verify", GOLDEN / "fattree-2to1", "--running", folder, "--format", "json")
    assert bad.returncode == 1, bad.stderr
    doc: dict[str, Any] = json.loads(bad.stdout)
    assert doc["configs"] == 6 and len(doc["findings"]) == 3 and not doc["ok"]
    assert list(doc["remediation"]) == ["fabric-leaf001"]
    assert json.loads("\n".join(doc["remediation"]["fabric-leaf001"]["lines"]))[0]["op"] in ("add", "remove",
                                                                                              "replace")
    (folder / "nobody.json").write_text("{}")
    hostile = fabgen("verify", GOLDEN / "fattree-2to1", "--running", folder)
    assert hostile.returncode == 2 and "Traceback" not in hostile.stderr and hostile.stderr.count("\n") == 1
    assert "nobody" in hostile.stderr and hostile.stdout == ""


def test_a_config_at_the_bound_of_all_differences_is_reported_without_remediation(renders: dict,
                                                                                    tmp_path: Path) -> None:
    """4 MiB of lines the plan does not have (90,000 users): every one a finding, within the timeout, and no
    line-by-line remediation past MAX_REMEDIATED (hier_config's negation is quadratic in them)."""
    files = renders["eos"]
    folder = write_dir(tmp_path, "eos", files)
    e = CASES["eos"][1]
    users = "".join(f"username u{i} privilege 1 role network-operator nopassword\n" for i in range(90_000))
    text = (users[: running.MAX_CONFIG - 100].rsplit("\n", 1)[0]) + "\nend\n"
    (folder / f"{e}.cfg").write_text(text)
    res = fabgen("verify", GOLDEN / CASES["eos"][0], "--running", folder, "--format", "json")
    assert res.returncode == 1, res.stderr[-2000:]
    doc = json.loads(res.stdout)
    found = [f for f in doc["findings"] if f["device"] == e]
    assert len(found) > running.MAX_REMEDIATED and e not in doc["remediation"]
    assert {f["device"] for f in doc["findings"]} == {e}
    assert any("a full replace" in n for n in doc["notes"])
