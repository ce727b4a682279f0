"""Python models' pure parts: tracebacks of the model's own frames, the leading lines dbt
strips, the result check, view names."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.models import python_models as pymodels

MODEL_FILE = "/project/models/orders.py"


def _raised(code: str, call: str) -> BaseException:
    namespace: dict = {}
    exec(compile(code, MODEL_FILE, "exec"), namespace)
    try:
        eval(call, namespace)
    except Exception as exc:
        return exc
    raise AssertionError("no error raised")


def test_traceback_keeps_only_the_models_frames_with_its_shown_path():
    code = "def share(a, b):\n    return a / b\n\ndef model():\n    return share(1, 0)\n"
    text = pymodels.user_traceback(_raised(code, "model()"), MODEL_FILE, "models/orders.py")
    lines = text.splitlines()
    assert lines[0] == "Traceback (the model's code, most recent call last):"
    assert lines[1] == '  File "models/orders.py", line 5, in model'
    assert lines[2] == '  File "models/orders.py", line 2, in share'
    assert lines[-1] == "ZeroDivisionError: division by zero"
    assert "<string>" not in text and "test_pymodels" not in text


class _JavaError(Exception):
    """Stands in for py4j's Py4JJavaError: a JVM exception behind a Python one."""

    class _Java:
        def toString(self) -> str:  # noqa: N802 - the JVM's method name
            return "java.io.FileNotFoundException: s3a://b/t/x.parquet\n\tat org.apache.x(X.java:1)"

    java_exception = _Java()

    def __str__(self) -> str:
        return "An error occurred while calling o42.collect.\n: java.io...\n\tat org.apache"


def test_a_jvm_error_is_one_line_and_pyspark_errors_lose_the_jvm_stack():
    text = pymodels.user_traceback(_JavaError(), MODEL_FILE, "models/orders.py")
    assert text.splitlines()[-1] == "_JavaError: java.io.FileNotFoundException: s3a://b/t/x.parquet"
    assert "\tat org.apache" not in text

    class AnalysisException(Exception):
        pass

    error = AnalysisException("[TABLE_OR_VIEW_NOT_FOUND] t\n\nJVM stacktrace:\norg.apache...")
    text = pymodels.user_traceback(error, MODEL_FILE, "models/orders.py")
    assert text.splitlines()[-1] == "AnalysisException: [TABLE_OR_VIEW_NOT_FOUND] t"


def test_leading_lines_dbt_strips():
    assert pymodels.leading_lines("def model(dbt, s):\n    pass\n") == 0
    assert pymodels.leading_lines("\n\n  \ndef model(dbt, s):\n") == 3


def test_a_result_that_is_not_a_dataframe_is_refused():
    with pytest.raises(pymodels.PythonModelError) as raised:
        pymodels.as_spark_dataframe(None, {"id": [1]}, "orders")
    assert raised.value.msg == (
        "Python model 'orders' returned builtins.dict; model() must return a Spark DataFrame "
        "or a pandas DataFrame. Nothing was written."
    )


def test_view_names_are_unique_per_call():
    first, second = pymodels.view_name("orders"), pymodels.view_name("orders")
    assert first.startswith("orders__dbt_py_") and first != second
