// IP fragment reassembly, address-family neutral and DPDK-free: a bounded table of datagrams
// in flight, each the list of byte ranges of its fragmentable part received so far, copied into
// a buffer the caller attaches when the datagram's first fragment arrives. Everything is
// allocated by the constructor (worker start); add() never allocates.
//
// Overlap policy (RFC 5722 for IPv6, applied to IPv4 too): a fragment that overlaps any byte
// already received drops the whole datagram, except an exact duplicate of a stored fragment
// (same offset and length, RFC 8200 4.5 allows ignoring those), which is dropped alone. IPv4
// receivers may in principle merge overlaps (RFC 791), but overlapping fragments are the stuff
// of evasion attacks (RFC 1858, Teardrop), never produced by a correct sender, and a director
// must not forward a datagram whose bytes depend on which fragment it believed.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "net/addr.h"

namespace xvs::net {

// Which datagram a fragment belongs to. IPv4 (RFC 791): source, destination, protocol and the
// 16-bit identification. IPv6 (RFC 8200 4.5): source, destination and the fragment header's
// 32-bit identification, proto 0.
struct ReasmKey {
    InetAddr src;
    InetAddr dst;
    uint32_t id = 0;
    uint8_t proto = 0;
    bool operator==(const ReasmKey& o) const {
        return src == o.src && dst == o.dst && id == o.id && proto == o.proto;
    }
};

struct ReasmLimits {
    uint32_t max_datagrams = 64;  // datagrams in flight (per worker)
    uint32_t max_fragments = 64;  // fragments stored per datagram
    uint32_t timeout_ms = 5000;   // from the first fragment seen to completion
};

enum class ReasmStatus : uint8_t {
    Held,              // stored; the datagram is not complete yet
    Complete,          // this fragment completed the datagram: take(slot) it
    Duplicate,         // exact duplicate of a stored fragment: this fragment dropped
    TableFull,         // no free datagram slot: this fragment dropped
    NoBuffer,          // no buffer for a new datagram (the allocator failed): fragment dropped
    BadLength,         // a non-last fragment not a multiple of 8 bytes or empty: fragment
                       // dropped; or an end inconsistent with the last fragment's: datagram too
    TooBig,            // the datagram would exceed max_payload: fragment and datagram dropped
    TooManyFragments,  // beyond max_fragments: fragment and datagram dropped
    Overlap,           // overlaps received bytes: fragment and datagram dropped
};

struct ReasmResult {
    ReasmStatus status = ReasmStatus::Held;
    uint32_t slot = 0;           // Held/Complete: the datagram's slot
    bool first = false;          // Held/Complete: this fragment is the one at offset 0
    uint32_t freed_frags = 0;    // fragments of a datagram dropped with this one (not counting it)
    void* freed_user = nullptr;  // that datagram's buffer owner, for the caller to free
};

// What the caller's allocator gives a new datagram: payload bytes go to buf[offset].
struct ReasmBuffer {
    uint8_t* buf = nullptr;
    uint32_t cap = 0;      // bytes of payload the buffer holds (the datagram's size limit)
    void* user = nullptr;  // the owner (an mbuf); nullptr: allocation failed
};

class Reassembler {
  public:
    struct Datagram {
        ReasmKey key;
        uint64_t deadline_ms = 0;
        uint8_t* buf = nullptr;
        void* user = nullptr;
        uint32_t cap = 0;
        uint32_t received = 0;  // payload bytes stored
        uint32_t total = 0;     // payload length, known once the last fragment arrived
        uint32_t nfrags = 0;    // fragments stored (incl. an empty last one)
        uint32_t nranges = 0;
        uint32_t next = kNone;   // hash chain
        uint32_t older = kNone;  // age list (creation order = deadline order)
        uint32_t newer = kNone;
        uint16_t aux = 0;  // the caller's: e.g. the first fragment's header length
        bool has_last = false;
        bool used = false;
    };
    static constexpr uint32_t kNone = 0xffffffffu;

    explicit Reassembler(const ReasmLimits& limits = {});

    // Stores the fragment with payload [offset, offset + len) of the datagram key. more: more
    // fragments follow (IPv4 MF, IPv6 M). max_payload: the protocol's limit on the datagram's
    // payload (IPv4: 65535 minus the header length; IPv6: 65535 minus the unfragmentable
    // extension headers); the buffer's cap limits it further. alloc() is called once per new
    // datagram and returns a ReasmBuffer (user nullptr on failure).
    template <class Alloc>
    ReasmResult add(const ReasmKey& key, uint32_t offset, uint32_t len, bool more,
                    const uint8_t* data, uint32_t max_payload, uint64_t now_ms, Alloc&& alloc);

