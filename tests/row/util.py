import json

from paimon_engine.types import DataField, RowType, parse_paimon_type


def schema_of(pairs):
    return RowType([DataField(i, n, parse_paimon_type(t)) for i, (n, t) in enumerate(pairs)])


def java_small(golden_dir):
    j = json.loads((golden_dir / "java_small.row.json").read_text())
    return schema_of([(f["name"], f["type"]) for f in j["schema"]]), j["rows"]
