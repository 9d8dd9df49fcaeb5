"""fabgen's CSV writer is byte-identical to the csv module whatever the fields, and takes its fast
path (no csv module) for the plain fields fabgen writes."""

from __future__ import annotations

import csv
import io
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabgen.formats import csvout


def reference(header, rows) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode()


FIELD = st.one_of(st.text(alphabet=st.sampled_from(list('ab ,"\n\r\té1-')), max_size=5), st.integers(-5, 10 ** 9),
                  st.floats(allow_nan=False, allow_infinity=False, width=32))


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(
    st.lists(st.text(alphabet="abc_", min_size=1, max_size=4), min_size=n, max_size=n),
    st.lists(st.lists(FIELD, min_size=n, max_size=n), max_size=5))))
def test_same_bytes_as_the_csv_module(case) -> None:
    header, rows = case
    assert csvout.dumps(header, rows) == reference(header, rows)


def test_plain_fields_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [("gpu001", "mlx5_0", "leaf01", "Ethernet1/1", "400G", "mmf", "node-leaf"), ("a", "b", "c", "d", 1, 2, 3)]
    monkeypatch.setattr(csvout, "_csv", lambda *a: pytest.fail("plain fields went the slow way"))
    fields = ["a", "b", "c", "d", "e", "f", "g"]
    assert csvout.dumps(fields, rows) == reference(fields, rows)


def test_a_field_with_a_comma_goes_through_the_csv_module() -> None:
    rows = [("MSN5600", "Spectrum-4 SN5600, 64 x 800GbE OSFP", 12)]
    assert csvout.dumps(["part", "description", "quantity"], rows).endswith(
        b'"Spectrum-4 SN5600, 64 x 800GbE OSFP",12\n')


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(
    st.lists(st.one_of(st.text(alphabet="abc_", min_size=1, max_size=4), FIELD.filter(lambda f: isinstance(f, str))),
             min_size=n, max_size=n),
    st.lists(st.lists(st.lists(FIELD, min_size=n, max_size=n), max_size=4), max_size=4))))
def test_chunks_write_the_same_bytes_as_all_rows_at_once(case) -> None:
    """Read once (a generator, as a file's chunks are made): a chunk that needs quoting does not
    send the writer back to the chunks before it."""
    header, chunks = case
    rows = [row for chunk in chunks for row in chunk]
    assert csvout.dumps_chunks(header, (chunk for chunk in chunks)) == (reference(header, rows) if rows else None)


def test_chunks_are_written_one_at_a_time() -> None:
    """Each chunk is freed before the next is made (NetBox's files, a fabric at a time): the
    file never holds every row at once."""
    class Rows(list):  # a list that can be weakly referenced
        pass

    def chunks():
        previous = None
        for k in range(3):
            assert previous is None or previous() is None, "an earlier chunk is still held"
            rows = Rows([(f"dev{k}", "p1")])
            previous = weakref.ref(rows)
            yield rows
            del rows
    assert csvout.dumps_chunks(["device", "port"], chunks()) == b"device,port\ndev0,p1\ndev1,p1\ndev2,p1\n"
