#!/usr/bin/env python3
"""Run a case of ../shared/vectors/mmap/ (batch, collate or pipeline)
through batch-sample.

usage: batch.py BINDIR KIND CASE.json [COMPAT]

batch:    the sizes go to 'batch-sample by-size' (both compat values:
          main and 0.12), whose batches or error must be the expected.
collate:  the samples go to 'batch-sample collate' with the case's args.
pipeline: each language pair becomes a source and a target dataset
          built by 'mmap-index build' (sentence i of a side has as many
          tokens as the case's size says); 'batch-sample batches' then
          runs every shard over the case's epochs, and its batches (fill
          batches included), virtual sizes, ratios and filtered
          sentences (--stats --json) must be the expected.
Prints what differs and exits 1 on a failure.
"""
import json
import os
import subprocess
import sys
import tempfile

bindir, kind, path = sys.argv[1:4]
case = json.load(open(path))
name = case["name"]


def tool(t):
    return os.path.join(bindir, t)


def fail(msg):
    sys.exit("%s: %s" % (name, msg))


def run(args, stdin=None):
    return subprocess.run(args, input=stdin, capture_output=True)


def by_size(compat):
    key = "main" if compat == "main" else "v0_12"
    args = [tool("batch-sample"), "by-size", "--fairseq-compat", compat,
            "--required-batch-size-multiple", str(case["bsz_mult"])]
    if case["max_tokens"] is not None:
        args += ["--max-tokens", str(case["max_tokens"])]
    if case["max_sentences"] is not None:
        args += ["--batch-size", str(case["max_sentences"])]
    text = "".join("%d\n" % x for x in case["input"]).encode()
    r = run(args, text)
    if "error_" + key in case:
        want = case["error_" + key].split(": ", 1)[1]
        err = r.stderr.decode().strip()
        if r.returncode != 1 or r.stdout or err != "batch-sample: stdin: " + want:
            fail("%s: status %d, stderr %r, want the error %r" %
                 (compat, r.returncode, err, want))
        return
    if r.returncode != 0 or r.stderr:
        fail("%s: status %d: %s" % (compat, r.returncode, r.stderr.decode()))
    got = [[int(x) for x in line.split()] for line in r.stdout.decode().splitlines()]
    if got != case["expected_" + key]:
        fail("%s: got %s, want %s" % (compat, got, case["expected_" + key]))


def collate():
    line = json.dumps(case["samples"]) + "\n"
    r = run([tool("batch-sample"), "collate"] + case["args"], line.encode())
    if r.returncode != 0 or r.stderr:
        fail("status %d: %s" % (r.returncode, r.stderr.decode()))
    got = json.loads(r.stdout)
    if got != case["expected"]:
        fail("got %s, want %s" % (got, case["expected"]))


def build(tmp, prefix, sizes):
    """A dataset whose sentence i has sizes[i] tokens (ids 4.., eos 2 last)."""
    lines = "".join(" ".join(str(4 + (i + k) % 50) for k in range(n - 1)) +
                    (" 2" if n > 1 else ("2" if n == 1 else "")) + "\n"
                    for i, n in enumerate(sizes))
    src = os.path.join(tmp, prefix + ".txt")
    with open(src, "w") as f:
        f.write(lines)
    r = run([tool("mmap-index"), "build", "--input-format", "id", "--dtype",
             "uint16", "-o", os.path.join(tmp, prefix), src])
    if r.returncode != 0:
        fail("mmap-index build: %s" % r.stderr.decode())
    return os.path.join(tmp, prefix)


KNOWN = {"seed", "max_tokens", "max_sentences", "bsz_mult", "max_positions",
         "num_shards", "shuffle", "grouped_shuffling", "order_seed",
         "datasets", "epochs", "rebuild_batches", "sampling",
         "skip_remainder_batch", "fairseq_compat"}
KNOWN_SAMPLING = {"method", "temperature", "seed", "virtual_size", "weights"}


