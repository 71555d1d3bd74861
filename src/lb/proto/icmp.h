// ICMP errors related to a connection (destination unreachable, incl. frag-needed, and time
// exceeded), in every mode and both directions: the conn is found by the quoted packet's tuple
// reversed (the quote is a packet the director or the RS sent), the error is translated as the
// conn's packets are (outer and quoted addresses, quoted ports, every checksum) and forwarded,
// so path-MTU discovery works through the director. Unrelated errors are counted and dropped.
#pragma once

#include "lb/conn.h"
#include "lb/conn_table.h"

namespace xvs::lb {

struct WorkerCtx;
template <class Af>
struct LbPacket;

// The lookup key of an ICMP error packet (lp.related): the quoted tuple reversed. False when
// the message is malformed or quotes something no conn can own (the caller drops it).
template <class Af>
bool icmp_related_key(const LbPacket<Af>& lp, ConnKey& key);

// Consumes lp.pkt: translated and sent, or dropped and counted (drop_icmp_unrelated).
template <class Af>
void icmp_related(WorkerCtx& w, LbPacket<Af>& lp, ConnRef ref);

}  // namespace xvs::lb
