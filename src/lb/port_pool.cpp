// PortPool: a FIFO ring of free ports plus a used bitmap over all 65536 ports. FIFO order means
// a freed port goes to the back and is reused as late as possible, which keeps a just-closed
// 5-tuple out of the RS's TIME_WAIT for as long as the pool allows.
#include "lb/port_pool.h"

#include <utility>

namespace xvs::lb {

namespace {

// splitmix64 (Steele, Lea, Flood 2014): a tiny, well-mixed generator; only the seed needs to
// make the order unpredictable from outside, not cryptographic strength.
uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

constexpr size_t kPortSpace = 65536;

}  // namespace

PortPool::PortPool(uint16_t lo, uint16_t hi, unsigned worker, unsigned nworkers, uint64_t seed)
    : used_bits_(kPortSpace / 64, 0) {
    if (nworkers == 0) nworkers = 1;
    if (lo <= hi) {
        for (uint32_t port = lo; port <= hi; ++port) {
            if (port % nworkers == worker) ring_.push_back(static_cast<uint16_t>(port));
        }
    }
    if (seed != 0 && ring_.size() > 1) {
        // Fisher-Yates; the modulo bias of 64-bit draws over <= 65536 items is negligible.
        uint64_t state = seed;
        for (size_t i = ring_.size() - 1; i > 0; --i) {
            const size_t j = splitmix64(state) % (i + 1);
            std::swap(ring_[i], ring_[j]);
        }
    }
    count_ = ring_.size();
}

std::optional<uint16_t> PortPool::alloc() {
    if (count_ == 0) {
        ++exhausted_;
        return std::nullopt;
    }
    const uint16_t port = ring_[head_];
    head_ = head_ + 1 == ring_.size() ? 0 : head_ + 1;
    --count_;
    used_bits_[port / 64] |= uint64_t{1} << (port % 64);
    return port;
}

void PortPool::free(uint16_t port) {
    // Only ports handed out by alloc() carry a used bit, so this also rejects ports of other
    // workers and outside lo..hi, and double frees: the ring can never overflow.
    if (!in_use(port)) {
        ++bad_frees_;
        return;
    }
    used_bits_[port / 64] &= ~(uint64_t{1} << (port % 64));
    size_t tail = head_ + count_;
    if (tail >= ring_.size()) tail -= ring_.size();
    ring_[tail] = port;
    ++count_;
}

bool PortPool::in_use(uint16_t port) const {
    return (used_bits_[port / 64] >> (port % 64)) & 1;
}

}  // namespace xvs::lb
