// procfs_test.cc — the probe's readers of kernel text (procfs.h, and the
// line and "key value" parsers of sys.h they build on), on canned copies of
// /proc/vmstat, memory.stat, /proc/self/status, /sys/block/<dev>/stat and
// sysfs attributes as a 6.18 kernel writes them, and on empty and malformed
// text.
#include "probe/procfs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "probe/sys.h"

namespace faultline::probe {
namespace {

// /sys/block/loop0/stat: 17 fields since 5.5 (flush I/Os and ticks last).
constexpr const char* kLoopStat =
    "  312155      284 177903472   614926    15597     4039 33701496   162981        0    97516"
    "   778418      140        0 40710688        5     1548      505\n";

TEST(DiskFields, ReadsEveryFieldOfALoopDeviceLine) {
  const std::vector<int64_t> f = procfs::disk_fields(kLoopStat);
  ASSERT_EQ(f.size(), 17u);
  EXPECT_EQ(f[0], 312155);     // read I/Os
  EXPECT_EQ(f[1], 284);        // read merges
  EXPECT_EQ(f[2], 177903472);  // sectors read
  EXPECT_EQ(f[4], 15597);      // write I/Os
  EXPECT_EQ(f[16], 505);       // flush ticks
}

TEST(DiskFields, IdleDeviceIsAllZeros) {
  const std::vector<int64_t> f = procfs::disk_fields(
      "       0        0        0        0        0        0        0        0        0        0"
      "        0        0        0        0        0        0        0\n");
  EXPECT_EQ(f, std::vector<int64_t>(17, 0));
}

TEST(DiskFields, EmptyTextHasNoFields) {
  EXPECT_TRUE(procfs::disk_fields("").empty());
  EXPECT_TRUE(procfs::disk_fields("\n").empty());
  EXPECT_TRUE(procfs::disk_fields("   ").empty());
}

TEST(DiskFields, StopsAtTheFirstFieldThatIsNotANumber) {
  EXPECT_EQ(procfs::disk_fields("  12   34 x 56\n"), (std::vector<int64_t>{12, 34}));
  EXPECT_TRUE(procfs::disk_fields("loop0 12 34 56\n").empty());
  // A line cut short, as a too small buffer would leave it.
  EXPECT_EQ(procfs::disk_fields("  312155      284 1779"),
            (std::vector<int64_t>{312155, 284, 1779}));
}

TEST(BracketedChoice, TheBracketedWordIsTheSetting) {
  EXPECT_EQ(procfs::bracketed_choice("always [madvise] never\n"), "madvise");
  EXPECT_EQ(procfs::bracketed_choice("[always] madvise never\n"), "always");
  EXPECT_EQ(procfs::bracketed_choice("always madvise [never]\n"), "never");
  // /sys/kernel/mm/transparent_hugepage/defrag: a choice with a '+' in it.
  EXPECT_EQ(procfs::bracketed_choice("always defer defer+madvise [madvise] never\n"), "madvise");
  EXPECT_EQ(procfs::bracketed_choice("always [defer+madvise] never\n"), "defer+madvise");
}

TEST(BracketedChoice, WithoutBracketsTheTrimmedText) {
  EXPECT_EQ(procfs::bracketed_choice("  madvise\n"), "madvise");
  EXPECT_EQ(procfs::bracketed_choice(""), "");
  EXPECT_EQ(procfs::bracketed_choice("\n"), "");
}

TEST(BracketedChoice, MalformedBracketsGiveTheTrimmedText) {
  EXPECT_EQ(procfs::bracketed_choice("always [madvise never\n"), "always [madvise never");
  EXPECT_EQ(procfs::bracketed_choice("always madvise] never\n"), "always madvise] never");
  EXPECT_EQ(procfs::bracketed_choice(" ]always[ \n"), "]always[");
  EXPECT_EQ(procfs::bracketed_choice("always [] never"), "");
}

// The capability lines of /proc/self/status for full root; CapPrm comes
// first with another value, so a reader of the wrong line fails.
constexpr const char* kRootStatusCaps =
    "SigCgt:\t0000000000000000\n"
    "CapInh:\t0000000000000000\n"
    "CapPrm:\t0000000000000001\n"
    "CapEff:\t000001fffeffffff\n"
    "CapBnd:\t000001fffeffffff\n"
    "CapAmb:\t0000000000000000\n"
    "NoNewPrivs:\t0\n";

TEST(CapEff, ReadsTheEffectiveSetInHex) {
  const auto caps = procfs::cap_eff(kRootStatusCaps);
  ASSERT_TRUE(caps.has_value());
  EXPECT_EQ(*caps, 0x000001fffeffffffull);
  EXPECT_NE(*caps & (1ull << 21), 0u);  // CAP_SYS_ADMIN
}

TEST(CapEff, ContainerDefaultSetLacksCapSysAdmin) {
  // Docker's default capability set.
  const auto caps = procfs::cap_eff("CapPrm:\t00000000a80425fb\nCapEff:\t00000000a80425fb\n");
  ASSERT_TRUE(caps.has_value());
  EXPECT_EQ(*caps, 0xa80425fbull);
  EXPECT_EQ(*caps & (1ull << 21), 0u);
}

TEST(CapEff, AbsentWithoutTheField) {
  EXPECT_FALSE(procfs::cap_eff("").has_value());
  EXPECT_FALSE(procfs::cap_eff("Name:\tfaultline\nCapPrm:\t000001fffeffffff\n").has_value());
  EXPECT_FALSE(procfs::cap_eff("capeff:\t000001fffeffffff\n").has_value());
}

TEST(CapEff, NoHexDigitsReadAsNoCapabilities) {
  EXPECT_EQ(procfs::cap_eff("CapEff:\tzz\n"), std::optional<uint64_t>(0));
  EXPECT_EQ(procfs::cap_eff("CapEff:"), std::optional<uint64_t>(0));
}

TEST(FaultAroundBytes, ReadsTheDebugfsValue) {
  EXPECT_EQ(procfs::fault_around_bytes("65536\n"), 65536);
  EXPECT_EQ(procfs::fault_around_bytes("4096"), 4096);
  EXPECT_EQ(procfs::fault_around_bytes("  16384 bytes\n"), 16384);
}

TEST(FaultAroundBytes, NoNumberReadsAsZero) {
  EXPECT_EQ(procfs::fault_around_bytes(""), 0);
  EXPECT_EQ(procfs::fault_around_bytes("\n"), 0);
  EXPECT_EQ(procfs::fault_around_bytes("n/a\n"), 0);
}

TEST(SysfsNumber, ReadsAOneNumberAttribute) {
  EXPECT_EQ(procfs::sysfs_number("1280\n"), std::optional<double>(1280));
  EXPECT_EQ(procfs::sysfs_number("  128 \n"), std::optional<double>(128));
  EXPECT_EQ(procfs::sysfs_number("512 KiB\n"), std::optional<double>(512));
}

TEST(SysfsNumber, NoNumberOrOutOfRangeIsAbsent) {
  EXPECT_FALSE(procfs::sysfs_number("").has_value());
  EXPECT_FALSE(procfs::sysfs_number("\n").has_value());
  EXPECT_FALSE(procfs::sysfs_number("none\n").has_value());
  EXPECT_FALSE(procfs::sysfs_number("1e999\n").has_value());
}

// Two /proc/vmstat snapshots around an access loop (excerpts, in the
// kernel's order). The loop read 1024 KiB in 256 major faults.
constexpr const char* kVmstatBefore =
    "nr_free_pages 1165599\n"
    "workingset_refault_file 11180355\n"
    "workingset_activate_file 17017\n"
    "pgpgin 178969255\n"
    "pgpgout 31790911\n"
    "pgfault 12118010\n"
    "pgmajfault 94484\n";
constexpr const char* kVmstatAfter =
    "nr_free_pages 1165343\n"
    "workingset_refault_file 11180355\n"
    "workingset_activate_file 17017\n"
    "pgpgin 178970279\n"
    "pgpgout 31790911\n"
    "pgfault 12118300\n"
    "pgmajfault 94740\n"
    "pgscan_direct 12\n";

TEST(KeyValueDeltas, AfterMinusBeforeForEveryKeyInBoth) {
  const auto d = procfs::key_value_deltas(kVmstatBefore, kVmstatAfter);
  EXPECT_EQ(d.size(), 7u);
  EXPECT_EQ(d.at("pgpgin"), 1024);
  EXPECT_EQ(d.at("pgfault"), 290);
  EXPECT_EQ(d.at("pgmajfault"), 256);
  EXPECT_EQ(d.at("pgpgout"), 0);
  EXPECT_EQ(d.at("nr_free_pages"), -256);   // a gauge can go down
  EXPECT_EQ(d.count("pgscan_direct"), 0u);  // only in the second snapshot
}

TEST(KeyValueDeltas, KeysMissingOrMalformedOnEitherSideAreLeftOut) {
  const auto d = procfs::key_value_deltas("pgfault 10\npgmajfault 1\nnr_dirty 5\n",
                                          "pgfault 15\npgmajfault x\nbogus\n");
  EXPECT_EQ(d, (std::map<std::string, int64_t>{{"pgfault", 5}}));
  EXPECT_TRUE(procfs::key_value_deltas("", kVmstatAfter).empty());
  EXPECT_TRUE(procfs::key_value_deltas(kVmstatBefore, "").empty());
  EXPECT_TRUE(procfs::key_value_deltas("", "").empty());
}

TEST(VmstatCounters, GlobalPgpginIsRenamed) {
  const Counters c = procfs::vmstat_counters(kVmstatBefore, kVmstatAfter);
  EXPECT_EQ(c.count("pgpgin"), 0u);  // kept for the probe's own device
  ASSERT_EQ(c.count("vmstat.pgpgin"), 1u);
  EXPECT_DOUBLE_EQ(c.at("vmstat.pgpgin"), 1024);
  EXPECT_DOUBLE_EQ(c.at("pgmajfault"), 256);
  EXPECT_DOUBLE_EQ(c.at("pgfault"), 290);
  EXPECT_DOUBLE_EQ(c.at("workingset_refault_file"), 0);
  EXPECT_DOUBLE_EQ(c.at("nr_free_pages"), -256);
  EXPECT_EQ(c.size(), 7u);
  EXPECT_TRUE(procfs::vmstat_counters("", "").empty());
}

TEST(MemcgCounters, V1MemoryStatIsPrefixed) {
  // cgroup v1 memory.stat: byte and event counts, and limits that stay put.
  const Counters c = procfs::memcg_counters(
      "cache 12382208\nrss 4558848\nworkingset_refault_file 314\npgpgin 23076\n"
      "pgpgout 18978\nhierarchical_memory_limit 9223372036854771712\n",
      "cache 8388608\nrss 4558848\nworkingset_refault_file 400\npgpgin 25124\n"
      "pgpgout 21026\nhierarchical_memory_limit 9223372036854771712\n");
  EXPECT_EQ(c.size(), 6u);
  EXPECT_DOUBLE_EQ(c.at("memcg.pgpgin"), 2048);
  EXPECT_DOUBLE_EQ(c.at("memcg.pgpgout"), 2048);
  EXPECT_DOUBLE_EQ(c.at("memcg.workingset_refault_file"), 86);
  EXPECT_DOUBLE_EQ(c.at("memcg.cache"), -3993600);
  EXPECT_DOUBLE_EQ(c.at("memcg.hierarchical_memory_limit"), 0);
  EXPECT_EQ(c.count("pgpgin"), 0u);
}

TEST(MemcgCounters, V2MemoryStatIsPrefixed) {
  const Counters c = procfs::memcg_counters("anon 1531904\nfile 335872\npgscan 0\npgsteal 0\n",
                                            "anon 1531904\nfile 335872\npgscan 96\npgsteal 64\n");
  EXPECT_DOUBLE_EQ(c.at("memcg.pgscan"), 96);
  EXPECT_DOUBLE_EQ(c.at("memcg.pgsteal"), 64);
  EXPECT_DOUBLE_EQ(c.at("memcg.anon"), 0);
  EXPECT_TRUE(procfs::memcg_counters("", "pgscan 1\n").empty());
}

TEST(MincoreResident, CountsBitZeroOnly) {
  EXPECT_EQ(procfs::mincore_resident({}), 0);
  const std::vector<unsigned char> vec = {0, 1, 0, 1, 1};
  EXPECT_EQ(procfs::mincore_resident(vec), 3);
  // The other bits are reserved: set alone, they do not make a page resident.
  const std::vector<unsigned char> reserved = {0x80, 0x81, 0xfe, 0xff, 0x02};
  EXPECT_EQ(procfs::mincore_resident(reserved), 2);
}

// /proc/self/status lines around the RSS counters, as 6.18 writes them.
constexpr const char* kStatus =
    "Name:\tfaultline\n"
    "VmRSS:\t    1784 kB\n"
    "RssAnon:\t     148 kB\n"
    "RssFile:\t    1780 kB\n"
    "RssShmem:\t       0 kB\n"
    "VmSwap:\t       0 kB\n"
    "Threads:\t1\n"
    "CapEff:\t000001fffeffffff\n";

TEST(StatusField, ReadsTheNumberAfterTheKey) {
  EXPECT_EQ(sys::status_field(kStatus, "RssFile"), 1780);
  EXPECT_EQ(sys::status_field(kStatus, "RssAnon"), 148);
  EXPECT_EQ(sys::status_field(kStatus, "RssShmem"), 0);
  EXPECT_EQ(sys::status_field(kStatus, "Threads"), 1);
  EXPECT_EQ(sys::status_field("Name:\tx\nRssFile:\t  65536 kB", "RssFile"), 65536);  // no '\n'
}

TEST(StatusField, PrefixesAndAbsentKeysAreMinusOne) {
  EXPECT_EQ(sys::status_field(kStatus, "Rss"), -1);  // not RssAnon
  EXPECT_EQ(sys::status_field(kStatus, "Vm"), -1);
  EXPECT_EQ(sys::status_field(kStatus, "HugetlbPages"), -1);
  EXPECT_EQ(sys::status_field(kStatus, "rssfile"), -1);
}

TEST(StatusField, EmptyOrMalformedIsMinusOne) {
  EXPECT_EQ(sys::status_field("", "RssFile"), -1);
  EXPECT_EQ(sys::status_field("RssFile:\tn/a kB\n", "RssFile"), -1);
  EXPECT_EQ(sys::status_field("RssFile:\n", "RssFile"), -1);
  EXPECT_EQ(sys::status_field("RssFile 1780 kB\n", "RssFile"), -1);  // no ':'
}

TEST(StatusField, KeysWithBlanksAsInTracefsStats) {
  // /sys/kernel/tracing/per_cpu/cpuN/stats
  constexpr const char* kStats =
      "entries: 4096\noverrun: 17\ncommit overrun: 0\nbytes: 196608\n"
      "oldest event ts:  5128.020004\nnow ts:  5130.404114\ndropped events: 3\n"
      "read events: 0\n";
  EXPECT_EQ(sys::status_field(kStats, "overrun"), 17);
  EXPECT_EQ(sys::status_field(kStats, "dropped events"), 3);
  EXPECT_EQ(sys::status_field(kStats, "commit overrun"), 0);
}

TEST(ParseKeyValues, ReadsKeyValueLines) {
  auto kv = sys::parse_key_values("pgpgin 12\npgfault 99\nbogus\nnr_x -3\n");
  EXPECT_EQ(kv.size(), 3u);
  EXPECT_EQ(kv["pgpgin"], 12);
  EXPECT_EQ(kv["pgfault"], 99);
  EXPECT_EQ(kv["nr_x"], -3);
}

TEST(ParseKeyValues, SkipsEmptyMalformedAndOutOfRangeLines) {
  EXPECT_TRUE(sys::parse_key_values("").empty());
  EXPECT_TRUE(sys::parse_key_values("\n\n").empty());
  const auto kv = sys::parse_key_values(
      " leading 1\nnovalue \nword abc\nhuge 99999999999999999999\n"
      "hierarchical_memory_limit 9223372036854771712\noom_kill 2");
  EXPECT_EQ(kv, (std::map<std::string, int64_t>{{"hierarchical_memory_limit", 9223372036854771712},
                                                {"oom_kill", 2}}));
}

TEST(SplitLines, CutsAtNewlinesWithoutThem) {
  EXPECT_TRUE(sys::split_lines("").empty());
  EXPECT_EQ(sys::split_lines("a\nb"), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(sys::split_lines("a\n\nb\n"), (std::vector<std::string_view>{"a", "", "b"}));
}

}  // namespace
}  // namespace faultline::probe
