#include "cli/sweep_args.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "faultline/config.h"
#include "util/units.h"

namespace faultline::cli {
namespace {

enum class KeyKind { kOther, kInt, kNumber, kSize };

KeyKind kind_of(const std::string& type) {
  if (type == "int") return KeyKind::kInt;
  if (type == "number") return KeyKind::kNumber;
  if (type.rfind("size", 0) == 0) return KeyKind::kSize;  // "size", "size|auto"
  return KeyKind::kOther;
}

// A number in the key's own syntax; nullopt when the text is not one.
std::optional<double> to_number(KeyKind kind, const std::string& text) {
  if (kind == KeyKind::kOther || text.empty()) return std::nullopt;
  if (kind == KeyKind::kSize) {
    auto r = parse_size(text);
    if (!r.ok()) return std::nullopt;
    return static_cast<double>(*r);
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  // An integer key's value is a uint64_t: 2^64 and above is none.
  if (kind == KeyKind::kInt && (v < 0 || v != std::floor(v) || v >= 0x1p64)) return std::nullopt;
  return v;
}

// The text a generated value is set with: "128MiB" for sizes (or the bytes
// when no unit divides them), an integer, or up to ten significant digits.
std::string value_text(KeyKind kind, double v) {
  if (kind == KeyKind::kSize) {
    const auto bytes = static_cast<uint64_t>(v);
    std::string s = format_size(bytes);  // "128 MiB", or "1.50 GiB" when inexact
    s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
    auto back = parse_size(s);
    return back.ok() && *back == bytes ? s : std::to_string(bytes);
  }
  if (kind == KeyKind::kInt) return std::to_string(static_cast<uint64_t>(v));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// START..END*FACTOR or START..END+STEP.
Status expand_range(const std::string& key, KeyKind kind, const std::string& text,
                    std::vector<std::string>* out) {
  auto malformed = [&](const std::string& why) {
    return Status::InvalidArgument("--vary " + key + ": malformed range '" + text + "' (" + why +
                                   "; expected START..END*FACTOR or START..END+STEP)");
  };
  if (kind == KeyKind::kOther) {
    return Status::InvalidArgument("--vary " + key + ": '" + text +
                                   "' is a range, but the key is not numeric; list its values");
  }
  const size_t dots = text.find("..");
  const size_t op = text.find_last_of("*+");
  if (op == std::string::npos || op < dots + 2) return malformed("no *FACTOR or +STEP");
  const std::string start_text = text.substr(0, dots);
  const std::string end_text = text.substr(dots + 2, op - dots - 2);
  const std::string by_text = text.substr(op + 1);
  const auto start = to_number(kind, start_text);
  const auto end = to_number(kind, end_text);
  if (!start) return malformed("START '" + start_text + "' is not a value of the key");
  if (!end) return malformed("END '" + end_text + "' is not a value of the key");
  if (*end < *start) return malformed("END is below START");
  const bool factor = text[op] == '*';
  // A factor is a plain number; a step is a value of the key (a size for sizes).
  const auto by = factor ? to_number(KeyKind::kNumber, by_text) : to_number(kind, by_text);
  if (!by) return malformed("'" + by_text + "' is not a " + (factor ? "factor" : "step"));
  if (factor && !(*by > 1)) return malformed("the factor must be above 1");
  if (factor && *start <= 0) return malformed("a range by factor must start above 0");
  if (!factor && !(*by > 0)) return malformed("the step must be above 0");
  const double limit = *end * (1 + 1e-9);
  size_t n = 0;
  for (double v = *start; v <= limit;) {
    // Sizes and integers end at 2^64 - 1, whatever END was rounded to.
    if (kind != KeyKind::kNumber && v >= 0x1p64) break;
    if (++n > kMaxSweepValues) {
      return Status::InvalidArgument("--vary " + key + ": '" + text + "' gives more than " +
                                     std::to_string(kMaxSweepValues) + " values");
    }
    out->push_back(value_text(kind, v));
    double next = factor ? v * *by : v + *by;
    if (kind != KeyKind::kNumber) next = std::max(std::round(next), v + 1);  // whole numbers
    v = next;
  }
  return Status::Ok();
}

}  // namespace

Result<report::SweepAxis> parse_vary(const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("--vary: expected KEY=V1,V2,..., got '" + arg + "'");
  }
  report::SweepAxis axis;
  axis.key = arg.substr(0, eq);
  const std::string list = arg.substr(eq + 1);
  KeyKind kind = KeyKind::kOther;
  bool known = false;
  // files.NAME.KEY and streams.NAME.KEY: documented once for every NAME.
  std::string entries, name, field, doc_key = axis.key;
  Config scratch;
  if (split_entry_key(axis.key, &entries, &name, &field)) {
    doc_key = entries + ".NAME." + field;
    FAULTLINE_RETURN_IF_ERROR(add_entry(scratch, entries, name).with_context("--vary"));
  }
  for (const KeyDoc& d : key_docs()) {
    if (d.key == doc_key) {
      kind = kind_of(d.type);
      known = true;
    }
  }
  if (!known) {
    return Status::InvalidArgument("--vary: unknown key '" + axis.key +
                                   "' (faultline keys lists them)");
  }
  if (list.empty()) return Status::InvalidArgument("--vary " + axis.key + ": empty value list");
  axis.bytes = kind == KeyKind::kSize;

  std::vector<std::string> values;
  size_t begin = 0;
  while (true) {
    const size_t comma = list.find(',', begin);
    const std::string item =
        list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (item.empty()) {
      return Status::InvalidArgument("--vary " + axis.key + ": empty value in '" + list + "'");
    }
    if (item.find("..") != std::string::npos) {
      FAULTLINE_RETURN_IF_ERROR(expand_range(axis.key, kind, item, &values));
    } else {
      values.push_back(item);
    }
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (values.size() > kMaxSweepValues) {
    return Status::InvalidArgument("--vary " + axis.key + ": more than " +
                                   std::to_string(kMaxSweepValues) + " values");
  }

  for (const std::string& v : values) {
    Status st = set_key(scratch, axis.key, v);
    if (!st.ok()) return st.with_context("--vary");
    const std::optional<double> x = to_number(kind, v);
    for (size_t i = 0; i < axis.values.size(); ++i) {
      const bool same =
          x && std::isfinite(axis.numbers[i]) ? *x == axis.numbers[i] : v == axis.values[i];
      if (same) {
        return Status::InvalidArgument("--vary " + axis.key + ": the value '" + v +
                                       "' is given twice (as '" + axis.values[i] + "')");
      }
    }
    axis.values.push_back(v);
    axis.numbers.push_back(x ? *x : NAN);
  }
  return axis;
}

std::vector<std::vector<size_t>> sweep_points(const std::vector<report::SweepAxis>& axes) {
  std::vector<std::vector<size_t>> out;
  if (axes.empty()) return out;
  std::vector<size_t> idx(axes.size(), 0);
  while (true) {
    out.push_back(idx);
    size_t a = axes.size();
    while (a > 0) {  // the last axis varies fastest
      --a;
      if (++idx[a] < axes[a].values.size()) break;
      idx[a] = 0;
      if (a == 0) return out;
    }
  }
}

Result<SweepPlan> expand_sweep(const std::vector<PlannedRun>& plan,
                               const std::vector<report::SweepAxis>& axes,
                               const std::vector<std::vector<size_t>>& points) {
  // The planned runs are grouped by case already (cases x variants).
  std::vector<std::string> cases;
  for (const PlannedRun& r : plan) {
    if (std::find(cases.begin(), cases.end(), r.case_name) == cases.end())
      cases.push_back(r.case_name);
  }
  SweepPlan out;
  for (const std::string& c : cases) {
    for (size_t p = 0; p < points.size(); ++p) {
      std::string label;
      for (size_t a = 0; a < axes.size(); ++a)
        label += (a ? " " : "") + axes[a].key + "=" + axes[a].values[points[p][a]];
      for (const PlannedRun& base : plan) {
        if (base.case_name != c) continue;
        PlannedRun run = base;
        for (size_t a = 0; a < axes.size(); ++a) {
          Status st = set_key(run.cfg, axes[a].key, axes[a].values[points[p][a]]);
          if (!st.ok()) return st.with_context("--vary " + label);
        }
        Status st = validate(run.cfg);
        if (!st.ok()) {
          return st.with_context("--vary " + label + ": case '" + c + "', variant '" + run.variant +
                                 "'");
        }
        out.runs.push_back(std::move(run));
        out.run_point.push_back(p);
      }
    }
  }
  return out;
}

}  // namespace faultline::cli
