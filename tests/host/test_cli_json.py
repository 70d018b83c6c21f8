#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The kvssd CLI end to end, over the in-process device (kvssd_loop).

usage: test_cli_json.py KVSSD_LOOP SCHEMA_DIR

kvssd_loop is the CLI linked with tests/snia/loopdev.c: /dev/null is a KV
namespace holding the keys of tests/host/test_cli_boot.c (text, text that
starts with 0x, UTF-8, binary, invalid UTF-8). Every subcommand's JSON is
validated against tests/host/schemas/kvssd-CMD.schema.json (python3-jsonschema)
and checked for exact values; then nvme-cli's conventions (device after the
command, -o json|normal, --output, help), and the error sentences of a
missing or malformed $KVSSD_TRANSFER_CONFIG and of a device the user may not
open. TAP, one line per case.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("1..1\nnot ok 1 - python3-jsonschema is missing: install it "
          "(scripts/lib/common.sh lists it in KVSSD_BUILD_PACKAGES)")
    sys.exit(1)

LOOP, SCHEMAS = sys.argv[1], sys.argv[2]
sys.path.insert(0, SCHEMAS)
import provenance_schema  # noqa: E402  (beside the schemas)
DEV = "/dev/null"  # LOOPDEV_PATH
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def run(*args, env=None, user=None):
    e = dict(os.environ)
    e.pop("KVSSD_DEVICE", None)
    e.pop("KVSSD_TRANSFER_CONFIG", None)
    e.update(env or {})
    argv = [LOOP] + list(args)
    if user is not None:
        argv = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + argv
    p = subprocess.run(argv, capture_output=True, env=e, timeout=60)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


def expect(what, got, want):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))


def validator(schema):
    """A 2020-12 validator of @schema that resolves provenance.schema.json locally."""
    return provenance_schema.validator(jsonschema.Draft202012Validator, schema)


def validated(cmd, out, keep_provenance=False):
    """The one JSON line of @out, validated against @cmd's schema; "provenance" checked, dropped."""
    lines = out.splitlines()
    expect("lines of JSON output", len(lines), 1)
    obj = json.loads(lines[0])
    with open(os.path.join(SCHEMAS, "kvssd-%s.schema.json" % cmd), encoding="utf-8") as f:
        schema = json.load(f)
    validator(schema).validate(obj)
    expect("provenance.tool", obj["provenance"]["tool"], "kvssd")
    return obj if keep_provenance else {k: v for k, v in obj.items() if k != "provenance"}


def json_of(cmd, *args, rc=0, env=None):
    code, out, err = run(cmd, DEV, *args, "-o", "json", env=env)
    expect("exit status of %s (stderr %r)" % (cmd, err), code, rc)
    return validated(cmd, out)


@case
def provenance():
    """-o json names the tool, its version, the command line and the device's configuration"""
    code, out, err = run("get", DEV, "alpha", "-o", "json")
    expect("exit status (stderr %r)" % err, code, 0)
    p = validated("get", out, keep_provenance=True)["provenance"]
    expect("command_line", p["command_line"], [LOOP, "get", DEV, "alpha", "-o", "json"])
    expect("version", p["version"], "0.1.0")
    expect("host", p["host"], os.uname().nodename)
    d = p["device"]
    expect("device", (d["firmware"], d["preset"], d["command_set"], d["index"], d["latency"]),
           ("loop", "default", "kv", "hash", False))
    # without any one field the report is refused
    with open(os.path.join(SCHEMAS, "kvssd-get.schema.json"), encoding="utf-8") as f:
        v = validator(json.load(f))
    expect("fields whose absence validates", provenance_schema.missing_fields_refused(v, json.loads(out)), [])
    o = json.loads(out)
    del o["provenance"]["device"]["packing"]
    expect("a report without device.packing validates", v.is_valid(o), False)


