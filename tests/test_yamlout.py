"""The fast YAML writer: whatever plain data it is given, yaml.safe_load reads back the same."""

from __future__ import annotations

import json

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabgen.formats.yamlout import dump

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.text(max_size=20),
                    st.sampled_from(["on", "off", "yes", "no", "null", "~", "1.5", "0x1f", "1e3", "10.0.0.1/31",
                                     "a: b", "#c", "- d", "{{ x }}", "0644", "08", "1_000", "12:30", ".inf", "=",
                                     "", " lead", "trail ", "swp1s0", "é", "x\ny", "end\n", "'q'", '"d"']))
keys = st.one_of(st.text(min_size=1, max_size=12), st.sampled_from(["on", "3", "10.0.0.1/32", "2x", "y"]))
data = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(keys, inner, max_size=4)), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.dictionaries(keys, data, max_size=5), st.lists(data, max_size=5)))
def test_round_trip(value) -> None:
    assert yaml.safe_load(dump(value)) == value
    indented = dump(value, indent_sequences=True)
    assert yaml.safe_load(indented) == value
    # every list item under a key stands two spaces in from the key (ansible-lint's vars files)
    lines = indented.splitlines()
    for above, line in zip(lines, lines[1:]):
        if above.rstrip().endswith(":") and line.lstrip().startswith("- "):
            key_column = len(above) - len(above.lstrip(" -"))  # past the "- " of an item holding the key
            assert len(line) - len(line.lstrip()) == key_column + 2, (above, line)


def _paths(tree, prefix=""):
    """An independent flattening: `key key value`, an empty mapping's path alone."""
    for k, v in tree.items():
        if isinstance(v, dict) and v:
            yield from _paths(v, f"{prefix}{k} ")
        elif isinstance(v, dict):
            yield f"{prefix}{k}"
        else:
            yield f"{prefix}{k} {v}"


trees = st.recursive(scalars, lambda inner: st.dictionaries(keys, inner, max_size=4), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(keys, trees, min_size=1, max_size=5))
def test_dump_paths_is_dump_and_the_paths_in_one_walk(tree) -> None:
    """NVUE's startup.yaml and nv set lines come from one walk (dump_paths): its lines are
    exactly dump's for the same tree under a list item, and its paths every leaf's words."""
    from fabgen.formats.yamlout import dump_paths

    lines, paths = dump_paths(tree, "    ")
    assert dump([{"header": 1}, {"set": tree}]) == dump([{"header": 1}]) + "- set:\n" + "\n".join(lines) + "\n"
    assert paths == list(_paths(tree))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, trees, min_size=1, max_size=4), st.dictionaries(keys, trees, max_size=3),
       st.lists(keys, min_size=1, max_size=4, unique=True))
def test_a_shared_sub_tree_is_written_as_its_copies(tree, sub, names) -> None:
    """NVUE's port sub-trees are shared by every port (yamlout.Shared, walked once per indent):
    a tree holding one Shared sub-tree under several keys and at two depths dumps exactly as the
    same tree with a copy in each place, lines and paths, and JSON sees a plain dict."""
    import copy

    from fabgen.formats.yamlout import Shared, dump_paths

    shared = Shared({**sub, "nested": Shared(sub)})  # a Shared inside one, as NVUE's unused ports have
    tree = dict(tree)
    for name in names:
        tree[name] = shared
        tree[f"{name}-deep"] = {"ports": {name: shared, "other": {"x": shared}}}
    plain = copy.deepcopy({k: json.loads(json.dumps(v)) for k, v in tree.items()})
    assert dump_paths(tree, "    ") == dump_paths(plain, "    ")
    assert dump_paths(tree, "") == dump_paths(plain, "")  # walked again at another indent
    assert json.loads(json.dumps(tree)) == plain


def _make(template, *values):
    """A tree from `template`, its keys and string leaves "$n" standing for values[n] (a Shape's make)."""
    def sub(x):
        # "$0", "$1", "$2" only: a drawn key such as "$¹" is a digit to str.isdigit, not to int
        return values[int(x[1:])] if isinstance(x, str) and x in ("$0", "$1", "$2") else x
    return {sub(k): (_make(v, *values) if isinstance(v, dict) else sub(v)) for k, v in template.items()}


