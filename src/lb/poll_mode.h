// How a worker waits when its queues are empty: Busy spins (lowest latency, one core at 100%),
// Adaptive backs off into short sleeps after idle polls. Config (`worker_defs { poll_mode }`)
// and the worker loop both use this one enum.
#pragma once

#include <cstdint>

namespace xvs::lb {

enum class PollMode : uint8_t { Busy, Adaptive };

}  // namespace xvs::lb
