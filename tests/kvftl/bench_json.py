#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""kvftl-bench --json against its schema (TAP).

Usage: bench_json.py KVFTL_BENCH SCHEMA_JSON DOCS_MD

Runs kvftl-bench --json in both modes (the KV firmware and, with
--command-set nvm, the block personality) on small devices, validates each
object against tests/kvftl/kvftl-bench.schema.json with the jsonschema
library, checks the values the run fixes exactly (parameters, zero errors),
that a changed object is refused (the schema is not vacuous), and that the
field tables of docs/kvftl-bench.md ("JSON output") name exactly the
schema's fields.
"""
import json
import os
import re
import subprocess
import sys

try:
    import jsonschema
except ImportError:  # python3-jsonschema
    jsonschema = None

bench, schema_path, docs_path = sys.argv[1:4]
with open(schema_path, encoding='utf-8') as f:
    schema = json.load(f)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'host', 'schemas'))
if jsonschema is not None:
    import provenance_schema  # noqa: E402  (tests/host/schemas)
    validator = provenance_schema.validator(jsonschema.Draft202012Validator, schema)

results = []


def check(name, ok, why=''):
    results.append((name, ok, why))


def skip(name, why):
    results.append((name, None, why))


def run(args):
    p = subprocess.run([bench] + args, capture_output=True, text=True, timeout=100)
    if p.returncode != 0:
        raise RuntimeError(f'kvftl-bench {" ".join(args)} exited {p.returncode}: {p.stderr.strip()}')
    lines = p.stdout.strip().splitlines()
    if len(lines) != 1:
        raise RuntimeError(f'kvftl-bench {" ".join(args)} printed {len(lines)} lines, expected one object')
    return json.loads(lines[0])


def validate(obj):
    """None if @obj is valid, else the validator's sentence."""
    try:
        validator.validate(obj)
        return None
    except jsonschema.ValidationError as e:
        # oneOf names no reason: ask the mode's own definition for one
        mode = obj.get('command_set') if isinstance(obj, dict) else None
        if mode in schema['$defs']:
            sub = dict(schema['$defs'][mode])
            errors = list(provenance_schema.validator(jsonschema.Draft202012Validator,
                                                      sub).iter_errors(obj))
            if errors:
                return '; '.join(f'{"/".join(map(str, x.path)) or "object"}: {x.message}'
                                 for x in errors[:3])
        return e.message


kv = run(['--json', '--keys', '3000', '--placement-unit', '64', '--hash-seed', '7'])
kv_floor = run(['--json', '--keys', '3000', '--placement-unit', '64', '--hash-seed', '7',
                '--memory-floor'])
nvm = run(['--json', '--command-set', 'nvm', '--keys', '2000'])

for name, obj in (('kv', kv), ('kv --memory-floor', kv_floor), ('nvm', nvm)):
    if jsonschema is None:
        skip(f'{name} output validates against the schema', 'python3-jsonschema is not installed')
    else:
        err = validate(obj)
        check(f'{name} output validates against the schema', err is None, err or '')
    mode = name.split()[0]
    check(f'{name} output has schema_version 1 and command_set {mode}',
          obj.get('schema_version') == 1 and obj.get('command_set') == mode
          and obj.get('tool') == 'kvftl-bench',
          f"schema_version {obj.get('schema_version')!r}, command_set {obj.get('command_set')!r}")

want_kv = {'keys': 3000, 'key_bytes': 16, 'value_bytes': 64, 'preset': 'default',
           'placement_unit_bytes': 64, 'queue_depth': 64, 'batch': 16, 'arrival': 'dma',
           'seed': 1, 'store_errors': 0, 'retrieve_errors': 0, 'retrieve_mismatches': 0,
           'index_fully_cached': True, 'retrieve_index_cache_misses': 0, 'gc_runs': 0}
bad = {k: kv.get(k) for k, v in want_kv.items() if kv.get(k) != v}
check('kv output holds the run parameters and no error', not bad, f'differs: {bad}')
want_nvm = {'units': 2000, 'lba_bytes': 4096, 'preset': 'default', 'batch': 16,
            'write_errors': 0, 'read_errors': 0, 'read_mismatches': 0, 'read_map_cache_misses': 0}
bad = {k: nvm.get(k) for k, v in want_nvm.items() if nvm.get(k) != v}
check('nvm output holds the run parameters and no error', not bad, f'differs: {bad}')

# --memory-floor: the field only when asked for, a rate when it is; the run's own fields alike
check('host_memory_floor_ops_per_s only with --memory-floor',
      'host_memory_floor_ops_per_s' not in kv and 'host_memory_floor_ops_per_s' in kv_floor,
      f"without: {kv.get('host_memory_floor_ops_per_s')!r}, "
      f"with: {kv_floor.get('host_memory_floor_ops_per_s')!r}")
floor = kv_floor.get('host_memory_floor_ops_per_s', 0)
check('--memory-floor measures a rate above zero', isinstance(floor, (int, float)) and floor > 0,
      f'{floor!r}')