def _has_nul(tree) -> bool:
    return any("\x00" in str(k) or (_has_nul(v) if isinstance(v, dict) else "\x00" in str(v))
               for k, v in tree.items())


def _fixed_keys(tree) -> set:
    """The keys a template writes as they are (not "$n"), at every depth."""
    return {k for k, v in tree.items() if k not in ("$0", "$1", "$2")} | {
        k for v in tree.values() if isinstance(v, dict) for k in _fixed_keys(v)}


def _made_up(template, *values):
    """A make that builds a string of its first value instead of placing it (refused)."""
    return {**_make(template, *values), "made": f"{values[0]}/31"}


slot_keys = st.one_of(keys, st.sampled_from(["$0", "$1", "$2"]))
templates = st.recursive(st.one_of(scalars, st.sampled_from(["$0", "$1", "$2"])),
                         lambda inner: st.dictionaries(slot_keys, inner, max_size=4), max_leaves=20)
# values never equal to a fixed key of the templates (Shape's rule): marked with a section sign,
# or plain words and scalars no key strategy draws
slot_values = st.one_of(st.integers(-5, 10**6), st.text(max_size=8).map(lambda t: "\u00a7" + t),
                        st.sampled_from(["\u00a710.0.0.1/31", "\u00a7{}", "\u00a7a{0}b", "\u00a7 x", "10.0.0.9/31",
                                         "HOST_gpu1_eth0", "swp9s1", None, True, False, 0, ""]))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(slot_keys, templates, min_size=1, max_size=4),
       st.lists(slot_values, min_size=3, max_size=3, unique=True),  # unique as keys: 1 == True
       st.sampled_from(["", "    "]),
       st.sampled_from(["", "nv set "]))
def test_a_filled_shape_is_written_as_its_tree(template, values, indent, lead) -> None:
    """NVUE's host and fabric ports are yamlout.Filled sub-trees of a Shape, written by formatting
    text compiled once by walking the shape's make with marks for its values: the same lines and
    paths as walking the same tree built plain, whatever the values (quoted, braces, numbers, keys
    or leaves). A make that does not place a value as it is is refused."""
    import pickle
    from functools import partial

    import pytest
    from hypothesis import assume

    from fabgen.formats.yamlout import Shape, Shared, dump_paths

    assume(not _has_nul(template))  # a Shape's own text holds no NUL (its marks are NULs)
    assume(not set(values) & _fixed_keys(template))  # Shape's rule: a value is never one of its fixed keys
    with pytest.raises(ValueError):  # a value not placed as it is
        Shape(partial(_made_up, template), 3).text(indent)
    common = Shared({"mtu": 9216, "state": Shared({"down": {}})})
    shape = Shape(partial(_make, {**template, "link": common}), 3)
    for v in (values, list(reversed(values))):  # the second instance formats the compiled text
        with pytest.raises(TypeError):  # its paths would need the Filled's own prefix
            Shared({"in-shared": {"deep": shape.fill(*v)}})
        filled = {"port": shape.fill(*v), "other": {"deep": shape.fill(*v)}}
        link = {"mtu": 9216, "state": {"down": {}}}
        plain = {"port": {**_make(template, *v), "link": link},
                 "other": {"deep": {**_make(template, *v), "link": link}}}
        got, want = dump_paths(filled, indent, lead), dump_paths(plain, indent, lead)
        assert ["\n".join(x) for x in got] == ["\n".join(x) for x in want]
        assert json.loads(json.dumps(filled)) == json.loads(json.dumps(plain))
        # a pickle (fabgen diff's digests) is the same whether or not the text was compiled
        assert pickle.loads(pickle.dumps(filled)) == filled
        fresh = Shape(partial(_make, {**template, "link": Shared(common)}), 3)
        assert shape.compiled and not fresh.compiled
        assert pickle.dumps(fresh.fill(*v)) == pickle.dumps(shape.fill(*v))


