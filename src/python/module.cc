// module.cc — the Python module `faultline`: scenarios run on the model from
// Python, through the library the CLI uses.
//
//   import faultline
//   runs = faultline.run("scenarios/seed4-shmem-fault-around.toml", set={"file.size": "64MiB"})
//   swept = faultline.sweep(sc, vary={"device.read_ahead_kb": "128..8192*2"}, only="random")
//   df = swept.to_dataframe()
//
// Runs and sweeps are planned as `faultline run` and `faultline sweep` plan
// them (plan_runs, cli/sweep_args.h) and computed by simulate() with the
// GIL released, so other Python threads go on meanwhile and several threads
// may run scenarios at once. Bad input raises ValueError with the message
// the CLI prints for its exit status 2; nothing is printed unless
// progress=True asks for the progress line on stderr.
#include <pybind11/pybind11.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/sweep_args.h"
#include "faultline/config.h"
#include "faultline/scenario.h"
#include "faultline/simulator.h"
#include "faultline/stats.h"
#include "report/sweep_report.h"

namespace py = pybind11;
using namespace pybind11::literals;  // NOLINT: "name"_a keyword arguments

namespace faultline::python {
namespace {

// The source name errors give for a scenario passed as a dict.
constexpr const char* kDictSource = "<dict>";

// ---- errors ------------------------------------------------------------

// A Status as the Python exception of its kind: bad input (the CLI's exit
// status 2) is a ValueError, a failed system call an OSError.
[[noreturn]] void raise_status(const Status& st) {
  PyObject* type = PyExc_RuntimeError;
  switch (st.code()) {
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotFound:
      type = PyExc_ValueError;
      break;
    case Status::Code::kIoError:
      type = PyExc_OSError;
      break;
    case Status::Code::kPermission:
      type = PyExc_PermissionError;
      break;
    case Status::Code::kInterrupted:
      type = PyExc_KeyboardInterrupt;
      break;
    case Status::Code::kOk:
    case Status::Code::kUnavailable:
    case Status::Code::kProgramFailed:
    case Status::Code::kInternal:
      break;
  }
  PyErr_SetString(type, st.message().c_str());
  throw py::error_already_set();
}

template <typename T>
T value_or_raise(Result<T> r) {
  if (!r.ok()) raise_status(r.status());
  return std::move(*r);
}

std::string type_name(py::handle v) { return py::str(py::type::of(v).attr("__name__")); }

// ---- Python values as the text of KEY=VALUE -------------------------------

bool is_integer(py::handle v) {
  return py::isinstance<py::int_>(v) ||
         (!py::isinstance<py::float_>(v) && py::hasattr(v, "__index__"));
}

// A path given as str or os.PathLike, as text.
std::string path_text(py::handle v, const std::string& what) {
  py::object p = py::module_::import("os").attr("fspath")(v);
  if (!py::isinstance<py::str>(p)) throw py::type_error(what + ": expected a str path");
  return p.cast<std::string>();
}

// The text an assignment gives a value: true/false, the integer, the
// shortest decimal that reads back as the same float, a string as it is.
std::string value_text(py::handle v, const std::string& key) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  if (is_integer(v)) return py::str(py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr())));
  if (py::isinstance<py::float_>(v)) return py::repr(v);
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::hasattr(v, "__fspath__")) return path_text(v, key);
  throw py::type_error(key + ": expected a str, int, float or bool, got " + type_name(v));
}

std::string key_text(py::handle k, const std::string& what) {
  if (!py::isinstance<py::str>(k)) {
    throw py::type_error(what + ": keys must be str, got " + std::string(py::repr(k)));
  }
  return k.cast<std::string>();
}