@case
def json_on_failure():
    """-o json prints one failure object also when the device cannot be opened or the usage is wrong"""
    code, out, err = run("info", "/dev/nonexistent", "-o", "json")
    expect("missing device", (code, validated("info", out)),
           (1, {"schema_version": 1, "ok": False, "operation": "info",
                "error": "cannot open /dev/nonexistent: No such file or directory", "status": 0,
                "status_name": ""}))
    expect("stderr", err, "kvssd: cannot open /dev/nonexistent: No such file or directory\n")
    code, out, err = run("get", DEV, "k" * 300, "-o", "json")
    expect("300-byte key", (code, validated("get", out)),
           (2, {"schema_version": 1, "ok": False, "operation": "get",
                "error": "key is 300 bytes; this device accepts 1-255", "status": 0,
                "status_name": ""}))
    code, out, err = run("--json", "put", DEV, "k", "--max-bytes", "x")
    expect("bad number before the command is known", (code, validated("put", out)["error"]),
           (2, "--max-bytes is 'x'; it must be from 0 to 2097152"))
    # no command: the usage on stderr (help_style checks it), the failure object on stdout
    code, out, err = run("-o", "json")
    o = json.loads(out)
    expect("provenance.tool", o.pop("provenance")["tool"], "kvssd")
    expect("no command", (code, o),
           (2, {"schema_version": 1, "ok": False, "operation": "kvssd",
                "error": "no command given; kvssd --help lists them", "status": 0,
                "status_name": ""}))
    expect("stderr: the usage", err.startswith("usage: kvssd <command>"), True)


FIXTURE_KEYS = [{"hex": "00ff"}, "0x41", "alpha", {"hex": "626164c328"}, "clé"]


@case
def info_device():
    """info DEVICE: the Identify data of the namespace"""
    o = json_of("info")
    expect("path", o["path"], DEV)
    expect("model", o["model"], "kvssd loopback")
    expect("nsid", o["nsid"], 1)
    expect("max_key_bytes", o["max_key_bytes"], 255)
    expect("transfer", o["transfer"], {"mode": "adaptive", "threshold1_bytes": 128,
                                       "threshold2_bytes": 64, "alpha": 1.0, "beta": 1.0})


@case
def info_discovery():
    """info without a device: the namespaces found (none here: exit 1)"""
    code, out, _ = run("info", "-o", "json")
    expect("exit status", code, 1)
    expect("namespaces", validated("info", out), {"schema_version": 1, "namespaces": []})
    expect("without -o json", run("info"),
           (1, "", "kvssd: no KV namespace found; name one after the command "
                   "(kvssd info /dev/ngXnY) or with -d\n"))


@case
def info_not_nvme():
    """info on a file that is no NVMe namespace says so and what to give instead"""
    expect("/dev/zero", run("info", "/dev/zero"),
           (1, "", "kvssd: cannot open /dev/zero: not an NVMe namespace; give a KV namespace's "
                   "generic char device (/dev/ngXnY) or pci:BDF\n"))


@case
def put():
    """put: key and value sizes, method and commands"""
    o = json_of("put", "k1", "v" * 100)
    expect("put", o, {"schema_version": 1, "ok": True, "operation": "put", "key_bytes": 2,
                      "value_bytes": 100, "method": "inline", "commands": 4})


@case
def fabrics_passthru_target():
    """nvmet passthru (CNS 05h refused, MDTS 7): info, get work; a 2 MiB put refused, unsent"""
    env = {"KVSSD_LOOP_PASSTHRU_MDTS": "7"}
    o = json_of("info", env=env)
    expect("max_value_bytes", o["max_value_bytes"], 2097152)
    expect("get", run("get", DEV, "alpha", env=env), (0, "one", ""))
    with tempfile.NamedTemporaryFile() as f:
        f.write(b"v" * 2097152)
        f.flush()
        expect("put", run("put", DEV, "big", "--file", f.name, env=env),
               (2, "", "kvssd: value of 2097152 bytes exceeds the controller's maximum transfer "
                       "of 524288 bytes (MDTS 7); a prp Store carries at most 524288 bytes, an "
                       "inline one any size\n"))


