// BIRD's control-socket protocol, spoken by xvsd itself (no birdc): one command per connection.
// BIRD greets with "0001 BIRD <version> ready.", then answers each command with lines
// "NNNN-text" (more follows), " text" (continues the previous code) and a last "NNNN text";
// codes 8000-9999 are errors (BIRD's doc/reply_codes), lines "+NNNN text" are asynchronous
// notes and not part of the reply. Why not birdc: no fork and exec on the control thread, a
// deadline xvsd keeps itself, and the reply code read rather than birdc's text scraped.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace xvs::ctl::bgp {

struct BirdReply {
    unsigned code = 0;               // of the last line
    std::vector<std::string> lines;  // the texts, codes stripped, in order
    bool ok() const { return code < 8000; }
    std::string text() const;        // the lines joined by "; "
};

// Assembles replies from the bytes of the socket, in any pieces.
class BirdReplyReader {
  public:
    // Takes more bytes; a protocol error (a line that is none of the forms above) is an error.
    Result<void> feed(std::string_view bytes);
    // The next complete reply, if one has been read.
    std::optional<BirdReply> next();

  private:
    Result<void> line(std::string_view text);
    std::string partial_;
    BirdReply current_;
    std::vector<BirdReply> done_;
};

// Connects to `socket_path`, waits for the greeting, sends `command` and returns its reply,
// all within `timeout`. An error reply (8000-9999) is a value here, not an error: the caller
// says what it means.
Result<BirdReply> bird_command(const std::string& socket_path, std::string_view command,
                               std::chrono::milliseconds timeout);

}  // namespace xvs::ctl::bgp