// `set`: a dict {KEY: VALUE}, one "KEY=VALUE" or a list of them, or None.
std::vector<std::string> assignments(py::handle set, const std::string& what) {
  std::vector<std::string> out;
  if (set.is_none()) return out;
  if (py::isinstance<py::dict>(set)) {
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(set)) {
      const std::string key = key_text(k, what);
      out.push_back(key + "=" + value_text(v, what + " " + key));
    }
    return out;
  }
  if (py::isinstance<py::str>(set)) return {set.cast<std::string>()};
  if (!py::isinstance<py::iterable>(set)) {
    throw py::type_error(what + ": expected a dict {KEY: VALUE} or a list of \"KEY=VALUE\", got " +
                         type_name(set));
  }
  for (py::handle item : set) {
    if (!py::isinstance<py::str>(item)) {
      throw py::type_error(what + ": expected \"KEY=VALUE\" strings, got " + type_name(item));
    }
    out.push_back(item.cast<std::string>());
  }
  return out;
}

// `repeat` (None or an int) as the --repeat of the CLI: model.repetitions
// after every other assignment.
std::vector<std::string> with_repeat(std::vector<std::string> sets, py::handle repeat) {
  if (repeat.is_none()) return sets;
  if (!is_integer(repeat) || py::isinstance<py::bool_>(repeat)) {
    throw py::type_error("repeat: expected an int, got " + type_name(repeat));
  }
  sets.push_back("model.repetitions=" + value_text(repeat, "repeat"));
  return sets;
}

// `vary`: a dict {KEY: VALUES} where VALUES is the text --vary takes after
// the '=' ("128..8192*2", "normal,random") or a list of values, or one
// "KEY=VALUES" or a list of them. Each comes back as a --vary argument.
std::vector<std::string> vary_args(py::handle vary) {
  if (!py::isinstance<py::dict>(vary)) return assignments(vary, "vary");
  std::vector<std::string> out;
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(vary)) {
    const std::string key = key_text(k, "vary");
    std::string values;
    if (!py::isinstance<py::str>(v) && py::isinstance<py::iterable>(v)) {
      for (py::handle item : v) {
        values += (values.empty() ? "" : ",") + value_text(item, "vary " + key);
      }
    } else {
      values = value_text(v, "vary " + key);
    }
    out.push_back(key + "=" + values);
  }
  return out;
}

// ---- a scenario given as a dict --------------------------------------------

// The dict is turned into the TOML table it stands for and read by
// parse_scenario, so it means exactly what the same TOML file means and its
// errors name the same keys.

void put(toml::table& t, const std::string& key, py::handle v, const std::string& where);

std::string where_key(const std::string& where, const std::string& key) {
  return where == kDictSource ? key : where + "." + key;
}

std::string where_message(const std::string& where, const std::string& what) {
  return std::string(kDictSource) + ": " + where + ": " + what;
}

toml::table to_table(py::handle dict, const std::string& where);
toml::array to_array(py::handle list, const std::string& where);

// Hands `sink` the TOML value of a scalar, list or dict: a bool, an
// int64_t, a double, a std::string, a toml::array or a toml::table.
template <typename Sink>
void emit(py::handle v, const std::string& where, Sink&& sink) {
  if (py::isinstance<py::bool_>(v)) return sink(v.cast<bool>());
  if (is_integer(v)) {
    auto i = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
    const long long x = PyLong_AsLongLong(i.ptr());
    if (x == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw py::value_error(where_message(where, "integer out of range"));
    }
    return sink(static_cast<int64_t>(x));
  }
  if (py::isinstance<py::float_>(v)) return sink(v.cast<double>());
  if (py::isinstance<py::str>(v)) return sink(v.cast<std::string>());
  if (py::hasattr(v, "__fspath__")) return sink(path_text(v, where));
  if (py::isinstance<py::dict>(v)) return sink(to_table(v, where));
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    return sink(to_array(v, where));
  }
  if (v.is_none()) throw py::value_error(where_message(where, "None is no value (leave it out)"));
  throw py::type_error(
      where_message(where, "expected a str, int, float, bool, list or dict, got " + type_name(v)));
}

toml::table to_table(py::handle dict, const std::string& where) {
  toml::table t;
  for (auto [k, item] : py::reinterpret_borrow<py::dict>(dict)) {
    put(t, key_text(k, where), item, where);
  }
  return t;
}

