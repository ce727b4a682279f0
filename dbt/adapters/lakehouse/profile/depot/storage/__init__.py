"""The storage kinds (S3, GCS, abfss, a local folder), one package or module each, behind
kind.py's `StorageKind`; registry.py maps a storageType, or a resolved storage, to its kind.

Nothing is imported here: the depot parsers import a kind's section module while the depot
package loads, and the registry imports every kind, which import the parsers back.
"""
