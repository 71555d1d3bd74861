// DNS_CHECK query and reply verdict; see dns.h.
#include "ctl/health/dns.h"

namespace xvs::ctl::health {

namespace {
void put16(std::string& s, uint16_t v) {
    s += static_cast<char>(v >> 8);
    s += static_cast<char>(v & 0xff);
}
uint16_t get16(std::string_view s, size_t off) {
    return static_cast<uint16_t>(uint8_t(s[off]) << 8 | uint8_t(s[off + 1]));
}
}  // namespace

std::string dns_query(uint16_t id, std::string_view name, uint16_t type) {
    std::string q;
    put16(q, id);
    put16(q, 0x0100);  // standard query, recursion desired
    put16(q, 1);       // QDCOUNT
    put16(q, 0);
    put16(q, 0);
    put16(q, 0);
    while (!name.empty() && name != ".") {
        const size_t dot = name.find('.');
        std::string_view label = name.substr(0, dot);
        if (label.empty() || label.size() > 63) return "";
        q += static_cast<char>(label.size());
        q.append(label);
        if (dot == std::string_view::npos) break;
        name.remove_prefix(dot + 1);
    }
    q += '\0';
    put16(q, type);
    put16(q, 1);  // class IN
    return q;
}

uint16_t dns_reply_id(std::string_view reply) {
    return reply.size() >= 2 ? get16(reply, 0) : 0;
}

std::string dns_verdict(uint16_t id, std::string_view reply) {
    if (reply.size() < 12)
        return "DNS reply too short (" + std::to_string(reply.size()) + " bytes)";
    if (get16(reply, 0) != id) return "DNS reply ID differs";
    const uint16_t flags = get16(reply, 2);
    if (!(flags & 0x8000)) return "DNS message is not a reply";
    static constexpr const char* kRcodes[] = {"NOERROR",  "FORMERR", "SERVFAIL",
                                              "NXDOMAIN", "NOTIMP",  "REFUSED"};
    const unsigned rcode = flags & 0xf;
    if (rcode != 0)
        return "DNS RCODE " + (rcode < 6 ? std::string(kRcodes[rcode]) : std::to_string(rcode));
    if (get16(reply, 6) == 0) return "DNS reply has no answer";
    return "";
}

}  // namespace xvs::ctl::health
