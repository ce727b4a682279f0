"""The plugin that brings the adapter's public macro package, `lakehouse`, into every project.

Model SQL calls its macros by package name: `{{ lakehouse.as_of(ref('orders'), ...) }}`. dbt
(1.11) reaches an adapter's own macros only by bare name or as `dbt.<macro>`: it treats a
package as internal, and keeps it out of the `<package>.<macro>` namespace, when the package's
name is the project name of a plugin. So this plugin's project is named `lakehouse` in its
dbt_project.yml while the plugin is `dbt_lakehouse_public`; dbt then loads it like an installed
package. The main plugin lists it as a dependency (`dependencies=[..., "lakehouse_public"]`),
which is how dbt finds it; its adapter type is never used to connect.

A user package or project named `lakehouse` would collide with it (dbt reports the duplicate).
"""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.impl import LakehouseAdapter
from dbt.include import lakehouse


class LakehousePublicMacros(LakehouseAdapter):
    """dbt requires a dependency plugin to name an adapter type of its own."""

    @classmethod
    def type(cls) -> str:
        return "lakehouse_public"


Plugin = AdapterPlugin(
    adapter=LakehousePublicMacros,  # type: ignore[arg-type]
    credentials=LakehouseCredentials,
    include_path=lakehouse.PUBLIC_PACKAGE_PATH,
    project_name="dbt_lakehouse_public",
)
