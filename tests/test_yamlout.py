"""The fast YAML writer: whatever plain data it is given, yaml.safe_load reads back the same."""

from __future__ import annotations

import yaml
from hypothesis import given, settings, strategies as st

from fabgen.yamlout import dump

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
