#include "report/compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/report.h"

namespace faultline::report {
namespace {

std::string pct(double e) {
  if (!std::isfinite(e)) return "inf";
  return fmt::format("{:+.1f}%", 100 * e);
}

const CompareRow* row(const CompareCase& c, const std::string& counter) {
  for (const CompareRow& r : c.rows) {
    if (r.counter == counter) return &r;
  }
  return nullptr;
}

std::string tolerances(const std::vector<CompareCase>& cases) {
  std::string out;
  if (cases.empty()) return out;
  for (const CompareRow& r : cases.front().rows) {
    if (r.tolerance < 0 || r.counter == "elapsed_s") continue;  // time is judged apart
    out += fmt::format("{}{} {:.0f}%", out.empty() ? "" : ", ", r.counter, 100 * r.tolerance);
  }
  return out;
}

// The time tolerance the cases were judged by (the first judged case's).
double time_tolerance(const std::vector<CompareCase>& cases) {
  for (const CompareCase& c : cases) {
    const CompareRow* t = c.time_judged ? row(c, "elapsed_s") : nullptr;
    if (t) return t->tolerance;
  }
  return 0;
}

}  // namespace

std::string format_compare_table(const std::vector<CompareCase>& cases) {
  std::string out;
  if (cases.empty()) return "no case was compared\n";
  out += fmt::format("{}: model of kernel {} vs kernel {}\n\n", cases.front().scenario,
                     cases.front().model_profile, cases.front().kernel_release);
  out += fmt::format("{:<28} {:<26} {:>12} {:>12} {:>25} {:>7} {:>8} {:>5}\n", "case/variant",
                     "counter", "model", "kernel", "[min, max]", "spread", "error", "");
  for (const CompareCase& c : cases) {
    const std::string name = c.case_name + "/" + c.variant;
    for (const CompareRow& r : c.rows) {
      const std::string range =
          fmt::format("[{}, {}]", format_number(r.kernel.min), format_number(r.kernel.max));
      const char* verdict = r.tolerance < 0 ? "" : (r.within ? "ok" : "OUT");
      out += fmt::format("{:<28} {:<26} {:>12} {:>12} {:>25} {:>7} {:>8} {:>5}\n", name, r.counter,
                         format_number(r.model), format_number(r.kernel.median), range,
                         fmt::format("{:.1f}%", 100 * r.kernel.relative()), pct(r.error), verdict);
    }
    if (c.has_program) {
      // The recorded program itself, beside the model and the replay.
      out += fmt::format("{:<28} {:<26} {:>12} {:>12} {:>12} {:>25} {:>8} {:>5}\n", name,
                         "the program itself:", "model", "replay", "program", "[min, max]", "error",
                         "");
      for (const CompareRow& r : c.rows) {
        if (!r.has_program) continue;
        out += fmt::format(
            "{:<28} {:<26} {:>12} {:>12} {:>12} {:>25} {:>8} {:>5}\n", name, r.counter,
            format_number(r.model), format_number(r.kernel.median), format_number(r.program.median),
            fmt::format("[{}, {}]", format_number(r.program.min), format_number(r.program.max)),
            pct(r.program_error), r.program_judged ? (r.program_within ? "ok" : "OUT") : "");
      }
    }
    const CompareRow* t = row(c, "elapsed_s");
    if (t && t->kernel.median > 0 && c.model_wall_s > 0) {
      out += fmt::format(
          "{:<28} time: the kernel's access loop took {:.4f} s, the model computed "
          "the run in {:.4f} s ({:.1f}x)\n",
          name, t->kernel.median, c.model_wall_s, t->kernel.median / c.model_wall_s);
    }
    for (const std::string& n : c.notes) out += fmt::format("{:<28} note: {}\n", name, n);
  }
  // The matrix's summary lines, from the one that counts the cases.
  const std::string matrix = format_compare_matrix(cases);
  const size_t at = matrix.rfind('\n', matrix.find(" cases within tolerance"));
  out += "\n" + matrix.substr(at == std::string::npos ? 0 : at + 1);
  return out;
}

std::string format_compare_matrix(const std::vector<CompareCase>& cases) {
  std::string out;
  size_t w = 20;
  for (const CompareCase& c : cases) {
    w = std::max(w, c.scenario.size() + c.case_name.size() + c.variant.size() + 2);
  }
  out += fmt::format("{:<{}} {:>16} {:>16} {:>16}  {:<10} {:>10} {:>14}  {}\n",
                     "scenario/case/variant", w, "pgpgin", "majflt", "minflt", "verdict",
                     "elapsed_s", "kernel spread", "time");
  size_t judged = 0, passed = 0, timed = 0, timed_ok = 0;
  std::vector<double> spreads;
  for (const CompareCase& c : cases) {
    auto cell = [&](const char* counter) {
      const CompareRow* r = row(c, counter);
      if (!r) return std::string("-");
      return fmt::format("{}{}", pct(r->error), r->tolerance >= 0 && !r->within ? "!" : "");
    };
    const CompareRow* t = row(c, "elapsed_s");
    out += fmt::format("{:<{}} {:>16} {:>16} {:>16}  {:<10} {:>10} {:>14}  {}\n",
                       c.scenario + "/" + c.case_name + "/" + c.variant, w, cell("pgpgin"),
                       cell("majflt"), cell("minflt"),
                       !c.judged ? "not judged" : (c.pass ? "ok" : "OUT"), cell("elapsed_s"),
                       t ? fmt::format("{:.1f}%", 100 * t->kernel.relative()) : "-",
                       !c.time_judged ? "-" : (c.time_pass ? "ok" : "OUT"));
    if (c.judged) {
      ++judged;
      passed += c.pass;
    }
    if (c.time_judged) {
      ++timed;
      timed_ok += c.time_pass;
      spreads.push_back(t->kernel.relative());
    }
  }
  out += fmt::format("{} of {} cases within tolerance ({})\n", passed, judged, tolerances(cases));
  if (timed) {
    const Spread sp = spread_of(spreads);
    out += fmt::format(
        "{} of {} cases within time tolerance (elapsed_s {:.0f}% of the kernel's median; the "
        "kernel's own spread, (max - min) / median: median {:.1f}%, largest {:.1f}%)\n",
        timed_ok, timed, 100 * time_tolerance(cases), 100 * sp.median, 100 * sp.max);
  }
  size_t programs = 0, programs_ok = 0;
  for (const CompareCase& c : cases) {
    programs += c.has_program;
    programs_ok += c.has_program && c.program_pass;
  }
  if (programs) {
    out +=
        fmt::format("{} of {} recorded programs within tolerance of the model (pgpgin, majflt)\n",
                    programs_ok, programs);
  }
  return out;
}

std::string format_compare_json(const std::vector<CompareCase>& cases) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const CompareCase& c : cases) {
    nlohmann::ordered_json o;
    o["scenario"] = c.scenario;
    o["case"] = c.case_name;
    o["variant"] = c.variant;
    o["kernel_release"] = c.kernel_release;
    o["model_profile"] = c.model_profile;
    o["pass"] = c.pass;
    if (c.has_program) o["program_pass"] = c.program_pass;
    if (c.time_judged) o["time_pass"] = c.time_pass;
    o["model_wall_s"] = c.model_wall_s;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const CompareRow& r : c.rows) {
      nlohmann::ordered_json j;
      j["counter"] = r.counter;
      j["model"] = r.model;
      j["kernel_median"] = r.kernel.median;
      j["kernel_min"] = r.kernel.min;
      j["kernel_max"] = r.kernel.max;
      j["kernel_spread"] = r.kernel.relative();
      j["error"] = std::isfinite(r.error) ? nlohmann::ordered_json(r.error) : nullptr;
      if (r.tolerance >= 0) {
        j["tolerance"] = r.tolerance;
        j["within"] = r.within;
      }
      if (r.has_program) {
        j["program_median"] = r.program.median;
        j["program_min"] = r.program.min;
        j["program_max"] = r.program.max;
        j["program_error"] =
            std::isfinite(r.program_error) ? nlohmann::ordered_json(r.program_error) : nullptr;
        if (r.program_judged) j["program_within"] = r.program_within;
      }
      rows.push_back(j);
    }
    o["rows"] = rows;
    o["notes"] = c.notes;
    o["kernel_event_files"] = c.kernel_event_files;
    if (!c.model_event_file.empty()) o["model_event_file"] = c.model_event_file;
    nlohmann::ordered_json cfg;
    for (const auto& [k, v] : c.model.config) cfg[k] = v;
    o["config"] = cfg;
    arr.push_back(o);
  }
  return arr.dump(2) + "\n";
}

