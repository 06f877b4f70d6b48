#include "report/sweep_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "report/report_internal.h"

namespace faultline::report {
namespace {

std::vector<std::string> unique_cases(const Sweep& s) {
  std::vector<std::string> out;
  for (const RunResult& r : s.runs) {
    if (std::find(out.begin(), out.end(), r.case_name) == out.end()) out.push_back(r.case_name);
  }
  return out;
}

std::vector<std::string> unique_variants(const Sweep& s) {
  std::vector<std::string> out;
  for (const RunResult& r : s.runs) {
    if (std::find(out.begin(), out.end(), r.variant) == out.end()) out.push_back(r.variant);
  }
  return out;
}

const RunResult* find_run(const Sweep& s, const std::string& c, size_t point,
                          const std::string& v) {
  for (size_t i = 0; i < s.runs.size(); ++i) {
    if (s.run_point[i] == point && s.runs[i].case_name == c && s.runs[i].variant == v)
      return &s.runs[i];
  }
  return nullptr;
}

bool is_axis(const Sweep& s, const std::string& key) {
  return std::any_of(s.axes.begin(), s.axes.end(),
                     [&](const SweepAxis& a) { return a.key == key; });
}

// A word a shell passes through unchanged, else the word in single quotes.
std::string shell_word(const std::string& w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("._-+=/:,").find(c) != std::string_view::npos;
  });
  if (plain) return w;
  std::string o = "'";
  for (char c : w) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

}  // namespace

bool SweepAxis::numeric() const {
  return !numbers.empty() &&
         std::all_of(numbers.begin(), numbers.end(), [](double v) { return std::isfinite(v); });
}

std::string point_label(const Sweep& sweep, size_t point) {
  std::string out;
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    if (a) out += ' ';
    out += sweep.axes[a].key + "=" + sweep.axes[a].values[sweep.points[point][a]];
  }
  return out;
}

namespace {

// A sweep of access.seed: for each case, variant and point of the other
// keys, the outcomes over the seeds and the share of each, an estimate of
// the probability that one run falls on each side.
void seed_outcomes(std::string& out, const Sweep& sweep) {
  size_t seed_axis = sweep.axes.size();
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    if (sweep.axes[a].key == "access.seed") seed_axis = a;
  }
  if (seed_axis == sweep.axes.size()) return;
  // Runs keyed by everything but the seed, in first-seen order.
  std::vector<std::string> names;
  std::vector<std::vector<size_t>> members;
  for (size_t i = 0; i < sweep.runs.size(); ++i) {
    const RunResult& r = sweep.runs[i];
    const std::vector<size_t>& point = sweep.points[sweep.run_point[i]];
    std::string name = r.case_name + "/" + r.variant;
    for (size_t a = 0; a < sweep.axes.size(); ++a) {
      if (a != seed_axis) name += " " + sweep.axes[a].key + "=" + sweep.axes[a].values[point[a]];
    }
    const auto at = std::find(names.begin(), names.end(), name);
    if (at == names.end()) {
      names.push_back(name);
      members.push_back({i});
    } else {
      members[static_cast<size_t>(at - names.begin())].push_back(i);
    }
  }
  out += "over the swept seeds:\n";
  for (size_t g = 0; g < names.size(); ++g) {
    // Each seed once: a repeated run brings its own seeds' counters, which
    // the next swept seeds' runs repeat (seed S runs S, S+1, ...).
    std::vector<uint64_t> seeds;
    std::vector<double> values;
    auto add = [&](uint64_t seed, double value) {
      if (std::find(seeds.begin(), seeds.end(), seed) != seeds.end()) return;
      seeds.push_back(seed);
      values.push_back(value);
    };
    for (size_t i : members[g]) {
      const RunResult& r = sweep.runs[i];
      if (r.repetitions.size() > 1) {
        for (const Repetition& rep : r.repetitions) add(rep.seed, rep.get(kOutcomeCounter));
      } else {
        const std::string* seed = r.config_value("access.seed");
        add(seed ? std::strtoull(seed->c_str(), nullptr, 10) : 0, r.get(kOutcomeCounter));
      }
    }
    describe_outcomes(out, names[g], seeds, values, true);
  }
  out += "\n";
}

}  // namespace

