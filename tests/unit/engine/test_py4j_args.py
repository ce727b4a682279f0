"""PySpark's NumPy converters answer from sys.modules: the same answers, no pandas import."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from dbt.adapters.lakehouse.engine import py4j_args

MODULE = Path(py4j_args.__file__)


def run_fresh(code: str) -> str:
    """In an interpreter of its own: what it imports is the point."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(MODULE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_plain_arguments_import_nothing_and_numpy_values_still_convert() -> None:
    said = run_fresh(
        """
        import sys
        from py4j import protocol
        from pyspark.sql import types
        import importlib.util
        # The module alone, by its file: the package would import dbt, which is not the point.
        spec = importlib.util.spec_from_file_location("py4j_args", sys.argv[1])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        answer_without_imports = module.answer_without_imports

        answer_without_imports()
        answer_without_imports()  # idempotent
        numpy_ones = [c for c in protocol.INPUT_CONVERTER if type(c).__name__.startswith("Numpy")]
        assert len(numpy_ones) == 2, protocol.INPUT_CONVERTER
        plain = ["spark.master", 3, 2.5, None, [1, 2], {"a": 1}]
        print([c.can_convert(v) for c in numpy_ones for v in plain].count(True))
        print(sorted(m for m in ("pandas", "pyarrow", "pyspark.testing.utils") if m in sys.modules))
        import numpy
        array, scalar = numpy.array([1, 2]), numpy.int64(7)
        print([type(c).__name__ for c in numpy_ones for v in (array, scalar) if c.can_convert(v)])
        two_dims = numpy.array([[1], [2]])
        print(not any(c.can_convert(two_dims) for c in numpy_ones))
        """
    )
    converted, imported, numpy_kinds, two_dims_refused = said.splitlines()
    assert converted == "0"
    assert imported == "[]"
    assert numpy_kinds == "['NumpyArrayConverter', 'NumpyScalarConverter']"
    assert two_dims_refused == "True"
