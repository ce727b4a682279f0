"""The Delta log's pure part: configs, refusals, stats, partition values, the diff."""

from __future__ import annotations

import json

import pytest

from dbt.adapters.lakehouse.delta_mirror import file_stats, formats, schema, storage
from dbt.adapters.lakehouse.delta_mirror import log as deltalog
from dbt.adapters.lakehouse.delta_mirror import sync as deltasync
from dbt.adapters.lakehouse.delta_mirror.file_stats import ColumnStats
from dbt.adapters.lakehouse.delta_mirror.log import DataFile, DeltaMirrorError, DeltaState
from dbt.adapters.lakehouse.profile.depot import table_defaults
from dbt.adapters.lakehouse.profile.depot.model import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    LocalStorage,
    S3Storage,
)
from dbt.adapters.lakehouse.profile.depot.table_defaults import DeltaConfigError
from dbt.adapters.lakehouse.profile.secrets import Secret


class TestTableFormats:
    def test_default_is_iceberg(self):
        assert table_defaults.parse_table_formats(None, "m") == ("iceberg",)

    @pytest.mark.parametrize(
        "value", [["iceberg", "delta"], ["delta", "iceberg"], ["Iceberg", " DELTA "]]
    )
    def test_dual_in_canonical_order(self, value):
        assert table_defaults.parse_table_formats(value, "m") == ("iceberg", "delta")

    def test_a_single_name_is_a_list(self):
        assert table_defaults.parse_table_formats("iceberg", "m") == ("iceberg",)

    def test_delta_alone_is_refused(self):
        with pytest.raises(DeltaConfigError, match="lacks iceberg"):
            table_defaults.parse_table_formats(["delta"], "model 'm'")

    def test_unknown_format_is_named(self):
        with pytest.raises(DeltaConfigError, match="'hudi'.*Accepted"):
            table_defaults.parse_table_formats(["iceberg", "hudi"], "m")

    @pytest.mark.parametrize("value", [1, {"a": 1}, ["iceberg", 2]])
    def test_not_a_list_of_names(self, value):
        with pytest.raises(DeltaConfigError, match="must be a list of names"):
            table_defaults.parse_table_formats(value, "m")


class TestRefusals:
    def test_merge_on_read_keys_found(self):
        props = {"write.merge.mode": "Merge-On-Read", "write.delete.mode": "copy-on-write"}
        assert formats.merge_on_read_keys(props) == ["write.merge.mode"]
        message = formats.merge_on_read_refusal("Model 'm'", ["write.merge.mode"], "config")
        assert "Model 'm'" in message and "Nothing was written" in message

    def test_copy_on_write_is_not_refused(self):
        assert formats.merge_on_read_keys(formats.COPY_ON_WRITE) == []

    def test_rename_is_a_hazard(self):
        hazards = schema.schema_hazards({1: "id", 2: "b"}, ["b"], [{1: "id", 2: "a"}])
        assert [h.column for h in hazards] == ["b"]
        assert "renamed" in hazards[0].reason

    def test_drop_and_readd_is_a_hazard(self):
        # c had id 2 when live files were written; it now has id 3
        hazards = schema.schema_hazards({1: "id", 3: "c"}, ["c"], [{1: "id", 2: "c"}])
        assert "dropped and added again" in hazards[0].reason

    def test_a_new_column_is_no_hazard(self):
        assert schema.schema_hazards({1: "id", 3: "d"}, ["d"], [{1: "id"}, {1: "id", 3: "d"}]) == []

    def test_readd_after_every_old_file_is_gone_is_no_hazard(self):
        # every live file was written with the current schema (a rebuild)
        assert schema.schema_hazards({1: "id", 3: "c"}, ["c"], [{1: "id", 3: "c"}]) == []

    def test_field_ids_are_recorded_per_top_level_column(self):
        fields = [_field("id"), {**_field("c", "string"), "metadata": {"comment": "kept"}}]
        recorded = schema.with_field_ids(fields, {1: "id", 5: "c"})
        assert [f["metadata"] for f in recorded] == [
            {"iceberg.field-id": 1},
            {"comment": "kept", "iceberg.field-id": 5},
        ]
        assert fields[1]["metadata"] == {"comment": "kept"}  # the input is left as it was

    def test_a_name_under_a_new_field_id_is_reassigned(self):
        # dropped and added again outside dbt: c was mirrored as id 2, is id 3 now
        held = [_field("id", field_id=1), _field("c", field_id=2)]
        assert schema.reassigned_names(held, {1: "id", 3: "c"}, None) == ["c"]
        assert schema.reassigned_names(held, {1: "id", 2: "c"}, None) == []

    def test_without_recorded_ids_the_mirrored_snapshot_schema_decides(self):
        held = [_field("id"), _field("c")]
        assert schema.reassigned_names(held, {1: "id", 3: "c"}, {1: "id", 2: "c"}) == ["c"]
        assert schema.reassigned_names(held, {1: "id", 2: "c"}, {1: "id", 2: "c"}) == []
        # nothing to compare with (the snapshot expired): every held name is checked
        assert schema.reassigned_names(held, {1: "id", 2: "c"}, None) == ["id", "c"]

    def test_a_dropped_or_renamed_name_is_not_reassigned(self):
        held = [_field("id", field_id=1), _field("a", field_id=2)]
        assert schema.reassigned_names(held, {1: "id", 2: "b"}, None) == []

    def test_type_change_refusal_names_the_columns(self):
        message = schema.type_change_refusal("Model 'm'", ["amount"])
        assert "amount" in message and "--full-refresh" in message