std::string format_sweep_table(const Meta& meta, const Sweep& sweep) {
  std::string out = fmt::format("{}: {}\n", meta.scenario, meta.description);
  if (!sweep.runs.empty()) {
    const RunResult& first = sweep.runs.front();
    auto key = [&](const char* k) -> std::string {
      if (is_axis(sweep, k)) return "(swept)";
      const std::string* v = first.config_value(k);
      return v ? *v : std::string("?");
    };
    std::string swept;
    for (const SweepAxis& a : sweep.axes) {
      swept += fmt::format("{}{} ({} values)", swept.empty() ? "" : ", ", a.key, a.values.size());
    }
    out += fmt::format(
        "model of kernel {}, seed {}, {} run(s); swept {}; every counter: --format json\n\n",
        key("kernel.profile"), key("access.seed"), sweep.runs.size(), swept);
  }
  const std::vector<std::string> variants = unique_variants(sweep);
  for (const std::string& c : unique_cases(sweep)) {
    // Columns: one per swept key, then one per variant; all right-aligned.
    std::vector<std::string> header;
    for (const SweepAxis& a : sweep.axes) header.push_back(a.key);
    for (const std::string& v : variants) header.push_back(v);
    std::vector<std::vector<std::string>> rows;
    for (size_t p = 0; p < sweep.points.size(); ++p) {
      std::vector<std::string> row;
      for (size_t a = 0; a < sweep.axes.size(); ++a)
        row.push_back(sweep.axes[a].values[sweep.points[p][a]]);
      bool any = false;
      for (const std::string& v : variants) {
        const RunResult* r = find_run(sweep, c, p, v);
        const double x = r ? r->get(sweep.metric, NAN) : NAN;
        any |= r != nullptr;
        row.push_back(std::isnan(x) ? "-" : format_counter(sweep.metric, x));
      }
      if (any) rows.push_back(std::move(row));
    }
    std::vector<size_t> w(header.size());
    for (size_t j = 0; j < header.size(); ++j) {
      w[j] = header[j].size();
      for (const auto& row : rows) w[j] = std::max(w[j], row[j].size());
    }
    out += fmt::format("{}, case {}\n", sweep.metric, c);
    auto line = [&](const std::vector<std::string>& cells) {
      std::string l;
      for (size_t j = 0; j < cells.size(); ++j)
        l += fmt::format("{}{:>{}}", j ? "  " : "", cells[j], w[j]);
      return l + "\n";
    };
    out += line(header);
    for (const auto& row : rows) out += line(row);
    out += "\n";
  }
  // A sweep of the seed says it once for all its seeds; each point's own
  // repetitions would repeat it point by point.
  if (is_axis(sweep, "access.seed")) {
    seed_outcomes(out, sweep);
  } else {
    outcome_notes(out, sweep.runs);
  }
  return out;
}

std::string format_sweep_json(const Meta& meta, const Sweep& sweep) {
  nlohmann::ordered_json j;
  j["faultline"] = {{"version", meta.version}};
  j["scenario"] = {
      {"name", meta.scenario}, {"description", meta.description}, {"source", meta.source}};
  nlohmann::ordered_json vary = nlohmann::ordered_json::array();
  for (const SweepAxis& a : sweep.axes) vary.push_back({{"key", a.key}, {"values", a.values}});
  j["sweep"] = {{"metric", sweep.metric}, {"vary", vary}, {"set", sweep.sets}};
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (size_t i = 0; i < sweep.runs.size(); ++i) {
    const RunResult& r = sweep.runs[i];
    const std::vector<size_t>& point = sweep.points[sweep.run_point[i]];
    nlohmann::ordered_json base = run_json(r);
    nlohmann::ordered_json o;
    o["case"] = base["case"];
    o["variant"] = base["variant"];
    nlohmann::ordered_json swept;
    for (size_t a = 0; a < sweep.axes.size(); ++a)
      swept[sweep.axes[a].key] = sweep.axes[a].values[point[a]];
    o["sweep"] = swept;
    o["config"] = base["config"];
    o["counters"] = base["counters"];
    for (const char* k : {"spread", "repetitions", "outcomes", "timeline"}) {
      if (base.contains(k)) o[k] = base[k];
    }
    // The command line that reruns exactly this run.
    std::string cmd = "faultline run";
    if (meta.source != "<built-in>" && !meta.source.empty()) cmd += " " + shell_word(meta.source);
    cmd += " --only " + shell_word(r.case_name + "/" + r.variant);
    for (const std::string& s : sweep.sets) cmd += " --set " + shell_word(s);
    for (size_t a = 0; a < sweep.axes.size(); ++a)
      cmd += " --set " + shell_word(sweep.axes[a].key + "=" + sweep.axes[a].values[point[a]]);
    o["rerun"] = cmd;
    arr.push_back(o);
  }
  j["runs"] = arr;
  return j.dump(2) + "\n";
}

