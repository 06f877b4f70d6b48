#!/usr/bin/env python3
"""Sweeps read_ahead_kb for random 4 KiB reads of a 1 GiB file, by mmap and by
pread(2), with and without a cgroup limit of a quarter of the file, and plots
what the kernel reads (pgpgin) and how many faults wait for the device.

    PYTHONPATH=build/release/python /usr/bin/python3 docs/examples/sweep_read_ahead.py [out.png]

Needs the faultline module (built with the project when python3-pybind11
and python3-dev are installed), pandas and matplotlib (Debian
python3-pandas, python3-matplotlib).
"""
import sys

import matplotlib

matplotlib.use("Agg")  # a file, no display
import matplotlib.pyplot as plt
import matplotlib.ticker

import faultline

scenario = {
    "name": "read-ahead",
    "description": "random 4 KiB reads of 1 GiB: mmap against pread",
    "file": {"size": "1GiB"},
    "machine": {"memory": "8GiB"},
    "access": {"pattern": "random", "fraction": 0.05, "seed": 1},
    "case": [
        {"name": "mmap", "set": ["access.method=mmap"]},
        {"name": "pread", "set": ["access.method=read"]},
    ],
    "variant": [
        {"name": "no limit", "set": []},
        {"name": "limit 256 MiB", "set": ["machine.memory_limit=256MiB"]},
    ],
}

results = faultline.sweep(scenario, vary={"device.read_ahead_kb": "16..8192*2"})
df = results.to_dataframe()
df["read (MiB)"] = df["pgpgin"] / 1024
print(df[["case", "variant", "device.read_ahead_kb", "read (MiB)", "majflt"]].to_string(index=False))

fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
for (case, variant), rows in df.groupby(["case", "variant"], sort=False):
    style = "-" if case == "mmap" else "--"
    label = f"{case}, {variant}"
    axes[0].plot(rows["device.read_ahead_kb"], rows["read (MiB)"], style, marker="o", label=label)
    axes[1].plot(rows["device.read_ahead_kb"], rows["majflt"], style, marker="o", label=label)
touched = 0.05 * 1024
axes[0].axhline(touched, color="grey", linewidth=0.8)
axes[0].annotate("pages touched", (16, touched), textcoords="offset points", xytext=(2, 4), fontsize=8)
axes[0].set_ylabel("pgpgin (MiB read from the device)")
axes[1].set_ylabel("majflt (faults that waited for a read)")
for ax in axes:
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(df["device.read_ahead_kb"].unique()))
    ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel("read_ahead_kb")
    ax.grid(True, which="both", linewidth=0.3)
axes[0].set_yscale("log")  # majflt stays linear: pread takes none
axes[0].legend(fontsize=8)
fig.suptitle("faultline: random 4 KiB reads of a 1 GiB file (5 % of its pages)")
fig.tight_layout()
out = sys.argv[1] if len(sys.argv) > 1 else "sweep-read-ahead.png"
fig.savefig(out, dpi=110)
print(f"wrote {out}")
