// bench/engine's yardsticks for the machine's limit, measured in the same run as xvs's rows:
//
// BareFullnat: the unavoidable part of forwarding an established FULLNAT packet and nothing
// else, written the plain way with DPDK's own parts: the 5-tuple read from the header (no
// validation, no own-address or state lookup), one rte_hash_lookup_bulk_data per burst (CRC32
// keys, DPDK's prefetching bulk lookup; the rewrite packed into the 8-byte data word, so a
// lookup reads two random lines, a bucket and a key slot, as xvs's does), the four addresses
// and ports rewritten with the IP and TCP/UDP checksums updated by one summed delta each
// (RFC 1624), the MACs swapped, one TX burst. No timers, counters, states, next hops or
// drops. Issue 17 compares xvs's established rows with it.
//
// BareSynCookie: a SYN answered with a cookie SYN-ACK built in place and nothing else: the
// SYN's options planned and the SYN-ACK's written over them by the SYN proxy's own functions
// (lb::synproxy_plan_synack, lb::synproxy_write_synack_options, default settings), one
// cookie (net::syncookie_make, one SipHash-2-4, as xvs's), addresses, ports and MACs swapped,
// both checksums computed anew, one TX burst. No validation, conn or service lookup, lists or
// counters.
//
// random_line_floor: what the memory system charges for two dependent random cache lines a
// packet (a bucket, then the entry it names), fetched 32 at a time with prefetches and
// nothing else to do; a conn table of a bucket and a conn line per lookup cannot be cheaper.
#pragma once

#include <rte_hash.h>
#include <rte_mbuf.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lb/synproxy/synproxy.h"
#include "net/headers.h"
#include "net/syncookie.h"

namespace xvs::bench {

class BareFullnat {
  public:
    // A table for `flows` entries (rte_hash named `name`); exits the process if DPDK cannot
    // make it (a benchmark has no caller to hand the error to).
    BareFullnat(const char* name, size_t flows);
    ~BareFullnat();
    BareFullnat(const BareFullnat&) = delete;
    BareFullnat& operator=(const BareFullnat&) = delete;

    // The TCP or UDP (`proto`) flow client:cport -> vip:vport (network order) leaves as
    // lip:lport -> rip:rport (a real server among a few: its index is looked up linearly).
    void add(uint8_t proto, uint32_t client, uint16_t cport, uint32_t vip, uint16_t vport,
             uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport);
    // Rewrites the burst's packets of known flows and sends them by `port` (queue 0); frees
    // the rest (the benchmark sends none).
    void process(rte_mbuf** pkts, unsigned n, uint16_t port);
    uint64_t missed() const { return missed_; }  // packets of no flow

  private:
    struct Key {
        uint32_t saddr, daddr;
        uint16_t sport, dport;
        uint32_t proto;
    };
    struct Rs {
        uint32_t addr;
        uint16_t port;
    };
    static_assert(sizeof(Key) == 16);

    rte_hash* hash_ = nullptr;
    uint64_t missed_ = 0;
    std::vector<Rs> rs_;  // at most 65,536: a data word holds lip, lport and an index here
};

class BareSynCookie {
  public:
    explicit BareSynCookie(const net::CookieSecrets& secrets) : secrets_(secrets) {}
    // Answers the burst's SYNs (each with 20 option bytes, as bench/engine's Linux SYN) by
    // `port`, cookies of counter `count`; frees anything else.
    void process(rte_mbuf** pkts, unsigned n, uint16_t port, uint32_t count);
    uint64_t missed() const { return missed_; }  // packets that were no such SYN

  private:
    net::CookieSecrets secrets_;
    lb::SynProxyConf conf_;  // the defaults, as the benchmark's services have them
    uint64_t missed_ = 0;
};

// ns per packet of the floor described above: `packets` lookups over `lines` buckets and
// `lines` entries of 64 bytes each, from rte_malloc (hugepages when EAL has them, as xvs's
// conn table); each entry read, then written, as a conn's is.
double random_line_floor(size_t lines, uint64_t packets);

}  // namespace xvs::bench