@case
def get_text():
    """get: a text value is a string"""
    expect("value", json_of("get", "alpha")["value"], "one")
    expect("value", json_of("get", "clé")["value"], "välue")


@case
def get_binary():
    """get: a binary value is {"hex": ...}; --value-hex forces it; --size-only has no value"""
    o = json_of("get", "-x", "00ff")
    expect("get", o, {"schema_version": 1, "ok": True, "operation": "get", "value_bytes": 3,
                      "returned_bytes": 3, "value": {"hex": "800001"}})
    expect("value", json_of("get", "alpha", "--value-hex")["value"], {"hex": "6f6e65"})
    o = json_of("get", "alpha", "--size-only")
    expect("size-only", (o["value_bytes"], "value" in o), (3, False))


@case
def get_missing():
    """get of a missing key: the error object, exit 1"""
    o = json_of("get", "nokey", rc=1)
    expect("error", o, {"schema_version": 1, "ok": False, "operation": "get",
                        "error": "the key does not exist", "status": 135,
                        "status_name": "KEY_DOES_NOT_EXIST"})


@case
def del_and_exist():
    """del of a present key; exist true / false (exit 1); del of a missing key is an error"""
    expect("del", json_of("del", "alpha"), {"schema_version": 1, "ok": True, "operation": "del"})
    expect("exist", json_of("exist", "alpha")["exists"], True)
    expect("exist", json_of("exist", "nokey", rc=1)["exists"], False)
    expect("del missing", json_of("del", "nokey", rc=1)["status_name"], "KEY_DOES_NOT_EXIST")


@case
def list_keys():
    """list: text keys as strings (0x41 too), binary and invalid UTF-8 keys as {"hex": ...}"""
    o = json_of("list")
    expect("list", o, {"schema_version": 1, "keys": FIXTURE_KEYS, "count": 5})
    o = json_of("list", "-x", "--max-keys", "2")
    expect("list -x", o["keys"], [{"hex": "00ff"}, {"hex": "30783431"}])


@case
def iter_entries():
    """iter --values: the same rule for keys and values, raw '/' and escaped '"'"""
    code, out, _ = run("iter", DEV, "--values", "-o", "json")
    expect("exit status", code, 0)
    o = validated("iter", out)
    got = {json.dumps(e["key"], ensure_ascii=False): e for e in o["entries"]}
    expect("count", o["count"], 5)
    expect("binary", got['{"hex": "00ff"}'], {"key": {"hex": "00ff"}, "value_bytes": 3,
                                              "value": {"hex": "800001"}})
    expect("utf-8", got['"clé"']["value"], "välue")
    expect("raw JSON of x/y\"z", '"value":"x/y\\"z"' in out, True)
    o = json_of("iter", "--prefix", "al")
    expect("prefix", o["entries"], [{"key": "alpha"}])


@case
def stats():
    """stats: the log page's version and counters (5 fixture stores)"""
    o = json_of("stats")
    expect("stores", (o["version"], o["stores"], o["live_keys"]), (o["version"], 5, 5))


@case
def reset_stats_format():
    """reset-stats and format --yes"""
    expect("reset-stats", json_of("reset-stats"),
           {"schema_version": 1, "ok": True, "operation": "reset-stats"})
    expect("format", json_of("format", "--yes"),
           {"schema_version": 1, "ok": True, "operation": "format"})


@case
def flush():
    """flush: exit 0, its JSON object and its line of normal output"""
    expect("flush", json_of("flush"), {"schema_version": 1, "ok": True, "operation": "flush"})
    expect("flush -o normal", run("flush", DEV), (0, "flushed\n", ""))


