#include "faultline/scenario.h"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "util/check.h"
#include "workload/recording.h"

namespace faultline {
namespace {

// The tables of a scenario that hold keys: the first part of every key
// (machine, device, file, ...), so a section comes with its first key.
const std::set<std::string>& config_sections() {
  static const std::set<std::string> k = [] {
    std::set<std::string> out;
    for (const KeyDoc& d : key_docs()) {
      std::string list, name, field;
      if (split_entry_key(d.key, &list, &name, &field)) continue;  // [[files]], [[streams]]
      out.insert(d.key.substr(0, d.key.find('.')));
    }
    return out;
  }();
  return k;
}

// The text form of a scalar TOML value, as it would be written after --set.
Result<std::string> scalar_text(const toml::node& n, const std::string& where) {
  if (auto v = n.value<std::string>(); n.is_string()) return *v;
  if (n.is_boolean()) return std::string(*n.value<bool>() ? "true" : "false");
  if (n.is_integer()) {
    const int64_t x = *n.value<int64_t>();
    if (x < 0) return Status::InvalidArgument(where + ": must not be negative");
    return std::to_string(x);
  }
  if (n.is_floating_point()) {
    std::ostringstream os;
    os.precision(17);
    os << *n.value<double>();
    return os.str();
  }
  return Status::InvalidArgument(where + ": expected a string, number or boolean");
}

Result<std::vector<NamedOverrides>> parse_named(const toml::node& n, const std::string& what,
                                                const std::string& src) {
  std::vector<NamedOverrides> out;
  const toml::array* arr = n.as_array();
  if (!arr)
    return Status::InvalidArgument(src + ": '" + what + "' must be an array of tables ([[" + what +
                                   "]])");
  std::set<std::string> names;
  for (const toml::node& item : *arr) {
    const toml::table* t = item.as_table();
    if (!t) return Status::InvalidArgument(src + ": each [[" + what + "]] must be a table");
    NamedOverrides o;
    for (const auto& [k, v] : *t) {
      const std::string key(k.str());
      if (key == "name") {
        if (!v.is_string())
          return Status::InvalidArgument(src + ": " + what + ".name must be a string");
        o.name = *v.value<std::string>();
      } else if (key == "set") {
        const toml::array* s = v.as_array();
        if (!s)
          return Status::InvalidArgument(src + ": " + what +
                                         ".set must be an array of \"KEY=VALUE\"");
        for (const toml::node& e : *s) {
          if (!e.is_string())
            return Status::InvalidArgument(src + ": " + what + ".set entries must be strings");
          o.set.push_back(*e.value<std::string>());
        }
      } else {
        return Status::InvalidArgument(src + ": unknown key '" + key + "' in [[" + what + "]]");
      }
    }
    if (o.name.empty()) return Status::InvalidArgument(src + ": a [[" + what + "]] has no name");
    if (!names.insert(o.name).second) {
      return Status::InvalidArgument(src + ": duplicate " + what + " name '" + o.name + "'");
    }
    out.push_back(std::move(o));
  }
  return out;
}

Status parse_expect(const toml::node& n, const std::string& src, Scenario* sc) {
  const toml::array* arr = n.as_array();
  if (!arr)
    return Status::InvalidArgument(src + ": 'expect' must be an array of tables ([[expect]])");
  for (const toml::node& item : *arr) {
    const toml::table* t = item.as_table();
    if (!t) return Status::InvalidArgument(src + ": each [[expect]] must be a table");
    Expectation e;
    for (const auto& [k, value] : *t) {
      const std::string key(k.str());
      const toml::node& v = value;  // clang 14 cannot capture a structured binding
      auto num = [&](std::optional<double>* out) -> Status {
        if (!v.is_number())
          return Status::InvalidArgument(src + ": expect." + key + " must be a number");
        *out = *v.value<double>();
        return Status::Ok();
      };
      if (key == "case") {
        e.case_name = v.value_or<std::string>("");
      } else if (key == "variant") {
        e.variant = v.value_or<std::string>("");
      } else if (key == "counter") {
        e.counter = v.value_or<std::string>("");
      } else if (key == "eq") {
        FAULTLINE_RETURN_IF_ERROR(num(&e.eq));
      } else if (key == "min") {
        FAULTLINE_RETURN_IF_ERROR(num(&e.min));
      } else if (key == "max") {
        FAULTLINE_RETURN_IF_ERROR(num(&e.max));
      } else {
        return Status::InvalidArgument(src + ": unknown key '" + key + "' in [[expect]]");
      }
    }
    if (e.counter.empty()) return Status::InvalidArgument(src + ": an [[expect]] has no counter");
    if (!e.eq && !e.min && !e.max) {
      return Status::InvalidArgument(src + ": [[expect]] for " + e.counter +
                                     " has no eq, min or max");
    }
    sc->expectations.push_back(std::move(e));
  }
  return Status::Ok();
}

Status parse_probe(const toml::table& t, const std::string& src, ProbeSettings* p) {
  for (const auto& [k, v] : t) {
    const std::string key(k.str());
    if (key == "repetitions") {
      if (!v.is_integer() || *v.value<int64_t>() < 1 || *v.value<int64_t>() > 100) {
        return Status::InvalidArgument(src + ": probe.repetitions must be an integer in 1..100");
      }
      p->repetitions = static_cast<int>(*v.value<int64_t>());
    } else if (key == "trace") {
      if (!v.is_boolean())
        return Status::InvalidArgument(src + ": probe.trace must be true or false");
      p->trace_events = *v.value<bool>();
    } else if (key == "time_tolerance") {
      if (!v.is_number() || *v.value<double>() <= 0) {
        return Status::InvalidArgument(src + ": probe.time_tolerance must be a number above 0");
      }
      p->time_tolerance = *v.value<double>();
    } else if (key == "tolerance") {
      const toml::table* tt = v.as_table();
      if (!tt) return Status::InvalidArgument(src + ": probe.tolerance must be a table");
      for (const auto& [ck, cv] : *tt) {
        if (!cv.is_number())
          return Status::InvalidArgument(src + ": probe.tolerance." + std::string(ck.str()) +
                                         " must be a number");
        bool replaced = false;
        for (auto& [name, tol] : p->tolerance) {
          if (name == ck.str()) {
            tol = *cv.value<double>();
            replaced = true;
          }
        }
        if (!replaced) p->tolerance.emplace_back(std::string(ck.str()), *cv.value<double>());
      }
    } else {
      return Status::InvalidArgument(src + ": unknown key 'probe." + key + "'");
    }
  }
  return Status::Ok();
}

// [[files]] or [[streams]]: each table a named entry, its other keys set as
// LIST.NAME.KEY.
Status parse_entries(const toml::node& n, const std::string& list, const std::string& src,
                     Config* cfg) {
  const toml::array* arr = n.as_array();
  if (!arr) {
    return Status::InvalidArgument(src + ": '" + list + "' must be an array of tables ([[" + list +
                                   "]])");
  }
  for (const toml::node& item : *arr) {
    const toml::table* t = item.as_table();
    if (!t) return Status::InvalidArgument(src + ": each [[" + list + "]] must be a table");
    const toml::node* name = t->get("name");
    if (!name || !name->is_string()) {
      return Status::InvalidArgument(src + ": a [[" + list + "]] has no name (name = \"...\")");
    }
    const std::string entry = *name->value<std::string>();
    Status st = add_entry(*cfg, list, entry);
    if (!st.ok()) return st.with_context(src);
    for (const auto& [k, v] : *t) {
      const std::string key(k.str());
      if (key == "name") continue;
      const std::string full = list + "." + entry + "." + key;
      auto text_value = scalar_text(v, src + ": " + full);
      if (!text_value.ok()) return text_value.status();
      st = set_key(*cfg, full, *text_value);
      if (!st.ok()) return st.with_context(src);
    }
  }
  return Status::Ok();
}

// TOML text as a table; a syntax error names source:line:column.
Result<toml::table> parse_toml(const std::string& text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << source << ":" << e.source().begin.line << ":" << e.source().begin.column
       << ": malformed TOML: " << e.description();
    return Status::InvalidArgument(os.str());
  }
}

}  // namespace

