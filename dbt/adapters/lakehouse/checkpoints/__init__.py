"""Stacked views read once per run: a view whose `checkpoint` config asks (`auto`: whose inlined
plan is large) is checkpointed when it is built, and the run's later statements read the
checkpoint instead of expanding it again (docs/models.md#stacked-views)."""
