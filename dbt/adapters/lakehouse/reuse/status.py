"""dbt's `reused` node status for a node the adapter reused.

dbt-core 1.12 has the status (`RunStatus.Reused`: run_results.json says `reused`, and the run's
closing line counts `REUSED=`), but a materialization has no way to set it: the model runner
makes every result `success`. The runner's result is kept and only its status changed, for a
node whose response says `reused`. On a dbt-core without the status (1.10, 1.11), the node stays
a success whose message is `REUSED`."""

from __future__ import annotations

from typing import Any

_PATCHED = "_lakehouse_reused_status"


def mark_reused_results() -> None:
    try:
        from dbt.artifacts.schemas.results import RunStatus
        from dbt.task.run import ModelRunner
    except ImportError:  # dbt-core's layout changed: a success whose message says REUSED
        return
    reused = getattr(RunStatus, "Reused", None)
    if reused is None or getattr(ModelRunner, _PATCHED, False):
        return
    build_result = ModelRunner._build_run_model_result

    def with_reused(self: Any, model: Any, context: Any, elapsed_time: float = 0.0) -> Any:
        result = build_result(self, model, context, elapsed_time)
        if (result.adapter_response or {}).get("reused") is True:
            result.status = reused
        return result

    ModelRunner._build_run_model_result = with_reused  # type: ignore[method-assign]
    setattr(ModelRunner, _PATCHED, True)