Result<Scenario> parse_scenario(const std::string& text, const std::string& source) {
  auto parsed = parse_toml(text, source);
  if (!parsed.ok()) return parsed.status();
  const toml::table& root = *parsed;
  Scenario sc;
  sc.source = source;
  for (const auto& [k, v] : root) {
    const std::string key(k.str());
    if (key == "name" || key == "description") {
      if (!v.is_string())
        return Status::InvalidArgument(source + ": '" + key + "' must be a string");
      (key == "name" ? sc.name : sc.description) = *v.value<std::string>();
    } else if (config_sections().count(key)) {
      const toml::table* t = v.as_table();
      if (!t)
        return Status::InvalidArgument(source + ": '" + key + "' must be a table ([" + key + "])");
      for (const auto& [fk, fv] : *t) {
        const std::string full = key + "." + std::string(fk.str());
        auto text_value = scalar_text(fv, source + ": " + full);
        if (!text_value.ok()) return text_value.status();
        Status st = set_key(sc.base, full, *text_value);
        if (!st.ok()) return st.with_context(source);
      }
    } else if (key == kFileList || key == kStreamList) {
      FAULTLINE_RETURN_IF_ERROR(parse_entries(v, key, source, &sc.base));
    } else if (key == "case") {
      auto r = parse_named(v, "case", source);
      if (!r.ok()) return r.status();
      sc.cases = std::move(*r);
    } else if (key == "variant") {
      auto r = parse_named(v, "variant", source);
      if (!r.ok()) return r.status();
      sc.variants = std::move(*r);
    } else if (key == "probe") {
      const toml::table* t = v.as_table();
      if (!t) return Status::InvalidArgument(source + ": 'probe' must be a table");
      FAULTLINE_RETURN_IF_ERROR(parse_probe(*t, source, &sc.probe));
    } else if (key == "expect") {
      FAULTLINE_RETURN_IF_ERROR(parse_expect(v, source, &sc));
    } else {
      return Status::InvalidArgument(source + ": unknown key '" + key + "'");
    }
  }
  if (sc.name.empty()) {
    const size_t slash = source.find_last_of('/');
    std::string base = slash == std::string::npos ? source : source.substr(slash + 1);
    if (base.size() > 5 && base.substr(base.size() - 5) == ".toml") base.resize(base.size() - 5);
    sc.name = base;
  }
  return sc;
}

