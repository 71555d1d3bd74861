// The next hops of one connection, cached on it (DESIGN.md "Packet path": next hop cached on
// the conn, generation-checked): for each direction the neighbour slot its last packet left
// through, valid while gen equals the worker's Neighbours::generation(). A hit skips the route
// scan and the neighbour hash lookup; anything not plainly usable (stale, incomplete, another
// generation) takes the full path, which refills the cache. Six bytes, inside Conn's 128.
#pragma once

#include <cstdint>

namespace xvs::stack {

enum class NhDir : uint8_t { ToDest = 0, ToClient = 1 };

struct NhCache {
    static constexpr uint16_t kNone = 0xffff;
    uint16_t slot[2] = {kNone, kNone};  // by NhDir
    uint16_t gen = 0;                   // 0: empty (generations start at 1)
};

// Which cache entry a packet uses: a conn's cache and the direction of the packet.
struct NhRef {
    NhCache* cache = nullptr;  // nullptr: no caching (frames the stack builds for itself)
    NhDir dir = NhDir::ToDest;
};

}  // namespace xvs::stack
