// fuzz_import.cc — the importers of other tools' output (strace, fio
// iologs, lackey with /proc/PID/maps, perf script, tracepoint text): the
// first byte picks the format; the input is the tool's output, then after
// a line "--" the maps file lackey and perf read. A recording that comes
// out is read back.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "fuzz_input.h"
#include "record/import.h"
#include "workload/recording.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline;
  if (size == 0) return 0;
  const auto format = static_cast<record::ImportFormat>(data[0] % 5);
  // The corpus names its files under /tmp/flh (as import_test's excerpts
  // do); they are made, sparse, in this process's directory.
  static const bool made = [] {
    for (const char* name : {"data.bin", "a.bin", "b.bin", "t"}) {
      const std::string p = fuzz::write_file(name, "");
      std::filesystem::resize_file(p, 32 << 20);
    }
    return true;
  }();
  (void)made;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (size_t at = text.find("/tmp/flh"); at != std::string::npos;
       at = text.find("/tmp/flh", at + fuzz::scratch_dir().size())) {
    text.replace(at, 8, fuzz::scratch_dir());
  }
  const std::vector<std::string> parts = fuzz::split_parts(text);
  const std::string in = fuzz::write_file("tool.out", parts[0]);
  record::ImportOptions o;
  o.version = "fuzz";
  o.maps = fuzz::write_file("maps", parts.size() > 1 ? parts[1] : std::string());
  const std::string out = fuzz::scratch_dir() + "/imported.flr";
  if (auto r = record::import_recording(format, in, out, o); r.ok()) {
    if (!workload::read_recording(out).ok()) __builtin_trap();  // what we write, we read
  }
  return 0;
}
