// SIP Call-ID persistence (IPVS's `--pe sip`, keepalived `persistence_engine sip`): the
// Call-ID of a SIP message (RFC 3261 section 8.1.1.4, header "Call-ID" or its compact form
// "i", names case-insensitive, 7.3.1) found in a UDP datagram's payload, and the template key
// it stands for. Pure, allocation-free: it runs per new UDP flow of such a service.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "net/addr.h"

namespace xvs::net {

// The Call-ID value (blanks around it removed) of the message in data[0..len), searched in
// its header lines up to the blank line that ends them (or the end of the data); nullopt when
// the datagram is no SIP message with a Call-ID (e.g. a CRLF keep-alive, RFC 5626).
std::optional<std::string_view> sip_call_id(const uint8_t* data, size_t len);

// The client part of a template key for a Call-ID: an address in ff5e::/16, which no client
// sends from (IPv6 multicast), followed by 112 bits of a hash of the Call-ID, so calls never
// share a template with a client address, and two calls only by a 2^-112 chance.
InetAddr sip_call_key(std::string_view call_id);

}  // namespace xvs::net
