// Tests for src/common/utf8.h: well-formed UTF-8 passes; stray, truncated, overlong,
// surrogate and out-of-range sequences are found at their first byte.
#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace xvs {
namespace {

constexpr size_t npos = std::string_view::npos;

TEST(Utf8, WellFormedTextPasses) {
    EXPECT_EQ(utf8_invalid_offset(""), npos);
    EXPECT_EQ(utf8_invalid_offset("virtual_server 10.0.0.1 80 {"), npos);
    EXPECT_EQ(utf8_invalid_offset("caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80"), npos);
    EXPECT_EQ(utf8_invalid_offset("\xed\x9f\xbf"), npos);      // U+D7FF, just below surrogates
    EXPECT_EQ(utf8_invalid_offset("\xf4\x8f\xbf\xbf"), npos);  // U+10FFFF, the last code point
}

TEST(Utf8, InvalidBytesFoundAtTheirOffset) {
    EXPECT_EQ(utf8_invalid_offset("prot\xffocol"), 4u);
    EXPECT_EQ(utf8_invalid_offset("ab\x80"), 2u);              // lone continuation byte
    EXPECT_EQ(utf8_invalid_offset("x\xc3"), 1u);               // truncated at the end
    EXPECT_EQ(utf8_invalid_offset("x\xc3(y"), 1u);             // bad continuation
    EXPECT_EQ(utf8_invalid_offset("\xc0\xaf"), 0u);            // overlong '/'
    EXPECT_EQ(utf8_invalid_offset("\xe0\x80\xaf"), 0u);        // overlong, 3 bytes
    EXPECT_EQ(utf8_invalid_offset("\xed\xa0\x80"), 0u);        // U+D800 surrogate
    EXPECT_EQ(utf8_invalid_offset("\xf4\x90\x80\x80"), 0u);    // above U+10FFFF
    EXPECT_EQ(utf8_invalid_offset("\xf5\x80\x80\x80"), 0u);
    EXPECT_EQ(utf8_invalid_offset("\xe4\xb8\xad\xe4\xb8"), 3u);
}

}  // namespace
}  // namespace xvs
