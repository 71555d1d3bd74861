// Tests for src/net/sip.cpp: the Call-ID of SIP messages (long and compact header names, any
// case, blanks), none where there is none, and distinct template keys per call.
#include "net/sip.h"

#include <gtest/gtest.h>

#include <string>

namespace xvs::net {
namespace {

std::optional<std::string_view> call_id(const std::string& msg) {
    return sip_call_id(reinterpret_cast<const uint8_t*>(msg.data()), msg.size());
}

TEST(Sip, FindsTheCallIdOfARequest) {
    const std::string invite =
        "INVITE sip:bob@biloxi.example.com SIP/2.0\r\n"
        "Via: SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bK776asdhds\r\n"
        "To: Bob <sip:bob@biloxi.example.com>\r\n"
        "Call-ID: a84b4c76e66710@pc33.atlanta.example.com\r\n"
        "CSeq: 314159 INVITE\r\n"
        "\r\n"
        "v=0\r\nCall-ID: not-a-header\r\n";
    EXPECT_EQ(call_id(invite), "a84b4c76e66710@pc33.atlanta.example.com");
}

TEST(Sip, CompactFormCaseAndBlanks) {
    EXPECT_EQ(call_id("SIP/2.0 200 OK\r\ni: abc123\r\n\r\n"), "abc123");
    EXPECT_EQ(call_id("BYE sip:x SIP/2.0\r\ncall-id  :   xyz \t\r\nCSeq: 2 BYE\r\n"), "xyz");
    EXPECT_EQ(call_id("BYE sip:x SIP/2.0\nCALL-ID:bare-lf\n"), "bare-lf");
    // "Via" contains an 'i' but is no "i:" header; "i" only as the whole name.
    EXPECT_EQ(call_id("OPTIONS sip:x SIP/2.0\r\nVia: i: no\r\nIi: no\r\ni:yes\r\n"), "yes");
}

TEST(Sip, NoCallIdWhereThereIsNone) {
    EXPECT_FALSE(call_id("\r\n\r\n"));  // RFC 5626 keep-alive
    EXPECT_FALSE(call_id(""));
    EXPECT_FALSE(call_id("INVITE sip:x SIP/2.0\r\nTo: y\r\n\r\nCall-ID: in-body\r\n"));
    EXPECT_FALSE(call_id("Call-ID: the-start-line-is-not-a-header\r\n"));
    EXPECT_FALSE(call_id("INVITE sip:x SIP/2.0\r\nCall-ID:   \r\n"));
    EXPECT_FALSE(call_id(std::string("\x01\x02\x03", 3)));
}

TEST(Sip, CallKeysAreDistinctAndNeverAClientAddress) {
    const InetAddr a = sip_call_key("a84b4c76e66710@pc33");
    EXPECT_EQ(a, sip_call_key("a84b4c76e66710@pc33"));
    EXPECT_NE(a, sip_call_key("a84b4c76e66711@pc33"));
    EXPECT_FALSE(a.is_v4());
    EXPECT_EQ(a.b[0], 0xff);
    EXPECT_EQ(a.b[1], 0x5e);
}

}  // namespace
}  // namespace xvs::net
