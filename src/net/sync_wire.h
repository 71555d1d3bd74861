// Session sync messages between directors (issue 15 item 3): the IPVS sync protocol version 1
// layout (UDP 8848, group 224.0.0.81), so an IPVS backup can read what xvs sends, plus xvs's
// own state in optional parameters an IPVS peer skips. Pure byte code, no DPDK, no sockets.
//
// Message (all fields big-endian):
//   off size
//     0    1 reserved, 0 (a version 0 receiver reads it as nr_conns 0 and drops the message)
//     1    1 syncid
//     2    2 size: the whole message, header included; must equal the datagram length
//     4    1 nr_conns
//     5    1 version (1)
//     6    2 spare, 0
//     8      nr_conns conn entries, each padded to a multiple of 4 bytes
// Conn entry:
//     0    1 type: bit 0 set = IPv6 addresses; other bits must be 0
//     1    1 protocol
//     2    2 ver_size: version in the top 4 bits (0), entry size without padding in the low 12
//     4    4 flags (IPVS IP_VS_CONN_F_*: forwarding method in bits 0..2, template 0x1000, ...)
//     8    2 state (IPVS's TCP state numbers, which lb::TcpState keeps)
//    10    2 cport   12 2 vport   14 2 dport
//    16    4 fwmark
//    20    4 timeout, seconds
//    24 3x4 (v4) or 3x16 (v6): caddr, vaddr, daddr           -> 36 resp. 72 bytes
//      ... parameters: type (1), length (1, never 0), data (length bytes)
// A parameter type with bit 0x40 (IPVS_OPT_F_PARAM) is optional: a receiver that does not
// know it skips it. An unknown mandatory parameter makes IPVS (and xvs) drop that one conn.
// Known: 1 = sequence data (2 x {init_seq, delta, previous_delta}, 24 bytes), 2 = persistence
// engine data, 3 = persistence engine name. xvs adds 0x48..0x4a (below), all optional.
//
// xvs control messages (heartbeat, resync request, resync end) are version 1 messages with
// nr_conns 0 whose size covers a trailer after the header (an IPVS backup reads zero conns and
// ignores the rest):
//     8    4 magic "XVSc"
//    12    1 kind (SyncControlKind)   13 1 role (SyncRole)   14 1 flags   15 1 naddrs
//    16    4 node id                  20 4 sequence number
//    24      naddrs x 16: the sender's FULLNAT local addresses (IPv4 v4-mapped)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "net/addr.h"

