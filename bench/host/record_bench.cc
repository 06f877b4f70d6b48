// record_bench.cc — what `faultline record` costs the program it records.
//
//   record_bench [N]   (default 1000000)
// runs record_workload (N page touches of a 256 MiB file through a mapping,
// then N 4 KiB preads) natively and under the recorder, with the file in
// the page cache both times, and prints both wall times, the recorder's
// cost per recorded event, and the recording's size per event. The cost is
// that of ptrace (strace stops the program at each traced system call and
// each SIGSEGV of the shim) and of the shim's fault handling.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "record/recorder.h"

#ifndef FAULTLINE_RECORD_WORKLOAD
#error "FAULTLINE_RECORD_WORKLOAD must name the record_workload program"
#endif

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  const fs::path dir =
      fs::temp_directory_path() / ("faultline-record-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string data = (dir / "data.bin").string();
  {
    std::ofstream out(data, std::ios::binary);
    std::string chunk(1 << 20, 'x');
    for (int i = 0; i < 256; ++i) out << chunk;
  }
  const std::string n_text = std::to_string(n);
  // Native, after a run that brings the file into the page cache.
  auto native = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t p = fork();
    if (p == 0) {
      execl(FAULTLINE_RECORD_WORKLOAD, "record_workload", data.c_str(), n_text.c_str(), nullptr);
      _exit(127);
    }
    int ws = 0;
    waitpid(p, &ws, 0);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  native();
  const double native_s = native();
  faultline::record::RecordOptions o;
  o.command = {FAULTLINE_RECORD_WORKLOAD, data, n_text};
  o.output = (dir / "r.flr").string();
  o.preload = FAULTLINE_PRELOAD_SO;
  o.version = "bench";
  const auto t0 = std::chrono::steady_clock::now();
  auto rep = faultline::record::record_command(o);
  const double recorded_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!rep.ok()) {
    std::fprintf(stderr, "record_bench: %s\n", rep.status().message().c_str());
    fs::remove_all(dir);
    return 1;
  }
  const double size = static_cast<double>(fs::file_size(o.output));
  std::printf("record_bench: %ld page touches and %ld preads of a 256 MiB cached file\n", n, n);
  std::printf("  native                 %9.3f s\n", native_s);
  std::printf("  under faultline record %9.3f s (the program %.3f s, then the merge)\n", recorded_s,
              rep->wall_s);
  std::printf("  recorded: %llu events, %llu system calls, %llu page touches (first per epoch)\n",
              static_cast<unsigned long long>(rep->events),
              static_cast<unsigned long long>(rep->syscalls),
              static_cast<unsigned long long>(rep->touches));
  std::printf("  cost per recorded event %.1f us; recording %.2f bytes/event\n",
              (rep->wall_s - native_s) * 1e6 / static_cast<double>(rep->syscalls + rep->touches),
              size / static_cast<double>(rep->events));
  fs::remove_all(dir);
  return 0;
}