fixed_keys = keys.filter(lambda k: k[:1] != "$")  # no key stands for a value here
leaf_templates = st.recursive(st.one_of(scalars, st.sampled_from(["$0", "$1", "$2"])),
                              lambda inner: st.dictionaries(fixed_keys, inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(fixed_keys, leaf_templates, min_size=1, max_size=4),
       st.lists(st.one_of(st.text(max_size=8), st.sampled_from(["a{0}b", "{}", "\"q\"", "caf\u00e9", ""])),
                min_size=3, max_size=3))
def test_a_filled_shape_is_written_as_json_as_its_tree(template, values) -> None:
    """SONiC's port and BGP neighbor rows are Filled: their JSON is the Shape's JSON text compiled
    once (make with marks) and filled with each value's JSON string, the same as encoding the
    tree itself (keys sorted), whatever the strings (quotes, braces, non-ASCII). A value made
    a key, or not placed as it is, is refused."""
    from functools import partial

    import pytest
    from hypothesis import assume

    from fabgen.formats.yamlout import Shape
    from fabgen.targets.sonic import _ENC, _STR, _row

    assume(not _has_nul(template))
    filled = Shape(partial(_make, template), 3).fill(*values)
    assert _row(filled) == _ENC(dict(filled)) == json.dumps(filled, sort_keys=True)
    with pytest.raises(ValueError):  # a value as a key would sort as its mark
        Shape(partial(_make, {"$0": "x", **template}), 3).written(_ENC, _STR, "json")
    with pytest.raises(ValueError):  # a value not placed as it is
        Shape(partial(_made_up, template), 3).written(_ENC, _STR, "json")


def test_dump_paths_refuses_a_list_of_mappings() -> None:
    """A list of scalars is block items and one comma-joined path (as `nv set` takes a list);
    a list of mappings or lists, or an empty one, has no `nv set` spelling and is refused."""
    import pytest
    import yaml

    from fabgen.formats.yamlout import dump, dump_paths

    lines, paths = dump_paths({"a": {"b": ["tacacs", "local"]}}, "")
    assert "\n".join(lines) + "\n" == dump({"a": {"b": ["tacacs", "local"]}})
    assert yaml.safe_load("\n".join(lines)) == {"a": {"b": ["tacacs", "local"]}} and paths == ["a b tacacs,local"]
    for bad in ([{"c": 1}], [[1]], []):
        with pytest.raises(TypeError, match="a b is a list"):
            dump_paths({"a": {"b": bad}}, "")


def test_addresses_take_the_general_rule() -> None:
    """The shortcut for IPv4 addresses (with or without a prefix length) writes what the
    general rule writes, and YAML reads back the same string."""
    import random

    from fabgen.formats import yamlout

    rng = random.Random(7)
    texts = ["0.0.0.0", "255.255.255.255/32", "10.0.0.1/31", "1.2.3.4/0", "999.1.1.1", "10.0.0.1/99"]
    texts += [".".join(str(rng.randrange(256)) for _ in range(4)) + rng.choice(["", f"/{rng.randrange(33)}"])
              for _ in range(2000)]
    for text in texts:
        shortcut = yamlout._string(text)
        plain = (yamlout._PLAIN.fullmatch(text) and not yamlout._SPECIAL.fullmatch(text)
                 and not yamlout._NUMBERLIKE.match(text))  # the general rule
        assert shortcut == (text if plain else json.dumps(text)), text
        assert yaml.safe_load(f"k: {shortcut}")["k"] == text


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.text(max_size=12), st.text(alphabet="0123456789.:/_-+eExob yYnNtrufalsTRUFALSnul~=", max_size=10),
                 scalars.filter(lambda v: isinstance(v, str))))
def test_one_match_is_the_three_rules(text) -> None:
    """_string decides plain or quoted with one pattern built from the three that state the
    rule (plain characters, not a YAML 1.1 special word, not number-like): the same verdict."""
    from fabgen.formats import yamlout

    rule = bool(yamlout._PLAIN.fullmatch(text) and not yamlout._SPECIAL.fullmatch(text)
                and not yamlout._NUMBERLIKE.match(text))
    written = yamlout._string(text)
    assert (written == text) == rule, text
    assert rule or written.startswith('"')


plain_words = st.text(alphabet="0123456789.:/_-+eExob yYnNtrufalsTRUFALSnul~=HOSTgpu\n", max_size=10)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.one_of(plain_words, st.text(max_size=6), st.sampled_from(
    ["HOST_gpu00001_mlx5_0", "10.128.0.0/31", "10.0.0.1", "999.1.1.1", "1.2.3.4.5", "yes", "1.5", "", "a\nb",
     "end\n", "\n", 7, None])),
    max_size=24))
