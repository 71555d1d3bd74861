// PrefixSet: prefixes -> merged intervals; lookup by binary search. See prefix_set.h.
#include "net/prefix_set.h"

#include <algorithm>
#include <utility>

namespace xvs::net {

PrefixSet::PrefixSet(std::span<const Ipv4Prefix> prefixes) {
    // 64-bit bounds so that 255.255.255.255 + 1 does not wrap while merging.
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    ranges.reserve(prefixes.size());
    for (const Ipv4Prefix& p : prefixes) {
        const uint64_t size = uint64_t{1} << (32 - p.len);
        const uint64_t lo = p.addr.host() & ~(size - 1);
        ranges.emplace_back(lo, lo + size - 1);
    }
    std::sort(ranges.begin(), ranges.end());
    for (const auto& [lo, hi] : ranges) {
        if (!lo_.empty() && lo <= uint64_t{hi_.back()} + 1) {
            hi_.back() = static_cast<uint32_t>(std::max<uint64_t>(hi_.back(), hi));
            continue;
        }
        lo_.push_back(static_cast<uint32_t>(lo));
        hi_.push_back(static_cast<uint32_t>(hi));
    }
}

bool PrefixSet::contains(uint32_t addr_be) const {
    if (lo_.empty()) return false;
    const uint32_t a = __builtin_bswap32(addr_be);
    // The last interval starting at or below a is the only one that can hold it. Branchless
    // binary search (the step is a conditional move): random client addresses would make a
    // branchy search mispredict on every level.
    const uint32_t* base = lo_.data();
    size_t n = lo_.size();
    while (n > 1) {
        const size_t half = n / 2;
        base = base[half] <= a ? base + half : base;
        n -= half;
    }
    if (*base > a) return false;
    return a <= hi_[static_cast<size_t>(base - lo_.data())];
}

Result<Ipv4Prefix> parse_acl_prefix(std::string_view text) {
    const std::string shown(text);
    auto prefix = parse_ipv4_prefix(text);
    if (!prefix || text == "default")
        return make_error("bad address or prefix '" + shown +
                          "' (expected A.B.C.D or A.B.C.D/LEN, LEN 0..32)");
    const size_t slash = text.find('/');
    auto addr = parse_ipv4(text.substr(0, slash));
    if (addr && !(*addr == prefix->addr))
        return make_error("prefix '" + shown + "' has host bits set (did you mean " +
                          to_string(*prefix) + "?)");
    return *prefix;
}

}  // namespace xvs::net
