"""The user's profile and depots: depot resolution, mounted depots, the profile resolved once per
process, secrets, the dbt profile found for commands outside dbt, and `dbt debug`'s preflight.
"""
