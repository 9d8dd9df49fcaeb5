"""kueue.yaml against Kueue's own API schema.

tests/data/kueue/ keeps, from Kueue's CustomResourceDefinitions, the OpenAPI schema of each kind
fabgen writes (Topology and ResourceFlavor, kueue.x-k8s.io/v1beta2, the served storage version),
as the API server validates a created object with it:

- the OpenAPI schema (types, required fields, patterns, lengths, item counts) by `jsonschema`;
- unknown fields refused, as `kubectl apply` does by default (`--validate=strict`: server-side
  field validation); the API server would otherwise drop them silently (pruning), so a misspelt
  field would be lost, not reported;
- the schema's CEL rules (`x-kubernetes-validations`) that apply on create, each one here as a
  Python predicate keyed by the rule's exact text: a rule Kueue adds or changes has no predicate,
  and the test says so instead of passing. Transition rules (those that read `oldSelf`) apply only
  to an update and are skipped.

The objects are every example's kueue.yaml (golden/, which test_golden holds equal to what fabgen
renders) and one rendered here with the legacy label keys.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from conftest import GOLDEN, INVENTORIES
from fabgen.pipeline import render_to

DATA = Path(__file__).resolve().parent / "data" / "kueue"
HOSTNAME = "kubernetes.io/hostname"

# The CEL rules of the schemas that apply when an object is created, as Python over the value
# the rule is attached to (`self`).
CEL: dict[str, Callable[[Any], bool]] = {
    # Topology.spec.levels
    "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0":
        lambda levels: all(levels.count(i) == 1 for i in levels),
    "size(self.filter(i, i.nodeLabel == 'kubernetes.io/hostname')) == 0 || "
    "self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'":
        lambda levels: all(lv.get("nodeLabel") != HOSTNAME for lv in levels) or levels[-1].get("nodeLabel") == HOSTNAME,
    # ResourceFlavor.spec
    "!has(self.topologyName) || self.nodeLabels.size() >= 1":
        lambda spec: "topologyName" not in spec or len(spec.get("nodeLabels", {})) >= 1,
}


def schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> the kept schema file's content."""
    out = {}
    for path in sorted(DATA.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        assert doc["served"] and "Apache License" in (DATA / "LICENSE").read_text()
        out[(f"{doc['group']}/{doc['version']}", doc["kind"])] = doc
    return out


SCHEMAS = schemas()


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with unknown fields refused wherever it lists an object's fields and does not
    itself allow others (`additionalProperties`, `x-kubernetes-preserve-unknown-fields`)."""
    schema = copy.deepcopy(schema)

    def walk(node: dict[str, Any]) -> None:
        if "properties" in node and "additionalProperties" not in node \
                and not node.get("x-kubernetes-preserve-unknown-fields"):
            node["additionalProperties"] = False
        for child in node.get("properties", {}).values():
            walk(child)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                walk(node[key])

    walk(schema)
    return schema


def cel_rules(schema: dict[str, Any], value: Any, path: str = "") -> Iterator[tuple[str, str, str, Any]]:
    """(path, rule, message, value) for every CEL rule whose field is present in the object."""
    prefix = f"{path}." if path else ""
    for rule in schema.get("x-kubernetes-validations", []):
        yield path, rule["rule"], rule.get("message", rule["rule"]), value
    if isinstance(value, dict):
        for key, child in value.items():
            if key in schema.get("properties", {}):
                yield from cel_rules(schema["properties"][key], child, prefix + key)
            elif isinstance(schema.get("additionalProperties"), dict):
                yield from cel_rules(schema["additionalProperties"], child, prefix + key)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for n, child in enumerate(value):
            yield from cel_rules(schema["items"], child, f"{path}.{n}")


def problems(obj: Any) -> list[str]:
    """Why Kueue's API would refuse `obj` on create; [] when it would take it as written."""
    if not isinstance(obj, dict) or (obj.get("apiVersion"), obj.get("kind")) not in SCHEMAS:
        return [f"not a kind kept in {DATA.name}: {obj.get('apiVersion') if isinstance(obj, dict) else obj!r}"]
    schema = SCHEMAS[(obj["apiVersion"], obj["kind"])]["openAPIV3Schema"]
    validator = jsonschema.Draft4Validator(strict(schema))
    out = [f"{'.'.join(map(str, e.absolute_path)) or '<object>'}: {e.message}" for e in validator.iter_errors(obj)]
    name = obj.get("metadata", {}).get("name")
    if not isinstance(name, str) or not name:
        out.append("metadata.name: required")
    if out:
        return out  # the CEL rules run on an object of the schema's shape
    for path, rule, message, value in cel_rules(schema, obj):
        if "oldSelf" in rule:
            continue  # a transition rule: only on update
        if rule not in CEL:
            out.append(f"{path or '<object>'}: CEL rule without a predicate here (Kueue's schema changed?): {rule}")
        elif not CEL[rule](value):
            out.append(f"{path or '<object>'}: {message}")
    return out


def kueue_files() -> list[Path]:
    return sorted(GOLDEN.glob("*/kubernetes/kueue.yaml"))


def test_the_kept_schemas_are_the_kinds_fabgen_writes() -> None:
    kinds = {(d["apiVersion"], d["kind"]) for p in kueue_files() for d in yaml.safe_load_all(p.read_text()) if d}
    assert kinds == set(SCHEMAS) == {("kueue.x-k8s.io/v1beta2", "Topology"),
                                     ("kueue.x-k8s.io/v1beta2", "ResourceFlavor")}


@pytest.mark.parametrize("path", kueue_files(), ids=lambda p: p.parts[-3])
def test_every_example_kueue_object_is_valid(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert docs
    for doc in docs:
        assert problems(doc) == [], (doc["kind"], doc["metadata"])
    # the CEL rules were evaluated, not passed over: every Topology has levels, every flavor a topology
    rules = {rule for doc in docs for _, rule, _, _ in cel_rules(SCHEMAS[(doc["apiVersion"], doc["kind"])]
                                                                  ["openAPIV3Schema"], doc) if "oldSelf" not in rule}
    assert rules == set(CEL)


def test_legacy_label_keys_are_valid(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text((INVENTORIES / "ib-3tier.yaml").read_text() + "kubernetes:\n  label_keys: legacy\n")
    render_to(inv, tmp_path / "out")
    docs = [d for d in yaml.safe_load_all((tmp_path / "out" / "kubernetes" / "kueue.yaml").read_text()) if d]
    assert len(docs) == 2 and all(problems(d) == [] for d in docs)


def _objects() -> tuple[dict[str, Any], dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all((GOLDEN / "ib-3tier" / "kubernetes" / "kueue.yaml").read_text()) if d]
    (topology,) = [d for d in docs if d["kind"] == "Topology"]
    (flavor,) = [d for d in docs if d["kind"] == "ResourceFlavor"]
    return topology, flavor


def _levels(t: dict[str, Any]) -> list[dict[str, Any]]:
    return t["spec"]["levels"]


# (what is broken, how, a problem that must be reported)
BROKEN: list[tuple[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]], str]] = [
    ("levels as a string", lambda t, f: t["spec"].update(levels="tier-1,tier-0") or t,
     "spec.levels: 'tier-1,tier-0' is not of type 'array'"),
    ("a misspelt spec field", lambda t, f: t["spec"].update(level=t["spec"].pop("levels")) or t,
     "'levels' is a required property"),
    ("a misspelt level field", lambda t, f: _levels(t)[0].update(nodelabel=_levels(t)[0].pop("nodeLabel")) or t,
     "spec.levels.0: 'nodeLabel' is a required property"),
    ("a node label Kubernetes refuses", lambda t, f: _levels(t)[0].update(nodeLabel="Fabric.Example/tier") or t,
     "spec.levels.0.nodeLabel: 'Fabric.Example/tier' does not match"),
    ("no levels", lambda t, f: t["spec"].update(levels=[]) or t, "spec.levels: [] should be non-empty"),
    ("17 levels", lambda t, f: t["spec"].update(
        levels=[{"nodeLabel": f"example.com/tier-{n}"} for n in range(16)] + [{"nodeLabel": HOSTNAME}]) or t,
     "is too long"),
    ("a level twice", lambda t, f: _levels(t).insert(0, dict(_levels(t)[0])) or t, "spec.levels: must be unique"),
    ("the hostname level not last", lambda t, f: _levels(t).reverse() or t,
     "spec.levels: the kubernetes.io/hostname label can only be used at the lowest level of topology"),
    ("a level with an unknown field", lambda t, f: _levels(t)[0].update(weight=1) or t,
     "Additional properties are not allowed ('weight' was unexpected)"),
    ("a flavor's misspelt topologyName", lambda t, f: f["spec"].update(topologyname=f["spec"].pop("topologyName")) or f,
     "Additional properties are not allowed ('topologyname' was unexpected)"),
    ("a flavor's label value not a string", lambda t, f: f["spec"]["nodeLabels"].update(rack=7) or f,
     "spec.nodeLabels.rack: 7 is not of type 'string'"),
    ("a flavor with a topology and no node label", lambda t, f: f["spec"].update(nodeLabels={}) or f,
     "spec: at least one nodeLabel is required when topology is set"),
    ("a flavor's topology name with capitals", lambda t, f: f["spec"].update(topologyName="IB") or f,
     "spec.topologyName: 'IB' does not match"),
    ("another API version", lambda t, f: t.update(apiVersion="kueue.x-k8s.io/v1alpha1") or t, "not a kind kept"),
    ("no name", lambda t, f: t.update(metadata={}) or t, "metadata.name: required"),
]


@pytest.mark.parametrize("what,alter,expected", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_object_is_refused(what: str, alter: Callable, expected: str) -> None:
    topology, flavor = _objects()
    assert problems(topology) == [] and problems(flavor) == []
    found = problems(alter(topology, flavor))
    assert any(expected in p for p in found), (what, found)


def test_unknown_fields_pass_the_plain_crd_schema() -> None:
    """Why `strict`: the CRD schema alone lets a misspelt field through (the API server prunes it)."""
    _, flavor = _objects()
    flavor["spec"]["topologyname"] = flavor["spec"].pop("topologyName")
    plain = SCHEMAS[(flavor["apiVersion"], "ResourceFlavor")]["openAPIV3Schema"]
    assert list(jsonschema.Draft4Validator(plain).iter_errors(flavor)) == []
    assert problems(flavor)
    assert re.search(r"'topologyname' was unexpected", "\n".join(problems(flavor)))


def test_a_cel_rule_without_a_predicate_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule Kueue adds when the schema is refreshed fails here until it has its predicate."""
    topology, _ = _objects()
    key = (topology["apiVersion"], "Topology")
    changed = copy.deepcopy(SCHEMAS[key])
    changed["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] = [
        {"rule": "size(self.levels) <= 8", "message": "at most 8 levels"}]
    monkeypatch.setitem(SCHEMAS, key, changed)
    assert problems(topology) == ["spec: CEL rule without a predicate here (Kueue's schema changed?): "
                                  "size(self.levels) <= 8"]
