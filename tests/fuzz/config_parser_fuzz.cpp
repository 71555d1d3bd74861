// libFuzzer target for the configuration parser: any input must yield errors or a Config,
// never a crash, hang or sanitizer report. `include` is defused (a fuzzer that finds
// "include /proc/kmsg" would block reading the host's files); the lexer's include handling is
// covered by the unit tests.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ctl/config_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    for (size_t at = text.find("include"); at != std::string::npos; at = text.find("include", at))
        text[at + 4] = 'X';
    auto result = xvs::ctl::parse_config_string(text, "fuzz.conf");
    if (result.ok()) {
        // Touch the model so the optimiser keeps the whole parse.
        volatile size_t n = result->virtual_servers.size() + result->warnings.size();
        (void)n;
    } else {
        volatile size_t n = result.error().size();
        (void)n;
    }
    return 0;
}
