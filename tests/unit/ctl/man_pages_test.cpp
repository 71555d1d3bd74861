// The man pages (man/, installed by cmake/package.cmake) against the code they describe: every
// keyword of the configuration table is in xvs.conf(5), every long option of xvsadm's and
// xvsctl's usage text in their pages, and every xvsctl object and command. A keyword or
// option added without its documentation fails here. The roff itself is linted by the
// man_pages_lint test (mandoc -Tlint).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ctl/config_check.h"
#include "ctl/config_keywords.h"
#include "ctl/ipvsadm_args.h"
#include "ctl/xvsctl_args.h"

namespace xvs::ctl {
namespace {

// The page as a reader sees its words: roff's escaped hyphen (\-) and font changes (\fB ...)
// removed, so "\fB\-\-stats\fR" reads "--stats". Tests run in tests/ (ctest's directory).
std::string page_text(const std::string& name) {
    std::ifstream in("../man/" + name);
    EXPECT_TRUE(in) << "cannot open man/" << name;
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    s = std::regex_replace(s, std::regex(R"(\\-)"), "-");
    s = std::regex_replace(s, std::regex(R"(\\f[BIRP])"), "");
    return s;
}

// `word` appears in `text` with no letter, digit, '_' or '-' on either side.
bool has_word(const std::string& text, const std::string& word) {
    auto part_of_word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    };
    for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
        bool left = at == 0 || !part_of_word(text[at - 1]);
        size_t end = at + word.size();
        bool right = end == text.size() || !part_of_word(text[end]);
        if (left && right) return true;
    }
    return false;
}

std::set<std::string> long_options(const std::string& usage) {
    std::set<std::string> out;
    std::regex opt(R"(--[a-z][a-z0-9-]*)");
    for (auto it = std::sregex_iterator(usage.begin(), usage.end(), opt); it != std::sregex_iterator();
         ++it)
        out.insert(it->str());
    return out;
}

TEST(ManPages, EveryConfigKeywordIsInXvsConf5) {
    const std::string page = page_text("xvs.conf.5");
    std::vector<std::string> missing;
    for (const keywords::Keyword& k : keywords::kKeywords) {
        std::string name(k.name);
        if (!has_word(page, name)) missing.push_back(std::string(k.block) + " " + name);
    }
    EXPECT_TRUE(missing.empty()) << "not in man/xvs.conf.5: " << testing::PrintToString(missing);
}

TEST(ManPages, EveryXvsadmLongOptionIsInXvsadm8) {
    const std::string page = page_text("xvsadm.8");
    const auto opts = long_options(usage_text("xvsadm"));
    ASSERT_GT(opts.size(), 40u) << "the usage text's options were not found";
    for (const std::string& o : opts) EXPECT_TRUE(has_word(page, o)) << o << " not in man/xvsadm.8";
}

TEST(ManPages, EveryXvsctlCommandAndOptionIsInXvsctl8) {
    const std::string page = page_text("xvsctl.8");
    const std::string usage = xvsctl_usage_text();
    for (const std::string& o : long_options(usage))
        EXPECT_TRUE(has_word(page, o)) << o << " not in man/xvsctl.8";
    // "  xvsctl OBJECT COMMAND ..." lines: the object and its command.
    std::regex line(R"(\n  xvsctl ([a-z]+) ([a-z]+))");
    int commands = 0;
    for (auto it = std::sregex_iterator(usage.begin(), usage.end(), line); it != std::sregex_iterator();
         ++it, ++commands) {
        std::string both = (*it)[1].str() + " " + (*it)[2].str();
        EXPECT_NE(page.find(both), std::string::npos) << "'" << both << "' not in man/xvsctl.8";
    }
    EXPECT_GE(commands, 12);
}

// The example configurations an operator starts from pass `xvsd -t`: the packaged one
// (/usr/share/doc/xvs/examples/xvs.conf) and the EXAMPLE section of xvs.conf(5).
TEST(ManPages, ExampleConfigurationsPassTheCheck) {
    std::ostringstream out, err;
    EXPECT_EQ(0, config_check_main("../contrib/xvs.conf.example", out, err)) << err.str();

    const std::string page = page_text("xvs.conf.5");
    const size_t from = page.find("\n.SH EXAMPLE\n.nf\n");
    ASSERT_NE(from, std::string::npos);
    const size_t body = from + std::string_view("\n.SH EXAMPLE\n.nf\n").size();
    const size_t end = page.find("\n.fi\n", body);
    ASSERT_NE(end, std::string::npos);
    char path[] = "/tmp/xvs-man-example-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    std::ofstream(path) << page.substr(body, end - body + 1);
    std::ostringstream out2, err2;
    EXPECT_EQ(0, config_check_main(path, out2, err2)) << err2.str();
    unlink(path);
}

TEST(ManPages, HasWordNeedsWordBoundaries) {
    EXPECT_TRUE(has_word("a retry b", "retry"));
    EXPECT_FALSE(has_word("a nb_get_retry b", "retry"));
    EXPECT_FALSE(has_word("a retry_x b", "retry"));
    EXPECT_TRUE(has_word(".B vrrp_*\n", "vrrp_*"));
}

}  // namespace
}  // namespace xvs::ctl
