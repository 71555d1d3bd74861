// A set of IPv4 prefixes compiled into sorted, disjoint, non-adjacent address intervals, for
// per-service black and white lists. Built on the control thread (may allocate); contains() is
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
    explicit PrefixSet(std::span<const Ipv4Prefix> prefixes);

    bool empty() const { return lo_.empty(); }
    size_t intervals() const { return lo_.size(); }
    // addr_be: network order, as in the packet.
    bool contains(uint32_t addr_be) const;

  private:
    // Parallel arrays, host order, sorted; interval i is [lo_[i], hi_[i]] and hi_[i] + 1 <
    // lo_[i + 1]. Searching lo_ alone keeps the hot comparisons in one array.
    std::vector<uint32_t> lo_;
    std::vector<uint32_t> hi_;
};

// "a.b.c.d" (= /32) or "a.b.c.d/len". Strict: host bits beyond len are refused, because
// "10.1.2.3/8" in a blacklist is far more likely a typo than a wish to block 10.0.0.0/8.
// The error says what was wrong and what the masked form would be.
Result<Ipv4Prefix> parse_acl_prefix(std::string_view text);

}  // namespace xvs::net
