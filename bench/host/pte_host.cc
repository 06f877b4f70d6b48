// pte_host.cc — what a load through a freshly set PTE costs on this machine,
// beside what the kernel's fault path costs: the measurements behind the
// model's per-PTE and per-access costs (cpu.map_page_ns, cpu.access_ns,
// cpu.fault_ns) on a given host.
//
// A memfd of --pages pages is written once (its shmem folios are order 0
// and stay cached), then mapped again and again, read-only and shared:
//
//   populate      mmap(MAP_POPULATE): the kernel sets every PTE
//                 (filemap_map_pages through faultin_page) and the task has
//                 touched none: ns per page of the mmap call;
//   first pass    one load per page through those PTEs, in page order or in
//                 a random permutation: ns per page. On bare metal or with
//                 nested paging this is a TLB miss; in a guest whose
//                 hypervisor shadows the page tables, the hypervisor's own
//                 fault that fills its entry for the PTE;
//   second pass   the same loads again: ns per page;
//   faults        a plain mapping read at a stride of 1 and of 16 pages
//                 (fault-around maps 16 PTEs per fault by default): ns per
//                 fault, and the faults counted by getrusage(ru_minflt);
//   zap           PTEs set by MAP_POPULATE cleared again, by madvise
//                 (MADV_DONTNEED) of 1 or 32 pages at a time (one TLB flush
//                 per call, as reclaim flushes once per batch of folios it
//                 unmaps) or by munmap of the whole mapping: ns per page,
//                 once with no page loaded and once with every page loaded
//                 first. A hypervisor that shadows the page tables has its
//                 own entries for the loaded PTEs to drop as well.
//
// Each figure is the median of --reps repetitions, with their min and max.
//
//   pte_host [--pages 32768] [--reps 5]
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "util/spread.h"

namespace {

constexpr size_t kPage = 4096;

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t minflt() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_minflt);
}

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "pte_host: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// One figure's repetitions, printed as "median  [min, max]".
struct Figure {
  std::vector<double> v;
  void add(double x) { v.push_back(x); }
  std::string text() const {
    const faultline::Spread s = faultline::spread_of(v);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%9.0f  [%.0f, %.0f]", s.median, s.min, s.max);
    return buf;
  }
};

volatile char* map(int fd, size_t bytes, int extra) {
  void* p = mmap(nullptr, bytes, PROT_READ, MAP_SHARED | extra, fd, 0);
  if (p == MAP_FAILED) die("mmap");
  return static_cast<volatile char*>(p);
}

