"""The seed shapes against agate itself: every claim of seedtypes is checked with agate's casts."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pyarrow as pa
import pytest
from dbt_common.clients.agate_helper import DEFAULT_TYPE_TESTER, from_csv

from dbt.adapters.lakehouse.impl import LakehouseAdapter
from dbt.adapters.lakehouse.models import seed_types as seedtypes
from dbt.adapters.lakehouse.models.seed_types import ACCEPTED_BY, TYPE_ORDER, Shape, shape_of
from dbt.adapters.lakehouse.models.seeds import read_seed_file, rows_as_json

EDGE_VALUES = [
    "",
    " ",
    "\t",
    "\u00a0",
    "\u3000",
    "null",
    "NULL",
    " Null ",
    "nul",
    "null x",
    "\x1c",
    "0",
    "-0",
    "007",
    "-12",
    "+12",
    "12 ",
    " 12",
    "1,000",
    "1_000",
    "$5",
    "5%",
    "1e5",
    "1E-3",
    "NaN",
    "inf",
    "-Infinity",
    "\u0661\u0662",
    "12\n",
    "0.5",
    "-0.50",
    ".5",
    "5.",
    "1.2.3",
    "2024-02-29",
    "2023-02-29",
    "1900-02-29",
    "2000-02-29",
    "0000-01-01",
    "2020-13-01",
    "2020-1-5",
    "2020-01- 1",
    "2020-01-01 10:00:00",
    "2020-01-01 24:00:00",
    "2020-01-01 10:00:60",
    "2020-01-01T10:00:00",
    "2020-01-01T10:00:00Z",
    "20200101T1000",
    "2020-W01-1T10:00",
    "2020-01-01  10:00:00",
    "2020-01-01 1:2:3",
    "true",
    "FALSE",
    "True ",
    "t,rue",
    "yes",
    "1",
    "tea",
    "fries",
    "NaN%",
    "books",
    "O'Brien",
    'say "hi"',
    "a\nb",
    "€12",
    "12€",
    "-$5",
    "__",
    ":",
    "Z",
    "W",
    "T",
]


def _random_value(rng: random.Random) -> str:
    alphabet = "0123456789-.:, tTfFnNuUlLeEaAsSrR%$_+Z\u00a0\u0661"
    kind = rng.random()
    if kind < 0.2:
        return rng.choice(EDGE_VALUES)
    if kind < 0.35:
        return str(rng.randint(-(10**6), 10**6))
    if kind < 0.5:
        return f"{rng.uniform(-1000, 1000):.{rng.randint(1, 4)}f}"
    if kind < 0.65:
        year, month, day = rng.randint(0, 2100), rng.randint(0, 13), rng.randint(0, 32)
        text = f"{year:04d}-{month:02d}-{day:02d}"
        if rng.random() < 0.5:
            text += f" {rng.randint(0, 25):02d}:{rng.randint(0, 61):02d}:{rng.randint(0, 61):02d}"
        return text
    if kind < 0.8:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
    return "".join(rng.choice(string.printable) for _ in range(rng.randint(0, 8)))


CORPUS = EDGE_VALUES + [_random_value(random.Random(seed)) for seed in range(6000)]


@pytest.mark.parametrize("value", CORPUS[:400] + CORPUS[400::7])
def test_a_shape_is_accepted_by_exactly_the_types_it_claims(value):
    shape = shape_of(value)
    if shape is Shape.OTHER:
        return  # agate itself decides these
    accepted = {type(t).__name__ for t in TYPE_ORDER if t.test(value)}
    assert accepted == {type(t).__name__ for t in ACCEPTED_BY[shape]}, (value, shape)


def test_the_corpus_covers_every_shape():
    assert {shape_of(value) for value in CORPUS} == set(Shape)


def test_arrow_kernels_give_the_shapes_shape_of_defines():
    rng = random.Random(7)
    for _ in range(300):
        column = [rng.choice(CORPUS) for _ in range(rng.randint(1, 40))]
        expected = {shape_of(value) for value in column}
        shapes, other = seedtypes.column_shapes(pa.array(column, pa.string()), max_other=1000)
        if Shape.TEXT in expected:
            # A text value settles the column; the other shapes are not all looked for.
            assert Shape.TEXT in shapes and shapes <= expected and other is None
            assert (Shape.NULL in shapes) == (Shape.NULL in expected)
            continue
        assert shapes == expected, column
        assert sorted(other or []) == sorted({v for v in column if shape_of(v) is Shape.OTHER})


def test_column_type_is_agates_inference():
    rng = random.Random(11)
    for _ in range(400):
        pool = rng.sample(CORPUS, 3)
        column = [rng.choice(pool) for _ in range(rng.randint(1, 12))]
        agate_type = DEFAULT_TYPE_TESTER.run([[value] for value in column], ["c"])[0]
        shapes = {shape_of(value) for value in column}
        other = [value for value in column if shape_of(value) is Shape.OTHER]
        assert type(seedtypes.column_type(shapes, other)) is type(agate_type), column


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


GOOD_CSV = (
    "id,amount,day,at,flag,label,note\r\n"
    '1,1.50,2024-02-29,2020-01-01 10:00:00,TRUE,x1,"a, ""quoted""\r\nline"\r\n'
    "2,-3,2023-01-31,2020-12-31 23:59:59,false,yes,null\r\n"
    "3,,,,,NULL,\r\n"
)


def test_a_well_formed_file_is_read_as_agate_reads_it(tmp_path):
    path = _write(tmp_path, "good.csv", GOOD_CSV.replace("\r\n", "\n"))
    seed = read_seed_file(path, ",", text_columns=set())
    assert not isinstance(seed, str), seed
    table = from_csv(str(path), text_columns=[])
    assert seed.row_count == len(table.rows) == 3
    assert [type(c.type) for c in seed.columns] == [type(t) for t in table.column_types]
    sql_types = [
        LakehouseAdapter.convert_type(table, index) for index in range(len(table.column_names))
    ]
    assert sql_types == ["bigint", "double", "date", "timestamp", "boolean", "string", "string"]
    assert seed.fields_span_lines
    assert [c.has_nulls for c in seed.columns] == [False, True, True, True, True, True, True]
    assert [list(row) for row in seed.sample.rows] == [list(row) for row in table.rows]


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("ragged", "a,b\n1,2\n3\n", "fields"),
        ("long_row", "a,b\n1,2,3\n", "fields"),
        ("blank_line", "a,b\n1,2\n\n3,4\n", "fields"),
        ("text_after_quote", 'a,b\n"x"y,2\n', "quoting"),
        ("unclosed_quote", 'a,b\n"x,2\n', ""),
        ("bare_cr", "a,b\r1,2\n", "carriage"),
        ("repeated_header", "a,A\n1,2\n", "repeats"),
        ("empty_header", "a,\n1,2\n", "empty name"),
        ("grouped_number", 'a,b\n"1,000",2\n', "rewrites"),
        ("currency", "a\n$5\n$6\n", "rewrites"),
        ("latin1", None, "UTF-8"),
    ],
)
def test_files_only_agate_reads_right_are_left_to_it(tmp_path, name, text, reason):
    path = tmp_path / f"{name}.csv"
    if text is None:
        path.write_bytes("a\ncaf\u00e9\n".encode("latin-1"))
    else:
        path.write_bytes(text.encode("utf-8"))
    verdict = read_seed_file(path, ",", text_columns=set())
    assert isinstance(verdict, str)
    assert reason in verdict


def test_text_columns_are_not_inferred_and_keep_their_nulls(tmp_path):
    path = _write(tmp_path, "forced.csv", "code,n\n007,1\n,2\n")
    seed = read_seed_file(path, ",", text_columns={"code"})
    assert not isinstance(seed, str)
    assert type(seed.columns[0].type).__name__ == "Text"
    assert seed.columns[0].has_nulls
    assert type(seed.columns[1].type).__name__ == "Number"


def test_a_header_only_file_has_no_rows_and_agates_types(tmp_path):
    path = _write(tmp_path, "empty.csv", "a,b\n")
    seed = read_seed_file(path, ",", text_columns=set())
    assert not isinstance(seed, str)
    table = from_csv(str(path), text_columns=[])
    assert seed.row_count == 0
    assert [type(c.type) for c in seed.columns] == [type(t) for t in table.column_types]


def test_agate_rows_travel_as_json_pieces_that_hold_every_row_in_order():
    rows = [[str(i), None, "caf\u00e9 'q' \\ \"x\"\n"] for i in range(50)]
    pieces = rows_as_json(rows, chunk_chars=200)
    assert len(pieces) > 1
    assert all(len(piece) <= 200 + len(json.dumps(rows[0])) for piece in pieces)
    assert [row for piece in pieces for row in json.loads(piece)] == rows


def test_no_rows_is_one_empty_piece():
    assert rows_as_json([]) == ["[]"]
