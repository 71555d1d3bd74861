// TCP sequence-number comparisons in modular 32-bit arithmetic (RFC 9293 §3.4, RFC 1982).
// a is "before" b when the signed distance b - a is positive: correct across the 2^32 wrap as
// long as the two values are less than 2^31 apart, which TCP windows guarantee.
#pragma once

#include <cstdint>

namespace xvs::net {

constexpr bool seq_lt(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a - b) < 0;
}
constexpr bool seq_le(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a - b) <= 0;
}
constexpr bool seq_gt(uint32_t a, uint32_t b) {
    return seq_lt(b, a);
}
constexpr bool seq_ge(uint32_t a, uint32_t b) {
    return seq_le(b, a);
}

}  // namespace xvs::net
