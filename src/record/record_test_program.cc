// record_test_program.cc — a program whose file accesses record_test knows:
//   record_test_program FILE [fail|kill|crash|hang]
// reads FILE with pread, read, lseek and readv, maps it and touches pages
// 0, 5, 5 and 100, stores to page 3 of a private mapping, lets a thread
// pread it through a second open and a forked child touch page 7, then
// unmaps and closes; exits 3 with "fail", dies of SIGKILL with "kill", of
// SIGABRT with "crash", and with "hang" waits for a signal.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int fd = open(argv[1], O_RDONLY);
  if (fd < 0) return 2;
  char buf[8192];
  if (pread(fd, buf, 4096, 8192) != 4096) return 2;
  if (read(fd, buf, 4096) != 4096 || read(fd, buf, 4096) != 4096) return 2;
  lseek(fd, 100, SEEK_SET);
  if (read(fd, buf, 10) != 10) return 2;
  struct iovec iov[2] = {{buf, 100}, {buf + 100, 200}};
  if (readv(fd, iov, 2) != 300) return 2;  // at 110
  const size_t len = 1 << 20;
  auto* m = static_cast<volatile char*>(mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0));
  if (m == MAP_FAILED) return 2;
  madvise(const_cast<char*>(m), len, MADV_RANDOM);
  int sum = m[0] + m[5 * 4096] + m[5 * 4096 + 1] + m[100 * 4096];
  auto* p = static_cast<volatile char*>(
      mmap(nullptr, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
  if (p == MAP_FAILED) return 2;
  p[3 * 4096] = 1;
  std::thread t([&] {
    const int fd2 = open(argv[1], O_RDONLY);
    char b[4096];
    if (pread(fd2, b, 4096, 40960) != 4096) _exit(2);
    close(fd2);
  });
  t.join();
  const pid_t child = fork();
  if (child == 0) _exit(m[7 * 4096] == 42 ? 1 : 0);
  int ws = 0;
  waitpid(child, &ws, 0);
  munmap(const_cast<char*>(m), len);
  munmap(const_cast<char*>(p), 16 * 4096);
  close(fd);
  if (argc > 2 && std::strcmp(argv[2], "fail") == 0) return 3;
  if (argc > 2 && std::strcmp(argv[2], "kill") == 0) raise(SIGKILL);
  if (argc > 2 && std::strcmp(argv[2], "crash") == 0) std::abort();
  if (argc > 2 && std::strcmp(argv[2], "hang") == 0) {
    for (;;) pause();
  }
  return sum == 12345678 ? 1 : 0;
}
