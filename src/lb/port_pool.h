// Local-port allocator for one FULLNAT local address on one worker. Ports lo..hi whose
// `port % nworkers == worker` belong to this worker (DESIGN.md: return traffic is steered by
// local port). A port is never handed out twice while in use. Storage is preallocated at
// construction; alloc/free never allocate.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace xvs::lb {

class PortPool {
public:
    // seed shuffles the initial order so ports are not predictable (0 = identity order).
    PortPool(uint16_t lo = 1025, uint16_t hi = 65535, unsigned worker = 0, unsigned nworkers = 1,
             uint64_t seed = 0);

    // A free port in host order, or nullopt when every port is in use (counted).
    std::optional<uint16_t> alloc();
    // Returns a port obtained from alloc(). Freeing a port not in use is ignored and counted.
    void free(uint16_t port);

    size_t capacity() const { return ring_.size(); }
    size_t available() const { return count_; }
    bool in_use(uint16_t port) const;
    uint64_t exhausted() const { return exhausted_; }
    uint64_t bad_frees() const { return bad_frees_; }

private:
    std::vector<uint16_t> ring_;        // circular FIFO of free ports
    std::vector<uint64_t> used_bits_;   // bitmap over 0..65535
    size_t head_ = 0;                   // next to hand out
    size_t count_ = 0;                  // free ports in ring
    uint64_t exhausted_ = 0;
    uint64_t bad_frees_ = 0;
};

}  // namespace xvs::lb
