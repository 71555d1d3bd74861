// Division of 64-bit values by a divisor fixed at run time (a timer wheel's tick, a Maglev
// table's size) without a division instruction: a 64-bit DIV costs tens of cycles of latency
// on today's cores, and the code after it waits for the quotient.
//
// With m = floor(2^64 / d), the high half of n * m is n / d - n * e / 2^64 rounded down for
// some 0 <= e < 1, so it is the quotient or one less; the remainder tells which. Exact for
// every n and every d >= 1 (d = 1 takes m = 2^64 - 1, which gives n - 1 and is corrected).
#pragma once

#include <cstdint>
#include <limits>

namespace xvs {

class Divider {
  public:
    explicit Divider(uint64_t d)
        : d_(d),
          m_(d == 1 ? std::numeric_limits<uint64_t>::max()
                    : static_cast<uint64_t>((static_cast<unsigned __int128>(1) << 64) / d)) {}

    uint64_t divisor() const { return d_; }

    // n / d, rounded down.
    uint64_t div(uint64_t n) const {
        uint64_t q = static_cast<uint64_t>(static_cast<unsigned __int128>(n) * m_ >> 64);
        if (n - q * d_ >= d_) ++q;
        return q;
    }
    // n % d.
    uint64_t mod(uint64_t n) const { return n - div(n) * d_; }

  private:
    uint64_t d_;
    uint64_t m_;
};

}  // namespace xvs
