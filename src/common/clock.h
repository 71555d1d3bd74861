// The one monotonic clock every thread shares: CLOCK_MONOTONIC in milliseconds. Workers read it
// once per poll (vDSO, no syscall) and the control thread reads it for its periodic work, so
// values agree across threads; SYN cookie counters depend on that (a cookie minted by one worker
// is checked by another, and the control plane rotates the keys by the same counter).
#pragma once

#include <time.h>

#include <cstdint>

namespace xvs {

inline uint64_t monotonic_ms() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1'000'000;
}

}  // namespace xvs
