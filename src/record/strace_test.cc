// strace_test.cc — the strace log reader on lines strace 6.1 printed.
#include "record/strace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace faultline::record {
namespace {

Call parse(const std::string& line, bool* ok = nullptr) {
  StraceParser p;
  Call c;
  const bool r = p.parse(line, &c);
  if (ok) *ok = r;
  EXPECT_TRUE(ok || r) << line;
  return c;
}

TEST(Strace, OpensReadsAndTheirFiles) {
  Call c = parse(
      "15017 1796246206.457122 openat(AT_FDCWD</tmp>, \"/tmp/data.bin\", O_RDONLY|O_CLOEXEC) = "
      "3</tmp/data.bin>");
  EXPECT_EQ(c.kind, CallKind::kOpen);
  EXPECT_EQ(c.tid, 15017u);
  EXPECT_EQ(c.time_ns, 1796246206457122000ull);
  EXPECT_EQ(c.ret_fd, 3);
  EXPECT_EQ(c.path, "/tmp/data.bin");
  EXPECT_TRUE(c.cloexec);
  EXPECT_FALSE(c.write);
  c = parse("1 1.000001 openat(AT_FDCWD</x>, \"f\", O_RDWR|O_CREAT, 0644) = 4</x/f>");
  EXPECT_TRUE(c.write);
  // strace pads a tid shorter than five digits.
  c = parse("2620  1796248857.568572 read(3</tmp/data.bin>, \"\"..., 512) = 512");
  EXPECT_EQ(c.kind, CallKind::kRead);
  EXPECT_EQ(c.tid, 2620u);
  EXPECT_EQ(c.time_ns, 1796248857568572000u);
  EXPECT_EQ(c.length, 512u);

  // strace -tt: the time of day.
  c = parse("2620  14:07:37.568572 read(3</tmp/data.bin>, \"\"..., 512) = 512");
  EXPECT_EQ(c.kind, CallKind::kRead);
  EXPECT_EQ(c.time_ns, (14 * 3600 + 7 * 60 + 37) * 1000000000ull + 568572000ull);

  c = parse("15017 1796246206.457161 read(3</tmp/data.bin>, \"\"..., 4096) = 4096");
  EXPECT_EQ(c.kind, CallKind::kRead);
  EXPECT_EQ(c.fd, 3);
  EXPECT_EQ(c.path, "/tmp/data.bin");
  EXPECT_EQ(c.length, 4096u);
  c = parse("15018 1796246206.457932 pread64(4</tmp/data.bin>, \"\"..., 4096, 8192) = 4096");
  EXPECT_EQ(c.kind, CallKind::kPread);
  EXPECT_EQ(c.offset, 8192u);
  c = parse("15017 1796246206.457251 readv(3</tmp/data.bin>, [...], 2) = 300");
  EXPECT_EQ(c.kind, CallKind::kRead);
  EXPECT_EQ(c.length, 300u);  // the vector's lengths are elided: what it returned
  c = parse("15017 1796246206.457282 preadv(3</tmp/data.bin>, [...], 2, 0x2000) = 300");
  EXPECT_EQ(c.kind, CallKind::kPread);
  EXPECT_EQ(c.offset, 0x2000u);
  c = parse("15017 1796246206.457195 lseek(3</tmp/data.bin>, 100, SEEK_SET) = 100");
  EXPECT_EQ(c.kind, CallKind::kLseek);
  EXPECT_EQ(c.ret, 100);
}

TEST(Strace, MappingsAndAdvice) {
  Call c = parse(
      "15017 1796246206.457311 mmap(NULL, 1048576, PROT_READ, MAP_SHARED, 3</tmp/data.bin>, "
      "0x1000) = 0x7f36695df000");
  EXPECT_EQ(c.kind, CallKind::kMmap);
  EXPECT_EQ(c.length, 1048576u);
  EXPECT_EQ(c.offset, 4096u);
  EXPECT_EQ(c.addr, 0x7f36695df000u);
  EXPECT_EQ(c.prot, 1u);
  EXPECT_TRUE(c.shared);
  EXPECT_EQ(c.fd, 3);
  c = parse(
      "1 1.0 mmap(0x7f36698b7000, 53072, PROT_READ|PROT_WRITE, "
      "MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7f36698b7000");
  EXPECT_TRUE(c.anonymous);
  EXPECT_TRUE(c.fixed);
  EXPECT_FALSE(c.shared);
  EXPECT_EQ(c.prot, 3u);
  c = parse("1 1.0 madvise(0x7f36695df000, 1048576, MADV_RANDOM) = 0");
  EXPECT_EQ(c.kind, CallKind::kMadvise);
  EXPECT_EQ(c.advice, 1u);
  c = parse("1 1.0 madvise(0x7f36695df000, 4096, MADV_HUGEPAGE) = 0");
  EXPECT_EQ(c.advice, 14u);
  c = parse("1 1.0 fadvise64(3</tmp/data.bin>, 0, 0, POSIX_FADV_SEQUENTIAL) = 0");
  EXPECT_EQ(c.kind, CallKind::kFadvise);
  EXPECT_EQ(c.advice, 2u);
  c = parse("1 1.0 munmap(0x7f36695df000, 1048576) = 0");
  EXPECT_EQ(c.kind, CallKind::kMunmap);
  EXPECT_EQ(c.length, 1048576u);
  c = parse("1 1.0 mremap(0x7f0000000000, 8192, 16384, MREMAP_MAYMOVE) = 0x7f0000100000");
  EXPECT_EQ(c.kind, CallKind::kMremap);
  EXPECT_EQ(c.offset, 8192u);
  EXPECT_EQ(c.length, 16384u);
  EXPECT_EQ(c.ret, 0x7f0000100000);
}

TEST(Strace, TasksAndDescriptors) {
  Call c = parse(
      "15017 1796246206.457585 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|"
      "CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS, child_tid=0x7f36695de990, exit_signal=0, "
      "stack=0x7f3668dde000, stack_size=0x7fff80, tls=0x7f36695de6c0} => {parent_tid=[15018]}, "
      "88) = 15018");
  EXPECT_EQ(c.kind, CallKind::kClone);
  EXPECT_EQ(c.ret, 15018);
  EXPECT_TRUE(c.thread);
  EXPECT_TRUE(c.share_files);
  c = parse(
      "15017 1796246206.458193 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|"
      "CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f36696dfa10) = 15019");
  EXPECT_FALSE(c.thread);
  EXPECT_FALSE(c.share_files);
  c = parse("1 1.0 fcntl(3</d/a>, F_DUPFD_CLOEXEC, 0) = 5</d/a>");
  EXPECT_EQ(c.kind, CallKind::kDup);
  EXPECT_EQ(c.ret_fd, 5);
  EXPECT_TRUE(c.cloexec);
  c = parse("1 1.0 dup2(3</d/a>, 7) = 7</d/a>");
  EXPECT_EQ(c.fd, 3);
  EXPECT_EQ(c.ret_fd, 7);
  c = parse("15018 1796246206.458101 +++ exited with 0 +++");
  EXPECT_EQ(c.kind, CallKind::kExit);
  c = parse("15018 1796246206.458101 +++ killed by SIGKILL +++");
  EXPECT_EQ(c.kind, CallKind::kExit);
  c = parse("1 1.0 execve(\"/bin/x\", [\"x\"], 0x7ffd10036df0 /* 37 vars */) = 0");
  EXPECT_EQ(c.kind, CallKind::kExecve);
}

// A path with a comma and a parenthesis is one argument.
TEST(Strace, PathsAreOneArgument) {
  Call c = parse("1 1.0 pread64(3</d/a,b (1)>, \"\"..., 4096, 12288) = 4096");
  EXPECT_EQ(c.path, "/d/a,b (1)");
  EXPECT_EQ(c.offset, 12288u);
}

TEST(Strace, UnfinishedCallsJoinTheirRest) {
  StraceParser p;
  Call c;
  EXPECT_FALSE(p.parse("15017 1796246206.458498 dup(3</tmp/data.bin> <unfinished ...>", &c));
  EXPECT_FALSE(p.parse("15019 1796246206.458520 exit_group(0 <unfinished ...>", &c));
  ASSERT_TRUE(p.parse("15017 1796246206.458573 <... dup resumed>) = 4</tmp/data.bin>", &c));
  EXPECT_EQ(c.kind, CallKind::kDup);
  EXPECT_EQ(c.time_ns, 1796246206458498000ull);  // the call's start
  EXPECT_EQ(c.ret_fd, 4);
  EXPECT_FALSE(p.parse("15019 1796246206.458624 <... exit_group resumed>) = ?", &c));
}

TEST(Strace, FailuresAreLeftOutButEfaultIsKept) {
  bool ok = true;
  parse("1 1.0 openat(AT_FDCWD, \"/nope\", O_RDONLY) = -1 ENOENT (No such file or directory)", &ok);
  EXPECT_FALSE(ok);
  Call c = parse("1 1.0 read(3</d/a>, 0x7f0000000000, 4096) = -1 EFAULT (Bad address)");
  EXPECT_EQ(c.kind, CallKind::kEfault);
  parse("1 1.0 getpid() = 1", &ok);
  EXPECT_FALSE(ok);
}

TEST(Strace, ALogThatIsNotStracesIsNamed) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("not-strace-" + std::to_string(getpid())))
          .string();
  std::ofstream(path) << "hello\nworld\n1 1.0 close(3</d/a>) = 0\n";
  auto r = read_strace_log(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path + ":1: not an strace log"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(read_strace_log(path).status().code(), Status::Code::kNotFound);
}

// -tt's time of day goes on past midnight rather than back to zero.
TEST(Strace, TimeOfDayCrossesMidnight) {
  StraceParser p;
  Call a, b;
  ASSERT_TRUE(p.parse("7 23:59:59.900000 read(3</d/f>, \"\"..., 4096) = 4096", &a));
  ASSERT_TRUE(p.parse("7 00:00:00.100000 read(3</d/f>, \"\"..., 4096) = 4096", &b));
  EXPECT_EQ(b.time_ns - a.time_ns, 200000000u);
  Call bad;
  EXPECT_FALSE(p.parse("7 24:00:00.000000 read(3</d/f>, \"\"..., 4096) = 4096", &bad));
}

}  // namespace
}  // namespace faultline::record
