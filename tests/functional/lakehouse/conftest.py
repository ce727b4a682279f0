"""Fixtures shared by this folder's tests."""

from functional.lakehouse.shared.warm import engine_home, other_engine_home

__all__ = ["engine_home", "other_engine_home"]