toml::array to_array(py::handle list, const std::string& where) {
  toml::array a;
  size_t i = 0;
  for (py::handle item : list) {
    emit(item, where + "[" + std::to_string(i++) + "]",
         [&](auto&& x) { a.push_back(std::move(x)); });
  }
  return a;
}

// Puts `v` under `key` of `t`. A dotted key ("file.size") is a path of
// tables, as a bare dotted key is in TOML, and tables given in parts merge.
void put(toml::table& t, const std::string& key, py::handle v, const std::string& where) {
  const size_t dot = key.find('.');
  const std::string head = key.substr(0, dot);
  const std::string here = where_key(where, head);
  if (head.empty()) throw py::value_error(where_message(where, "empty key in '" + key + "'"));
  toml::node* existing = t.get(head);
  if (dot != std::string::npos || py::isinstance<py::dict>(v)) {
    if (!existing) {
      t.insert(head, toml::table{});
      existing = t.get(head);
    }
    toml::table* sub = existing->as_table();
    if (!sub) throw py::value_error(where_message(here, "given both as a value and as a table"));
    if (dot != std::string::npos) return put(*sub, key.substr(dot + 1), v, here);
    for (auto [k, item] : py::reinterpret_borrow<py::dict>(v)) {
      put(*sub, key_text(k, here), item, here);
    }
    return;
  }
  if (existing) throw py::value_error(where_message(here, "given twice"));
  emit(v, here, [&](auto&& x) { t.insert(head, std::move(x)); });
}

Scenario scenario_of_dict(py::handle d) {
  const toml::table root = to_table(d, kDictSource);
  std::ostringstream text;
  text << toml::toml_formatter(root);
  return value_or_raise(parse_scenario(text.str(), kDictSource));
}

// None: the built-in default; a dict in the TOML's shape; a path (str or
// os.PathLike) to a TOML scenario or a recording, as `faultline run` takes.
Scenario load(py::handle scenario) {
  if (scenario.is_none()) return default_scenario();
  if (py::isinstance<py::dict>(scenario)) return scenario_of_dict(scenario);
  if (py::isinstance<py::str>(scenario) || py::hasattr(scenario, "__fspath__")) {
    return value_or_raise(load_scenario(path_text(scenario, "scenario")));
  }
  throw py::type_error(
      "scenario: expected a path to a TOML scenario or a recording, a dict in the TOML's shape, "
      "or None (the built-in default), got " +
      type_name(scenario));
}

// ---- planning and running ---------------------------------------------------

// The runs `only` names, CASE/VARIANT, CASE or VARIANT, as the CLI's --only
// keeps them; an error naming what there is when none is.
void keep_only(const std::string& only, std::vector<PlannedRun>* plan) {
  std::vector<PlannedRun> kept;
  std::string names;
  for (PlannedRun& r : *plan) {
    const std::string name = r.case_name + "/" + r.variant;
    names += (names.empty() ? "" : ", ") + name;
    if (name == only || r.case_name == only || r.variant == only) kept.push_back(std::move(r));
  }
  if (kept.empty()) {
    throw py::value_error("only: no run named '" + only + "' (the runs: " + names + ")");
  }
  *plan = std::move(kept);
}

std::vector<PlannedRun> plan(py::handle scenario, const std::vector<std::string>& sets,
                             py::handle only) {
  const Scenario sc = load(scenario);
  std::vector<PlannedRun> runs = value_or_raise(plan_runs(sc, sets));
  if (!only.is_none()) {
    if (!py::isinstance<py::str>(only)) {
      throw py::type_error("only: expected a str CASE/VARIANT, CASE or VARIANT, got " +
                           type_name(only));
    }
    keep_only(only.cast<std::string>(), &runs);
  }
  return runs;
}

