"""Fixtures shared by this folder's tests."""

from functional.lakehouse.warm import engine_home

__all__ = ["engine_home"]
