# SPDX-License-Identifier: GPL-2.0-or-later
"""The validators of every tool's JSON report, with provenance.schema.json.

Each report schema names the "provenance" object by its $id; validator()
resolves that $id to the file beside this one, with the jsonschema of
Debian bookworm (4.10, RefResolver) or a newer one (referencing).
"""
import json
import os

import jsonschema

PROVENANCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "provenance.schema.json")


def validator(cls, schema):
    """A @cls (jsonschema.Draft7Validator, Draft202012Validator) of @schema."""
    with open(PROVENANCE, encoding="utf-8") as f:
        prov = json.load(f)
    cls.check_schema(schema)
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import specification_with
        spec = specification_with(cls.META_SCHEMA["$schema"])
        res = Resource.from_contents(prov, default_specification=spec)
        return cls(schema, registry=Registry().with_resource(prov["$id"], res))
    except ImportError:  # jsonschema < 4.18
        resolver = jsonschema.RefResolver.from_schema(schema, store={prov["$id"]: prov})
        return cls(schema, resolver=resolver)


def missing_fields_refused(v, report):
    """The fields of @report's provenance whose absence @v does not refuse (empty: all refused)."""
    bad = []
    for field in [None] + sorted(report["provenance"]):
        o = json.loads(json.dumps(report))
        if field is None:
            del o["provenance"]
        else:
            del o["provenance"][field]
        if v.is_valid(o):
            bad.append(field or "provenance")
    return bad
