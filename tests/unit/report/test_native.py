"""How much of a node's plans Comet ran, from Comet's account in Spark's plan text
(report/native.py), and what `dbt debug` says of native execution (engine/native.py)."""

from __future__ import annotations

from dbt.adapters.lakehouse.engine.native import Platform, native_status
from dbt.adapters.lakehouse.report.native import NativeShare, parse_share, summed

# Spark's plan text of a CTAS with Comet's ExtendedExplainInfo (Comet 1.2.0, Spark 4.1), cut.
CTAS = """== Physical Plan ==
OverwriteByExpression (11)
+- AdaptiveSparkPlan (10)
   +- == Final Plan ==
      +- * CometColumnarToRow (7)

(11) OverwriteByExpression
Arguments: IcebergWrite(table=s.t1, format=PARQUET)

== Extended Information (Comet) ==
OverwriteByExpression
+- CometColumnarToRow
   +- CometHashAggregate
      +- AQEShuffleRead
         +- CometExchange
            +- CometHashAggregate
               +-  CometFilter [COMET-INFO: A native implementation of RLike is available.]
                  +- CometIcebergNativeScan

Comet accelerated 4 out of 5 eligible operators (80%). Final plan contains 1 transitions \
between Spark and Comet. Accelerated expressions: 2 native, 0 codegen dispatch.
"""
FALLBACK = """== Physical Plan ==
Project (3)

== Extended Information (Comet) ==
 Project [COMET: java_method is not supported]
+- CometColumnarToRow
   +- CometIcebergNativeScan

Comet accelerated 1 out of 2 eligible operators (50%). Final plan contains 1 transitions \
between Spark and Comet. Accelerated expressions: 0 native, 0 codegen dispatch.
"""


def test_comets_account_of_a_plan() -> None:
    assert parse_share(CTAS) == NativeShare(4, 5, ())  # advice is not a fallback
    assert parse_share(FALLBACK) == NativeShare(1, 2, ("Project: java_method is not supported",))
    assert parse_share("== Physical Plan ==\nProject (1)\n") is None  # Comet off
    assert parse_share(CTAS.split("Comet accelerated")[0]) is None  # no count: no figure


def test_a_nodes_plans_are_summed_and_reasons_said_once() -> None:
    fell = parse_share(FALLBACK)
    assert fell is not None
    node = summed([parse_share(CTAS), fell, fell])  # type: ignore[list-item]
    assert node == NativeShare(6, 9, ("Project: java_method is not supported",))
    assert node.fields() == {
        "operators": 6, "eligible": 9, "fallbacks": ["Project: java_method is not supported"]
    }  # fmt: skip
    assert summed([]) is None


GOOD = Platform("Linux", "x86_64", "2.36", frozenset({"avx2"}))


def test_dbt_debug_says_native_on_or_off_and_why() -> None:
    assert native_status(None, False, {}).startswith("off (engine.native is not set")
    assert native_status("comet", False, {}, "4.1", GOOD).startswith("comet on (Comet ")
    assert "4.1 line only" in native_status("comet", False, {}, "3.5", GOOD)
    assert "Spark Connect" in native_status("comet", True, {}, "4.1", GOOD)
    old = Platform("Linux", "x86_64", "2.17", frozenset({"avx2"}))
    assert "glibc 2.30" in native_status("comet", False, {}, "4.1", old)
    off_heap = {"spark.memory.offHeap.enabled": "False"}
    assert native_status("comet", False, off_heap, "4.1", GOOD) == (
        "off: the profile's spark.conf sets spark.memory.offHeap.enabled=false, so comet runs "
        "nothing"
    )


def test_dbt_debug_prints_the_native_line() -> None:
    from dbt.adapters.lakehouse.credentials import LakehouseCredentials

    creds = LakehouseCredentials.from_dict({"schema": "s"})
    shown = dict(creds.connection_info())
    assert shown["native"].startswith("off (engine.native is not set")