# the two dependent-load chases: only with --memory-floor, each a time above zero
for field in ('host_load_ns_dense_pages', 'host_load_ns_sparse_pages'):
    ns = kv_floor.get(field, 0)
    check(f'{field} only with --memory-floor, a time above zero',
          field not in kv and isinstance(ns, (int, float)) and ns > 0,
          f'without: {kv.get(field)!r}, with: {ns!r}')
bad = {k: kv_floor.get(k) for k, v in want_kv.items() if kv_floor.get(k) != v}
check('kv --memory-floor output holds the run parameters and no error', not bad,
      f'differs: {bad}')


def refused(args, sentence):
    """exit 2, stderr the sentence and the pointer to the usage (bench/usage.h)"""
    p = subprocess.run([bench] + args, capture_output=True, text=True, timeout=100)
    check(f'kvftl-bench {" ".join(args)} is refused: {sentence}',
          p.returncode == 2 and p.stdout == '' and
          p.stderr == sentence + '\n(run kvftl-bench --help for usage)\n',
          f'exit {p.returncode}, stderr {p.stderr!r}')


refused(['--memory-floor', '--slices', '--keys', '100'],
        'kvftl-bench: --memory-floor is the floor of the retrieve phase, which --slices '
        'replaces; give one of them')
refused(['--memory-floor', '--command-set', 'nvm', '--keys', '100'],
        'kvftl-bench: --memory-floor is the floor of a KV Retrieve; the block mode '
        '(--command-set nvm) has none')
# options each in range, a device the firmware refuses (under ASan: nothing leaks on the way out)
big_index_page = ('kvftl-bench: the device configuration for this run is invalid: '
                  'index_page_bytes is 65536; it must be a power of two from 4096 to '
                  'page_size_bytes (16384), or 0 for page_size_bytes')
refused(['--keys', '100', '--index-page-bytes', '65536'], big_index_page)
refused(['--command-set', 'nvm', '--keys', '100', '--index-page-bytes', '65536'], big_index_page)

if jsonschema is None:
    skip('a changed object is refused', 'python3-jsonschema is not installed')
else:
    missing = dict(kv)
    del missing['host_bytes_per_key']
    extra = dict(nvm, surprise=1)
    wrong = dict(kv, index_fully_cached='yes')
    refused = [validate(o) is not None for o in (missing, extra, wrong)]
    check('a changed object is refused (field missing, unknown field, wrong type)', all(refused),
          f'refused: {refused}')

# numbers as every tool reads them (<bench/units.h>): --keys 2e3 is 2000
nvm_units = run(['--json', '--command-set', 'nvm', '--keys', '2e3'])
check('--keys 2e3 is 2000 units', nvm_units.get('units') == 2000,
      f"units {nvm_units.get('units')!r}")

# provenance: the command line as typed, the firmware this run configured
for name, obj, args, geometry in (
        ('kv', kv, ['--json', '--keys', '3000', '--placement-unit', '64', '--hash-seed', '7'], 64),
        ('nvm', nvm, ['--json', '--command-set', 'nvm', '--keys', '2000'], 1024)):
    p = obj.get('provenance', {})
    d = p.get('device') or {}
    got = (p.get('tool'), p.get('command_line', [None])[1:], d.get('preset'), d.get('command_set'),
           d.get('placement_unit_bytes'), d.get('index'), d.get('firmware'))
    want = ('kvftl-bench', args, 'default', name, geometry, 'hash', 'kvftl1.0')
    check(f'{name} provenance names the command line and the firmware configuration',
          got == want, f'got {got}, want {want}')
    if jsonschema is not None:
        missing = provenance_schema.missing_fields_refused(validator, obj)
        check(f'{name}: without provenance or any of its fields the object is refused',
              not missing, f'accepted without {missing}')

# docs/kvftl-bench.md, section "JSON output": each table row's first cell names a field
with open(docs_path, encoding='utf-8') as f:
    text = f.read()
m = re.search(r'^## JSON output.*?(?=^## )', text, re.S | re.M)
doc_fields = set()
if m:
    for row in re.findall(r'^\|([^|\n]*)\|', m.group(0), re.M):
        doc_fields.update(re.findall(r'`([a-z0-9_]+)`', row))
schema_fields = set(schema['$defs']['kv']['properties']) | set(schema['$defs']['nvm']['properties'])
check('docs/kvftl-bench.md "JSON output" names exactly the schema fields',
      m is not None and doc_fields == schema_fields,
      f'only in docs: {sorted(doc_fields - schema_fields)}; '
      f'only in schema: {sorted(schema_fields - doc_fields)}')

print(f'1..{len(results)}')
failed = 0
for i, (name, ok, why) in enumerate(results, 1):
    if ok is None:
        print(f'ok {i} - {name} # SKIP {why}')
    elif ok:
        print(f'ok {i} - {name}')
    else:
        failed += 1
        print(f'not ok {i} - {name}')
        print(f'# {why}')
sys.exit(1 if failed else 0)
