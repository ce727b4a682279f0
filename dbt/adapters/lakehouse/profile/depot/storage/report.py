"""What a `dbt debug` preflight found: the checks that passed and the problems, each with its
fix, raised together as one error; and the small helpers the S3 and catalog checks share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dbt.adapters.lakehouse.exceptions import PreflightError
from dbt.adapters.lakehouse.profile.secrets import Secret


@dataclass
class PreflightReport:
    """What passed (one line each) and what failed (what is wrong, given, and the fix)."""

    passed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def raise_for_problems(self, depot_label: str) -> None:
        if not self.problems:
            return
        bullets = "\n".join("- " + p.replace("\n", "\n  ") for p in self.problems)
        raise PreflightError(
            f"Preflight of the depot ({depot_label}) found {len(self.problems)} problem(s):\n"
            f"{bullets}"
        )


def reveal(secret: Secret | None) -> str | None:
    return secret.reveal() if secret else None


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
