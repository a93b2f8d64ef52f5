#!/usr/bin/env python3
"""Validates report.json files against reports/schema.json (python3-jsonschema).

usage: validate_report.py [--schema SCHEMA] REPORT...
Exit status 0 when every report is valid, 1 otherwise (each error is printed with its path).
"""
import argparse
import json
import pathlib
import sys

import jsonschema


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", default=str(pathlib.Path(__file__).with_name("schema.json")))
    parser.add_argument("reports", nargs="+")
    args = parser.parse_args()
    schema = json.loads(pathlib.Path(args.schema).read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    failed = False
    for path in args.reports:
        report = json.loads(pathlib.Path(path).read_text())
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
