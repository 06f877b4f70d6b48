"""The Python module against the CLI it shares a library with.

Every figure the module returns is checked against `faultline run` or
`faultline sweep --format json` on the same input, so a difference in
planning, key handling or counters between the two shows up here.
ctest sets PYTHONPATH to the build's python/ folder, FAULTLINE_CLI to the
faultline binary and FAULTLINE_SOURCE_DIR to the source tree; by hand, from
the source tree, the binary beside the module's folder is used:

    PYTHONPATH=build/release/python /usr/bin/python3 -m pytest src/python/tests
"""

import json
import math
import os
import subprocess
import threading
import time

import pytest

import faultline

CLI = os.environ.get("FAULTLINE_CLI") or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(faultline.__file__))), "faultline")
SRC = os.environ.get("FAULTLINE_SOURCE_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
LIMIT = os.path.join(SRC, "scenarios", "fidelity", "limit.toml")
SEED4 = os.path.join(SRC, "scenarios", "seed4-shmem-fault-around.toml")
TWO_FILES = os.path.join(SRC, "tests", "scenarios", "two-files.toml")

# A small scenario, as a dict in the TOML's shape.
SMALL = {
    "name": "small",
    "file": {"size": "64MiB", "large_folios": "off"},
    "machine": {"memory": "1GiB", "memory_limit": "16MiB"},
    "access": {"pattern": "random", "fraction": 0.05},
    "case": [
        {"name": "ra128", "set": ["device.read_ahead_kb=128"]},
        {"name": "ra1024", "set": ["device.read_ahead_kb=1024"]},
    ],
}

SMALL_TOML = """name = "small"
[file]
size = "64MiB"
large_folios = "off"
[machine]
memory = "1GiB"
memory_limit = "16MiB"
[access]
pattern = "random"
fraction = 0.05
[[case]]
name = "ra128"
set = ["device.read_ahead_kb=128"]
[[case]]
name = "ra1024"
set = ["device.read_ahead_kb=1024"]
"""


def cli_json(*args):
    out = subprocess.run([CLI, *args, "-q", "--format", "json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["runs"]


def same_as_cli(results, runs):
    """Each Result equals the CLI's run: names, every counter, every key."""
    assert len(results) == len(runs)
    for r, c in zip(results, runs):
        assert (r.case, r.variant) == (c["case"], c["variant"])
        assert r.counters == pytest.approx({k: float(v) for k, v in c["counters"].items()}, rel=0, abs=0)
        assert list(r.counters) == list(c["counters"])
        assert r.config == c["config"]
        if "sweep" in c:
            assert r.sweep == {k: str(v) for k, v in c["sweep"].items()}
        reps = c.get("repetitions", [])
        assert [x["seed"] for x in r.repetitions] == [x["seed"] for x in reps]
        for mine, theirs in zip(r.repetitions, reps):
            assert mine["counters"] == {k: float(v) for k, v in theirs["counters"].items()}


def test_run_path_matches_cli():
    same_as_cli(faultline.run(SEED4), cli_json("run", SEED4))


def test_run_set_and_only_match_cli():
    got = faultline.run(LIMIT, set={"file.size": "96MiB", "machine.memory_limit": 32 << 20}, only="random-ra128")
    want = cli_json("run", LIMIT, "--set", "file.size=96MiB", "--set", f"machine.memory_limit={32 << 20}",
                    "--only", "random-ra128")
    same_as_cli(got, want)
    assert len(got) >= 1 and all(r.case == "random-ra128" for r in got)


def test_set_as_list_same_as_dict():
    a = faultline.run(SMALL, set=["file.size=32MiB", "access.seed=3"])
    b = faultline.run(SMALL, set={"file.size": "32MiB", "access.seed": 3})
    assert a == b


def test_dict_scenario_same_as_toml_file(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    from_dict = faultline.run(SMALL)
    from_file = faultline.run(path)  # os.PathLike
    assert from_dict == from_file
    same_as_cli(from_file, cli_json("run", str(path)))


def test_dotted_keys_in_dict():
    dotted = dict(SMALL)
    del dotted["file"]
    dotted["file.size"] = "64MiB"
    dotted["file.large_folios"] = "off"
    assert faultline.run(dotted) == faultline.run(SMALL)


def test_several_files_and_streams():
    runs = faultline.run(TWO_FILES)
    same_as_cli(runs, cli_json("run", TWO_FILES))
    no_limit = [r for r in runs if r.case == "no-limit"][0]
    assert no_limit["pgpgin"] == 49152
    assert set(no_limit.files) == {"log", "table"}
    assert sum(f["pgpgin"] for f in no_limit.files.values()) == no_limit["pgpgin"]


def test_sweep_matches_cli():
    got = faultline.sweep(LIMIT, vary={"device.read_ahead_kb": "128..1024*2"}, only="random-ra128", jobs=2)
    want = cli_json("sweep", LIMIT, "--only", "random-ra128", "--vary", "device.read_ahead_kb=128..1024*2")
    same_as_cli(got, want)
    assert [r.sweep["device.read_ahead_kb"] for r in got] == ["128", "256", "512", "1024"]


def test_sweep_two_keys_and_list_values():
    got = faultline.sweep(SMALL, vary={"device.read_ahead_kb": [128, 512], "machine.memory_limit": "8MiB,32MiB"},
                          only="ra128")
    want = cli_json("sweep", "--only", "ra128", "--vary", "device.read_ahead_kb=128,512", "--vary",
                    "machine.memory_limit=8MiB,32MiB", _small_file())
    same_as_cli(got, want)
    assert len(got) == 4


def _small_file(cache={}):
    if "path" not in cache:
        import tempfile

        fd, path = tempfile.mkstemp(suffix=".toml")
        with os.fdopen(fd, "w") as f:
            f.write(SMALL_TOML)
        cache["path"] = path
    return cache["path"]


def test_repeat_matches_cli():
    got = faultline.run(SMALL, repeat=3)
    same_as_cli(got, cli_json("run", _small_file(), "--repeat", "3"))
    r = got[0]
    assert [x["seed"] for x in r.repetitions] == [1, 2, 3]
    median, lo, hi = r.spread("pgpgin")
    assert median == r["pgpgin"] and lo <= median <= hi
    assert sorted(x["counters"]["pgpgin"] for x in r.repetitions)[1] == median
    assert sum(len(g) for g in r.outcomes) == 3
    swept = faultline.sweep(SMALL, vary={"machine.memory_limit": "8MiB,32MiB"}, repeat=2, only="ra128")
    same_as_cli(swept, cli_json("sweep", _small_file(), "--only", "ra128", "--repeat", "2", "--vary",
                                "machine.memory_limit=8MiB,32MiB"))


def test_a_stream_that_does_not_depend_on_the_seed_runs_once():
    r = faultline.run(SMALL, set={"access.pattern": "sequential"}, repeat=5, only="ra128")[0]
    assert r.repetitions == [] and r.spread("pgpgin")[1] == r["pgpgin"]


def test_deterministic_across_jobs():
    assert faultline.run(SMALL, jobs=1) == faultline.run(SMALL, jobs=2)


def test_result_accessors():
    r = faultline.run(SMALL, only="ra128")[0]
    assert r["pgpgin"] == r.counters["pgpgin"] == r.get("pgpgin")
    assert r.get("no_such_counter") is None and r.get("no_such_counter", -1) == -1
    with pytest.raises(KeyError):
        r["no_such_counter"]
    d = r.to_dict()
    assert d["case"] == "ra128" and d["counters"]["pgpgin"] == r["pgpgin"]
    assert d["config"]["device.read_ahead_kb"] == "128"
    assert "ra128" in repr(r) and "pgpgin=" in repr(r)


def test_keys_match_cli():
    keys = faultline.keys()
    names = [k["key"] for k in keys]
    out = subprocess.run([CLI, "keys"], check=True, capture_output=True, text=True).stdout
    cli_names = [line.split()[0] for line in out.splitlines() if line.strip()]
    assert names == cli_names
    size = [k for k in keys if k["key"] == "file.size"][0]
    assert size["type"] and size["doc"]


def test_to_dataframe():
    pandas = pytest.importorskip("pandas")
    swept = faultline.sweep(SMALL, vary={"machine.memory_limit": "8MiB,16MiB"})
    df = swept.to_dataframe()
    assert isinstance(df, pandas.DataFrame)
    assert list(df.columns[:3]) == ["case", "variant", "machine.memory_limit"]
    assert list(df["machine.memory_limit"]) == [8 << 20, 16 << 20, 8 << 20, 16 << 20]
    assert list(df["pgpgin"]) == [r["pgpgin"] for r in swept]
    assert faultline.to_dataframe(list(swept)).equals(df)


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: faultline.run(SMALL, set={"file.sizze": "1GiB"}), "file.sizze"),
        (lambda: faultline.run(SMALL, set={"file.size": "0"}), "file.size"),
        (lambda: faultline.run(SMALL, set=["file.size"]), "file.size"),
        (lambda: faultline.run({**SMALL, "acess": {"pattern": "random"}}), "acess"),
        (lambda: faultline.run({**SMALL, "access": {"pattern": "randm"}}), "access.pattern"),
        (lambda: faultline.run("/nonexistent/scenario.toml"), "/nonexistent/scenario.toml"),
        (lambda: faultline.run(SMALL, only="nope"), "nope"),
        (lambda: faultline.run(SMALL, jobs=-1), "jobs"),
        (lambda: faultline.run(SMALL, repeat=0), "model.repetitions"),
        (lambda: faultline.run(SMALL, repeat=100000), "model.repetitions"),
        (lambda: faultline.sweep(SMALL, vary={"access.strid": "1,2"}), "access.strid"),
        (lambda: faultline.sweep(SMALL, vary={"device.read_ahead_kb": "1..8"}), "1..8"),
        (lambda: faultline.sweep(SMALL), "vary"),
        (lambda: faultline.sweep(SMALL, vary={"file.size": "1MiB,2MiB"}, set={"file.size": "4MiB"}), "file.size"),
    ],
)
def test_bad_input_raises_value_error_naming_the_key(call, needle):
    with pytest.raises(ValueError) as e:
        call()
    assert needle in str(e.value)


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError):
        faultline.run(42)
    with pytest.raises(TypeError):
        faultline.run(SMALL, set={"file.size": object()})
    with pytest.raises(TypeError):
        faultline.to_dataframe([1, 2])


