"""dbt's catalogs.yml (v1 and v2): each write integration becomes a Spark catalog, through the
same path as a depot mounted by the profile's `depots:`.

The parts: volume.py (an `external_volume` read as a depot's `spec`), translate.py (an
integration's keys checked and turned into a depot entry), integrations.py (the
`CatalogIntegration` class of each catalog type and the relation they build), register.py (an
integration merged into the credentials' `depots`, refused when its name is taken), project.py
(a project's catalogs.yml read with dbt-core's loader, for `dbt debug` and the early engine
start), early.py (the catalogs the engine's early start mounts), adapter.py (what the adapter's
overrides delegate to). Docs: docs/catalogs.md.
"""
