// vma_lock_test.cc — the vm_refcnt state machine of the per-VMA lock.
#include "mm/vma_lock.h"

#include <gtest/gtest.h>

namespace faultline::mm::smp {
namespace {

// One mm with one anonymous VMA [1 GiB, 1 GiB + 2 MiB), attached.
struct VmaFixture {
  VmaFixture() : mm(1, 32) {
    vma.vm_start = 1ull << 30;
    vma.vm_end = vma.vm_start + (2ull << 20);
    vma.vm_mm = &mm;
    vma_mark_attached(vma);
    mm.vmas.push_back(&vma);
    mm.vma_lines.resize(1);  // untracked lines
  }
  uint32_t refcnt() const { return vma.vm_refcnt.load(); }
  VmaReadResult read() { return vma_start_read(cpu, mm, vma, lines); }
  bool end_read() { return vma_end_read(cpu, vma, lines); }

  CpuCtx cpu;
  VmaLines lines;
  MmStruct mm;
  VmAreaStruct vma;
};

TEST(VmaLock, LayoutPutsRefcntAloneOnTheThirdLine) {
  EXPECT_EQ(sizeof(VmAreaStruct), 192u);
  EXPECT_EQ(alignof(VmAreaStruct), 64u);
  EXPECT_EQ(offsetof(VmAreaStruct, vm_refcnt) / 64, 2u);
  EXPECT_EQ(offsetof(VmAreaStruct, vm_anon_pgoff_hi) / 64, 2u);  // seed 2 patch 1's field
  EXPECT_EQ(offsetof(VmAreaStruct, vm_pgoff) / 64, 1u);          // what patch 1 reads instead
  EXPECT_EQ(offsetof(VmAreaStruct, vm_lock_seq) / 64, 0u);
}

TEST(VmaLock, ReadersCountAboveOne) {
  VmaFixture f;
  EXPECT_EQ(f.refcnt(), 1u);  // attached, unlocked
  EXPECT_EQ(f.read(), VmaReadResult::kLocked);
  EXPECT_EQ(f.refcnt(), 2u);
  EXPECT_EQ(f.read(), VmaReadResult::kLocked);
  EXPECT_EQ(f.refcnt(), 3u);
  EXPECT_FALSE(f.end_read());
  EXPECT_FALSE(f.end_read());
  EXPECT_EQ(f.refcnt(), 1u);
}

TEST(VmaLock, DetachedVmaGivesEagain) {
  VmaFixture f;
  vma_mark_detached(f.vma);
  EXPECT_EQ(f.refcnt(), 0u);
  EXPECT_EQ(f.read(), VmaReadResult::kDetached);
  EXPECT_EQ(f.refcnt(), 0u);  // readers never raise 0
  EXPECT_FALSE(vma_enter_locked(f.vma, false));
}

TEST(VmaLock, ReaderLimit) {
  VmaFixture f;
  f.vma.vm_refcnt.store(VM_REFCNT_LIMIT - 1);
  EXPECT_EQ(f.read(), VmaReadResult::kLocked);  // reaches the limit
  EXPECT_EQ(f.refcnt(), VM_REFCNT_LIMIT);
  EXPECT_EQ(f.read(), VmaReadResult::kFailed);  // would pass it
  EXPECT_EQ(f.refcnt(), VM_REFCNT_LIMIT);
  EXPECT_EQ(VM_REFCNT_EXCLUDE_READERS_FLAG, 0x40000000u);
  EXPECT_EQ(VM_REFCNT_LIMIT, 0x3fffffffu);
}

TEST(VmaLock, WriterExcludesReadersAndWaitsForThem) {
  VmaFixture f;
  ASSERT_EQ(f.read(), VmaReadResult::kLocked);  // one reader inside
  ASSERT_TRUE(vma_enter_locked(f.vma, false));
  EXPECT_EQ(f.refcnt(), VM_REFCNT_EXCLUDE_READERS_FLAG + 2);
  EXPECT_FALSE(vma_readers_gone(f.vma, false));
  EXPECT_EQ(f.read(), VmaReadResult::kFailed);  // new readers are turned away
  EXPECT_EQ(f.refcnt(), VM_REFCNT_EXCLUDE_READERS_FLAG + 2);
  EXPECT_TRUE(f.end_read());  // the last reader leaves: wake the writer
  EXPECT_TRUE(vma_readers_gone(f.vma, false));
  EXPECT_FALSE(vma_exit_locked(f.vma));  // still attached
  EXPECT_EQ(f.refcnt(), 1u);
}

TEST(VmaLock, WriteLockedVmaFailsUntilMmapWriteUnlock) {
  VmaFixture f;
  f.mm.mmap_lock.write_lock(f.cpu);
  vma_start_write(f.cpu, f.mm, f.vma, f.lines);
  EXPECT_EQ(f.refcnt(), 1u);
  EXPECT_EQ(f.vma.vm_lock_seq.load(), f.mm.mmap_lock.seq(f.cpu, std::memory_order_relaxed));
  EXPECT_EQ(f.read(), VmaReadResult::kFailed);  // vm_lock_seq == mm_lock_seq
  f.mm.mmap_lock.write_unlock(f.cpu);           // releases every VMA write lock
  EXPECT_EQ(f.read(), VmaReadResult::kLocked);
  EXPECT_FALSE(f.end_read());
}

TEST(VmaLock, DetachWithoutReaders) {
  VmaFixture f;
  ASSERT_EQ(f.read(), VmaReadResult::kLocked);
  EXPECT_FALSE(f.end_read());
  vma_mark_detached(f.vma);
  EXPECT_EQ(f.refcnt(), 0u);
}

TEST(VmaLock, LockVmaUnderRcu) {
  VmaFixture f;
  LockVmaStats st;
  EXPECT_EQ(lock_vma_under_rcu(f.cpu, f.mm, f.vma.vm_start + 4096, &st), 0);
  EXPECT_EQ(f.refcnt(), 2u);
  EXPECT_FALSE(f.end_read());
  EXPECT_EQ(lock_vma_under_rcu(f.cpu, f.mm, f.vma.vm_end, &st), -1);  // no VMA there
  EXPECT_EQ(st.abort, 1u);
  EXPECT_EQ(f.refcnt(), 1u);
}

TEST(VmaLock, MmapLockReadersAndWriter) {
  VmaFixture f;
  MmapLock& l = f.mm.mmap_lock;
  if (l.read_trylock(f.cpu)) {
    EXPECT_TRUE(l.is_locked(f.cpu));
    l.read_unlock(f.cpu);
  } else {
    ADD_FAILURE() << "read_trylock failed on a free mmap_lock";
  }
  EXPECT_FALSE(l.is_locked(f.cpu));
  const uint32_t seq = l.seq(f.cpu, std::memory_order_relaxed);
  l.write_lock(f.cpu);
  EXPECT_EQ(l.seq(f.cpu, std::memory_order_relaxed), seq + 1);  // odd: write-locked
  EXPECT_FALSE(l.read_trylock(f.cpu));
  l.write_unlock(f.cpu);
  EXPECT_EQ(l.seq(f.cpu, std::memory_order_relaxed), seq + 2);
}

}  // namespace
}  // namespace faultline::mm::smp
