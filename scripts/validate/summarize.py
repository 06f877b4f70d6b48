#!/usr/bin/python3
"""The table of the real-program validation, from the cases in a directory.

    summarize.py [RESULTS_DIR] [--csv FILE] [--json FILE] [--only PREFIX...]

Reads every NAME.json (faultline compare --format json) with its
NAME.meta.json that scripts/validate/lib.sh wrote, prints one line per case
(pgpgin and majflt: model, replay, program, the model's error against the
program) and the summary, and writes the same as CSV and JSON.

The judgement (the project's target, not compare's stricter tolerances):
  pgpgin  within 10 % of the program's;
  majflt  within 15 % of the program's, or within MAJFLT_FLOOR faults of it
          (a read(2) program makes almost no major faults, and a relative
          error of a handful is noise: 2 against 1 is +100 %).
A case is within target when both counters are.  Exit status 0 when the
share of cases within target reaches --share (0.8), 1 otherwise, 2 on no cases.
"""
import argparse
import csv
import glob
import json
import os
import sys

PGPGIN_TOL = 0.10
MAJFLT_TOL = 0.15
MAJFLT_FLOOR = 8
TARGET_SHARE = 0.80


def rel_err(model, ref):
    if ref == 0:
        return 0.0 if model == 0 else float("inf")
    return (model - ref) / ref


def load(results):
    cases = []
    for meta_path in sorted(glob.glob(os.path.join(results, "*.meta.json"))):
        with open(meta_path) as f:
            meta = json.load(f)
        path = meta_path[: -len(".meta.json")] + ".json"
        if not os.path.exists(path):
            continue
        with open(path) as f:
            report = json.load(f)
        if not report:
            continue
        rows = {r["counter"]: r for r in report[0]["rows"]}
        c = dict(meta)
        for counter in ("pgpgin", "majflt", "minflt", "workingset_refault_file"):
            r = rows.get(counter, {})
            c[counter] = {"model": r.get("model"), "replay": r.get("kernel_median"),
                          "program": r.get("program_median"),
                          "program_min": r.get("program_min"),
                          "program_max": r.get("program_max")}
        p, m = c["pgpgin"], c["majflt"]
        if p["program"] is None or m["program"] is None:
            c["error"] = "no program run"
            cases.append(c)
            continue
        p["error"] = rel_err(p["model"], p["program"])
        m["error"] = rel_err(m["model"], m["program"])
        p["replay_error"] = rel_err(p["model"], p["replay"])
        m["replay_error"] = rel_err(m["model"], m["replay"])
        p["within"] = abs(p["error"]) <= PGPGIN_TOL
        m["floor"] = abs(m["model"] - m["program"]) <= MAJFLT_FLOOR
        m["within"] = abs(m["error"]) <= MAJFLT_TOL or m["floor"]
        c["within"] = p["within"] and m["within"]
        cases.append(c)
    return cases


def limit_text(c):
    if c["limit_bytes"] == 0:
        return "none"
    return "%dMiB (1/%.1f)" % (c["limit_bytes"] >> 20, c["data_bytes"] / c["limit_bytes"]) \
        if c.get("data_bytes") else "%dMiB" % (c["limit_bytes"] >> 20)


def pct(x):
    if x is None:
        return "-"
    if x == float("inf"):
        return "inf"
    return "%+.1f%%" % (100 * x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="?", default=os.environ.get(
        "VALIDATE_OUT", "/var/tmp/faultline-validate/results"))
    ap.add_argument("--csv")
    ap.add_argument("--json")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--only", nargs="*", default=[], help="only cases whose name starts so")
    ap.add_argument("--share", type=float, default=TARGET_SHARE,
                    help="exit 0 when this share of the cases is within target (default 0.8)")
    a = ap.parse_args()
    cases = load(a.results)
    if a.only:
        cases = [c for c in cases if any(c["case"].startswith(o) for o in a.only)]
    if not cases:
        print("summarize: no cases in " + a.results, file=sys.stderr)
        return 2
    head = ["case", "program", "access", "limit", "ra_kb",
            "pgpgin model", "replay", "program", "err",
            "majflt model", "replay", "program", "err", "within"]
    lines = []
    for c in cases:
        p, m = c["pgpgin"], c["majflt"]
        if "error" in c:
            lines.append([c["case"], c["program"], c["access"], limit_text(c),
                          str(c["read_ahead_kb"])] + ["-"] * 8 + [c["error"]])
            continue
        judge = "yes" if c["within"] else "NO (%s)" % "+".join(
            n for n, ok in (("pgpgin", p["within"]), ("majflt", m["within"])) if not ok)
        merr = pct(m["error"]) + (" (floor)" if m["floor"] and abs(m["error"]) > MAJFLT_TOL else "")
        lines.append([c["case"], c["program"], c["access"], limit_text(c), str(c["read_ahead_kb"]),
                      "%.0f" % p["model"], "%.0f" % p["replay"], "%.0f" % p["program"],
                      pct(p["error"]),
                      "%.0f" % m["model"], "%.0f" % m["replay"], "%.0f" % m["program"],
                      merr, judge])
    judged = [c for c in cases if "error" not in c]
    ok = sum(1 for c in judged if c["within"])
    p_ok = sum(1 for c in judged if c["pgpgin"]["within"])
    m_ok = sum(1 for c in judged if c["majflt"]["within"])
    summary = ("%d of %d cases within target (pgpgin 10%%, majflt 15%% or %d faults): "
               "pgpgin %d of %d, majflt %d of %d; target %d%% of cases: %s"
               % (ok, len(judged), MAJFLT_FLOOR, p_ok, len(judged), m_ok, len(judged),
                  a.share * 100, "met" if judged and ok >= a.share * len(judged)
                  else "NOT met"))
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        w = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
        for l in lines:
            print("  ".join(x.ljust(w[i]) for i, x in enumerate(l)))
    print()
    print(summary)
    pgpgin_unit = "pgpgin in KiB"
    print("(%s; model: faultline run of the recording, replay: the probe's replay of it on this "
          "kernel, program: the program itself run again; medians of %s repetitions; err: model "
          "against program)" % (pgpgin_unit, ",".join(sorted({str(c["reps"]) for c in cases}))))
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["case", "program", "access", "limit_bytes", "read_ahead_kb", "data_bytes",
                         "pgpgin_model_kib", "pgpgin_replay_kib", "pgpgin_program_kib",
                         "pgpgin_error", "pgpgin_within",
                         "majflt_model", "majflt_replay", "majflt_program", "majflt_error",
                         "majflt_within", "within", "reps", "seconds"])
            for c in judged:
                p, m = c["pgpgin"], c["majflt"]
                wr.writerow([c["case"], c["program"], c["access"], c["limit_bytes"],
                             c["read_ahead_kb"], c["data_bytes"], p["model"], p["replay"],
                             p["program"], "%.4f" % p["error"], int(p["within"]), m["model"],
                             m["replay"], m["program"], "%.4f" % m["error"], int(m["within"]),
                             int(c["within"]), c["reps"], c["seconds"]])
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": summary, "within": ok, "cases_judged": len(judged),
                       "pgpgin_tolerance": PGPGIN_TOL, "majflt_tolerance": MAJFLT_TOL,
                       "majflt_floor": MAJFLT_FLOOR, "cases": cases}, f, indent=1,
                      default=lambda x: None)
    return 0 if judged and ok >= a.share * len(judged) else 1


if __name__ == "__main__":
    sys.exit(main())
