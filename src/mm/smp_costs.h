// smp_costs.h — the CPU time of the concurrent model's steps and of moving
// a cache line between CPUs, for its time estimate only: no count depends
// on them.
//
// One list (X(field, nanoseconds, what it costs)); the configuration keys
// smp.FIELD and their documentation come from it. The step costs are a
// bare-metal x86 server's order of magnitude; a machine profile
// (machines/*.toml) may set any of them, and says where its figures come
// from. A transfer costs line_near_ns when the line comes from (or its
// other copies sit in) a cache of the CPU's own domain (machine.cpus_per_
// domain: the CPUs behind one last-level cache, a CCD), line_far_ns when it
// has to cross to another domain; while one transfer of a line is under
// way, the next waits for it. A read miss holds the line for line_read_hold
// of its cost (a fraction, not nanoseconds): in a directory protocol the
// home forwards the request to the owner, which keeps its copy and sends
// the data straight to the reader, so the home can take the next request
// before the data arrives; an ownership transfer (a write, an upgrade)
// keeps the home busy until the new owner has the line. 1, the default, is
// the simpler rule: every transfer holds the line for its whole cost.
// line_spread is how much one transfer's time differs from the next (a
// coefficient of variation, not nanoseconds): on a real machine the time
// depends on where the line's home and its holder sit and on the other
// traffic, and with every transfer exactly alike the timed interleaving
// can lock the CPUs into one repeating order of requests that a real
// machine never keeps. 0, the default, is that exact rule.
#pragma once

namespace faultline::mm::smp {

#define FAULTLINE_SMP_COSTS(X)                                                                    \
  X(lock_vma_ns, 40, "exception entry, maple-tree walk, vma_start_read")                          \
  X(mmap_lock_ns, 20, "mmap_read_lock instead of the per-VMA lock")                               \
  X(handle_ns, 20, "handle_mm_fault down to do_anonymous_page")                                   \
  X(alloc_zero_ns, 250, "alloc_anon_folio: allocate, charge and clear a page")                    \
  X(map_pte_ns, 40, "PTE lock, rmap, LRU batch, set_ptes")                                        \
  X(map_page_ns, 15, "each extra PTE set by fault-around")                                        \
  X(rss_add_ns, 10, "one percpu_counter_add_batch without a fold")                                \
  X(rss_fold_ns, 30, "a fold into the shared count")                                              \
  X(account_ns, 25, "mm_account_fault and the perf event")                                        \
  X(end_read_ns, 10, "vma_end_read")                                                              \
  X(return_ns, 60, "return to user space, the access executed again")                             \
  X(zap_syscall_ns, 300, "madvise(MADV_DONTNEED): entry, exit, tlb_gather_mmu")                   \
  X(zap_table_ns, 50, "zap_pte_range of one PTE table")                                           \
  X(zap_page_ns, 10, "each present PTE cleared by zap_pte_range")                                 \
  X(tlb_flush_ns, 200, "the local TLB flush of tlb_finish_mmu")                                   \
  X(ipi_send_ns, 1000, "flush_tlb_multi: waiting for the other CPUs' acknowledgements")           \
  X(ipi_recv_ns, 500, "a TLB-flush IPI on the interrupted CPU")                                   \
  X(line_near_ns, 100, "a cache line from a cache of the same domain, or invalidated only there") \
  X(line_far_ns, 100, "a cache line from another domain's cache, or invalidated there")           \
  X(line_read_hold, 1,                                                                            \
    "the part of a read miss's transfer during which the line serves no other request (a "        \
    "fraction, 0 to 1; writes hold it for the whole transfer)")                                   \
  X(line_spread, 0,                                                                               \
    "how much one transfer's time differs from the next: each is its cost times a factor drawn "  \
    "uniformly with mean 1 and this coefficient of variation (0 to 0.5), from access.seed; 0: "   \
    "every transfer takes exactly its cost")

struct SmpCosts {
#define FAULTLINE_X(name, ns, doc) double name = ns;
  FAULTLINE_SMP_COSTS(FAULTLINE_X)
#undef FAULTLINE_X
};

}  // namespace faultline::mm::smp
