// Tests for src/ctl/bgp/bird_client.cpp: BIRD's reply lines assembled from any pieces, and a
// command over a unix socket against a fake BIRD (fake_bird.h).
#include "ctl/bgp/bird_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_bird.h"

namespace xvs::ctl::bgp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(BirdReplyReader, AssemblesRepliesFromPieces) {
    BirdReplyReader r;
    ASSERT_TRUE(r.feed("0001 BIRD 2.0.12 re"));
    EXPECT_FALSE(r.next());
    ASSERT_TRUE(r.feed("ady.\n0002-Reading configuration from /etc/bird.conf\n+0000 note\n"));
    auto hello = r.next();
    ASSERT_TRUE(hello);
    EXPECT_EQ(hello->code, 1u);
    EXPECT_THAT(hello->lines, ElementsAre("BIRD 2.0.12 ready."));
    EXPECT_FALSE(r.next());  // the second reply is not complete yet
    ASSERT_TRUE(r.feed(" continued\n0003 Reconfigured\n"));
    auto conf = r.next();
    ASSERT_TRUE(conf);
    EXPECT_EQ(conf->code, 3u);
    EXPECT_TRUE(conf->ok());
    EXPECT_THAT(conf->lines,
                ElementsAre("Reading configuration from /etc/bird.conf", "continued", "Reconfigured"));
    EXPECT_EQ(conf->text(), "Reading configuration from /etc/bird.conf; continued; Reconfigured");
}

TEST(BirdReplyReader, ErrorCodesAndMalformedLines) {
    BirdReplyReader r;
    ASSERT_TRUE(r.feed("8002 /etc/bird/xvs.conf:3:1 syntax error\n"));
    auto e = r.next();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, 8002u);
    EXPECT_FALSE(e->ok());
    auto bad = r.feed("hello world\n");
    ASSERT_FALSE(bad);
    EXPECT_THAT(bad.error(), HasSubstr("not NNNN-text or NNNN text: 'hello world'"));
    EXPECT_FALSE(r.feed("12a4 x\n"));
    EXPECT_FALSE(r.feed(std::string(70000, 'x')));  // a line without end
}

TEST(BirdCommand, ConfigureAgainstAFakeBird) {
    test::FakeBird bird;
    auto reply = bird_command(bird.path(), "configure", std::chrono::milliseconds(2000));
    ASSERT_TRUE(reply) << reply.error();
    EXPECT_EQ(reply->code, 3u);
    EXPECT_EQ(reply->text(), "Reading configuration from /etc/bird/bird.conf; Reconfigured");
    EXPECT_THAT(bird.commands(), ElementsAre("configure"));

    bird.set_reply("0002-Reading configuration from /etc/bird/bird.conf\n"
                   "8002 /etc/bird/xvs.conf:12:5 syntax error, unexpected '}'\n");
    reply = bird_command(bird.path(), "configure", std::chrono::milliseconds(2000));
    ASSERT_TRUE(reply) << reply.error();  // an error reply is a reply
    EXPECT_EQ(reply->code, 8002u);
    EXPECT_FALSE(reply->ok());
}

TEST(BirdCommand, BadGreetingAbsentSocketAndSilence) {
    test::FakeBird bird;
    bird.set_greeting("0016 Access restricted\n");
    auto reply = bird_command(bird.path(), "configure", std::chrono::milliseconds(2000));
    ASSERT_FALSE(reply);
    EXPECT_THAT(reply.error(), HasSubstr("greeted with 16 Access restricted, not 0001"));

    reply = bird_command(bird.dir() + "/none.ctl", "configure", std::chrono::milliseconds(500));
    ASSERT_FALSE(reply);
    EXPECT_THAT(reply.error(), HasSubstr("cannot connect to BIRD on " + bird.dir() +
                                         "/none.ctl: No such file or directory"));

    bird.set_greeting("0001 BIRD 2.0.12 ready.\n");
    bird.set_reply("0002-Reading configuration\n");  // never finishes
    reply = bird_command(bird.path(), "configure", std::chrono::milliseconds(300));
    ASSERT_FALSE(reply);
    EXPECT_THAT(reply.error(), HasSubstr("closed the connection mid-reply"));
}

}  // namespace
}  // namespace xvs::ctl::bgp
