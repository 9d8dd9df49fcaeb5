"""The loader: positions, duplicate keys, YAML safety."""

from __future__ import annotations

import pytest

from fabgen.errors import InventoryError
from fabgen.inventory.loader import MAX_BYTES, load, load_text
from fabgen.inventory.validate import validate


def test_positions_of_values_and_keys() -> None:
    loaded = load_text("version: 1\nfabrics:\n  - name: a\n    tiers: 3\n", "x.yaml")
    assert loaded.data == {"version": 1, "fabrics": [{"name": "a", "tiers": 3}]}
    assert loaded.positions[("fabrics", 0, "tiers")] == (4, 12)
    assert loaded.key_positions[("fabrics", 0, "tiers")] == (4, 5)
    assert loaded.where(("fabrics", 0, "missing")) == (3, 5)


def test_duplicate_keys_are_errors_with_both_lines() -> None:
    with pytest.raises(InventoryError) as exc:
        load_text("a: 1\nb: 2\na: 3\n", "x.yaml")
    (p,) = exc.value.problems
    assert (p.line, p.column, p.path) == (3, 1, "a")
    assert "first written at line 1" in p.message


def test_object_tags_are_refused() -> None:
    with pytest.raises(InventoryError, match="not allowed"):
        load_text("a: !!python/object/apply:os.system ['true']\n", "x.yaml")
    with pytest.raises(InventoryError, match="not allowed"):
        load_text("a: !custom 3\n", "x.yaml")


def test_alias_bomb_is_refused_fast() -> None:
    rows = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        rows.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]")
    with pytest.raises(InventoryError, match="alias"):
        load_text("\n".join(rows) + "\n", "x.yaml")


def test_merge_keys_are_refused() -> None:
    with pytest.raises(InventoryError, match="merge"):
        load_text("base: &b {a: 1}\nother:\n  <<: *b\n", "x.yaml")


def test_tabs_get_a_hint() -> None:
    with pytest.raises(InventoryError, match="tabs"):
        load_text("a:\n\tb: 1\n", "x.yaml")


def test_size_limit(tmp_path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(InventoryError, match="larger than"):
        load(big)


def test_unreadable_and_binary_files(tmp_path) -> None:
    with pytest.raises(InventoryError, match="cannot read"):
        load(tmp_path / "nope.yaml")
    b = tmp_path / "b.yaml"
    b.write_bytes(b"a: 1\n\xff\xfe\n")
    with pytest.raises(InventoryError, match="UTF-8"):
        load(b)


@pytest.mark.parametrize("char", ["\u0007", "\u0085", "\u00a0", "\u00ad", "\u200b", "\u202e", "\u2028", "\u2066",
                                  "\u3000", "\ufeff"])
def test_free_text_refuses_what_does_not_print_as_itself(char: str) -> None:
    """Controls, bidi overrides, zero-width and look-alike spaces are refused in free text, where
    they would change how a BOM, a description or a message reads; plain text is accepted."""
    base = ("version: 1\ncluster: c\nnode_models:\n  box: {{gpus: 8, vendor: {vendor}, nics: [{{rdma: mlx5_0, "
            "speed: 400}}]}}\nnode_groups: [{{name: g, model: box, count: 2}}]\nfabrics: [{{name: ib, "
            "kind: infiniband, platform: opensm, topology: fat-tree, switch_model: qm9700, node_groups: [g]}}]\n")
    validate(load_text(base.format(vendor='"Acme Corp-1"'), "ok.yaml"))
    escaped = char.encode("unicode_escape").decode()
    with pytest.raises(InventoryError) as exc:
        validate(load_text(base.format(vendor=f'"Acme{escaped}Corp"'), "bad.yaml"))
    assert "invisible or direction-changing" in str(exc.value)