class TestStats:
    def test_timestamp_bounds_widen_to_millis(self):
        # 1 µs past a millisecond: min floors, max ceils
        assert (
            file_stats.stat_value("timestamp", 1_000_001, upper=False) == "1970-01-01T00:00:01.000Z"
        )
        assert (
            file_stats.stat_value("timestamp", 1_000_001, upper=True) == "1970-01-01T00:00:01.001Z"
        )

    def test_negative_timestamps_floor_and_ceil(self):
        assert file_stats.stat_value("timestamp", -1, upper=False) == "1969-12-31T23:59:59.999Z"
        assert file_stats.stat_value("timestamp", -1, upper=True) == "1970-01-01T00:00:00.000Z"

    def test_timestamp_ntz_has_no_zone(self):
        low = file_stats.stat_value("timestamp_ntz", "2024-01-01 10:00:00.123456", upper=False)
        high = file_stats.stat_value("timestamp_ntz", "2024-01-01 10:00:00.123456", upper=True)
        assert (low, high) == ("2024-01-01T10:00:00.123", "2024-01-01T10:00:00.124")

    def test_decimal_keeps_every_digit(self):
        document = file_stats.stats_json(
            2,
            {"amount": ColumnStats("12345678901234567890.0123456789", "1E-10", 0, None)},
            {"amount": "decimal(38,10)"},
        )
        assert '"amount":12345678901234567890.0123456789' in document
        assert '"amount":1E-10' in document
        assert json.loads(document)["numRecords"] == 2

    def test_nan_drops_the_bounds_not_the_null_count(self):
        document = json.loads(
            file_stats.stats_json(3, {"x": ColumnStats(1.0, 2.0, 1, 1)}, {"x": "double"})
        )
        assert document == {"numRecords": 3, "nullCount": {"x": 1}}

    def test_unknown_bounds_are_left_out(self):
        document = json.loads(
            file_stats.stats_json(
                1,
                {"b": ColumnStats(b"\x00", b"\x01", 0, None), "s": ColumnStats("a", None, 0, None)},
                {"b": "binary", "s": "string"},
            )
        )
        assert "minValues" not in document and document["nullCount"] == {"b": 0, "s": 0}

    def test_dates_ints_strings_booleans(self):
        types = {"d": "date", "i": "long", "s": "string", "f": "boolean"}
        stats = {
            "d": ColumnStats("2024-01-01", "2024-02-01", 0, None),
            "i": ColumnStats(-5, 9, None, None),
            "s": ColumnStats("a'b", 'z"', 0, None),
            "f": ColumnStats(False, True, 0, None),
        }
        document = json.loads(file_stats.stats_json(4, stats, types))
        assert document["minValues"] == {"d": "2024-01-01", "i": -5, "s": "a'b", "f": False}
        assert document["maxValues"] == {"d": "2024-02-01", "i": 9, "s": 'z"', "f": True}


class TestPartitions:
    def test_identity_fields_of_plain_types_only(self):
        types = {"region": "string", "ts": "timestamp", "day": "date", "x": "double"}
        assert file_stats.delta_partition_columns(["region", "ts", "day", "x"], types) == [
            "region",
            "day",
        ]

    def test_values(self):
        assert file_stats.partition_value("boolean", True) == "true"
        assert file_stats.partition_value("long", 7) == "7"
        assert file_stats.partition_value("string", None) is None


class TestPaths:
    @pytest.mark.parametrize(
        ("file_path", "root", "relative"),
        [
            ("s3://b/wh/t/data/a.parquet", "s3://b/wh/t", "data/a.parquet"),
            ("s3a://b/wh/t/data/x=1/a.parquet", "s3://b/wh/t/", "data/x=1/a.parquet"),
            ("file:/w/t/data/a.parquet", "file:///w/t", "data/a.parquet"),
        ],
    )
    def test_relative_to_the_root(self, file_path, root, relative):
        assert deltalog.relative_path(file_path, root) == relative

    def test_outside_the_root_is_an_error(self):
        with pytest.raises(DeltaMirrorError, match="outside the table root"):
            deltalog.relative_path("s3://b/elsewhere/a.parquet", "s3://b/wh/t")

    def test_a_sibling_with_the_same_prefix_is_outside(self):
        with pytest.raises(DeltaMirrorError):
            deltalog.relative_path("s3://b/wh/t2/data/a.parquet", "s3://b/wh/t")