def _work_while_running(scenario, chunks=10):
    """Runs the model on a thread while this one does some pure-Python work;
    returns the model's (start, end) and when each chunk of the work ended."""
    run = {}

    def model():
        t0 = time.monotonic()
        faultline.run(scenario, jobs=1)
        run["span"] = (t0, time.monotonic())

    t = threading.Thread(target=model)
    t.start()
    time.sleep(0.01)  # the model thread is in the run by now
    ends = []
    for _ in range(chunks):
        n = 0
        for _ in range(100000):
            n += 1
        ends.append(time.monotonic())
    t.join()
    return run["span"], ends


def test_gil_released_while_the_model_runs():
    """A Python thread keeps running while another thread is in the model."""
    # The run must last long enough to tell a held GIL from a released one on
    # any machine, so the workload grows until it takes a quarter of a second.
    fraction = 0.02
    while True:
        big = {**SMALL, "file": {"size": "2GiB", "large_folios": "off"},
               "machine": {"memory": "4GiB", "memory_limit": "256MiB"},
               "access": {"pattern": "random", "fraction": fraction}}
        (start, end), ends = _work_while_running(big)
        if end - start > 0.25 or fraction >= 1.0:
            break
        fraction = min(1.0, fraction * 4)
    assert end - start > 0.1, "the run is too short to tell"
    # A million loop steps take a few tens of milliseconds of one core. With
    # the GIL held for the whole run this thread could not take a step until
    # the run ended; released, it is done long before, even on a loaded
    # machine that gives it a fraction of a core.
    assert ends[-1] < end, (ends[-1] - start, end - start)


def test_counters_are_finite_numbers():
    for r in faultline.run(SEED4):
        assert all(isinstance(v, float) and math.isfinite(v) for v in r.counters.values())


def test_timeline_columns_end_at_the_counters():
    runs = faultline.run(SEED4, set={"model.timeline": 1000})
    r = runs[0]
    t = r.timeline
    assert r.timeline_every == "1000 accesses"
    assert list(t)[:3] == ["accesses", "elapsed_s", "pgpgin"]
    n = len(t["accesses"])
    assert n >= 2 and all(len(v) == n for v in t.values())
    assert t["accesses"][0] == 0
    assert t["pgpgin"][-1] == r["pgpgin"] and t["minflt"][-1] == r["minflt"]
    assert t["accesses"] == sorted(t["accesses"])
    assert faultline.run(SEED4)[0].timeline == {}


def test_timeline_of_zero_is_a_value_error():
    with pytest.raises(ValueError, match="model.timeline"):
        faultline.run(SEED4, set={"model.timeline": 0})
