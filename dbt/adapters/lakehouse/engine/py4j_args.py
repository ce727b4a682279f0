"""PySpark's py4j argument converters, answering without importing pandas.

PySpark registers two converters for NumPy values with py4j, and py4j asks every converter
about every argument of every call into the JVM. On Spark 4.1 their question imports
`pyspark.testing.utils` to learn whether NumPy is installed, and that module imports pandas
and pyarrow: about 0.3 s of every `dbt` command that starts or attaches to an engine, spent on
its first call with an argument. A value can only be a NumPy value once NumPy is imported, so
asking `sys.modules` gives the same answer, for any argument, without importing anything.
"""

from __future__ import annotations

import sys
from typing import Any


def _numpy_array(_converter: Any, value: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray) and value.ndim == 1


def _numpy_scalar(_converter: Any, value: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.generic)


def answer_without_imports() -> None:
    """Give PySpark's NumPy converters the checks above (idempotent; the classes are PySpark's,
    so every registered instance of them answers this way)."""
    from pyspark.sql import types

    for name, check in (
        ("NumpyArrayConverter", _numpy_array),
        ("NumpyScalarConverter", _numpy_scalar),
    ):
        converter = getattr(types, name, None)
        if converter is not None:
            converter.can_convert = check
