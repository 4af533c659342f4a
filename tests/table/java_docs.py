"""Reconstructions of Iceberg Java's TableMetadataV1Valid.json / TableMetadataV2Valid.json test documents."""

V1_VALID = {
    "format-version": 1,
    "table-uuid": "d20125c8-7284-442c-9aea-15fee620737c",
    "location": "s3://bucket/test/location",
    "last-updated-ms": 1602638573874,
    "last-column-id": 3,
    "schema": {"type": "struct", "fields": [
        {"id": 1, "name": "x", "required": True, "type": "long"},
        {"id": 2, "name": "y", "required": True, "type": "long", "doc": "comment"},
        {"id": 3, "name": "z", "required": True, "type": "long"}]},
    "partition-spec": [{"name": "x", "transform": "identity", "source-id": 1, "field-id": 1000}],
    "properties": {},
    "current-snapshot-id": -1,
    "snapshots": [],
}

V2_VALID = {
    "format-version": 2,
    "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
    "location": "s3://bucket/test/location",
    "last-sequence-number": 34,
    "last-updated-ms": 1602638573590,
    "last-column-id": 3,
    "current-schema-id": 1,
    "schemas": [
        {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "required": True, "type": "long"}]},
        {"type": "struct", "schema-id": 1, "identifier-field-ids": [1, 2], "fields": [
            {"id": 1, "name": "x", "required": True, "type": "long"},
            {"id": 2, "name": "y", "required": True, "type": "long", "doc": "comment"},
            {"id": 3, "name": "z", "required": True, "type": "long"}]},
    ],
    "default-spec-id": 0,
    "partition-specs": [{"spec-id": 0, "fields": [
        {"name": "x", "transform": "identity", "source-id": 1, "field-id": 1000}]}],
    "last-partition-id": 1000,
    "default-sort-order-id": 3,
    "sort-orders": [{"order-id": 3, "fields": [
        {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
        {"transform": "bucket[4]", "source-id": 3, "direction": "desc", "null-order": "nulls-last"}]}],
    "properties": {},
    "current-snapshot-id": 3055729675574597004,
    "snapshots": [
        {"snapshot-id": 3051729675574597004, "timestamp-ms": 1515100955770, "sequence-number": 0,
         "summary": {"operation": "append"}, "manifest-list": "s3://a/b/1.avro"},
        {"snapshot-id": 3055729675574597004, "parent-snapshot-id": 3051729675574597004,
         "timestamp-ms": 1555100955770, "sequence-number": 1, "summary": {"operation": "append"},
         "manifest-list": "s3://a/b/2.avro", "schema-id": 1},
    ],
    "snapshot-log": [{"snapshot-id": 3051729675574597004, "timestamp-ms": 1515100955770},
                     {"snapshot-id": 3055729675574597004, "timestamp-ms": 1555100955770}],
    "metadata-log": [],
}