@case
def device_forms():
    """the device after the command, -d and $KVSSD_DEVICE; -o json, --output-format, --json"""
    outs = [run("get", DEV, "alpha", "-o", "json"),
            run("-d", DEV, "--json", "get", "alpha"),
            run("get", "alpha", "--output-format=json", env={"KVSSD_DEVICE": DEV}),
            run("--output-format", "json", "get", "-d", DEV, "alpha")]
    for o in outs:
        expect("exit status", o[0], 0)
        expect("same output", validated("get", o[1]), validated("get", outs[0][1]))


@case
def threshold_file_documented():
    """the threshold file of docs/host.md, inline comments and all, is read as documented"""
    doc = open(os.path.join(SCHEMAS, "..", "..", "..", "docs", "host.md"), encoding="utf-8").read()
    block = doc.split("### Threshold file", 1)[1].split("```\n", 2)[1]
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write(block.replace("threshold1_bytes=128", "threshold1_bytes=200"))
        f.flush()
        code, out, err = run("info", DEV, "-o", "json", env={"KVSSD_TRANSFER_CONFIG": f.name})
        expect("exit status (stderr %r)" % err, code, 0)
        expect("transfer", validated("info", out)["transfer"],
               {"mode": "adaptive", "threshold1_bytes": 200, "threshold2_bytes": 64,
                "alpha": 1, "beta": 1})


@case
def count_units():
    """--max-keys and --max-bytes take the units every tool takes (1k, 1e1, 2Ki)"""
    expect("list --max-keys 1e1", json_of("list", "--max-keys", "1e1")["count"], 5)
    expect("get --max-bytes 2Ki", json_of("get", "alpha", "--max-bytes", "2Ki")["returned_bytes"],
           3)
    code, out, err = run("list", DEV, "--max-keys", "1.5")
    expect("--max-keys 1.5", (code, err),
           (2, "kvssd: --max-keys is '1.5'; it must be from 0 to 1099511627776\n"
                "(run kvssd --help for usage)\n"))


@case
def key_display():
    """list: printable UTF-8 keys as text, every other key (and text starting 0x) as 0x-hex; -x all hex"""
    expect("list", run("list", DEV),
           (0, "0x00ff\n0x30783431\nalpha\n0x626164c328\nclé\n", ""))
    expect("list -x", run("list", DEV, "-x"),
           (0, "0x00ff\n0x30783431\n0x616c706861\n0x626164c328\n0x636cc3a9\n", ""))


@case
def output_normal():
    """-o normal prints the raw value"""
    expect("get -o normal", run("get", DEV, "alpha", "-o", "normal"), (0, "one", ""))


@case
def output_file():
    """--output FILE writes the value; -o takes a format only: a mistyped one writes no file"""
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "v")
        expect("--output", run("get", DEV, "alpha", "--output", f), (0, "", ""))
        expect("file", open(f).read(), "one")
        os.unlink(f)
        expect("-o FILE", run("get", DEV, "alpha", "-o", f),
               (2, "", "kvssd: -o is '%s'; it must be json or normal (a file goes with "
                       '--output FILE)\n(run kvssd --help for usage)\n' % f))
        expect("no file written", os.path.exists(f), False)
        for word in ("jsno", "xml"):
            expect("-o " + word, run("get", DEV, "alpha", "-o", word),
                   (2, "", "kvssd: -o is '%s'; it must be json or normal (a file goes with "
                           '--output FILE)\n(run kvssd --help for usage)\n' % word))


@case
def output_format_unknown():
    """--output-format yaml is a usage error"""
    expect("yaml", run("get", DEV, "alpha", "--output-format", "yaml"),
           (2, "", "kvssd: --output-format is 'yaml'; it must be json or normal (a file goes "
                   'with --output FILE)\n(run kvssd --help for usage)\n'))


@case
def help_per_command():
    """kvssd help get == kvssd get --help: the command's usage and options, exit 0"""
    a, b = run("help", "get"), run("get", "--help")
    expect("same", a, b)
    expect("exit", a[0], 0)
    expect("first line", a[1].splitlines()[0], "usage: kvssd get [DEVICE] KEY [options]")
    expect("names --max-bytes", "--max-bytes N" in a[1], True)
    expect("no --values (an iter option)", "--values" in a[1], False)
    expect("help nosuch", run("help", "nosuch")[0], 2)