// simulate() with the GIL released: the model holds no Python object.
std::vector<RunResult> compute(const std::vector<PlannedRun>& runs, int jobs, bool progress) {
  if (jobs < 0) {
    throw py::value_error("jobs: expected 0 (one per core) or more, got " + std::to_string(jobs));
  }
  SimOptions opts;
  opts.jobs = jobs;
  opts.progress = progress;
  auto results = [&] {
    py::gil_scoped_release nogil;
    return simulate(runs, opts);
  }();
  return value_or_raise(std::move(results));
}

// ---- results ----------------------------------------------------------------

// One swept key's value at a run's point: the text it was set with, and the
// number (bytes for sizes) where it is one.
struct SweptValue {
  std::string key;
  std::string text;
  double number = NAN;
};

// One run, and where a sweep put it.
struct Run {
  RunResult result;
  std::vector<SweptValue> sweep;
};

py::dict counters_dict(const std::vector<Counter>& counters) {
  py::dict d;
  for (const Counter& c : counters) d[py::str(c.name)] = c.value;
  return d;
}

py::dict config_dict(const RunResult& r) {
  py::dict d;
  for (const auto& [k, v] : r.config) d[py::str(k)] = v;
  return d;
}

py::dict files_dict(const RunResult& r) {
  py::dict d;
  for (const FileResult& f : r.files) d[py::str(f.path)] = counters_dict(f.counters);
  return d;
}

py::list repetitions_list(const RunResult& r) {
  py::list out;
  for (const Repetition& rep : r.repetitions) {
    out.append(py::dict("seed"_a = rep.seed, "counters"_a = counters_dict(rep.counters)));
  }
  return out;
}

// model.timeline: {column: [value per sample]}, columns in order; {} without one.
py::dict timeline_dict(const RunResult& r) {
  py::dict d;
  const Timeline& t = r.timeline;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    py::list values;
    for (const std::vector<double>& row : t.rows) values.append(c < row.size() ? row[c] : NAN);
    d[py::str(t.columns[c])] = values;
  }
  return d;
}

py::dict sweep_dict(const Run& r) {
  py::dict d;
  for (const SweptValue& s : r.sweep) d[py::str(s.key)] = s.text;
  return d;
}

bool same_counters(const std::vector<Counter>& a, const std::vector<Counter>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  }
  return true;
}