// A recording given where a scenario is expected: replayed as it is, on the
// default machine, every key free to change.
Result<Scenario> scenario_of_recording(const std::string& path) {
  auto r = workload::RecordingReader::open(path, /*allow_incomplete=*/true);
  if (!r.ok()) return r.status();
  const workload::RecordingInfo& info = (*r)->info();
  Scenario sc;
  sc.source = path;
  const size_t slash = path.find_last_of('/');
  sc.name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  if (const size_t dot = sc.name.rfind('.'); dot != std::string::npos && dot > 0) {
    sc.name.resize(dot);
  }
  const std::string* cmd = info.condition("command");
  sc.description = "recording of " + (cmd ? "'" + *cmd + "'" : std::string("a program")) + ": " +
                   std::to_string(info.files.size()) + " file(s), " +
                   std::to_string(info.tasks.size()) + " task(s), " +
                   std::to_string(info.nr_events) + " events" +
                   (info.complete ? "" : " (incomplete)");
  sc.base.access.workload = workload::Kind::kRecording;
  sc.base.access.trace = path;
  return sc;
}

Result<Scenario> load_scenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open scenario file");
  if (workload::is_recording(in)) return scenario_of_recording(path);
  std::ostringstream os;
  os << in.rdbuf();
  auto sc = parse_scenario(os.str(), path);
  if (!sc.ok()) return sc;
  // A trace named in a scenario file is relative to that file, so the two
  // travel together; a --set path stays relative to the current directory.
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos) {
    const std::string dir = path.substr(0, slash + 1);
    auto resolve = [&](std::string& p) {
      if (!p.empty() && p.front() != '/') p = dir + p;
    };
    resolve(sc->base.access.trace);
    for (StreamDecl& st : sc->base.streams) resolve(st.recording);
    // The path keys: access.trace and streams.NAME.recording.
    auto is_path_key = [](const std::string& key) {
      return key == "access.trace" ||
             (key.rfind(std::string(kStreamList) + ".", 0) == 0 && key.size() > 10 &&
              key.substr(key.size() - 10) == ".recording");
    };
    for (auto* list : {&sc->cases, &sc->variants}) {
      for (NamedOverrides& o : *list) {
        for (std::string& a : o.set) {
          const size_t eq = a.find('=');
          if (eq == std::string::npos || !is_path_key(a.substr(0, eq))) continue;
          std::string value = a.substr(eq + 1);
          resolve(value);
          a = a.substr(0, eq + 1) + value;
        }
      }
    }
  }
  return sc;
}

