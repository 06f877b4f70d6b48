#!/usr/bin/python3
"""Random rows of a raw float32 array through np.memmap.

    numpy_rows.py FILE COLS COUNT

Reads COUNT rows, chosen with a fixed seed, by fancy indexing in gathers of
1024 rows (rows in the order drawn; small gathers keep the process's own
memory small next to a cgroup limit), and prints their sum."""
import sys

import numpy as np

path, cols, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a = np.memmap(path, dtype=np.float32, mode="r")
a = a.reshape(-1, cols)
idx = np.random.default_rng(7).integers(0, a.shape[0], count)
total = 0.0
for i in range(0, count, 1024):
    total += float(a[idx[i:i + 1024]].sum(dtype=np.float64))
print(total)
