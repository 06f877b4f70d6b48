// fuzz_recording.cc — the binary recording format (docs/trace_format.md):
// the input is a recording file, read whole and, with incomplete ones
// allowed, as the replay reads it.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "workload/recording.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline::workload;
  const std::string path =
      faultline::fuzz::write_file("rec.flr", {reinterpret_cast<const char*>(data), size});
  (void)read_recording(path, false);
  if (auto reader = RecordingReader::open(path, true); reader.ok()) {
    std::vector<Event> batch(256);
    while ((*reader)->next(batch) > 0) {
    }
    (void)(*reader)->status();
  }
  return 0;
}