def _field(name: str, kind: str = "long", field_id: int | None = None) -> dict:
    metadata = {} if field_id is None else {"iceberg.field-id": field_id}
    return {"name": name, "type": kind, "nullable": True, "metadata": metadata}


def _file(path: str) -> DataFile:
    return DataFile(path, 10, '{"numRecords":1}')


class TestPlan:
    def test_no_log_creates(self):
        plan = deltalog.plan_mirror([_file("a")], [_field("id")], [], None)
        assert plan.kind == "create" and [f.path for f in plan.adds] == ["a"]

    def test_diff_adds_and_removes(self):
        state = DeltaState(frozenset({"a", "b"}), [_field("id")], [], 1)
        plan = deltalog.plan_mirror([_file("b"), _file("c")], [_field("id")], [], state)
        assert plan.kind == "append"
        assert [f.path for f in plan.adds] == ["c"] and plan.removes == ["a"]
        assert plan.add_columns == []

    def test_new_trailing_columns_are_added(self):
        state = DeltaState(frozenset({"a"}), [_field("id")], [], 1)
        plan = deltalog.plan_mirror(
            [_file("a")], [_field("id"), _field("extra", "string")], [], state
        )
        assert plan.kind == "append" and [c["name"] for c in plan.add_columns] == ["extra"]

    @pytest.mark.parametrize(
        ("fields", "partitions"),
        [
            ([_field("id", field_id=1)], []),  # ids recorded in a log that had none
            ([_field("id")], ["id"]),  # partitioning changed
            ([_field("id", "integer")], []),  # type changed (a rebuild)
            ([_field("other")], []),  # column dropped
        ],
    )
    def test_other_changes_redeclare_every_file(self, fields, partitions):
        state = DeltaState(frozenset({"a"}), [_field("id")], [], 1)
        plan = deltalog.plan_mirror([_file("a"), _file("b")], fields, partitions, state)
        assert plan.kind == "redeclare" and [f.path for f in plan.adds] == ["a", "b"]


ACCESS_KEY = "AKIAEXAMPLEACCESSKEY"
SECRET_KEY = "wJalrXUtnFEMI-secret-key-example"
SESSION_TOKEN = "FwoGZXIvYXdzEXAMPLEsessiontoken"


def _depot(endpoint: str | None, token: str | None = SESSION_TOKEN, keys: bool = True) -> Depot:
    secrets = DepotSecrets(
        aws_access_key=Secret(ACCESS_KEY) if keys else None,
        aws_secret_key=Secret(SECRET_KEY) if keys else None,
        aws_session_token=Secret(token) if token else None,
    )
    return Depot(
        "lake",
        S3Storage("bucket", "warehouse", "eu-west-1", endpoint),
        CatalogSpec("rest", "http://catalog:8181"),
        secrets,
        "profile",
    )


class TestStorageOptions:
    def test_http_endpoint_region_keys_and_session_token(self):
        options = storage.storage_options(_depot("http://127.0.0.1:9000"))
        assert dict(options) == {
            "AWS_REGION": "eu-west-1",
            "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_SESSION_TOKEN": SESSION_TOKEN,
        }

    def test_https_endpoint_allows_no_http(self):
        options = storage.storage_options(_depot("HTTPS://s3.example.com", token=None))
        assert dict(options) == {
            "AWS_REGION": "eu-west-1",
            "AWS_ENDPOINT_URL": "HTTPS://s3.example.com",
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        }

    def test_aws_without_keys_leaves_credentials_to_the_environment(self):
        options = storage.storage_options(_depot(None, token=None, keys=False))
        assert dict(options) == {"AWS_REGION": "eu-west-1"}

    def test_local_storage_needs_none(self, tmp_path):
        local = Depot(
            "here", LocalStorage(tmp_path), CatalogSpec("hadoop"), DepotSecrets(), "profile"
        )
        assert dict(storage.storage_options(local)) == {}
        assert dict(storage.storage_options(None)) == {}

    def test_no_secret_in_any_rendering(self):
        depot = _depot("http://127.0.0.1:9000")
        options = storage.storage_options(depot)
        shown = [repr(options), str(options), f"{options}", f"{options!r}", repr(depot)]
        shown.append(repr(deltasync.MirrorResult("c.s.t", 1, "append", 2, 3, 4, 0.5)))
        for text in shown:
            for secret in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN):
                assert secret not in text, text
        assert "http://127.0.0.1:9000" in repr(options) and "****" in repr(options)
