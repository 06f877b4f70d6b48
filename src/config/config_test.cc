// config_test.cc — the key table: every kernel switch round-trips from
// `--set kernel.<name>=...` to the resolved profile under every release, and
// every choice key takes exactly the names of its enum.
#include "faultline/config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace faultline {
namespace {

std::map<std::string, std::string> keys_of(const Config& c) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : effective_keys(c)) out[k] = v;
  return out;
}

// A value of a switch's type other than v, as text and as the value.
std::pair<std::string, bool> other(bool v) { return {v ? "false" : "true", !v}; }
std::pair<std::string, uint32_t> other(uint32_t v) {
  const uint32_t o = v == 4096 ? 8192 : 4096;
  return {std::to_string(o), o};
}

TEST(KernelSwitches, EverySwitchRoundTripsUnderEveryRelease) {
  int checked = 0;
  for (const auto& r : enum_names(mm::Release{})) {
    // (the macro below substitutes each switch for `name`)
    const std::string release(r.name);
    const mm::Release id = r.value;
    SCOPED_TRACE(release);
    const mm::KernelProfile base = mm::kernel_profile(id);
    EXPECT_EQ(base.release, id);
#define FAULTLINE_X(type, name, by_release, doc)                                      \
  {                                                                                   \
    SCOPED_TRACE(#name);                                                              \
    Config c;                                                                         \
    ASSERT_TRUE(set_key(c, "kernel.profile", release).ok());                          \
    const auto [text, value] = other(base.name);                                      \
    const Status st = set_key(c, "kernel." #name, text);                              \
    ASSERT_TRUE(st.ok()) << st.message();                                             \
    const mm::KernelProfile got = resolve_profile(c.kernel);                          \
    EXPECT_EQ(got.name, value);                                                       \
    EXPECT_EQ(got.release, id);                                                       \
    /* Every other switch keeps the release's value, and the keys show the result. */ \
    Config plain;                                                                     \
    plain.kernel.profile = id;                                                        \
    std::map<std::string, std::string> keys = keys_of(c), before = keys_of(plain);    \
    EXPECT_EQ(keys.at("kernel." #name), text);                                        \
    keys.erase("kernel." #name);                                                      \
    before.erase("kernel." #name);                                                    \
    EXPECT_EQ(keys, before);                                                          \
    ++checked;                                                                        \
  }
    FAULTLINE_KERNEL_SWITCHES(FAULTLINE_X)
#undef FAULTLINE_X
  }
  EXPECT_EQ(checked, static_cast<int>(mm::kNrReleases * switch_docs().size()));
}

// The resolved profile has every field of the release's own: an override
// that was never set changes nothing.
TEST(KernelSwitches, UnsetOverridesKeepTheRelease) {
  for (const auto& rel : enum_names(mm::Release{})) {
    KernelConfig kc;
    kc.profile = rel.value;
    const mm::KernelProfile got = resolve_profile(kc);
    const mm::KernelProfile want = mm::kernel_profile(rel.value);
#define FAULTLINE_X(type, name, by_release, doc) EXPECT_EQ(got.name, want.name) << #name;
    FAULTLINE_KERNEL_SWITCHES(FAULTLINE_X)
#undef FAULTLINE_X
  }
  // The default release is what a default-constructed profile holds.
  const mm::KernelProfile def;
  const mm::KernelProfile want = mm::kernel_profile(mm::kDefaultRelease);
#define FAULTLINE_X(type, name, by_release, doc) EXPECT_EQ(def.name, want.name) << #name;
  FAULTLINE_KERNEL_SWITCHES(FAULTLINE_X)
#undef FAULTLINE_X
}

// validate(c) fails, and its message holds `what`.
void expect_invalid(const Config& c, const std::string& what) {
  const Status st = validate(c);
  EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
}

// Files up to 1 PiB; mappings below x86-64's 128 TiB of user space.
TEST(Limits, FileSizeAndMappingLength) {
  Config c;
  ASSERT_TRUE(set_key(c, "file.size", "1PiB").ok());
  ASSERT_TRUE(set_key(c, "access.method", "read").ok());
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
  ASSERT_TRUE(set_key(c, "file.size", "1025TiB").ok());
  expect_invalid(c, "file.size: at most 1 PiB");
  ASSERT_TRUE(set_key(c, "file.size", "128TiB").ok());
  EXPECT_TRUE(validate(c).ok());
  ASSERT_TRUE(set_key(c, "access.method", "mmap").ok());
  expect_invalid(c, "mapping.length: a mapping of 128 TiB does not fit");
  ASSERT_TRUE(set_key(c, "mapping.length", "64TiB").ok());
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
}

TEST(Limits, ConcurrentWorkloadKeys) {
  Config c;
  ASSERT_TRUE(set_key(c, "access.workload", "pft").ok());
  ASSERT_TRUE(set_key(c, "access.zap", "false").ok());
  expect_invalid(c, "access.passes: more than one pass needs access.zap");
  ASSERT_TRUE(set_key(c, "access.passes", "1").ok());
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
  ASSERT_TRUE(set_key(c, "smp.line_read_hold", "1.5").ok());
  expect_invalid(c, "smp.line_read_hold: a fraction, at most 1");
  ASSERT_TRUE(set_key(c, "smp.line_read_hold", "0").ok());
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
  // A spread of transfer times makes the timed order depend on the seed.
  EXPECT_FALSE(depends_on_seed(c));
  ASSERT_TRUE(set_key(c, "smp.line_spread", "0.6").ok());
  expect_invalid(c, "smp.line_spread: a coefficient of variation, at most 0.5");
  ASSERT_TRUE(set_key(c, "smp.line_spread", "0.1").ok());
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
  EXPECT_TRUE(depends_on_seed(c));
  ASSERT_TRUE(set_key(c, "access.interleave", "lockstep").ok());
  EXPECT_FALSE(depends_on_seed(c));
}

// The device's times are durations: none may be negative.
TEST(Limits, DeviceTimes) {
  Config c;
  ASSERT_TRUE(set_key(c, "device.request_us", "43.5").ok());
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
  ASSERT_TRUE(set_key(c, "device.request_us", "-1").ok());
  expect_invalid(c, "device.request_us: must not be negative");
  ASSERT_TRUE(set_key(c, "device.request_us", "0").ok());
  ASSERT_TRUE(set_key(c, "device.latency_us", "-1").ok());
  expect_invalid(c, "device.latency_us: must not be negative");
}

TEST(KernelSwitches, BadValuesNameTheKey) {
  Config c;
  Status st = set_key(c, "kernel.mmap_miss_p1", "maybe");
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("kernel.mmap_miss_p1: expected true or false"), std::string::npos);
  st = set_key(c, "kernel.fault_around_bytes", "-1");
  EXPECT_NE(st.message().find("kernel.fault_around_bytes: expected a non-negative integer"),
            std::string::npos);
  st = set_key(c, "kernel.profile", "5.4");
  EXPECT_NE(st.message().find("one of 6.9, 6.15, 6.18, 7.1, 7.4"), std::string::npos)
      << st.message();
}

// A choice key accepts each name of its enum and nothing else, and its
// error lists them all.
template <typename E>
void check_choice(const std::string& key) {
  SCOPED_TRACE(key);
  for (const auto& [value, name] : enum_names(E{})) {
    Config c;
    ASSERT_TRUE(set_key(c, key, std::string(name)).ok()) << name;
    EXPECT_EQ(keys_of(c).at(key), name);
  }
  Config c;
  const Status st = set_key(c, key, "nonsense");
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("one of " + enum_choices<E>(", ")), std::string::npos)
      << st.message();
}

TEST(Choices, EveryChoiceKeyTakesTheNamesOfItsEnum) {
  check_choice<workload::FsType>("file.fs");
  check_choice<workload::CacheState>("file.cache");
  check_choice<LargeFolios>("file.large_folios");
  check_choice<mm::Fadvise>("file.fadvise");
  check_choice<mm::Madvise>("mapping.madvise");
  check_choice<workload::Pattern>("access.pattern");
  check_choice<workload::TraceFormat>("access.trace_format");
  check_choice<workload::AccessOp>("access.op");
  check_choice<workload::AccessMethod>("access.method");
  check_choice<workload::Kind>("access.workload");
  check_choice<workload::TaskSharing>("access.tasks");
  check_choice<Interleave>("access.interleave");
  check_choice<mm::Release>("kernel.profile");
}

TEST(Choices, KeyDocsShowTheChoices) {
  int seen = 0;
  for (const KeyDoc& d : key_docs()) {
    if (d.key == "file.fs") {
      EXPECT_EQ(d.type, "ext4|xfs|tmpfs");
      ++seen;
    }
    if (d.key == "kernel.profile") {
      EXPECT_EQ(d.type, "6.9|6.15|6.18|7.1|7.4");
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace faultline