std::string format_compare_csv(const std::vector<CompareCase>& cases) {
  const bool programs =
      std::any_of(cases.begin(), cases.end(), [](const CompareCase& c) { return c.has_program; });
  std::string out =
      "scenario,case,variant,counter,model,kernel_median,kernel_min,kernel_max,kernel_spread,error,"
      "tolerance,within";
  out += programs ? ",program_median,program_error,program_within\n" : "\n";
  for (const CompareCase& c : cases) {
    for (const CompareRow& r : c.rows) {
      out +=
          fmt::format("{},{},{},{},{},{},{},{},{:.6g},{},{},{}", c.scenario, c.case_name, c.variant,
                      r.counter, format_number(r.model), format_number(r.kernel.median),
                      format_number(r.kernel.min), format_number(r.kernel.max), r.kernel.relative(),
                      std::isfinite(r.error) ? fmt::format("{:.6g}", r.error) : "inf",
                      r.tolerance >= 0 ? fmt::format("{:g}", r.tolerance) : "",
                      r.tolerance >= 0 ? (r.within ? "true" : "false") : "");
      if (programs) {
        out += r.has_program
                   ? fmt::format(",{},{},{}", format_number(r.program.median),
                                 std::isfinite(r.program_error)
                                     ? fmt::format("{:.6g}", r.program_error)
                                     : "inf",
                                 r.program_judged ? (r.program_within ? "true" : "false") : "")
                   : ",,,";
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace faultline::report