bool same_run(const Run& a, const Run& b) {
  const RunResult& x = a.result;
  const RunResult& y = b.result;
  if (x.case_name != y.case_name || x.variant != y.variant || x.config != y.config ||
      !same_counters(x.counters, y.counters) || x.files.size() != y.files.size() ||
      a.sweep.size() != b.sweep.size()) {
    return false;
  }
  for (size_t i = 0; i < x.files.size(); ++i) {
    if (x.files[i].path != y.files[i].path ||
        !same_counters(x.files[i].counters, y.files[i].counters)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.sweep.size(); ++i) {
    if (a.sweep[i].key != b.sweep[i].key || a.sweep[i].text != b.sweep[i].text) return false;
  }
  if (x.timeline.every != y.timeline.every || x.timeline.columns != y.timeline.columns ||
      x.timeline.rows != y.timeline.rows) {
    return false;
  }
  if (x.repetitions.size() != y.repetitions.size()) return false;
  for (size_t i = 0; i < x.repetitions.size(); ++i) {
    if (x.repetitions[i].seed != y.repetitions[i].seed ||
        !same_counters(x.repetitions[i].counters, y.repetitions[i].counters)) {
      return false;
    }
  }
  return true;
}

std::string run_repr(const Run& r) {
  std::string s = "<faultline.Result " + r.result.case_name + "/" + r.result.variant;
  for (const SweptValue& v : r.sweep) s += " " + v.key + "=" + v.text;
  for (const char* name : {"pgpgin", "majflt", "minflt"}) {
    const double v = r.result.get(name, NAN);
    if (!std::isnan(v)) s += " " + std::string(name) + "=" + std::string(py::str(py::float_(v)));
  }
  return s + ">";
}

// The rows of a DataFrame: case, variant, the swept keys (numbers where
// every run's value is one, the text otherwise), then every counter any run
// reports, in the order the runs report them (NaN where a run has none).
py::object to_dataframe(py::iterable results) {
  py::object pandas;
  try {
    pandas = py::module_::import("pandas");
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_ImportError)) throw;
    py::raise_from(e, PyExc_ImportError,
                   "faultline.to_dataframe needs pandas (Debian: apt-get install python3-pandas); "
                   "the results themselves need nothing: see Result.counters");
    throw py::error_already_set();
  }
  std::vector<const Run*> runs;
  for (py::handle h : results) {
    if (!py::isinstance<Run>(h)) {
      throw py::type_error("to_dataframe: expected faultline.Result objects, got " + type_name(h));
    }
    runs.push_back(&h.cast<const Run&>());
  }
  std::vector<std::string> swept, counters;
  auto add = [](std::vector<std::string>& names, const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const Run* r : runs) {
    for (const SweptValue& s : r->sweep) add(swept, s.key);
    for (const Counter& c : r->result.counters) add(counters, c.name);
  }
  py::dict data;
  py::list case_col, variant_col;
  for (const Run* r : runs) {
    case_col.append(r->result.case_name);
    variant_col.append(r->result.variant);
  }
  data["case"] = case_col;
  data["variant"] = variant_col;
  for (const std::string& key : swept) {
    std::vector<const SweptValue*> values;
    bool numeric = true, integral = true;
    for (const Run* r : runs) {
      const SweptValue* found = nullptr;
      for (const SweptValue& s : r->sweep) {
        if (s.key == key) found = &s;
      }
      values.push_back(found);
      numeric = numeric && found && std::isfinite(found->number);
      integral = numeric && integral && found->number == std::floor(found->number) &&
                 std::fabs(found->number) < 9e15;
    }
    py::list col;
    for (const SweptValue* v : values) {
      if (!v) {
        col.append(py::none());
      } else if (integral) {
        col.append(py::int_(static_cast<long long>(v->number)));
      } else if (numeric) {
        col.append(v->number);
      } else {
        col.append(v->text);
      }
    }
    data[py::str(key)] = col;
  }
  for (const std::string& name : counters) {
    py::list col;
    for (const Run* r : runs) col.append(r->result.get(name, NAN));
    data[py::str(name)] = col;
  }
  py::list columns;
  for (auto item : data) columns.append(item.first);
  return pandas.attr("DataFrame")(data, "columns"_a = columns);
}

py::list key_list() {
  py::list out;
  for (const KeyDoc& d : key_docs()) {
    out.append(py::dict("key"_a = d.key, "type"_a = d.type, "default"_a = d.default_value,
                        "doc"_a = d.doc));
  }
  return out;
}

}  // namespace