@case
def version():
    """--version and the version command agree"""
    a, b = run("--version"), run("version")
    expect("same", a, b)
    expect("starts", a[1].startswith("kvssd "), True)


@case
def extra_argument():
    """a command without arguments refuses one (exit 2) with a sentence"""
    expect("info x", run("info", DEV, "x"),
           (2, "", 'kvssd: info takes no argument besides the device; "x" is one too many\n'
                   "(run kvssd help info for usage)\n"))


@case
def config_missing():
    """a missing $KVSSD_TRANSFER_CONFIG is named as a config file, not as the device"""
    expect("missing", run("get", DEV, "alpha", env={"KVSSD_TRANSFER_CONFIG": "/nonexistent/t.conf"}),
           (1, "", "kvssd: transfer config file /nonexistent/t.conf does not exist (named by "
                   "$KVSSD_TRANSFER_CONFIG); fix the file, or unset KVSSD_TRANSFER_CONFIG to "
                   "use the default thresholds\n"))


@case
def config_malformed():
    """a malformed config: FILE:LINE and the key, from $KVSSD_TRANSFER_CONFIG and --config"""
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write("[transfer]\nalpha=2\ngamma=1\n")
        f.flush()
        expect("env", run("get", DEV, "alpha", env={"KVSSD_TRANSFER_CONFIG": f.name}),
               (1, "", 'kvssd: %s:3: unknown key "gamma" in [transfer] (named by '
                       "$KVSSD_TRANSFER_CONFIG); fix the file, or unset KVSSD_TRANSFER_CONFIG "
                       "to use the default thresholds\n" % f.name))
        expect("--config", run("get", DEV, "alpha", "--config", f.name),
               (2, "", 'kvssd: %s:3: unknown key "gamma" in [transfer] (given with --config)\n'
                       % f.name))


@case
def permission_denied():
    """a device node the user may not open: named, with its mode, owner and what to do"""
    if os.geteuid() != 0:
        return "SKIP needs root to make a device node and drop to nobody"
    # nobody must reach the binary: a root directory of mode 0700 (a mktemp'd chroot) forbids it
    try:
        reach = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                LOOP, "--version"], capture_output=True, timeout=60).returncode
    except OSError:
        reach = 127
    if reach in (126, 127):
        return "SKIP user nobody cannot execute %s (a directory above it is not searchable)" % LOOP
    with tempfile.TemporaryDirectory() as d:
        node = os.path.join(d, "ng0n1")
        os.mknod(node, 0o600 | 0o020000, os.stat(DEV).st_rdev)  # S_IFCHR, /dev/null's numbers
        os.chmod(d, 0o755)
        os.chmod(node, 0o600)
        expect("root only", run("-d", node, "info", user=65534),
               (1, "", "kvssd: cannot open %s: permission denied (crw------- root:root); "
                       "run as root\n" % node))
        os.chown(node, 0, 6)  # group disk on Debian
        os.chmod(node, 0o660)
        group = __import__("grp").getgrgid(6).gr_name
        expect("group", run("-d", node, "info", user=65534),
               (1, "", "kvssd: cannot open %s: permission denied (crw-rw---- root:%s); run as "
                       "root or as a member of group %s\n" % (node, group, group)))


def main():
    print("1..%d" % len(CASES))
    failed = 0
    for i, fn in enumerate(CASES, 1):
        try:
            skip = fn()
        except Exception as e:  # a failed expectation, a schema violation, bad JSON
            failed += 1
            print("not ok %d - %s: %s" % (i, fn.__name__, fn.__doc__))
            for line in str(e).splitlines()[:20]:
                print("# " + line)
            continue
        if skip:
            print("ok %d - %s # %s" % (i, fn.__name__, skip))
        else:
            print("ok %d - %s: %s" % (i, fn.__name__, fn.__doc__))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