def pipeline():
    c = case["config"]
    # A key this runner does not pass on would be a case checked against
    # the wrong settings: refuse it rather than pass by chance.
    extra = set(c) - KNOWN | set(c.get("sampling") or {}) - KNOWN_SAMPLING
    if extra:
        fail("config keys this runner does not know: %s" % sorted(extra))
    with tempfile.TemporaryDirectory() as tmp:
        args = [tool("batch-sample"), "batches", "--stats", "--json",
                "--seed", str(c["seed"]),
                "--required-batch-size-multiple", str(c["bsz_mult"]),
                "--order-seed", c["order_seed"],
                "--epoch", str(c["epochs"][0]),
                "--epochs", str(len(c["epochs"]))]
        if c["epochs"] != list(range(c["epochs"][0], c["epochs"][0] + len(c["epochs"]))):
            fail("epochs not consecutive: %s" % c["epochs"])
        if c.get("max_tokens") is not None:
            args += ["--max-tokens", str(c["max_tokens"])]
        if c.get("max_sentences") is not None:
            args += ["--batch-size", str(c["max_sentences"])]
        mp = c.get("max_positions")
        if mp is None:
            mp = [2 ** 31 - 1, 2 ** 31 - 1]
        elif isinstance(mp, int):
            mp = [mp, mp]
        args += ["--max-source-positions", str(mp[0]),
                 "--max-target-positions", str(mp[1])]
        if not c.get("shuffle", True):
            args.append("--no-shuffle")
        if c.get("grouped_shuffling"):
            args.append("--grouped-shuffling")
        if c.get("rebuild_batches"):
            args.append("--rebuild-batches")
        if c.get("skip_remainder_batch"):
            args.append("--skip-remainder-batch")
        if c.get("fairseq_compat") is not None:
            args += ["--fairseq-compat", str(c["fairseq_compat"])]
        s = c.get("sampling")
        if s:
            args += ["--sampling-method", s["method"]]
            if "temperature" in s:
                args += ["--sampling-temperature", repr(float(s["temperature"]))]
            for k, opt in (("seed", "--sampling-seed"),
                           ("virtual_size", "--virtual-data-size")):
                if s.get(k) is not None:
                    args += [opt, str(s[k])]
            w = s.get("weights")
            if w is not None:
                if isinstance(w, dict):
                    w = [w[d["key"]] for d in c["datasets"]]
                args += ["--sampling-weights", ",".join(
                    "%s=%r" % (d["key"], float(x))
                    for d, x in zip(c["datasets"], w))]
        for i, d in enumerate(c["datasets"]):
            sp = build(tmp, "d%d.src" % i, d["src_sizes"])
            if d.get("tgt_sizes") is None:	# monolingual: sorted by source only
                args += ["-p", "%s=%s" % (d["key"], sp)]
                continue
            tp = build(tmp, "d%d.tgt" % i, d["tgt_sizes"])
            args += ["-p", "%s=%s,%s" % (d["key"], sp, tp)]
        epochs = [e for e in case["expected"] if "shard" not in e]
        shards = [e for e in case["expected"] if "shard" in e]
        nshards = c["num_shards"]
        for k in range(nshards):
            r = run(args + ["--shard", "%d/%d" % (k, nshards)])
            if r.returncode != 0:
                fail("shard %d: status %d: %s" % (k, r.returncode, r.stderr.decode()))
            lines = [json.loads(x) for x in r.stdout.decode().splitlines()]
            stats = [json.loads(x) for x in r.stderr.decode().splitlines()]
            for want in shards:
                if want["shard"] != k:
                    continue
                got = [b["ids"] for b in lines if b["epoch"] == want["epoch"]]
                steps = [b["step"] for b in lines if b["epoch"] == want["epoch"]]
                if got != want["batches"]:
                    fail("epoch %d shard %d: batches differ:\n got  %s\n want %s" %
                         (want["epoch"], k, got, want["batches"]))
                if steps != list(range(len(got))) or any(
                        b["shard"] != k for b in lines):
                    fail("epoch %d shard %d: steps or shard numbers wrong" %
                         (want["epoch"], k))
            for want in epochs:
                st = [x for x in stats if x["epoch"] == want["epoch"]]
                if len(st) != 1:
                    fail("epoch %d: %d stats lines" % (want["epoch"], len(st)))
                st = st[0]
                if st["virtual_size"] != want["virtual_size"]:
                    fail("epoch %d: virtual size %d, want %d" %
                         (want["epoch"], st["virtual_size"], want["virtual_size"]))
                if [f[2] for f in st["filtered_ids"]] != want["filtered"]:
                    fail("epoch %d: filtered %s, want %s" %
                         (want["epoch"], [f[2] for f in st["filtered_ids"]],
                          want["filtered"]))
                if st["filtered"] != len(want["filtered"]):
                    fail("epoch %d: filtered count" % want["epoch"])
                if want["virtual_sizes_per_dataset"] is not None:
                    got = [p["virtual_size"] for p in st["pairs"]]
                    if got != want["virtual_sizes_per_dataset"]:
                        fail("epoch %d: per pair %s, want %s" %
                             (want["epoch"], got, want["virtual_sizes_per_dataset"]))
                if want["ratios"] is not None:
                    got = [p["ratio"] for p in st["pairs"]]
                    if got != want["ratios"]:
                        fail("epoch %d: ratios %s, want %s" %
                             (want["epoch"], got, want["ratios"]))
                if st["batches_total"] != len(want["batches_unshuffled"]):
                    fail("epoch %d: %d batches, want %d" %
                         (want["epoch"], st["batches_total"],
                          len(want["batches_unshuffled"])))
                # The unshuffled batches hold what the shards see, in some order.
                seen = sorted(json.dumps(b["ids"]) for b in lines
                              if b["epoch"] == want["epoch"] and b["ids"])
                if nshards == 1 and not c.get("grouped_shuffling") and seen != sorted(
                        json.dumps(b) for b in want["batches_unshuffled"]):
                    fail("epoch %d: batches are not those of the unshuffled list" %
                         want["epoch"])


if kind == "batch":
    by_size(sys.argv[4])
elif kind == "collate":
    collate()
elif kind == "pipeline":
    pipeline()
else:
    fail("unknown kind " + kind)