namespace {

// The keys a machine profile may set: these, and every key of these
// families (the cost lists).
const std::vector<std::string> kMachineKeys = {
    "device.bandwidth",   "device.latency_us",     "device.request_us",
    "device.queue_depth", "device.shared_batches", "device.max_sectors_kb",
    "machine.cpus",       "machine.memory",        "machine.cpus_per_domain"};
const std::vector<std::string> kMachineFamilies = {"cpu.", "smp."};

bool is_machine_key(const std::string& key) {
  return std::find(kMachineKeys.begin(), kMachineKeys.end(), key) != kMachineKeys.end() ||
         std::any_of(kMachineFamilies.begin(), kMachineFamilies.end(),
                     [&](const std::string& f) { return key.rfind(f, 0) == 0; });
}

}  // namespace

Result<MachineProfile> load_machine_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open machine profile");
  std::ostringstream os;
  os << in.rdbuf();
  auto parsed = parse_toml(os.str(), path);
  if (!parsed.ok()) return parsed.status();
  const toml::table& root = *parsed;
  MachineProfile m;
  m.source = path;
  Config check;
  for (const auto& [k, v] : root) {
    const std::string key(k.str());
    if (key == "name" || key == "description") {
      if (!v.is_string()) return Status::InvalidArgument(path + ": '" + key + "' must be a string");
      (key == "name" ? m.name : m.description) = *v.value<std::string>();
      continue;
    }
    const toml::table* t = v.as_table();
    if (!t) {
      return Status::InvalidArgument(path + ": unknown key '" + key +
                                     "' (a machine profile has name, description and the "
                                     "tables [device], [machine] and [cpu])");
    }
    for (const auto& [fk, fv] : *t) {
      const std::string full = key + "." + std::string(fk.str());
      if (!is_machine_key(full)) {
        std::string keys;
        for (const std::string& mk : kMachineKeys) keys += mk + ", ";
        for (const std::string& f : kMachineFamilies) keys += f + "*, ";
        keys.resize(keys.size() - 2);
        return Status::InvalidArgument(path + ": '" + full +
                                       "' is not a key of a machine profile (" + keys + ")");
      }
      auto text = scalar_text(fv, path + ": " + full);
      if (!text.ok()) return text.status();
      FAULTLINE_RETURN_IF_ERROR(set_key(check, full, *text).with_context(path));
      m.set.push_back(full + "=" + *text);
    }
  }
  if (m.name.empty()) m.name = path;
  return m;
}

Status apply_machine_profile(const MachineProfile& m, Scenario* sc) {
  FAULTLINE_RETURN_IF_ERROR(apply_assignments(sc->base, m.set).with_context(m.source));
  sc->machine_profile = m.name;
  return Status::Ok();
}

Scenario default_scenario() {
  auto r = parse_scenario(kDefaultScenarioToml, "<built-in>");
  FAULTLINE_CHECK(r.ok());
  return *r;
}

Result<std::vector<PlannedRun>> plan_runs(const Scenario& sc,
                                          const std::vector<std::string>& overrides) {
  std::vector<NamedOverrides> cases = sc.cases;
  std::vector<NamedOverrides> variants = sc.variants;
  if (cases.empty()) cases.push_back({"default", {}});
  if (variants.empty()) variants.push_back({"default", {}});
  std::vector<PlannedRun> out;
  for (const NamedOverrides& c : cases) {
    for (const NamedOverrides& v : variants) {
      PlannedRun run{c.name, v.name, sc.base};
      auto ctx = [&](const Status& st, const std::string& where) {
        return st.with_context(sc.source + ": " + where);
      };
      Status st = apply_assignments(run.cfg, c.set);
      if (!st.ok()) return ctx(st, "case '" + c.name + "'");
      st = apply_assignments(run.cfg, v.set);
      if (!st.ok()) return ctx(st, "variant '" + v.name + "'");
      st = apply_assignments(run.cfg, overrides);
      if (!st.ok()) return st.with_context("--set");
      st = validate(run.cfg);
      if (!st.ok()) return ctx(st, "case '" + c.name + "', variant '" + v.name + "'");
      out.push_back(std::move(run));
    }
  }
  return out;
}

}  // namespace faultline
