#!/usr/bin/python3
"""Deterministic data sets for the real-program validation (scripts/validate).

    gen.py sqlite DB ROWS          a table t(id INTEGER PRIMARY KEY, v BLOB) of ROWS rows
    gen.py text FILE MIB           lines of words, about MIB MiB
    gen.py numpy FILE ROWS COLS    a float32 array of ROWS x COLS, C order, raw
    gen.py lmdb FILE KEYS VSIZE    an LMDB file (subdir=False), KEYS keys of VSIZE bytes
    gen.py git-stream COMMITS KIB  a git fast-import stream on stdout

Every byte comes from a fixed seed, so the same arguments give the same data
on every run (and, for sqlite/lmdb, the same file layout with the same
library version).  Writes to a temporary name and renames at the end, so an
interrupted run leaves no half-made data set behind.
"""
import os
import random
import struct
import sys

SEED = 20240611


def tmp_of(path):
    return path + ".tmp"


def done(path):
    os.replace(tmp_of(path), path)


def gen_sqlite(path, rows):
    import sqlite3
    rows = int(rows)
    rng = random.Random(SEED)
    tmp = tmp_of(path)
    if os.path.exists(tmp):
        os.unlink(tmp)
    con = sqlite3.connect(tmp)
    con.execute("PRAGMA page_size=4096")
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL)")
    batch = 20000
    for start in range(0, rows, batch):
        n = min(batch, rows - start)
        # Values of 150..250 bytes: a few rows per leaf page, as a real table.
        con.executemany("INSERT INTO t VALUES(?, ?)",
                        ((start + i, rng.randbytes(rng.randint(150, 250))) for i in range(n)))
    con.commit()
    con.close()
    done(path)


WORDS = None


def vocabulary(rng):
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(5000)]


def gen_text(path, mib):
    target = int(mib) * 1024 * 1024
    rng = random.Random(SEED)
    words = vocabulary(rng)
    written = 0
    with open(tmp_of(path), "w", encoding="ascii") as f:
        while written < target:
            lines = []
            for _ in range(4096):
                n = rng.randint(4, 14)
                lines.append(" ".join(rng.choices(words, k=n)))
            chunk = "\n".join(lines) + "\n"
            f.write(chunk)
            written += len(chunk)
    done(path)


def gen_numpy(path, rows, cols):
    import numpy as np
    rows, cols = int(rows), int(cols)
    rng = np.random.default_rng(SEED)
    step = max(1, (64 << 20) // (cols * 4))
    with open(tmp_of(path), "wb") as f:
        for start in range(0, rows, step):
            n = min(step, rows - start)
            rng.standard_normal((n, cols), dtype=np.float32).tofile(f)
    done(path)


def gen_lmdb(path, keys, vsize):
    import lmdb
    keys, vsize = int(keys), int(vsize)
    rng = random.Random(SEED)
    tmp = tmp_of(path)
    for p in (tmp, tmp + "-lock"):
        if os.path.exists(p):
            os.unlink(p)
    env = lmdb.open(tmp, subdir=False, map_size=4 << 30, sync=False, metasync=False,
                    lock=True, writemap=False)
    batch = 50000
    for start in range(0, keys, batch):
        with env.begin(write=True) as txn:
            cur = txn.cursor()
            for k in range(start, min(keys, start + batch)):
                cur.put(struct.pack(">Q", k), rng.randbytes(vsize), append=True)
    env.sync(True)
    env.close()
    os.unlink(tmp + "-lock")
    done(path)


def gen_git_stream(commits, kib):
    """COMMITS commits: each adds one file of about KIB KiB of base64 text
    (incompressible enough that the pack holds about 3/4 of it) and appends a
    few lines to one of 40 log files (which deltas compress)."""
    import base64
    commits, size = int(commits), int(kib) * 1024
    rng = random.Random(SEED)
    words = vocabulary(rng)
    out = sys.stdout.buffer
    logs = {i: [] for i in range(40)}
    when = 1600000000
    mark = 0
    for c in range(commits):
        blob = base64.encodebytes(rng.randbytes(size * 3 // 4))
        mark += 1
        bmark = mark
        out.write(b"blob\nmark :%d\ndata %d\n" % (bmark, len(blob)))
        out.write(blob + b"\n")
        li = rng.randrange(40)
        logs[li].extend(" ".join(rng.choices(words, k=10)) for _ in range(rng.randint(5, 30)))
        text = ("\n".join(logs[li]) + "\n").encode()
        mark += 1
        lmark = mark
        out.write(b"blob\nmark :%d\ndata %d\n" % (lmark, len(text)))
        out.write(text + b"\n")
        msg = ("commit %d: %s\n" % (c, " ".join(rng.choices(words, k=8)))).encode()
        when += 600
        out.write(b"commit refs/heads/main\n")
        out.write(b"committer Val Idate <val@example.org> %d +0000\n" % when)
        out.write(b"data %d\n%s\n" % (len(msg), msg))
        out.write(b"M 100644 :%d data/d%03d/f%05d.b64\n" % (bmark, c % 100, c))
        out.write(b"M 100644 :%d logs/log%02d.txt\n\n" % (lmark, li))
    out.flush()


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    kind, args = argv[1], argv[2:]
    table = {"sqlite": (gen_sqlite, 2), "text": (gen_text, 2), "numpy": (gen_numpy, 3),
             "lmdb": (gen_lmdb, 3), "git-stream": (gen_git_stream, 2)}
    if kind not in table or len(args) != table[kind][1]:
        sys.exit(__doc__)
    table[kind][0](*args)


if __name__ == "__main__":
    main(sys.argv)
