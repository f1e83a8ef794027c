#!/usr/bin/env python3
"""Validates JSON lines against a JSON Schema (2020-12) with the `jsonschema`
package, independently of the Rust code that wrote both.

    validate_schema.py SCHEMA FILE [PREFIX]

Checks every line of FILE (only those starting with PREFIX, which is stripped,
when given). Prints "N valid"; exits 1 naming the first invalid line."""
import json
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError:
    sys.exit("the Python package jsonschema is missing: python3 -m pip install jsonschema (.ci/run does)")

schema_path, path = sys.argv[1], sys.argv[2]
prefix = sys.argv[3] if len(sys.argv) > 3 else None
schema = json.load(open(schema_path))
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
n = 0
for i, line in enumerate(open(path), 1):
    line = line.rstrip("\n")
    if prefix is not None:
        if not line.startswith(prefix):
            continue
        line = line[len(prefix):]
    error = next(iter(validator.iter_errors(json.loads(line))), None)
    if error is not None:
        print(f"{path}:{i}: invalid against {schema_path}: {error.message}")
        sys.exit(1)
    n += 1
print(f"{n} valid")
