// Fragment reassembly table (net/reasm.h): slots, hash chains, an age list for timeouts and
// per-datagram sorted byte ranges, all sized once by the constructor.
#include "net/reasm.h"

#include <algorithm>

namespace xvs::net {

namespace {
uint64_t mix64(uint64_t x) {  // SplitMix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
}  // namespace

Reassembler::Reassembler(const ReasmLimits& limits) : limits_(limits) {
    limits_.max_datagrams = std::max<uint32_t>(limits_.max_datagrams, 1);
    limits_.max_fragments = std::max<uint32_t>(limits_.max_fragments, 1);
    slots_.resize(limits_.max_datagrams);
    ranges_.resize(size_t{limits_.max_datagrams} * limits_.max_fragments);
    uint32_t nb = 1;
    while (nb < 2 * limits_.max_datagrams) nb <<= 1;
    buckets_.assign(nb, kNone);
    mask_ = nb - 1;
    free_.resize(limits_.max_datagrams);
    for (uint32_t i = 0; i < limits_.max_datagrams; ++i) free_[i] = limits_.max_datagrams - 1 - i;
    nfree_ = limits_.max_datagrams;
}

uint32_t Reassembler::bucket_of(const ReasmKey& key) const {
    const uint64_t h = mix64(key.src.fold() ^ mix64(key.dst.fold() + key.id) ^ key.proto);
    return static_cast<uint32_t>(h) & mask_;
}

uint32_t Reassembler::find(const ReasmKey& key) const {
    for (uint32_t s = buckets_[bucket_of(key)]; s != kNone; s = slots_[s].next)
        if (slots_[s].key == key) return s;
    return kNone;
}

uint32_t Reassembler::create(const ReasmKey& key, uint64_t now_ms) {
    const uint32_t s = free_[--nfree_];
    Datagram& d = slots_[s];
    d = Datagram{};
    d.key = key;
    d.used = true;
    d.deadline_ms = now_ms + limits_.timeout_ms;
    const uint32_t b = bucket_of(key);
    d.next = buckets_[b];
    buckets_[b] = s;
    // Every datagram has the same timeout, so creation order is deadline order.
    d.older = newest_;
    if (newest_ != kNone) slots_[newest_].newer = s;
    newest_ = s;
    if (oldest_ == kNone) oldest_ = s;
    ++in_flight_;
    return s;
}

void Reassembler::unlink(uint32_t s) {
    Datagram& d = slots_[s];
    uint32_t* link = &buckets_[bucket_of(d.key)];
    while (*link != s) link = &slots_[*link].next;
    *link = d.next;
    if (d.older != kNone)
        slots_[d.older].newer = d.newer;
    else
        oldest_ = d.newer;
    if (d.newer != kNone)
        slots_[d.newer].older = d.older;
    else
        newest_ = d.older;
    held_frags_ -= d.nfrags;
    --in_flight_;
    d.used = false;
    d.user = nullptr;
    free_[nfree_++] = s;
}

void* Reassembler::take(uint32_t slot) {
    void* user = slots_[slot].user;
    unlink(slot);
    return user;
}

ReasmResult Reassembler::drop_with(uint32_t slot, ReasmStatus why) {
    ReasmResult r;
    r.status = why;
    r.freed_frags = slots_[slot].nfrags;
    r.freed_user = take(slot);
    return r;
}

ReasmStatus Reassembler::insert(uint32_t slot, uint32_t offset, uint32_t len, bool more,
                                const uint8_t* data) {
    Datagram& d = slots_[slot];
    const uint32_t end = offset + len;
    Range* rs = &ranges_[size_t{slot} * limits_.max_fragments];
    // The last fragment fixes the length: nothing may end beyond it, and a second last
    // fragment must agree (else the datagram is corrupt: BadLength drops it).
    if (!more) {
        if (d.has_last) {
            if (end != d.total) return ReasmStatus::BadLength;
        } else if (d.nranges && rs[d.nranges - 1].end > end) {
            return ReasmStatus::BadLength;
        }
    } else if (d.has_last && end > d.total) {
        return ReasmStatus::BadLength;
    }
    // Position by start; the ranges are sorted and disjoint.
    uint32_t pos = 0;
    while (pos < d.nranges && rs[pos].start < offset) ++pos;
    if (len == 0) {  // an empty last fragment: only its end counts
        if (d.has_last) return ReasmStatus::Duplicate;
    } else {
        if (pos < d.nranges && rs[pos].start == offset && rs[pos].end == end)
            return ReasmStatus::Duplicate;
        if (pos > 0 && rs[pos - 1].end > offset) return ReasmStatus::Overlap;
        if (pos < d.nranges && rs[pos].start < end) return ReasmStatus::Overlap;
        if (d.nfrags >= limits_.max_fragments) return ReasmStatus::TooManyFragments;
        std::memmove(rs + pos + 1, rs + pos, (d.nranges - pos) * sizeof(Range));
        rs[pos] = Range{offset, end};
        ++d.nranges;
        std::memcpy(d.buf + offset, data, len);
        d.received += len;
    }
    if (len == 0 && d.nfrags >= limits_.max_fragments) return ReasmStatus::TooManyFragments;
    if (!more) {
        d.has_last = true;
        d.total = end;
    }
    ++d.nfrags;
    ++held_frags_;
    return d.has_last && d.received == d.total ? ReasmStatus::Complete : ReasmStatus::Held;
}

}  // namespace xvs::net