std::string format_sweep_csv(const Sweep& sweep) {
  std::string out;
  if (sweep.runs.empty()) return out;
  const std::vector<std::string> counters = counter_names(sweep.runs);
  // The swept keys come first, as given; the other keys follow with their
  // effective values, then every counter.
  out += "case,variant";
  for (const SweepAxis& a : sweep.axes) out += "," + csv_escape(a.key);
  for (const auto& [k, v] : sweep.runs.front().config) {
    if (!is_axis(sweep, k)) out += "," + k;
  }
  const bool repeated = any_repeated(sweep.runs);
  out += csv_counter_header(counters, repeated) + "\n";
  for (size_t i = 0; i < sweep.runs.size(); ++i) {
    const RunResult& r = sweep.runs[i];
    const std::vector<size_t>& point = sweep.points[sweep.run_point[i]];
    out += csv_escape(r.case_name) + "," + csv_escape(r.variant);
    for (size_t a = 0; a < sweep.axes.size(); ++a)
      out += "," + csv_escape(sweep.axes[a].values[point[a]]);
    for (const auto& [k, v] : r.config) {
      if (!is_axis(sweep, k)) out += "," + csv_escape(v);
    }
    out += csv_counter_cells(r, counters, repeated) + "\n";
  }
  return out;
}

LineChart sweep_chart(const Meta& meta, const Sweep& sweep) {
  LineChart chart;
  const SweepAxis& x_axis = sweep.axes.front();
  const std::vector<std::string> cases = unique_cases(sweep);
  const std::string unit = counter_unit(sweep.metric);
  chart.title = fmt::format("{}: {} by {}", meta.scenario, sweep.metric, x_axis.key);
  chart.subtitle = meta.description;
  if (cases.size() == 1) chart.subtitle = "case " + cases.front() + ": " + chart.subtitle;
  if (!sweep.sets.empty()) {
    std::string sets;
    for (const std::string& s : sweep.sets) sets += (sets.empty() ? "" : " ") + s;
    chart.subtitle += (chart.subtitle.empty() ? "" : "; ") + sets;
  }
  chart.x_label = x_axis.key;
  chart.y_label = unit.empty() ? sweep.metric : fmt::format("{} ({})", sweep.metric, unit);
  chart.x_bytes = x_axis.bytes;
  const bool numeric = x_axis.numeric();
  if (!numeric) chart.categories = x_axis.values;

  // A series per case (when several), combination of the other axes, and variant,
  // in the order the runs first show them.
  std::vector<std::string> keys;
  for (size_t i = 0; i < sweep.runs.size(); ++i) {
    const RunResult& r = sweep.runs[i];
    const std::vector<size_t>& point = sweep.points[sweep.run_point[i]];
    std::string name = cases.size() > 1 ? r.case_name + "/" + r.variant : r.variant;
    for (size_t a = 1; a < sweep.axes.size(); ++a)
      name += " " + sweep.axes[a].key + "=" + sweep.axes[a].values[point[a]];
    auto it = std::find(keys.begin(), keys.end(), name);
    if (it == keys.end()) {
      keys.push_back(name);
      chart.series.push_back({name, {}});
      it = keys.end() - 1;
    }
    const size_t x_index = point[0];
    const double x = numeric ? x_axis.numbers[x_index] : static_cast<double>(x_index);
    const double y = r.get(sweep.metric, NAN);
    if (!std::isnan(y))
      chart.series[static_cast<size_t>(it - keys.begin())].points.emplace_back(
          x, counter_in_unit(sweep.metric, y));
  }
  return chart;
}

}  // namespace faultline::report