// One load per page of `order` (page numbers); returns a sum the compiler
// cannot drop.
unsigned touch(volatile char* p, const std::vector<size_t>& order) {
  unsigned s = 0;
  for (size_t i : order) s += static_cast<unsigned char>(p[i * kPage]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  size_t pages = 32768;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--pages" && i + 1 < argc) {
      pages = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: pte_host [--pages N] [--reps N]\n");
      return 2;
    }
  }
  if (pages < 16 || reps < 1) {
    std::fprintf(stderr, "pte_host: --pages must be at least 16 and --reps at least 1\n");
    return 2;
  }
  const size_t bytes = pages * kPage;
  const int fd = memfd_create("pte_host", 0);
  if (fd < 0) die("memfd_create");
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) die("ftruncate");
  {
    void* w = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (w == MAP_FAILED) die("mmap");
    for (size_t off = 0; off < bytes; off += kPage) static_cast<char*>(w)[off] = 1;
    munmap(w, bytes);
  }
  std::vector<size_t> in_order(pages);
  std::iota(in_order.begin(), in_order.end(), size_t{0});
  std::vector<size_t> shuffled = in_order;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(1));

  unsigned sink = 0;
  Figure populate, first_seq, second_seq, first_rand, second_rand;
  for (int r = 0; r < reps; ++r) {
    for (const bool random : {false, true}) {
      const std::vector<size_t>& order = random ? shuffled : in_order;
      const double t0 = now_s();
      volatile char* p = map(fd, bytes, MAP_POPULATE);
      const double t1 = now_s();
      sink += touch(p, order);
      const double t2 = now_s();
      sink += touch(p, order);
      const double t3 = now_s();
      munmap(const_cast<char*>(p), bytes);
      const double n = static_cast<double>(pages);
      populate.add((t1 - t0) / n * 1e9);
      (random ? first_rand : first_seq).add((t2 - t1) / n * 1e9);
      (random ? second_rand : second_seq).add((t3 - t2) / n * 1e9);
    }
  }
  Figure fault[2];
  uint64_t faults[2] = {0, 0};
  const size_t strides[2] = {1, 16};
  for (int r = 0; r < reps; ++r) {
    for (int s = 0; s < 2; ++s) {
      std::vector<size_t> order;
      for (size_t i = 0; i < pages; i += strides[s]) order.push_back(i);
      const uint64_t f0 = minflt();
      volatile char* p = map(fd, bytes, 0);
      const double t0 = now_s();
      sink += touch(p, order);
      const double t1 = now_s();
      munmap(const_cast<char*>(p), bytes);
      faults[s] = minflt() - f0;
      fault[s].add((t1 - t0) / static_cast<double>(std::max<uint64_t>(faults[s], 1)) * 1e9);
    }
  }
  // zap[batch][loaded]: batch 0 is munmap of the whole mapping; the others
  // time the madvise calls alone, not the munmap of what they left.
  constexpr size_t batches[] = {0, 1, 32, 64, 512};
  constexpr size_t kBatches = std::size(batches);
  Figure zap[kBatches][2];
  for (int r = 0; r < reps; ++r) {
    for (size_t b = 0; b < kBatches; ++b) {
      for (int loaded = 0; loaded < 2; ++loaded) {
        volatile char* p = map(fd, bytes, MAP_POPULATE);
        if (loaded) sink += touch(p, in_order);
        const double t0 = now_s();
        for (size_t i = 0; batches[b] != 0 && i < pages; i += batches[b]) {
          const size_t n = std::min(batches[b], pages - i);
          if (madvise(const_cast<char*>(p) + i * kPage, n * kPage, MADV_DONTNEED) != 0) {
            die("madvise");
          }
        }
        if (batches[b] == 0) munmap(const_cast<char*>(p), bytes);
        const double t1 = now_s();
        if (batches[b] != 0) munmap(const_cast<char*>(p), bytes);
        zap[b][loaded].add((t1 - t0) / static_cast<double>(pages) * 1e9);
      }
    }
  }
  close(fd);

  utsname u{};
  uname(&u);
  std::printf("pte_host: %s, kernel %s; %zu pages of a memfd, median [min, max] of %d\n\n",
              u.nodename, u.release, pages, reps);
  std::printf("%-46s %s\n", "step", "ns per page  [min, max]");
  std::printf("%-46s %s\n", "mmap(MAP_POPULATE): the kernel sets the PTEs",
              populate.text().c_str());
  std::printf("%-46s %s\n", "first load through a PTE, page order", first_seq.text().c_str());
  std::printf("%-46s %s\n", "second load, page order", second_seq.text().c_str());
  std::printf("%-46s %s\n", "first load through a PTE, random order", first_rand.text().c_str());
  std::printf("%-46s %s\n", "second load, random order", second_rand.text().c_str());
  std::printf("\n%-46s %s\n", "faults of a plain mapping", "ns per fault [min, max]");
  for (int s = 0; s < 2; ++s) {
    char what[96];
    std::snprintf(what, sizeof what, "stride %zu: %llu faults, %zu loads", strides[s],
                  static_cast<unsigned long long>(faults[s]),
                  (pages + strides[s] - 1) / strides[s]);
    std::printf("%-46s %s\n", what, fault[s].text().c_str());
  }
  std::printf("\n%-46s %s\n", "PTEs cleared", "ns per page  [min, max]");
  for (size_t b = 0; b < kBatches; ++b) {
    for (int loaded = 0; loaded < 2; ++loaded) {
      char what[96];
      if (batches[b] == 0) {
        std::snprintf(what, sizeof what, "munmap, %s",
                      loaded ? "every page loaded" : "none loaded");
      } else {
        std::snprintf(what, sizeof what, "MADV_DONTNEED of %zu, %s", batches[b],
                      loaded ? "every page loaded" : "none loaded");
      }
      std::printf("%-46s %s\n", what, zap[b][loaded].text().c_str());
    }
  }
  return sink == 0xdeadbeef ? 1 : 0;  // keeps the loads
}