def test_many_strings_at_once_are_each_its_own_text(values) -> None:
    """A switch's port descriptions and addresses are checked plain in one match over them joined
    (yamlout.texts): the verdict is each one's own, whatever the strings (newlines inside, empty,
    special words, numbers, addresses, not strings at all); all plain, they are returned as they are."""
    from fabgen.formats import yamlout

    got = yamlout.texts(values)
    assert list(got) == [yamlout.scalar(v) for v in values]
    many = ["HOST_gpu00001_mlx5_0", "10.128.0.0/31"] * 8
    assert yamlout.texts(many) is many  # all plain: no text made
    assert yamlout.texts([*many, "10.0.0.1"]) == [*many, '"10.0.0.1"']  # a bare address, quoted
    # a long list failing at its end: each line matches one way, so the match fails in one pass
    # (two ways a line were 2^40 here: the suite would not end)
    for tail in ("10.0.0.1", "yes!", "1.5", ""):
        long = ["HOST_gpu00001_mlx5_0", "a b c", "10.1.1.0/31"] * 40 + [tail]
        assert yamlout.texts(long) == [yamlout.scalar(v) for v in long]
    for bad in ("yes", "1.5", "0x1f", "10.0.0.1", "", "a\nb", " lead", 3):
        mixed = [*many, bad]
        assert yamlout.texts(mixed) is not mixed and yamlout.texts(mixed)[-1] == yamlout.scalar(bad)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(fixed_keys, leaf_templates, min_size=1, max_size=4),
       st.lists(st.lists(slot_values.filter(lambda v: v != ""), min_size=3, max_size=3), min_size=12, max_size=12),
       st.dictionaries(keys, trees, max_size=3), st.sampled_from(["", "    "]))
def test_a_joined_mapping_is_written_as_its_parts_together(template, rows, head, indent) -> None:
    """An NVUE switch's `interface` is yamlout.Joined: its loopback and management port (plain),
    a run of ports (one Filled of the switch's shape, whose entries are the mapping's own) and
    its SVIs, a switch's fabric BGP neighbors a Shared part: lines and paths are those of the
    plain mapping with the same entries in the same order; JSON and pickles see that mapping.
    Parts sharing a key are refused."""
    import pickle

    import pytest
    from hypothesis import assume

    from fabgen.formats.yamlout import Joined, Shape, Shared, dump_paths

    assume(not _has_nul(template) and not any(k.startswith("port") for k in head))

    def run(*values):  # a run of four ports, each the template with its three values
        return {f"port{n}": _make(template, *values[3 * n:3 * n + 3]) for n in range(4)}

    shape = Shape(run, 12)
    values = [v for row in rows[:4] for v in row]
    shared = Shared({"peer": {"type": "unnumbered"}})
    joined = Joined(head, shape.fill(*values), {}, shared)
    plain = {**head, **run(*values), **shared}
    assert dict(joined) == plain and list(joined) == list(plain)
    tree, flat = {"interface": joined, "x": 1}, {"interface": plain, "x": 1}
    got, want = dump_paths(tree, indent, "nv set "), dump_paths(flat, indent, "nv set ")
    assert ["\n".join(x) for x in got] == ["\n".join(x) for x in want]
    assert json.loads(json.dumps(tree)) == json.loads(json.dumps(flat))
    assert pickle.loads(pickle.dumps(joined)) == plain and type(pickle.loads(pickle.dumps(joined))) is dict
    with pytest.raises(ValueError, match="share a key"):
        Joined({"port0": 1}, shape.fill(*values))


class _Marked(str):
    """A target's marked text (as targets/nvue.py's ShellWord): the emitters write it over lines."""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=6), st.sampled_from(["", "  ", "      "]))
def test_text_of_several_lines_is_written_over_lines_and_reads_back(parts, indent) -> None:
    from fabgen.formats.yamlout import dump_paths

    text = _Marked("\n".join(parts))
    lines, _ = dump_paths({"message": {"pre-login": text}}, indent)
    assert yaml.safe_load("\n".join(lines)) == {"message": {"pre-login": str(text)}}
    assert yaml.safe_load(dump({"message": {"pre-login": text}})) == {"message": {"pre-login": str(text)}}
    if "\n" in text:  # one line of the file per line of the text
        assert len("\n".join(lines).split("\n")) == 2 + text.count("\n")
