// PrefixSet: prefixes -> merged intervals; lookup by binary search. See prefix_set.h.
#include "net/prefix_set.h"

#include <algorithm>
#include <utility>

namespace xvs::net {

namespace {

// The address as a host-order 128-bit integer (bytes 0..15 most significant first).
unsigned __int128 to_u128(const InetAddr& a) {
    const uint64_t hi = __builtin_bswap64(a.word(0));
    const uint64_t lo = __builtin_bswap64(a.word(1));
    return (static_cast<unsigned __int128>(hi) << 64) | lo;
}

// Sorts and merges [lo, hi] ranges (overlapping, nested, duplicate or adjacent) into disjoint
// intervals. T is the bound type; max is its largest value (no wrap past it when merging).
template <class T>
void merge_into(std::vector<std::pair<T, T>>& ranges, std::vector<T>& los, std::vector<T>& his) {
    std::sort(ranges.begin(), ranges.end());
    for (const auto& [lo, hi] : ranges) {
        if (!los.empty() && (his.back() == T(~T(0)) || lo <= his.back() + 1)) {
            his.back() = std::max(his.back(), hi);
            continue;
        }
        los.push_back(lo);
        his.push_back(hi);
    }
}

// The last interval starting at or below a is the only one that can hold it. Branchless
// binary search (the step is a conditional move): random client addresses would make a branchy
// search mispredict on every level.
template <class T>
bool search(const std::vector<T>& los, const std::vector<T>& his, T a) {
    if (los.empty()) return false;
    const T* base = los.data();
    size_t n = los.size();
    while (n > 1) {
        const size_t half = n / 2;
        base = base[half] <= a ? base + half : base;
        n -= half;
    }
    if (*base > a) return false;
    return a <= his[static_cast<size_t>(base - los.data())];
}

}  // namespace

PrefixSet::PrefixSet(std::span<const InetPrefix> prefixes) {
    std::vector<std::pair<uint32_t, uint32_t>> r4;
    std::vector<std::pair<U128, U128>> r6;
    for (const InetPrefix& p : prefixes) {
        if (p.is_v4()) {
            const uint32_t host_mask = p.len >= 32 ? 0 : ~uint32_t(0) >> p.len;
            const uint32_t lo = __builtin_bswap32(p.addr.v4_be()) & ~host_mask;
            r4.emplace_back(lo, lo | host_mask);
        } else {
            const U128 host_mask = p.len >= 128 ? U128(0) : ~U128(0) >> p.len;
            const U128 lo = to_u128(p.addr) & ~host_mask;
            r6.emplace_back(lo, lo | host_mask);
        }
    }
    merge_into(r4, lo4_, hi4_);
    merge_into(r6, lo6_, hi6_);
    empty_ = lo4_.empty() && lo6_.empty();
}

bool PrefixSet::contains(const InetAddr& addr) const {
    if (addr.is_v4()) return search(lo4_, hi4_, __builtin_bswap32(addr.v4_be()));
    return search(lo6_, hi6_, to_u128(addr));
}

Result<InetPrefix> parse_acl_prefix(std::string_view text) {
    const std::string shown(text);
    const size_t slash = text.find('/');
    const std::string_view host = strip_brackets(text.substr(0, slash));
    const std::string bare =
        std::string(host) + std::string(slash == std::string_view::npos ? "" : text.substr(slash));
    auto addr = parse_inet(host);
    auto prefix = addr ? parse_inet_prefix(bare) : std::nullopt;
    if (!addr || !prefix)
        return make_error("bad address or prefix '" + shown +
                          "' (expected A.B.C.D[/LEN], LEN 0..32, or an IPv6 address[/LEN], LEN "
                          "0..128)");
    if (!(*addr == prefix->addr))
        return make_error("prefix '" + shown + "' has host bits set (did you mean " +
                          to_string(*prefix) + "?)");
    return *prefix;
}

}  // namespace xvs::net
