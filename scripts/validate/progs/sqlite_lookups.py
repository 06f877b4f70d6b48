#!/usr/bin/python3
"""Point lookups in a table t(id INTEGER PRIMARY KEY, v BLOB).

    sqlite_lookups.py DB COUNT MMAP_BYTES

MMAP_BYTES > 0 sets PRAGMA mmap_size (SQLite reads the database through a
mapping); 0 leaves it off (SQLite reads pages with pread(2)). The ids come
from a fixed seed, so every run makes the same lookups."""
import random
import sqlite3
import sys

db, count, mmap_bytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
con.execute("PRAGMA mmap_size=%d" % mmap_bytes)
(rows,) = con.execute("SELECT max(id) FROM t").fetchone()
rng = random.Random(7)
total = 0
for _ in range(count):
    (v,) = con.execute("SELECT v FROM t WHERE id=?", (rng.randint(0, rows),)).fetchone()
    total += len(v)
print(total)
