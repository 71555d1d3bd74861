// The IPVS sync v1 codec (net/sync_wire.h). Written from the layout description: every field
// is read and written with explicit big-endian loads/stores at its offset, never through a
// struct cast, so alignment and padding of the host do not matter.
#include "net/sync_wire.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "net/byteorder.h"

namespace xvs::net {

namespace {

void put_addr(uint8_t* p, const InetAddr& a, bool v6) {
    if (v6)
        std::memcpy(p, a.b, 16);
    else
        store_wire32(p, a.v4_be());
}

InetAddr get_addr(const uint8_t* p, bool v6) {
    return v6 ? InetAddr::v6(p) : InetAddr::v4(load_wire32(p));
}

size_t params_size(const SyncConn& c) {
    size_t n = 0;
    if (c.has_seq) n += 2 + kSyncOptSeqLen;
    if (c.has_xvs) n += 2 + kSyncOptXvsConnLen;
    if (c.has_feat) n += 2 + kSyncOptXvsFeatLen;
    if (c.has_synproxy) n += 2 + kSyncOptXvsSynproxyLen;
    return n;
}

void put_seq(uint8_t* p, const SyncSeq& s) {
    store_be32(p, s.init_seq);
    store_be32(p + 4, s.delta);
    store_be32(p + 8, s.previous_delta);
}
SyncSeq get_seq(const uint8_t* p) { return {load_be32(p), load_be32(p + 4), load_be32(p + 8)}; }

// Writes the entry (no padding) at p; returns its size.
size_t put_conn(uint8_t* p, const SyncConn& c) {
    const size_t fixed = c.v6 ? kSyncConnV6Size : kSyncConnV4Size;
    const size_t size = fixed + params_size(c);
    p[0] = c.v6 ? 1 : 0;
    p[1] = c.proto;
    store_be16(p + 2, static_cast<uint16_t>(size));  // version 0 in the top 4 bits
    store_be32(p + 4, c.flags);
    store_be16(p + 8, c.state);
    store_wire16(p + 10, c.cport);
    store_wire16(p + 12, c.vport);
    store_wire16(p + 14, c.dport);
    store_be32(p + 16, c.fwmark);
    store_be32(p + 20, c.timeout_s);
    const size_t alen = c.v6 ? 16 : 4;
    put_addr(p + 24, c.caddr, c.v6);
    put_addr(p + 24 + alen, c.vaddr, c.v6);
    put_addr(p + 24 + 2 * alen, c.daddr, c.v6);
    uint8_t* q = p + fixed;
    if (c.has_seq) {
        q[0] = kSyncOptSeq;
        q[1] = kSyncOptSeqLen;
        put_seq(q + 2, c.in_seq);
        put_seq(q + 14, c.out_seq);
        q += 2 + kSyncOptSeqLen;
    }
    if (c.has_xvs) {
        q[0] = kSyncOptXvsConn;
        q[1] = kSyncOptXvsConnLen;
        q[2] = c.xvs.mode;
        q[3] = 0;
        store_be16(q + 4, c.xvs.conn_flags);
        std::memcpy(q + 6, c.xvs.laddr.b, 16);
        store_wire16(q + 22, c.xvs.lport);
        q += 2 + kSyncOptXvsConnLen;
    }
    if (c.has_feat) {
        q[0] = kSyncOptXvsFeat;
        q[1] = kSyncOptXvsFeatLen;
        store_be32(q + 2, c.feat.rs_isn);
        store_be32(q + 6, c.feat.client_isn);
        store_wire16(q + 10, c.feat.pp_window);
        q[12] = c.feat.pp_len;
        q[13] = c.feat.pp_rexmits;
        q += 2 + kSyncOptXvsFeatLen;
    }
    if (c.has_synproxy) {
        q[0] = kSyncOptXvsSynproxy;
        q[1] = kSyncOptXvsSynproxyLen;
        store_be32(q + 2, c.synproxy.seq_delta);
        store_be32(q + 6, c.synproxy.ts_delta);
        q[10] = c.synproxy.rs_wscale;
        q[11] = c.synproxy.our_wscale;
    }
    return size;
}

std::string bad(const std::string& what) { return "sync message refused: " + what; }

// Parameters of one entry, [p, end). Returns false (with *why) when the message must go;
// *skip when only this conn must (an unknown mandatory parameter).
bool get_params(const uint8_t* p, const uint8_t* end, SyncConn& c, bool* skip, std::string* why) {
    while (p < end) {
        if (end - p < 2) {
            *why = bad("a parameter header runs past its conn entry");
            return false;
        }
        const uint8_t type = p[0];
        const uint8_t len = p[1];
        p += 2;
        if (len == 0 || len > end - p) {
            *why = bad("parameter " + std::to_string(type) + " has length " + std::to_string(len) +
                       (len == 0 ? "" : ", past its conn entry"));
            return false;
        }
        auto want = [&](size_t n, bool& seen) {
            if (len != n || seen) {
                *why = bad("parameter " + std::to_string(type) +
                           (seen ? " found twice" : " has length " + std::to_string(len) +
                                                        ", not " + std::to_string(n)));
                return false;
            }
            seen = true;
            return true;
        };
        switch (type) {
            case kSyncOptSeq:
            case kSyncOptSeq | kSyncOptOptional:
                if (!want(kSyncOptSeqLen, c.has_seq)) return false;
                c.in_seq = get_seq(p);
                c.out_seq = get_seq(p + 12);
                break;
            case kSyncOptXvsConn:
                if (!want(kSyncOptXvsConnLen, c.has_xvs)) return false;
                c.xvs.mode = p[0];
                c.xvs.conn_flags = load_be16(p + 2);
                c.xvs.laddr = InetAddr::v6(p + 4);
                c.xvs.lport = load_wire16(p + 20);
                break;
            case kSyncOptXvsFeat:
                if (!want(kSyncOptXvsFeatLen, c.has_feat)) return false;
                c.feat.rs_isn = load_be32(p);
                c.feat.client_isn = load_be32(p + 4);
                c.feat.pp_window = load_wire16(p + 8);
                c.feat.pp_len = p[10];
                c.feat.pp_rexmits = p[11];
                break;
            case kSyncOptXvsSynproxy:
                if (!want(kSyncOptXvsSynproxyLen, c.has_synproxy)) return false;
                c.synproxy.seq_delta = load_be32(p);
                c.synproxy.ts_delta = load_be32(p + 4);
                c.synproxy.rs_wscale = p[8];
                c.synproxy.our_wscale = p[9];
                break;
            default:
                // Persistence engine data/name (xvs has no engine that needs them) and any
                // parameter this version does not know: an optional one is skipped, a
                // mandatory one means the conn cannot be understood.
                if ((type & ~kSyncOptOptional) != kSyncOptPeData &&
                    (type & ~kSyncOptOptional) != kSyncOptPeName && !(type & kSyncOptOptional))
                    *skip = true;
                break;
        }
        p += len;
    }
    return true;
}

}  // namespace

size_t sync_conn_wire_size(const SyncConn& c) {
    return (c.v6 ? kSyncConnV6Size : kSyncConnV4Size) + params_size(c);
}

SyncEncoder::SyncEncoder(uint8_t syncid, size_t max_size)
    : buf_(std::clamp<size_t>(max_size, kSyncHeaderSize + kSyncConnV6Size + 128, kSyncMaxMessage)),
      syncid_(syncid) {
    reset();
}

void SyncEncoder::reset() {
    std::fill(buf_.begin(), buf_.begin() + kSyncHeaderSize, uint8_t{0});
    buf_[1] = syncid_;
    buf_[5] = kSyncVersion;
    len_ = kSyncHeaderSize;
    count_ = 0;
    store_be16(buf_.data() + 2, static_cast<uint16_t>(len_));
}

bool SyncEncoder::add(const SyncConn& c) {
    // Padding goes before an entry, after the previous one (the last entry is not padded).
    const size_t pad = (4 - (len_ & 3)) & 3;
    const size_t size = sync_conn_wire_size(c);
    if (count_ == 255 || len_ + pad + size > buf_.size()) return false;
    std::fill(buf_.begin() + static_cast<ptrdiff_t>(len_),
              buf_.begin() + static_cast<ptrdiff_t>(len_ + pad), uint8_t{0});
    len_ += pad;
    len_ += put_conn(buf_.data() + len_, c);
    ++count_;
    buf_[4] = static_cast<uint8_t>(count_);
    store_be16(buf_.data() + 2, static_cast<uint16_t>(len_));
    return true;
}

std::vector<uint8_t> sync_encode_control(uint8_t syncid, const SyncControl& c) {
    const size_t naddrs = std::min<size_t>(c.laddrs.size(), kSyncControlMaxAddrs);
    std::vector<uint8_t> out(kSyncHeaderSize + kSyncControlSize + 16 * naddrs, 0);
    uint8_t* p = out.data();
    p[1] = syncid;
    store_be16(p + 2, static_cast<uint16_t>(out.size()));
    p[5] = kSyncVersion;
    uint8_t* t = p + kSyncHeaderSize;
    store_be32(t, kSyncControlMagic);
    t[4] = static_cast<uint8_t>(c.kind);
    t[5] = static_cast<uint8_t>(c.role);
    t[6] = c.flags;
    t[7] = static_cast<uint8_t>(naddrs);
    store_be32(t + 8, c.node_id);
    store_be32(t + 12, c.seq);
    for (size_t i = 0; i < naddrs; ++i) std::memcpy(t + 16 + 16 * i, c.laddrs[i].b, 16);
    return out;
}

Result<SyncMessage> sync_decode(std::span<const uint8_t> d) {
    if (d.size() < kSyncHeaderSize)
        return make_error(bad(std::to_string(d.size()) + " bytes, shorter than the 8-byte header"));
    if (d.size() > kSyncMaxMessage)
        return make_error(bad(std::to_string(d.size()) + " bytes, more than " +
                              std::to_string(kSyncMaxMessage)));
    const uint8_t* const buf = d.data();
    const uint8_t* const end = buf + d.size();
    if (load_be16(buf + 2) != d.size())
        return make_error(bad("size field " + std::to_string(load_be16(buf + 2)) + " but " +
                              std::to_string(d.size()) + " bytes received"));
    if (buf[0] != 0 || buf[5] != kSyncVersion || load_be16(buf + 6) != 0)
        return make_error(bad("not a version 1 message (reserved " + std::to_string(buf[0]) +
                              ", version " + std::to_string(buf[5]) + ")"));
    SyncMessage m;
    m.syncid = buf[1];
    const unsigned nr = buf[4];
    const uint8_t* p = buf + kSyncHeaderSize;
    std::string why;
    for (unsigned i = 0; i < nr; ++i) {
        if (end - p < static_cast<ptrdiff_t>(kSyncConnV4Size))
            return make_error(bad("conn " + std::to_string(i) + " of " + std::to_string(nr) +
                                  " runs past the message"));
        const uint16_t ver_size = load_be16(p + 2);
        const size_t size = ver_size & 0x0fff;
        if (ver_size >> 12)
            return make_error(bad("conn entry version " + std::to_string(ver_size >> 12)));
        if (size > static_cast<size_t>(end - p))
            return make_error(bad("conn " + std::to_string(i) + " of " + std::to_string(size) +
                                  " bytes runs past the message"));
        SyncConn c;
        if (p[0] & ~1u) return make_error(bad("conn type " + std::to_string(p[0])));
        c.v6 = p[0] & 1;
        const size_t fixed = c.v6 ? kSyncConnV6Size : kSyncConnV4Size;
        if (size < fixed)
            return make_error(bad("conn entry of " + std::to_string(size) + " bytes, less than " +
                                  std::to_string(fixed)));
        c.proto = p[1];
        c.flags = load_be32(p + 4);
        c.state = load_be16(p + 8);
        c.cport = load_wire16(p + 10);
        c.vport = load_wire16(p + 12);
        c.dport = load_wire16(p + 14);
        c.fwmark = load_be32(p + 16);
        c.timeout_s = load_be32(p + 20);
        const size_t alen = c.v6 ? 16 : 4;
        c.caddr = get_addr(p + 24, c.v6);
        c.vaddr = get_addr(p + 24 + alen, c.v6);
        c.daddr = get_addr(p + 24 + 2 * alen, c.v6);
        bool skip = false;
        if (!get_params(p + fixed, p + size, c, &skip, &why)) return make_error(why);
        if (skip)
            ++m.conns_skipped;
        else
            m.conns.push_back(c);
        // The next entry starts on a 4-byte boundary (from the message start).
        const size_t next = static_cast<size_t>(p - buf) + size;
        p = buf + std::min(d.size(), (next + 3) & ~size_t{3});
    }
    if (nr == 0 && end - p >= 4 && load_be32(p) == kSyncControlMagic) {
        if (end - p < static_cast<ptrdiff_t>(kSyncControlSize))
            return make_error(bad("control trailer of " + std::to_string(end - p) + " bytes"));
        const uint8_t kind = p[4], role = p[5], naddrs = p[7];
        if (kind < 1 || kind > 3 || role < 1 || role > 3)
            return make_error(bad("control kind " + std::to_string(kind) + " role " +
                                  std::to_string(role)));
        if (naddrs > kSyncControlMaxAddrs ||
            static_cast<size_t>(end - p) != kSyncControlSize + size_t{16} * naddrs)
            return make_error(bad("control trailer with " + std::to_string(naddrs) +
                                  " addresses in " + std::to_string(end - p) + " bytes"));
        m.has_control = true;
        m.control.kind = static_cast<SyncControlKind>(kind);
        m.control.role = static_cast<SyncRole>(role);
        m.control.flags = p[6];
        m.control.node_id = load_be32(p + 8);
        m.control.seq = load_be32(p + 12);
        for (size_t i = 0; i < naddrs; ++i)
            m.control.laddrs.push_back(InetAddr::v6(p + kSyncControlSize + 16 * i));
    }
    return m;
}

}  // namespace xvs::net
