#!/usr/bin/python3
"""Random gets from an LMDB file (subdir=False) with 8-byte big-endian keys.

    lmdb_gets.py FILE COUNT READAHEAD

READAHEAD 1 is py-lmdb's default (the map keeps the kernel's readahead);
0 opens with readahead=False (MDB_NORDAHEAD: LMDB calls madvise(MADV_RANDOM)
on its map). Read-only, without a lock file; keys from a fixed seed."""
import random
import struct
import sys

import lmdb

path, count, readahead = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
env = lmdb.open(path, subdir=False, readonly=True, lock=False, readahead=readahead)
n = env.stat()["entries"]
rng = random.Random(7)
total = 0
with env.begin(buffers=True) as txn:
    for _ in range(count):
        v = txn.get(struct.pack(">Q", rng.randrange(n)))
        total += len(v)
print(total)
