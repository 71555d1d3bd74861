// Per-worker IPv4 neighbour cache (ARP): learned and static entries, resolution with a bounded
// queue of waiting packets, probe retries, staleness and garbage collection. Fixed capacity,
// no allocation after construction. Linear probing with backward-shift deletion. When full,
// the least recently used entry that nothing waits on (failed, stale, or learned but never
// used for output) makes room; an entry never changes port on what a sender says.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "net/addr.h"
#include "net/headers.h"

struct rte_mbuf;

namespace xvs::stack {

enum class NeighState : uint8_t { Empty, Incomplete, Reachable, Stale, Failed, Static };

struct NeighTimes {
    uint64_t reachable_ms = 30'000;  // Reachable -> Stale after this long without confirmation
    uint64_t retrans_ms = 1'000;     // ARP probe interval
    unsigned max_probes = 3;         // probes before Incomplete -> Failed
    uint64_t gc_ms = 300'000;        // Stale/Failed entries unused this long are removed
};

struct NeighEntry {
    net::InetAddr addr;
    NeighState state = NeighState::Empty;
    uint8_t port = 0;
    uint8_t probes = 0;
    uint8_t npending = 0;
    net::MacAddr mac{};
    uint64_t confirmed_ms = 0;  // last reply / learn
    uint64_t used_ms = 0;       // last output through it; 0: learned, never used
    uint64_t next_probe_ms = 0;
    static constexpr unsigned kMaxPending = 4;  // per entry (Linux: unres_qlen_bytes)
    std::array<rte_mbuf*, kMaxPending> pending{};
};

class Neighbours {
public:
  // Slots are addressed by 16-bit indexes in conns' next-hop caches (stack/nh_cache.h).
  static constexpr size_t kMaxSlots = size_t{1} << 15;
  explicit Neighbours(size_t capacity = 4096, NeighTimes times = {});

  NeighEntry* find(const net::InetAddr& addr);
  const NeighEntry* find(const net::InetAddr& addr) const;
  // Finds or creates (Incomplete) an entry; nullptr when the table is full.
  NeighEntry* get_or_create(const net::InetAddr& addr, uint8_t port, uint64_t now_ms);
  // Records a MAC learned from ARP on `port`; `create` false only updates an existing entry.
  // Returns the entry (now Reachable), or nullptr: no entry (table full or !create), or the
  // entry belongs to another port (never moved by a sender's claim).
  NeighEntry* learn(const net::InetAddr& addr, const net::MacAddr& mac, uint8_t port,
                    uint64_t now_ms, bool create);
  void add_static(const net::InetAddr& addr, const net::MacAddr& mac, uint8_t port);
  void remove(const net::InetAddr& addr);

  // Packets waiting in all entries; bounded by the output path (kMaxPendingTotal).
  uint32_t pending_total = 0;

  const NeighTimes& times() const { return times_; }
  size_t size() const { return size_; }
  size_t capacity() const { return table_.size() * 3 / 4; }
  uint64_t evictions() const { return evictions_; }
  // Hash slots (live when state != Empty), for dumps that resume at a slot (lb/command.h).
  size_t slot_count() const { return table_.size(); }
  const NeighEntry& slot(size_t i) const { return table_[i]; }
  NeighEntry& slot(size_t i) { return table_[i]; }
  uint16_t index_of(const NeighEntry* e) const { return static_cast<uint16_t>(e - table_.data()); }

  // Next hops cached under another generation are stale. It changes whenever an entry moves
  // or goes (deletion shifts entries), changes its MAC or port, and on every new snapshot
  // (the routes may differ): stack/output.cpp. Never 0, which a cache uses for "empty".
  uint16_t generation() const { return gen_; }
  void invalidate_cached() {
      if (++gen_ == 0) gen_ = 1;
  }
    template <typename F>
    void for_each(F&& f) {
        for (auto& e : table_)
            if (e.state != NeighState::Empty) f(e);
    }

private:
  size_t slot_of(const net::InetAddr& addr) const;
  void erase_at(size_t i);
  bool evict_one();

  std::vector<NeighEntry> table_;
  size_t mask_;
  size_t size_ = 0;
  uint64_t evictions_ = 0;
  uint16_t gen_ = 1;
  NeighTimes times_;
};

}  // namespace xvs::stack