namespace xvs::net {

inline constexpr uint16_t kSyncPort = 8848;
inline constexpr uint32_t kSyncGroupBe = 0x510000e0;  // 224.0.0.81, network order
inline constexpr uint8_t kSyncVersion = 1;
inline constexpr size_t kSyncHeaderSize = 8;
inline constexpr size_t kSyncConnV4Size = 36;
inline constexpr size_t kSyncConnV6Size = 72;
// What xvs sends per datagram: fits one 1500-byte frame (IP 20 + UDP 8).
inline constexpr size_t kSyncDefaultMessage = 1472;
// What xvs accepts: a jumbo-frame peer's messages (IPVS sizes them by the interface MTU).
inline constexpr size_t kSyncMaxMessage = 9000;

// IPVS conn flags (include/uapi/linux/ip_vs.h), the ones that travel.
inline constexpr uint32_t kIpvsFwdMasq = 0, kIpvsFwdTunnel = 2, kIpvsFwdDroute = 3;
inline constexpr uint32_t kIpvsFwdMask = 0x0007;
inline constexpr uint32_t kIpvsConnSync = 0x0020;
inline constexpr uint32_t kIpvsConnNoOutput = 0x0080;
inline constexpr uint32_t kIpvsConnInactive = 0x0100;
inline constexpr uint32_t kIpvsConnSeqMask = 0x0600;
inline constexpr uint32_t kIpvsConnTemplate = 0x1000;
inline constexpr uint32_t kIpvsConnOnePacket = 0x2000;

inline constexpr uint8_t kSyncOptSeq = 1;
inline constexpr uint8_t kSyncOptPeData = 2;
inline constexpr uint8_t kSyncOptPeName = 3;
inline constexpr uint8_t kSyncOptOptional = 0x40;  // IPVS_OPT_F_PARAM
// xvs's parameters (optional: IPVS skips them).
inline constexpr uint8_t kSyncOptXvsConn = 0x48;      // mode, xvs conn flags, local address/port
inline constexpr uint8_t kSyncOptXvsFeat = 0x49;      // TOA / PROXY protocol progress
inline constexpr uint8_t kSyncOptXvsSynproxy = 0x4a;  // SYN-proxy sequence/timestamp deltas
inline constexpr size_t kSyncOptXvsConnLen = 22;
inline constexpr size_t kSyncOptXvsFeatLen = 12;
inline constexpr size_t kSyncOptXvsSynproxyLen = 10;
inline constexpr size_t kSyncOptSeqLen = 24;

struct SyncSeq {
    uint32_t init_seq = 0, delta = 0, previous_delta = 0;
    bool operator==(const SyncSeq&) const = default;
};

// xvs's state of a conn beyond what IPVS syncs (host order unless said otherwise).
struct SyncXvsConn {
    uint8_t mode = 0;         // lb::FwdMode
    uint16_t conn_flags = 0;  // lb::kConn* bits that describe the conn (not counters)
    InetAddr laddr;           // FULLNAT local address / SNAT WAN address
    uint16_t lport = 0;       // network order
    bool operator==(const SyncXvsConn&) const = default;
};
struct SyncXvsFeat {
    uint32_t rs_isn = 0, client_isn = 0;
    uint16_t pp_window = 0;  // network order, as lb::ConnFeatSlot keeps it
    uint8_t pp_len = 0, pp_rexmits = 0;
    bool operator==(const SyncXvsFeat&) const = default;
};
struct SyncXvsSynproxy {
    uint32_t seq_delta = 0, ts_delta = 0;
    uint8_t rs_wscale = 0, our_wscale = 0;
    bool operator==(const SyncXvsSynproxy&) const = default;
};

struct SyncConn {
    bool v6 = false;
    uint8_t proto = 0;
    uint32_t flags = 0;  // IPVS flags
    uint16_t state = 0;
    uint16_t cport = 0, vport = 0, dport = 0;  // network order
    uint32_t fwmark = 0;
    uint32_t timeout_s = 0;
    InetAddr caddr, vaddr, daddr;
    bool has_seq = false;  // IPVS sequence data (xvs never sends it; decoded for completeness)
    SyncSeq in_seq, out_seq;
    bool has_xvs = false;
    SyncXvsConn xvs;
    bool has_feat = false;
    SyncXvsFeat feat;
    bool has_synproxy = false;
    SyncXvsSynproxy synproxy;
    bool operator==(const SyncConn&) const = default;
};

// Bytes of this conn's entry, parameters included, padding (to the next entry) not.
size_t sync_conn_wire_size(const SyncConn& c);

enum class SyncControlKind : uint8_t { heartbeat = 1, resync_request = 2, resync_end = 3 };
enum class SyncRole : uint8_t { master = 1, backup = 2, both = 3 };
inline constexpr uint32_t kSyncControlMagic = 0x58565363;  // "XVSc"
inline constexpr size_t kSyncControlSize = 16;              // trailer without addresses
inline constexpr unsigned kSyncControlMaxAddrs = 64;

struct SyncControl {
    SyncControlKind kind = SyncControlKind::heartbeat;
    SyncRole role = SyncRole::master;
    uint8_t flags = 0;  // bit 0: the sender holds the VIPs (active)
    uint32_t node_id = 0;
    uint32_t seq = 0;
    std::vector<InetAddr> laddrs;
    bool operator==(const SyncControl&) const = default;
};
inline constexpr uint8_t kSyncControlActive = 1;

struct SyncMessage {
    uint8_t syncid = 0;
    std::vector<SyncConn> conns;
    // Conns left out for an unknown mandatory parameter (as IPVS does, the rest of the
    // message still counts).
    uint32_t conns_skipped = 0;
    bool has_control = false;
    SyncControl control;
};

// Builds one message in a buffer reserved once (max_size bytes): add() conns until it says
// no, then take bytes() and reset(). No allocation after construction.
class SyncEncoder {
public:
    SyncEncoder(uint8_t syncid, size_t max_size = kSyncDefaultMessage);
    // False when the conn does not fit (the message is then unchanged) or 255 conns are in.
    bool add(const SyncConn& c);
    unsigned count() const { return count_; }
    bool empty() const { return count_ == 0; }
    std::span<const uint8_t> bytes() const { return {buf_.data(), len_}; }
    void reset();

private:
    std::vector<uint8_t> buf_;
    size_t len_ = 0;
    unsigned count_ = 0;
    uint8_t syncid_;
};

// One xvs control message (heartbeat, resync request/end). At most kSyncControlMaxAddrs
// addresses are carried.
std::vector<uint8_t> sync_encode_control(uint8_t syncid, const SyncControl& c);

// Decodes a datagram. Errors (the whole message refused, as IPVS drops it): shorter than the
// header, longer than kSyncMaxMessage, size field != length, reserved/spare/version wrong
// (IPVS would read it as version 0, which xvs does not speak), a conn entry running past the
// end or with a non-zero entry version or an unknown type, a malformed parameter (length 0
// or past the entry), a known parameter of the wrong length, a malformed control trailer.
Result<SyncMessage> sync_decode(std::span<const uint8_t> datagram);

}  // namespace xvs::net
