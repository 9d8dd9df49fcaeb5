"""The template environment: dict keys read as attributes exactly as stock Jinja reads them."""

from __future__ import annotations

import jinja2
import pytest

from fabgen.formats.templating import environment


def both(source: str, **context: object) -> tuple[str, str]:
    ours = environment().from_string(source).render(**context)
    stock = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(source).render(**context)
    return ours, stock


@pytest.mark.parametrize("source", [
    "{{ d.name }}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",  # a key named 'items' does not shadow the method
    "{{ d.get('name') }}",
    "{{ d['items'] }}",
    "{% if d.vlan is defined %}v{% else %}none{% endif %}",
    "{{ o.real }}",
])
def test_same_as_stock_jinja(source: str) -> None:
    context = {"d": {"name": "leaf1", "items": "a key", "get": "another"}, "o": 3}
    ours, stock = both(source, **context)
    assert ours == stock


def test_missing_key_is_still_an_error() -> None:
    with pytest.raises(jinja2.UndefinedError):
        environment().from_string("{{ d.missing }}").render(d={"name": "x"})
