// The IPv4/IPv6 neighbour table: learned and static entries, resolution with a bounded queue of
// waiting packets, probe retries, staleness and garbage collection. Fixed capacity, no allocation
// after construction. Linear probing with backward-shift deletion. When full, the least recently
// used entry that nothing waits on (failed, stale, or learned but never used for output) makes
// room; an entry never changes port on what a sender says.
//
// One table serves every worker (stack/neigh_shared.h). Its owner worker is the only writer and
// the only one that touches NeighEntry. A shared table also keeps a published copy of each slot
// (address, and state + port + MAC in one 64-bit word) that any worker reads lock-free: a
// per-slot sequence counter makes a torn entry visible to the reader, which then treats the
// address as unresolved; and the generation, bumped before any slot changes address, tells the
// readers' next-hop caches (stack/nh_cache.h) that a cached slot may hold another neighbour.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
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

// The owner's entry (owner thread only).
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

// What every worker may read of an entry, packed in one word so that state, port and MAC are
// always of one moment: state bits 0-7, port 8-15, MAC bytes 16-63.
struct NeighLink {
    NeighState state = NeighState::Empty;
    uint8_t port = 0;
    net::MacAddr mac{};

    // What a reader may send through: a stale MAC is still used (as the owner does) while the
    // owner probes it (neigh_tick, on the readers' use).
    bool sendable() const {
        return state == NeighState::Reachable || state == NeighState::Static ||
               state == NeighState::Stale;
    }
    uint64_t pack() const {
        uint64_t v = uint64_t(state) | uint64_t(port) << 8;
        for (unsigned i = 0; i < 6; ++i) v |= uint64_t(mac.b[i]) << (16 + 8 * i);
        return v;
    }
    static NeighLink unpack(uint64_t v) {
        NeighLink l;
        l.state = static_cast<NeighState>(v & 0xff);
        l.port = static_cast<uint8_t>(v >> 8);
        for (unsigned i = 0; i < 6; ++i) l.mac.b[i] = static_cast<uint8_t>(v >> (16 + 8 * i));
        return l;
    }
};

class Neighbours {
public:
  // Slots are addressed by 16-bit indexes in conns' next-hop caches (stack/nh_cache.h).
  static constexpr size_t kMaxSlots = size_t{1} << 15;
  // shared: other threads read the table (publish every change); false: the owner alone uses
  // it (one worker) and nothing is published.
  explicit Neighbours(size_t capacity = 4096, NeighTimes times = {}, bool shared = false);
  Neighbours(const Neighbours&) = delete;
  Neighbours& operator=(const Neighbours&) = delete;

  // ---- Owner side (the one writer). ----
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
  // Makes a change to e's state, port or MAC visible to the readers (the methods above publish
  // their own changes; code that edits an entry directly calls this after).
  void publish(const NeighEntry& e) {
      if (pub_) publish_at(index_of(&e));
  }
  // Empties the table (nothing may wait in it) and takes new timers: a new owner starts afresh.
  void reset(const NeighTimes& times);
  // Last output through e by any worker (readers note theirs in the published slot), and by
  // readers only (0 when none, or the table is not shared).
  uint64_t used_ms(const NeighEntry& e) const;
  uint64_t reader_used_ms(const NeighEntry& e) const {
      return pub_ ? pub_[index_of(&e)].used_ms.load(std::memory_order_relaxed) : 0;
  }

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
  // or goes (deletion shifts entries), changes its MAC or port (stack/output.cpp); each worker
  // adds its own epoch for new snapshots (StackContext::nh_epoch). Any thread reads it. Even
  // while the table is stable; odd while the owner moves entries between slots, when readers
  // cache no slot (a slot they found may be emptied or refilled before the moves end). Never 0.
  uint16_t generation() const { return gen_.load(std::memory_order_acquire); }
  void invalidate_cached() { bump_generation(2); }
    template <typename F>
    void for_each(F&& f) {
        for (auto& e : table_)
            if (e.state != NeighState::Empty) f(e);
    }

  // ---- Reader side (any worker, lock-free; shared tables only). ----
  bool shared() const { return pub_ != nullptr; }
  // The published entry of addr. False: none, or its slot is being rewritten (the caller treats
  // the address as unresolved). slot: where it is; gen: the generation it was found under, or 0
  // when the table changed meanwhile (link is still a consistent entry; do not cache slot).
  bool lookup(const net::InetAddr& addr, NeighLink& link, uint16_t& slot, uint16_t& gen) const;
  // The published link of a slot cached under generation gen; false when the table is at
  // another generation (the slot may hold another neighbour now) or gen is odd.
  bool read(uint16_t slot, uint16_t gen, NeighLink& link) const;
  // Notes that a reader sent through slot (at most one store a second per slot, so the shared
  // line is not written per packet): keeps eviction and GC from taking it, and has the owner
  // probe it when stale.
  static constexpr uint64_t kTouchMs = 1000;
  void touch(uint16_t slot, uint64_t now_ms) const {
      std::atomic<uint64_t>& u = pub_[slot].used_ms;
      const uint64_t last = u.load(std::memory_order_relaxed);
      if (last == 0 || now_ms >= last + kTouchMs)
          u.store(now_ms ? now_ms : 1, std::memory_order_relaxed);
  }

private:
  size_t slot_of(const net::InetAddr& addr) const;
  void erase_at(size_t i);
  bool evict_one();
  void publish_at(size_t i);
  // Release: a reader that sees the new value sees every slot written before it. The odd
  // value before moves is ordered before their slot writes by publish_at's fence.
  void bump_generation(uint16_t by) {
      auto g = static_cast<uint16_t>(gen_.load(std::memory_order_relaxed) + by);
      if (g == 0) g = 2;
      gen_.store(g, std::memory_order_release);
  }

  // A slot as readers see it.
  struct Published {
      std::atomic<uint32_t> seq{0};  // odd while the owner rewrites the slot
      std::atomic<uint64_t> addr[2] = {};
      std::atomic<uint64_t> link{0};     // NeighLink::pack
      std::atomic<uint64_t> used_ms{0};  // readers' last output through it (touch)
  };

  std::vector<NeighEntry> table_;
  std::unique_ptr<Published[]> pub_;  // shared tables: one per slot of table_
  size_t mask_;
  size_t size_ = 0;
  uint64_t evictions_ = 0;
  // Its own line: every reader loads it per packet, and the owner's counters above change.
  alignas(64) std::atomic<uint16_t> gen_{2};
  NeighTimes times_;
};

}  // namespace xvs::stack
