// pft_host.cc — seeds 2 and 3's workloads on this machine's kernel, to set
// beside the model's (bench/macro/pft_bench.cc, scenarios/seed2-*.toml,
// scenarios/seed3-*.toml).
//
//   pft            N threads (one anonymous VMA, each its own slice) or N
//                  processes (a VMA each) write one byte per 4 KiB page of
//                  their slice, then MADV_DONTNEED it; `passes` times. THP is
//                  off for the region (MADV_NOHUGEPAGE), so every touch is
//                  one 4 KiB anonymous fault; one untimed pass first
//                  allocates the page tables and the anon_vma.
//   lat_pagefault  one task maps a cached file (written with real data, so
//                  its pages are in the page cache), reads one byte per page
//                  in order, unmaps it; each fault maps a fault-around
//                  window. (lmbench's lat_pagefault touches the pages in a
//                  random permutation; in order, every fault maps a whole
//                  window, which is the path seed 3 changed.)
//
// pft is the probe's own (faultline::probe::run_pft). Faults are counted
// with getrusage(ru_minflt); throughput is faults over the wall time from a
// common start to the last task's end. Each figure is the median, min and
// max of --reps repetitions.
//
//   pft_host [--threads 1,2] [--slice-mb 64] [--passes 4] [--reps 7]
//            [--file PATH] [--file-mb 64] [--no-pft] [--no-lat]
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "probe/pft.h"
#include "util/spread.h"

namespace {

constexpr size_t kPage = 4096;
constexpr unsigned kMaxTasks = 64;  // as the probe's pft allows

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t minflt(int who) {
  rusage ru;
  getrusage(who, &ru);
  return static_cast<uint64_t>(ru.ru_minflt);
}

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

std::string make_file(const std::string& path, size_t bytes) {
  const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
  if (fd < 0) die("open(file)");
  std::vector<char> buf(1 << 20);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i * 131 + 7);
  for (size_t done = 0; done < bytes; done += buf.size()) {
    if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) die("write");
  }
  close(fd);
  return path;
}

struct LatSample {
  double ns_per_fault;
  double pages_per_fault;
};

LatSample lat_pagefault(const std::string& path, size_t bytes) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) die("open(file)");
  void* m = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) die("mmap(file)");
  const volatile char* p = static_cast<const char*>(m);
  const uint64_t f0 = minflt(RUSAGE_SELF);
  const double t0 = now_s();
  unsigned sum = 0;
  for (size_t off = 0; off < bytes; off += kPage) sum += static_cast<unsigned char>(p[off]);
  const double t1 = now_s();
  const uint64_t faults = minflt(RUSAGE_SELF) - f0;
  munmap(m, bytes);
  close(fd);
  if (sum == 0xdeadbeef) std::puts("");  // keep the loads
  const double f = static_cast<double>(std::max<uint64_t>(faults, 1));
  return {(t1 - t0) * 1e9 / f, static_cast<double>(bytes / kPage) / f};
}

std::vector<unsigned> parse_list(const char* s) {
  std::vector<unsigned> out;
  for (const char* p = s; *p;) {
    out.push_back(static_cast<unsigned>(std::strtoul(p, const_cast<char**>(&p), 10)));
    if (*p == ',')
      ++p;
    else if (*p)
      break;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<unsigned> threads = {1, 2};
  size_t slice_mb = 64, file_mb = 64;
  int passes = 4, reps = 7;
  bool do_pft = true, do_lat = true;
  std::string file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "pft_host: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads")
      threads = parse_list(next());
    else if (a == "--slice-mb")
      slice_mb = std::strtoul(next(), nullptr, 10);
    else if (a == "--passes")
      passes = std::atoi(next());
    else if (a == "--reps")
      reps = std::atoi(next());
    else if (a == "--file")
      file = next();
    else if (a == "--file-mb")
      file_mb = std::strtoul(next(), nullptr, 10);
    else if (a == "--no-pft")
      do_pft = false;
    else if (a == "--no-lat")
      do_lat = false;
    else {
      std::fprintf(stderr,
                   "usage: pft_host [--threads 1,2] [--slice-mb 64] [--passes 4] "
                   "[--reps 7] [--file PATH] [--file-mb 64] [--no-pft] [--no-lat]\n");
      return 2;
    }
  }
  for (unsigned n : threads) {
    if (n < 1 || n > kMaxTasks) {
      std::fprintf(stderr, "pft_host: --threads: 1 to %u\n", kMaxTasks);
      return 2;
    }
  }
  utsname u;
  uname(&u);
  std::printf("host kernel %s, %u CPUs; median [min, max] of %d repetitions\n", u.release,
              std::thread::hardware_concurrency(), reps);
  if (do_pft) {
    // The same pft the probe runs for `faultline compare` (src/probe/pft.cc).
    const size_t slice = slice_mb << 20;
    using faultline::workload::TaskSharing;
    for (const TaskSharing mode : {TaskSharing::kThreads, TaskSharing::kProcesses}) {
      for (unsigned n : threads) {
        faultline::probe::PftRequest req;
        req.threads = n;
        req.tasks = mode;
        req.region_bytes = slice * n;
        req.passes = passes;
        req.repetitions = reps;
        faultline::probe::Result out;
        const faultline::Status st = faultline::probe::run_pft(req, &out, nullptr);
        if (!st.ok()) {
          std::fprintf(stderr, "pft_host: %s\n", st.message().c_str());
          return 1;
        }
        const auto s = faultline::probe::spread(out.runs, "faults_per_s");
        const double pages = static_cast<double>(slice / kPage) * passes * n;
        std::printf(
            "pft %-9s t=%-2u %3zu MiB/task x %d passes: %7.3f M faults/s [%7.3f, %7.3f]"
            "  (%.3f faults/page)\n",
            std::string(faultline::enum_name(mode)).c_str(), n, slice_mb, passes, s.median / 1e6,
            s.min / 1e6, s.max / 1e6, faultline::probe::spread(out.runs, "minflt").median / pages);
      }
    }
  }
  if (do_lat) {
    const bool temp = file.empty();
    if (temp) {
      char tmpl[] = "/tmp/pft_host.XXXXXX";
      const int fd = mkstemp(tmpl);
      if (fd < 0) die("mkstemp");
      close(fd);
      file = tmpl;
    }
    make_file(file, file_mb << 20);
    std::vector<double> ns, ppf;
    lat_pagefault(file, file_mb << 20);  // warm-up
    for (int r = 0; r < reps; ++r) {
      const LatSample s = lat_pagefault(file, file_mb << 20);
      ns.push_back(s.ns_per_fault);
      ppf.push_back(s.pages_per_fault);
    }
    const faultline::Spread s = faultline::spread_of(ns);
    const double pages = faultline::spread_of(ppf).median;
    std::printf(
        "lat_pagefault %s %zu MiB: %8.1f ns/fault [%8.1f, %8.1f]  (%.2f pages/fault, "
        "%.1f ns/page)\n",
        file.c_str(), file_mb, s.median, s.min, s.max, pages, s.median / pages);
    if (temp) unlink(file.c_str());
  }
  return 0;
}
