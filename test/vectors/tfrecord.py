#!/usr/bin/env python3
"""Run every case of ../shared/vectors/tfrecord/manifest.json through tfr-cat.

For each case: the exit status; the records written with -R (count,
payload SHA-256 in order); the JSON lines (compared by meaning: floats
as float32, int64 as string or number); the count from -c; and the
raw-mode expectation where the manifest gives one.  Prints one line per
failure and 'N passed, N failed' at the end; exits 1 on any failure.
"""
import hashlib
import json
import math
import os
import struct
import subprocess
import sys

tool = sys.argv[1]
manifest = sys.argv[2]
base = os.path.dirname(manifest)
cases = json.load(open(manifest))["cases"]


def f32(x):
    if isinstance(x, str):
        return {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}.get(x, x)
    v = struct.unpack("<f", struct.pack("<f", x))[0]
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return (v, math.copysign(1, v))


def norm(o, key=None):
    """Normalise a proto3 JSON value: floats to float32, int64 to int."""
    if isinstance(o, dict):
        return {k: norm(v, k) for k, v in o.items()}
    if isinstance(o, list):
        if key == "value":
            return [norm_scalar(v) for v in o]
        return [norm(v) for v in o]
    return o


def norm_scalar(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, float) or v in ("NaN", "Infinity", "-Infinity"):
        return ("f", f32(v))
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, str):
        try:
            return ("i", int(v))
        except ValueError:
            return ("s", v)
    return v


def fix_kinds(o):
    """Values under floatList are floats even when written as integers."""
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            if k == "floatList" and isinstance(v, dict) and "value" in v:
                out[k] = {"value": [("f", f32(float(x) if isinstance(x, (int, float)) else x))
                                    for x in v["value"]]}
            else:
                out[k] = fix_kinds(v)
        return out
    if isinstance(o, list):
        return [fix_kinds(v) for v in o]
    return o


def canon(line):
    return norm(fix_kinds(json.loads(line)))


def frames(data):
    out, off = [], 0
    while off < len(data):
        (n,) = struct.unpack_from("<Q", data, off)
        out.append(data[off + 12:off + 12 + n])
        off += n + 16
    return out


def run(args):
    p = subprocess.run([tool] + args, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


passed = failed = 0


def check(ok, cid, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s: %s" % (cid, what))


for c in cases:
    cid, exp = c["id"], c["expect"]
    path = os.path.join(base, c["file"])
    typ = ["--type", "sequence"] if c["payload"] == "sequence" else []
    want_status = 0 if exp["status"] == "ok" else 1
    alt = c.get("also_acceptable")
    recs = [json.loads(l) for l in open(os.path.join(base, exp["records_file"]))]
    lo = exp.get("records_min", exp["records"])
    hi = exp.get("records_max", exp["records"])
    if alt:
        # Sniffing readers may succeed where strict ones fail.
        want_status, lo, hi = 0, alt["records"], alt["records"]

    # Records out (-R --type raw: framing only, payloads untouched).
    st, out, err = run(["-R", "--type", "raw", path])
    got = frames(out)
    raw_expect = exp.get("raw_mode")
    if raw_expect:
        check(st == (0 if raw_expect["status"] == "ok" else 1), cid, "raw status %d" % st)
        check(len(got) == raw_expect["records"], cid, "raw records %d" % len(got))
    else:
        check(st == want_status, cid, "-R status %d, stderr %r" % (st, err))
        check(lo <= len(got) <= hi, cid, "-R wrote %d records, want %d..%d" % (len(got), lo, hi))
        check((st == 0) == (err == ""), cid, "stderr on success / silent failure: %r" % err)
    if not alt:
        for i, p in enumerate(got):
            if i < len(recs):
                check(hashlib.sha256(p).hexdigest() == recs[i]["sha256"], cid,
                      "record %d sha256" % i)

    # JSON out, compared by meaning.
    st, jout, err = run(typ + [path])
    check(st == want_status, cid, "JSON status %d, stderr %r" % (st, err))
    lines = jout.decode().splitlines()
    jlo, jhi = lo, hi
    if raw_expect:
        jlo = jhi = exp["records"]
    check(jlo <= len(lines) <= jhi, cid, "JSON wrote %d lines, want %d..%d" % (len(lines), jlo, jhi))
    if not alt:
        want = [l for l in open(os.path.join(base, exp["json_file"])).read().splitlines() if l]
        for i, l in enumerate(lines):
            if i < len(want):
                check(canon(l) == canon(want[i]), cid, "JSON line %d differs:\n  got  %s\n  want %s" % (i, l, want[i]))
    if want_status == 1 and exp.get("error_offset") is not None and exp["error_kind"] not in ("truncated_stream", "decompress_error"):
        check("offset %d:" % exp["error_offset"] in err, cid,
              "error names offset %d: %r" % (exp["error_offset"], err))

    # Count.
    st, out, err = run(["-c", path])
    if want_status == 0 and not raw_expect:
        check(st == 0 and out.decode().strip() == str(exp["records"] if not alt else alt["records"]),
              cid, "-c gave %r status %d" % (out, st))
    elif exp["error_kind"] in ("truncated_header", "truncated_record", "bad_length_crc"):
        check(st == 1, cid, "-c status %d on a framing fault" % st)

    # JSON -> records -> JSON is the identity for what we print.
    if want_status == 0 and lines:
        p = subprocess.run([tool, "-R", "--from-json"] + typ, input=jout, capture_output=True)
        q = subprocess.run([tool] + typ, input=p.stdout, capture_output=True)
        check(q.stdout == jout, cid, "JSON round trip differs")
        for form in (["--flat"],):
            f = subprocess.run([tool] + form + typ + [path], capture_output=True)
            r = subprocess.run([tool, "-R", "--from-json"] + typ, input=f.stdout, capture_output=True)
            q = subprocess.run([tool] + typ, input=r.stdout, capture_output=True)
            check(q.stdout == jout, cid, "flat JSON round trip differs: %r" % r.stderr)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