    // A completed datagram leaves the table; its user (buffer owner) goes to the caller.
    void* take(uint32_t slot);
    Datagram& datagram(uint32_t slot) { return slots_[slot]; }
    const Datagram& datagram(uint32_t slot) const { return slots_[slot]; }

    // Drops every datagram whose deadline passed: fn(user, nfrags) for each, oldest first.
    template <class Fn>
    void expire(uint64_t now_ms, Fn&& fn) {
        while (oldest_ != kNone && slots_[oldest_].deadline_ms <= now_ms) drop_slot(oldest_, fn);
    }
    // Drops every datagram (worker stop).
    template <class Fn>
    void release_all(Fn&& fn) {
        while (oldest_ != kNone) drop_slot(oldest_, fn);
    }

    uint32_t in_flight() const { return in_flight_; }
    uint64_t held_fragments() const { return held_frags_; }
    const ReasmLimits& limits() const { return limits_; }

  private:
    struct Range {
        uint32_t start;
        uint32_t end;
    };
    uint32_t bucket_of(const ReasmKey& key) const;
    uint32_t find(const ReasmKey& key) const;
    uint32_t create(const ReasmKey& key, uint64_t now_ms);
    void unlink(uint32_t slot);  // out of the hash chain, the age list; slot free again
    template <class Fn>
    void drop_slot(uint32_t slot, Fn& fn) {
        Datagram& d = slots_[slot];
        void* user = d.user;
        const uint32_t n = d.nfrags;
        unlink(slot);
        fn(user, n);
    }
    // The fragment against the stored ranges: its status (Held, Complete, Duplicate, Overlap,
    // TooManyFragments, BadLength); stores and copies it on Held/Complete.
    ReasmStatus insert(uint32_t slot, uint32_t offset, uint32_t len, bool more,
                       const uint8_t* data);
    ReasmResult drop_with(uint32_t slot, ReasmStatus why);

    ReasmLimits limits_;
    std::vector<Datagram> slots_;
    std::vector<Range> ranges_;  // max_fragments per slot
    std::vector<uint32_t> buckets_;
    std::vector<uint32_t> free_;  // free slot stack
    uint32_t nfree_ = 0;
    uint32_t mask_ = 0;
    uint32_t oldest_ = kNone;
    uint32_t newest_ = kNone;
    uint32_t in_flight_ = 0;
    uint64_t held_frags_ = 0;
};

template <class Alloc>
ReasmResult Reassembler::add(const ReasmKey& key, uint32_t offset, uint32_t len, bool more,
                             const uint8_t* data, uint32_t max_payload, uint64_t now_ms,
                             Alloc&& alloc) {
    ReasmResult r;
    // RFC 8200 4.5 / RFC 791: every fragment but the last carries a multiple of 8 bytes.
    if (more && (len == 0 || len % 8 != 0)) {
        r.status = ReasmStatus::BadLength;
        return r;
    }
    uint32_t slot = find(key);
    const uint64_t end = uint64_t{offset} + len;
    if (end > max_payload) {  // RFC 8200 4.5: would exceed 65535 bytes; or beyond our limit
        if (slot != kNone) return drop_with(slot, ReasmStatus::TooBig);
        r.status = ReasmStatus::TooBig;
        return r;
    }
    if (slot == kNone) {
        if (nfree_ == 0) {
            r.status = ReasmStatus::TableFull;
            return r;
        }
        const ReasmBuffer b = alloc();
        if (!b.user) {
            r.status = ReasmStatus::NoBuffer;
            return r;
        }
        if (end > b.cap) {  // this one alone exceeds what we can hold
            r.status = ReasmStatus::TooBig;
            r.freed_user = b.user;  // the caller frees the unused buffer
            return r;
        }
        slot = create(key, now_ms);
        Datagram& d = slots_[slot];
        d.buf = b.buf;
        d.cap = b.cap;
        d.user = b.user;
    } else if (end > slots_[slot].cap) {
        return drop_with(slot, ReasmStatus::TooBig);
    }
    const ReasmStatus s = insert(slot, offset, len, more, data);
    switch (s) {
        case ReasmStatus::Held:
        case ReasmStatus::Complete:
            r.status = s;
            r.slot = slot;
            r.first = offset == 0;
            return r;
        case ReasmStatus::Duplicate:
            r.status = s;
            return r;
        default:
            return drop_with(slot, s);
    }
}

}  // namespace xvs::net
