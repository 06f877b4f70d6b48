// record_workload.cc — the program record_bench records:
//   record_workload FILE N
// N loads of random pages through a MAP_SHARED mapping of FILE, then N
// pread64 calls of 4 KiB at random page offsets. The same random sequence
// every run.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const int fd = open(argv[1], O_RDONLY);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) return 2;
  const uint64_t pages = static_cast<uint64_t>(st.st_size) / 4096;
  const long n = std::atol(argv[2]);
  auto* m = static_cast<volatile char*>(mmap(nullptr, pages * 4096, PROT_READ, MAP_SHARED, fd, 0));
  if (m == MAP_FAILED) return 2;
  uint64_t x = 1, sum = 0;
  for (long i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    sum += static_cast<unsigned char>(m[((x >> 20) % pages) * 4096]);
  }
  char buf[4096];
  for (long i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    if (pread(fd, buf, sizeof buf, static_cast<off_t>(((x >> 20) % pages) * 4096)) < 0) return 2;
  }
  return sum == 1 ? 1 : 0;
}
