// A set of IPv4 and IPv6 prefixes compiled into sorted, disjoint, non-adjacent address intervals,
// for per-service black and white lists. Built on the control thread (may allocate); contains() is
// a branch-light binary search over the intervals: O(log n), no allocation, safe to call from
// the packet path on an immutable instance.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "net/addr.h"

namespace xvs::net {

class PrefixSet {
  public:
    PrefixSet() = default;
    // Overlapping, nested, duplicate and adjacent prefixes merge into one interval.
    explicit PrefixSet(std::span<const InetPrefix> prefixes);

    // Asked for every new connection (a service's black and white lists, mostly empty): one
    // flag, not four vector bounds.
    bool empty() const { return empty_; }
    size_t intervals() const { return lo4_.size() + lo6_.size(); }
    // A v4 address is only in a v4 prefix, a v6 one only in a v6 prefix.
    bool contains(const InetAddr& addr) const;

  private:
    using U128 = unsigned __int128;
    // Per family, parallel arrays, host order, sorted; interval i is [lo[i], hi[i]] and
    // hi[i] + 1 < lo[i + 1]. Searching lo alone keeps the hot comparisons in one array; IPv4
    // keeps 32-bit bounds so its search touches a quarter of the memory.
    std::vector<uint32_t> lo4_;
    std::vector<uint32_t> hi4_;
    std::vector<U128> lo6_;
    std::vector<U128> hi6_;
    bool empty_ = true;  // no interval of either family
};

// "a.b.c.d" (= /32) or "a.b.c.d/len", or an IPv6 address (= /128, optionally in brackets) or
// "v6/len". Strict: host bits beyond len are refused, because
// "10.1.2.3/8" in a blacklist is far more likely a typo than a wish to block 10.0.0.0/8.
// The error says what was wrong and what the masked form would be.
Result<InetPrefix> parse_acl_prefix(std::string_view text);

}  // namespace xvs::net
