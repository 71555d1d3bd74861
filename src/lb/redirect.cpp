// Worker-to-worker hand-over and the NAT owner table, see lb/redirect.h.
#include "lb/redirect.h"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <bit>
#include <cstring>
#include <string>

#include "common/flat_map.h"
#include "stack/input.h"

namespace xvs::lb {

namespace {
std::atomic<unsigned> g_redirect_seq{0};
}

OwnerTable::OwnerTable(uint32_t entries) {
    // <= 25% load over 8-way buckets with two choices: a full pair is practically never seen.
    const uint64_t buckets = std::bit_ceil(std::max<uint64_t>(2, uint64_t(entries) * 4 / kWays));
    buckets_ = std::make_unique<Bucket[]>(buckets);
    for (uint64_t b = 0; b < buckets; ++b)
        for (auto& w : buckets_[b].w) w.store(0, std::memory_order_relaxed);
    mask_ = static_cast<uint32_t>(buckets - 1);
}

OwnerTable::Hash OwnerTable::hash(const ConnKey& key) const {
    uint64_t k[5];
    std::memcpy(k, &key, sizeof k);
    uint64_t h = mix64(k[0] ^ mix64(k[1] ^ mix64(k[2] ^ mix64(k[3] ^ mix64(k[4] + 0x632be59bd9b4e019ULL)))));
    const uint64_t h2 = mix64(h ^ 0x9e3779b97f4a7c15ULL);
    uint32_t b1 = static_cast<uint32_t>(h2) & mask_;
    uint32_t b2 = static_cast<uint32_t>(h2 >> 32) & mask_;
    if (b1 == b2) b2 = (b1 + 1) & mask_;
    uint64_t tag = h & ~uint64_t{0xff};
    return Hash{b1, b2, tag};
}

bool OwnerTable::insert(const ConnKey& key, unsigned worker) {
    const Hash h = hash(key);
    const uint64_t word = h.tag | (worker + 1);  // never 0, the empty word
    for (uint32_t b : {h.b1, h.b2}) {
        for (auto& w : buckets_[b].w) {
            uint64_t expect = 0;
            if (w.load(std::memory_order_relaxed) == 0 &&
                w.compare_exchange_strong(expect, word, std::memory_order_release,
                                          std::memory_order_relaxed))
                return true;
        }
    }
    return false;
}

void OwnerTable::erase(const ConnKey& key, unsigned worker) {
    const Hash h = hash(key);
    const uint64_t word = h.tag | (worker + 1);
    for (uint32_t b : {h.b1, h.b2}) {
        for (auto& w : buckets_[b].w) {
            uint64_t expect = word;
            if (w.load(std::memory_order_relaxed) == word &&
                w.compare_exchange_strong(expect, 0, std::memory_order_release,
                                          std::memory_order_relaxed))
                return;
        }
    }
}

int OwnerTable::owner(const ConnKey& key) const {
    const Hash h = hash(key);
    for (uint32_t b : {h.b1, h.b2}) {
        for (const auto& w : buckets_[b].w) {
            const uint64_t v = w.load(std::memory_order_acquire);
            if (v && (v & ~uint64_t{0xff}) == h.tag) return static_cast<int>(v & 0xff) - 1;
        }
    }
    return -1;
}

Result<std::unique_ptr<Redirect>> Redirect::create(unsigned workers, uint32_t conns_per_worker) {
    if (workers < 2 || workers > kMaxWorkers)
        return make_error("redirect rings need 2.." + std::to_string(kMaxWorkers) + " workers");
    if (auto f = stack::tunneled_mbuf_flag_register(); !f) return make_error(f.error());
    std::unique_ptr<Redirect> r(new Redirect(workers, conns_per_worker * workers));
    const unsigned seq = g_redirect_seq++;
    for (unsigned from = 0; from < workers; ++from) {
        for (unsigned to = 0; to < workers; ++to) {
            if (from == to) continue;
            const std::string name = "xvs_rd" + std::to_string(seq) + "_" + std::to_string(from) +
                                     "_" + std::to_string(to);
            rte_ring* ring = rte_ring_create(name.c_str(), kRingSize, SOCKET_ID_ANY,
                                             RING_F_SP_ENQ | RING_F_SC_DEQ);
            if (!ring)
                return make_error("cannot create the redirect ring " + name + ": " +
                                  rte_strerror(rte_errno));
            r->rings_[from * kMaxWorkers + to] = ring;
        }
    }
    return r;
}

unsigned Redirect::drain(unsigned to) {
    unsigned n = 0;
    for (unsigned from = 0; from < n_; ++from) {
        rte_ring* ring = this->ring(from, to);
        if (!ring) continue;
        void* m;
        while (rte_ring_sc_dequeue(ring, &m) == 0) {
            rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
            ++n;
        }
    }
    return n;
}

Redirect::~Redirect() {
    for (unsigned to = 0; to < n_; ++to) drain(to);
    for (rte_ring* ring : rings_)
        if (ring) rte_ring_free(ring);
}

}  // namespace xvs::lb
