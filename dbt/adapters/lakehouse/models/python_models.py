"""Python models (`def model(dbt, session)`), run in the adapter's own SparkSession.

dbt compiles a Python model into the user's code followed by its `dbtObj` helpers (`ref`,
`source`, `config`, `this`, `is_incremental`). Here that code is executed in a fresh namespace
with `spark` bound to the session, `model(dbt, spark)` is called with `dbt.ref` / `dbt.source`
loading Spark DataFrames (`spark.table`), and the result, a Spark DataFrame or a pandas one
(also pandas-on-Spark), becomes a temporary view. The materialization then writes
`select * from <view>` through the same path as a SQL model, so partitioning, table
properties, every incremental strategy, audited branches, the Delta log and maintenance are
the SQL model's own.

User errors are reported with the traceback of the model's own frames (its file and lines),
and a JVM error inside them as its first line, not as a py4j dump.
"""

from __future__ import annotations

import traceback
import uuid
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.reuse.session_state import session_changed

VIEW_MARK = "__dbt_py_"


class PythonModelError(DbtRuntimeError):
    """A Python model's own code failed, or returned something that is not a DataFrame."""

    CODE = 10110
    MESSAGE = "Python model error"


def view_name(identifier: str) -> str:
    """A temporary view name unique in the session (dbt's threads share it)."""
    return f"{identifier}{VIEW_MARK}{uuid.uuid4().hex[:8]}"


def _java_first_line(exc: BaseException) -> str | None:
    """The JVM exception behind a py4j error, as one line; None for other errors."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return None
    try:
        return str(java.toString()).splitlines()[0]
    except Exception:  # the gateway may be gone: fall back to the Python text
        return None


def user_traceback(exc: BaseException, model_file: str, shown_as: str) -> str:
    """The traceback lines of the model's own code (`model_file`, named `shown_as`), then the
    error itself.

    Frames outside the model (this module, pyspark, py4j) are left out; a JVM error keeps
    only its exception line, and pyspark's own errors their message without the JVM stack."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == model_file]
    lines = ["Traceback (the model's code, most recent call last):"]
    lines.extend(
        f'  File "{shown_as}", line {f.lineno}, in {f.name}'
        + (f"\n    {f.line.strip()}" if f.line else "")
        for f in frames
    )
    java = _java_first_line(exc)
    if java is not None:
        lines.append(f"{type(exc).__name__}: {java}")
    else:
        text = str(exc).split("\n\nJVM stacktrace:", 1)[0].strip()
        lines.append(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
    return "\n".join(lines)


def as_spark_dataframe(spark: Any, result: Any, model_name: str) -> Any:
    """The model's result as a Spark DataFrame: pandas and pandas-on-Spark are converted."""
    if isinstance(result, runtime.dataframe_types()):
        return result
    to_spark = getattr(result, "to_spark", None)  # pandas-on-Spark
    if callable(to_spark) and type(result).__module__.startswith("pyspark.pandas"):
        return to_spark()
    if type(result).__module__.startswith("pandas") and type(result).__name__ == "DataFrame":
        return spark.createDataFrame(result)
    raise PythonModelError(
        f"Python model '{model_name}' returned {type(result).__module__}."
        f"{type(result).__name__}; model() must return a Spark DataFrame or a pandas "
        "DataFrame. Nothing was written."
    )


def leading_lines(source: str) -> int:
    """The blank lines before a model file's code, which dbt strips when it compiles it."""
    return source[: len(source) - len(source.lstrip())].count("\n")


def run_as_view(
    spark: Any, code: str, model_name: str, model_file: str, shown_as: str, scrub: Any
) -> str:
    """Run the model and register its DataFrame as the temporary view the materialization
    writes like a SQL model's `select * from <view>`; `scrub` masks secrets in its error."""
    try:
        frame = run_model(spark, code, model_name, model_file, shown_as)
    except PythonModelError as exc:
        raise PythonModelError(scrub(str(exc.msg))) from None
    view = view_name(model_name)
    frame.createOrReplaceTempView(view)
    return view


def run_model(spark: Any, code: str, model_name: str, model_file: str, shown_as: str) -> Any:
    """Execute a compiled Python model and return its result as a Spark DataFrame.

    `model_file` is the model's file, `shown_as` its path in messages; the code is compiled
    under the file's name with its stripped leading lines put back, so tracebacks show the
    file's own line numbers and lines."""
    namespace: dict[str, Any] = {"__name__": f"dbt_python_model_{model_name}", "spark": spark}
    # Its code may change how the session resolves names (its current namespace, its settings,
    # its functions): no decision is recalled from memory after it (reuse/memo.py).
    session_changed(spark, f"Python model '{model_name}' ran in it")
    try:
        with open(model_file, encoding="utf-8") as handle:
            offset = leading_lines(handle.read())
    except OSError:  # not on disk (a package's model): the compiled code's own numbering
        offset = 0
    try:
        compiled = compile("\n" * offset + code, model_file, "exec")
        exec(compiled, namespace)  # noqa: S102 - the project's own model code, as dbt runs it
        dbt = namespace["dbtObj"](spark.table)
        result = namespace["model"](dbt, spark)
    except Exception as exc:
        raise PythonModelError(
            f"Python model '{model_name}' failed in its own code. Nothing was written.\n"
            + user_traceback(exc, model_file, shown_as)
        ) from None
    return as_spark_dataframe(spark, result, model_name)
