"""A plan's leaves as reuse/inputs.py reads them: a relation read many times (a view stacked on
views is one leaf per reference) is asked about once and every reference takes its answer, in
plan order; a table's branch or version makes another leaf; VALUES leaves, whose rows are not
in their text, are each read."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse import inputs


class Seq:
    """A Scala Seq of leaves as py4j gives it, counting what is asked of each leaf."""

    def __init__(self, leaves: list[tuple[str, Any]]) -> None:
        self.leaves = leaves
        self.asked: list[int] = []

    def size(self) -> int:
        return len(self.leaves)

    def mkString(self, separator: str) -> str:  # noqa: N802 (Scala's name)
        return separator.join(text for text, _ in self.leaves)

    def apply(self, i: int) -> Any:
        self.asked.append(i)
        return self.leaves[i][1]


def _class(name: str) -> Any:
    return SimpleNamespace(getSimpleName=lambda: name, getName=lambda: name)


def _values(rows: str) -> Any:
    return SimpleNamespace(getClass=lambda: _class("LocalRelation"),
                           data=lambda: SimpleNamespace(mkString=lambda sep: rows))  # fmt: skip


def _table(name: str, branch: str | None = None) -> Any:
    namespace, table = name.rsplit(".", 1)
    some = lambda value: SimpleNamespace(isEmpty=lambda: False, get=lambda: value)  # noqa: E731
    ident = SimpleNamespace(namespace=lambda: [namespace], name=lambda: table)
    spark_table = SimpleNamespace(
        getClass=lambda: _class(inputs._ICEBERG_TABLE), branch=lambda: branch, name=lambda: name
    )
    return SimpleNamespace(
        getClass=lambda: _class("DataSourceV2Relation"),
        table=lambda: spark_table,
        identifier=lambda: some(ident),
        catalog=lambda: some(SimpleNamespace(name=lambda: "c")),
    )


def test_each_distinct_leaf_is_asked_once_in_plan_order() -> None:
    seq = Seq([
        ("RelationV2[id#1L, v#2] c.s.t\n", _table("s.t")),
        ("RelationV2[id#7L, v#8] c.s.u\n", _table("s.u")),
        ("RelationV2[id#11L, v#12] c.s.t\n", _table("s.t")),
        ("RelationV2[id#13L, v#14] c.s.t.branch_b\n", _table("s.t", branch="b")),
        ("LocalRelation [a#3]\n", _values("1")),
        ("LocalRelation [a#4]\n", _values("2")),
    ])  # fmt: skip
    found = inputs._leaves(seq)
    assert seq.asked == [0, 1, 3, 4, 5]  # the second read of c.s.t is not asked about
    t, u = TableName("c", "s", "t"), TableName("c", "s", "u")
    assert [f for _, _, f in found[:3]] == [t, u, t]
    assert found[3][2] == "reads branch b of c.s.t"
    assert [(kind, data) for kind, data, _ in found[4:]] == [
        ("LocalRelation", "1"), ("LocalRelation", "2"),
    ]  # fmt: skip
    assert inputs._leaves(Seq([])) == []
