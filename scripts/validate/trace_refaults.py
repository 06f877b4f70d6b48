#!/usr/bin/python3
"""Which pages the kernel reads, and how often, in the replay of a recording
and in the program itself: evidence for a case out of target.

    trace_refaults.py REC KIND [--set KEY=VALUE]... [--faultline BIN]

Runs `faultline compare --reps 1 REC --set ...` with the kernel's
filemap:mm_filemap_add_to_page_cache tracepoint on (a tracefs instance of
its own), then counts, per process, the pages inserted into the page cache
of the data file (after the probe's own copy of it) and how many of them
were inserted more than once (read again after reclaim), split by what the
page is in the data file:

  KIND sqlite  b-tree interior pages (type byte 0x05) / leaf pages (0x0d) / other
  KIND lmdb    branch pages (mp_flags & 1) / leaf pages (& 2) / overflow / other
  KIND none    no split

The replay is the probe's child (comm "faultline"), the program its own
comm. Needs root and tracefs (/sys/kernel/tracing).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

TRACEFS = "/sys/kernel/tracing"
INSTANCE = os.path.join(TRACEFS, "instances", "faultline-validate")


def classify_sqlite(path):
    kinds = {}
    with open(path, "rb") as f:
        i = 0
        while True:
            page = f.read(4096)
            if len(page) < 4096:
                break
            t = page[100] if i == 0 else page[0]
            kinds[i] = {5: "interior", 13: "leaf", 2: "interior", 10: "leaf"}.get(t, "other")
            i += 1
    return kinds


def classify_lmdb(path):
    kinds = {}
    with open(path, "rb") as f:
        i = 0
        while True:
            page = f.read(4096)
            if len(page) < 4096:
                break
            flags = int.from_bytes(page[10:12], "little")
            kinds[i] = ("branch" if flags & 1 else "leaf" if flags & 2 else
                        "overflow" if flags & 4 else "meta" if flags & 8 else "other")
            i += 1
    return kinds


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("recording")
    ap.add_argument("kind", choices=["sqlite", "lmdb", "none"])
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--faultline", default=os.environ.get("FAULTLINE", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "release", "faultline")))
    ap.add_argument("--json", help="write the counts here too")
    a = ap.parse_args()
    if os.geteuid() != 0 or not os.path.isdir(TRACEFS + "/events/filemap"):
        sys.exit("trace_refaults: needs root and tracefs with filemap events")

    head = subprocess.run([a.faultline, "trace", "show", a.recording, "--header"],
                          capture_output=True, text=True, check=True).stdout
    files = re.findall(r"^# file (\d+): (.*), (\d+) bytes$", head, re.M)
    data_index, data, _ = max(files, key=lambda f: int(f[2]))  # the largest file is the data set
    ino = os.stat(data).st_ino  # the probe's copy has its own inode: matched by size below
    kinds = {"sqlite": classify_sqlite, "lmdb": classify_lmdb,
             "none": lambda p: {i: "page" for i in range((os.path.getsize(p) + 4095) // 4096)}
             }[a.kind](data)

    if os.path.isdir(INSTANCE):
        os.rmdir(INSTANCE)
    os.mkdir(INSTANCE)
    try:
        write(INSTANCE + "/buffer_size_kb", "262144")
        write(INSTANCE + "/events/filemap/mm_filemap_add_to_page_cache/enable", "1")
        write(INSTANCE + "/tracing_on", "1")
        tdir = tempfile.mkdtemp(prefix="faultline-trace-")
        cmd = [a.faultline, "compare", "-q", "--reps", "1", a.recording, "--format", "json",
               "--trace-dir", tdir]
        for s in a.set:
            cmd += ["--set", s]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate()
        write(INSTANCE + "/tracing_on", "0")
        if proc.returncode != 0:
            sys.exit("trace_refaults: faultline compare failed: " + err[-500:])
        report = json.loads(out[out.index("["):])
        with open(INSTANCE + "/trace") as f:
            lines = f.readlines()
        with open(INSTANCE + "/per_cpu/cpu0/stats") as f:
            overrun = re.search(r"overrun: (\d+)", f.read()).group(1)
    finally:
        write(INSTANCE + "/events/filemap/mm_filemap_add_to_page_cache/enable", "0")
        os.rmdir(INSTANCE)

    # "   faultline-1234  [001] ..... 12.34: mm_filemap_add_to_page_cache: dev 7:0 ino c
    #  pfn=0x... ofs=4096 order=0"
    pat = re.compile(r"^\s*(.+?)-(\d+)\s+\[\d+\].*?mm_filemap_add_to_page_cache: dev (\d+):(\d+) "
                     r"ino ([0-9a-f]+) .*?ofs=(\d+) order=(\d+)")
    per = collections.defaultdict(lambda: collections.Counter())  # (comm, pid, ino) -> page -> n
    orders = collections.defaultdict(lambda: collections.Counter())  # (comm, pid, ino) -> order -> folios
    for line in lines:
        m = pat.match(line)
        if not m:
            continue
        comm, pid, major, minor, inode, ofs, order = m.groups()
        if major != "7":  # loop devices only: the probe's file system
            continue
        first = int(ofs) // 4096
        c = per[(comm, int(pid), inode)]
        orders[(comm, int(pid), inode)][int(order)] += 1
        for p in range(first, first + (1 << int(order))):
            c[p] += 1
    # The probe's copy of the data file (the parent writing it) inserts every
    # page once, in order; keep the processes that read it: the replay and the program.
    npages = len(kinds)
    rows = []
    # The model's insertions of the same file (its tracepoints: ino = the file's index).
    model_pages = collections.Counter()
    model_orders = collections.Counter()
    mpat = re.compile(r"mm_filemap_add_to_page_cache: ino=(\d+) ofs=(\d+) order=(\d+)")
    for root, _, names in os.walk(tdir):
        for n in names:
            if not n.endswith(".model.trace"):
                continue
            with open(os.path.join(root, n)) as f:
                for line in f:
                    m = mpat.search(line)
                    if m and m.group(1) == data_index:
                        first = int(m.group(2))
                        model_orders[int(m.group(3))] += 1
                        for p in range(first, first + (1 << int(m.group(3)))):
                            model_pages[p] += 1
    subprocess.run(["rm", "-rf", tdir], check=False)
    per[("model", 0, "-")] = model_pages
    orders[("model", 0, "-")] = model_orders
    for (comm, pid, inode), c in sorted(per.items(), key=lambda kv: kv[0][1]):
        if comm == "model":
            pass
        elif pid == proc.pid:
            continue  # the probe itself, writing its copy of the file
        if max(c) >= npages + 16 or sum(c.values()) < 16:
            continue  # another file (the index of git ...), or a few metadata pages
        split = collections.defaultdict(lambda: [0, 0, 0, 0])  # pages, reads, refaulted, rereads
        for p, n in c.items():
            s = split[kinds[p] if p in kinds else "other"]
            s[0] += 1
            s[1] += n
            if n > 1:
                s[2] += 1
                s[3] += n - 1
        rows.append({"comm": comm, "pid": pid, "inode": inode,
                     "folios_by_order": dict(sorted(orders[(comm, pid, inode)].items())),
                     "pages_read_kib": 4 * sum(c.values()),
                     "by_kind": {k: dict(zip(["distinct_pages", "reads", "pages_read_again",
                                              "reads_again"], v)) for k, v in split.items()}})
    total_kinds = collections.Counter(kinds.values())
    print("data file %s: %d pages: %s" % (data, npages, dict(total_kinds)))
    print("ring buffer overruns (cpu0): %s" % overrun)
    for r in rows:
        print("%s (pid %d, ino %s): %d KiB read" % (r["comm"], r["pid"], r["inode"],
                                                     r["pages_read_kib"]))
        print("   folios inserted, by order: %s" % r["folios_by_order"])
        for k, v in sorted(r["by_kind"].items()):
            print("   %-9s %8d distinct pages, %9d insertions, %8d pages read again (%d times)"
                  % (k, v["distinct_pages"], v["reads"], v["pages_read_again"], v["reads_again"]))
    rep = {x["counter"]: x for x in report[0]["rows"]}
    print("compare: pgpgin model %s replay %s program %s; majflt model %s replay %s program %s"
          % (rep["pgpgin"]["model"], rep["pgpgin"]["kernel_median"],
             rep["pgpgin"].get("program_median"), rep["majflt"]["model"],
             rep["majflt"]["kernel_median"], rep["majflt"].get("program_median")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"data": data, "kinds": dict(total_kinds), "processes": rows,
                       "compare": report}, f, indent=1)


if __name__ == "__main__":
    main()