void define_module(py::module_& m) {
  m.doc() =
      "faultline: a model of the Linux page-fault path.\n\n"
      "run() and sweep() plan and run a scenario as `faultline run` and `faultline sweep` do\n"
      "and return a Results list of Result objects; keys() documents every scenario key;\n"
      "to_dataframe() (or Results.to_dataframe()) makes a pandas DataFrame of results.";
  m.attr("__version__") = FAULTLINE_VERSION;

  py::class_<Run>(m, "Result", "One run of a scenario's matrix: its names, counters and keys.")
      .def_property_readonly(
          "case", [](const Run& r) { return r.result.case_name; }, "the case (row) of the matrix")
      .def_property_readonly(
          "variant", [](const Run& r) { return r.result.variant; },
          "the variant (column) of the matrix")
      .def_property_readonly(
          "counters", [](const Run& r) { return counters_dict(r.result.counters); },
          "every counter of the run, name -> float, in the order reports list them")
      .def_property_readonly(
          "config", [](const Run& r) { return config_dict(r.result); },
          "every key's effective value, key -> str")
      .def_property_readonly(
          "files", [](const Run& r) { return files_dict(r.result); },
          "per-file counters, path -> {name: float}, for a run of several files (else empty)")
      .def_property_readonly(
          "repetitions", [](const Run& r) { return repetitions_list(r.result); },
          "a run repeated over seeds (model.repetitions, repeat=): each seed's own counters as "
          "[{'seed': S, 'counters': {...}}]; counters are then their medians. Empty: one run")
      .def(
          "spread",
          [](const Run& r, const std::string& name) {
            if (std::isnan(r.result.get(name, NAN))) throw py::key_error(name);
            const Spread sp = r.result.spread(name);
            return py::make_tuple(sp.median, sp.min, sp.max);
          },
          "name"_a, "(median, min, max) of a counter over the repetitions")
      .def_property_readonly(
          "outcomes",
          [](const Run& r) {
            py::list out;
            for (const std::vector<size_t>& g : r.result.outcomes()) {
              py::list seeds;
              for (size_t k : g) seeds.append(r.result.repetitions[k].seed);
              out.append(seeds);
            }
            return out;
          },
          "the repetitions' seeds grouped by outcome (pgpgin apart by more than 2x): several "
          "lists when the median hides a threshold")
      .def_property_readonly(
          "timeline", [](const Run& r) { return timeline_dict(r.result); },
          "the run over time (model.timeline): {column: [value per sample]}, ready for "
          "pandas.DataFrame; {} without a timeline")
      .def_property_readonly(
          "timeline_every", [](const Run& r) { return r.result.timeline.every; },
          "how often the timeline was sampled ('1000 accesses', '0.01 s'); '' without one")
      .def_property_readonly("sweep", &sweep_dict,
                             "the swept keys' values at this run's point, key -> str (sweep())")
      .def(
          "__getitem__",
          [](const Run& r, const std::string& name) {
            const double v = r.result.get(name, NAN);
            if (std::isnan(v)) throw py::key_error(name);
            return v;
          },
          "the value of a counter")
      .def(
          "get",
          [](const Run& r, const std::string& name, py::object fallback) -> py::object {
            for (const Counter& c : r.result.counters) {
              if (c.name == name) return py::float_(c.value);
            }
            return fallback;
          },
          "name"_a, "default"_a = py::none(), "the value of a counter, or default")
      .def(
          "to_dict",
          [](const Run& r) {
            return py::dict("case"_a = r.result.case_name, "variant"_a = r.result.variant,
                            "sweep"_a = sweep_dict(r), "config"_a = config_dict(r.result),
                            "counters"_a = counters_dict(r.result.counters),
                            "files"_a = files_dict(r.result),
                            "repetitions"_a = repetitions_list(r.result),
                            "timeline"_a = timeline_dict(r.result));
          },
          "the run as plain dicts and lists")
      .def(
          "__eq__", [](const Run& a, const Run& b) { return same_run(a, b); }, py::is_operator())
      .def(
          "__ne__", [](const Run& a, const Run& b) { return !same_run(a, b); }, py::is_operator())
      .def("__repr__", &run_repr);

  // Results: a list of Result with to_dataframe().
  py::object type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type));
  py::object list = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyList_Type));
  py::object results_type =
      type("Results", py::make_tuple(list),
           py::dict("__module__"_a = "faultline",
                    "__doc__"_a = "A list of faultline.Result, in plan order; to_dataframe() "
                                  "makes a pandas DataFrame of it."));
  results_type.attr("to_dataframe") = py::cpp_function(
      [](py::iterable self) { return to_dataframe(self); }, py::name("to_dataframe"),
      py::is_method(results_type), "a pandas DataFrame: one row per run (faultline.to_dataframe)");
  m.attr("Results") = results_type;

  auto as_results = [results_type](std::vector<Run> runs) {
    py::list out;
    for (Run& r : runs) out.append(py::cast(std::move(r)));
    return results_type(out);
  };

  m.def(
      "run",
      [as_results](py::handle scenario, py::handle set, py::handle only, int jobs, bool progress,
                   py::handle repeat) {
        std::vector<PlannedRun> runs =
            plan(scenario, with_repeat(assignments(set, "set"), repeat), only);
        std::vector<Run> out;
        for (RunResult& r : compute(runs, jobs, progress)) out.push_back({std::move(r), {}});
        return as_results(std::move(out));
      },
      "scenario"_a = py::none(), "set"_a = py::none(), "only"_a = py::none(), "jobs"_a = 0,
      "progress"_a = false, "repeat"_a = py::none(),
      "Runs a scenario's cases x variants on the model, as `faultline run` does.\n\n"
      "scenario: a path to a TOML scenario or a recording, a dict in the TOML's shape\n"
      "  ({'file': {'size': '1GiB'}, 'case': [{'name': ..., 'set': [...]}], ...}; dotted keys\n"
      "  such as 'file.size' work as in TOML), or None for the built-in default.\n"
      "set: {KEY: VALUE} or ['KEY=VALUE', ...], applied to every run last (--set).\n"
      "only: 'CASE/VARIANT', 'CASE' or 'VARIANT' (--only).\n"
      "jobs: runs in parallel (0: one per core). progress: the progress line on stderr.\n"
      "repeat: N seeds per run (--repeat, model.repetitions): medians, Result.repetitions.\n"
      "Returns Results, in plan order. Bad input raises ValueError naming the key or file.");

  m.def(
      "sweep",
      [as_results](py::handle scenario, py::handle vary, py::handle set, py::handle only, int jobs,
                   bool progress, py::handle repeat) {
        const std::vector<std::string> sets = with_repeat(assignments(set, "set"), repeat);
        std::vector<report::SweepAxis> axes;
        for (const std::string& v : vary_args(vary)) {
          report::SweepAxis axis = value_or_raise(cli::parse_vary(v));
          for (const report::SweepAxis& other : axes) {
            if (other.key == axis.key) {
              throw py::value_error("vary: key '" + axis.key + "' given twice");
            }
          }
          for (const std::string& s : sets) {
            if (s.rfind(axis.key + "=", 0) == 0) {
              throw py::value_error("set " + s + ": the key is also in vary");
            }
          }
          axes.push_back(std::move(axis));
        }
        if (axes.empty()) throw py::value_error("vary: give at least one KEY=VALUES");
        const std::vector<PlannedRun> runs = plan(scenario, sets, only);
        const std::vector<std::vector<size_t>> points = cli::sweep_points(axes);
        cli::SweepPlan expanded = value_or_raise(cli::expand_sweep(runs, axes, points));
        std::vector<RunResult> results = compute(expanded.runs, jobs, progress);
        std::vector<Run> out;
        for (size_t i = 0; i < results.size(); ++i) {
          Run r{std::move(results[i]), {}};
          const std::vector<size_t>& point = points[expanded.run_point[i]];
          for (size_t a = 0; a < axes.size(); ++a) {
            r.sweep.push_back({axes[a].key, axes[a].values[point[a]], axes[a].numbers[point[a]]});
          }
          out.push_back(std::move(r));
        }
        return as_results(std::move(out));
      },
      "scenario"_a = py::none(), "vary"_a = py::none(), "set"_a = py::none(), "only"_a = py::none(),
      "jobs"_a = 0, "progress"_a = false, "repeat"_a = py::none(),
      "Runs a scenario's matrix for every point of the swept keys, as `faultline sweep` does.\n\n"
      "vary: {KEY: VALUES} where VALUES is what --vary takes after the '=' ('128..8192*2',\n"
      "  '2GiB..8GiB+2GiB', 'normal,random') or a list of values, or ['KEY=VALUES', ...];\n"
      "  several keys: every combination, the first varying slowest.\n"
      "scenario, set, only, jobs, progress, repeat: as for run().\n"
      "Returns Results by case, then point, then variant; each Result.sweep gives its point.");

  m.def("keys", &key_list,
        "Every scenario key as a dict: key, type, default and doc (`faultline keys`).");
  m.def("to_dataframe", &to_dataframe, "results"_a,
        "A pandas DataFrame of results: one row per run; columns case, variant, the swept keys\n"
        "(numbers where every value is one, sizes in bytes), then every counter.");
}

}  // namespace faultline::python

PYBIND11_MODULE(faultline, m) { faultline::python::define_module(m); }
