import os

PACKAGE_PATH = os.path.dirname(__file__)
# The `lakehouse` macro package (see dbt/adapters/lakehouse_public); outside macro-paths.
PUBLIC_PACKAGE_PATH = os.path.join(PACKAGE_PATH, "public")
