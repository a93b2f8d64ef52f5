#!/usr/bin/env python3
"""Validates reports against their schema (python3-jsonschema): run reports (report.json,
"kind": "train") against reports/schema.json, ablation summaries ("kind": "ablation") against
reports/ablation_schema.json.

usage: validate_report.py [--schema SCHEMA] REPORT...
Exit status 0 when every report is valid, 1 otherwise (each error is printed with its path, as
is why a report is not JSON: NaN, Infinity and -Infinity among it).
"""
import argparse
import json
import pathlib
import sys

import jsonschema

# Reports are read as reports/render.py reads them: NaN, Infinity and -Infinity refused, naming the
# file (Python's json takes them, and a NaN passes every bound of the schema).
from report_json import InputError, load_json


SCHEMA_BY_KIND = {"train": "schema.json", "ablation": "ablation_schema.json"}


def default_schema(report) -> str:
    kind = report.get("kind") if isinstance(report, dict) else None
    # An unknown kind falls back to the run schema, which then names the bad "kind".
    return str(pathlib.Path(__file__).with_name(SCHEMA_BY_KIND.get(kind, "schema.json")))


def validator_for(schema_path: str):
    schema = json.loads(pathlib.Path(schema_path).read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", help="one schema for every report (default: chosen by the report's kind)")
    parser.add_argument("reports", nargs="+")
    args = parser.parse_args()
    failed = False
    for path in args.reports:
        try:
            report = load_json(path)
        except InputError as e:
            print(e, file=sys.stderr)
            failed = True
            continue
        validator = validator_for(args.schema or default_schema(report))
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
        for error in errors:
            where = "/".join(str(p) for p in error.absolute_path) or "(top)"
            print(f"{path}: {where}: {error.message}", file=sys.stderr)
        failed = failed or bool(errors)
        if not errors:
            print(f"{path}: valid")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
