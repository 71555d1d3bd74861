// DNS_CHECK wire work without sockets: the query (RFC 1035 4.1, one question, RD set) and the
// verdict on a reply: same ID, QR set, RCODE NOERROR, at least one answer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace xvs::ctl::health {

// "" when name cannot be encoded (a label over 63 bytes).
std::string dns_query(uint16_t id, std::string_view name, uint16_t type);
// The ID of a reply (0 when too short to have one).
uint16_t dns_reply_id(std::string_view reply);
// "" when the reply answers query `id` with NOERROR and an answer, else why not.
std::string dns_verdict(uint16_t id, std::string_view reply);

}  // namespace xvs::ctl::health
