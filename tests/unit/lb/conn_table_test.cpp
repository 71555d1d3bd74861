// ConnTable: insert/lookup in both directions, removal, pool exhaustion, bulk lookup agreeing
// with single lookups, and a high-load churn run checked against a reference map.
#include "lb/conn_table.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <random>
#include <tuple>
#include <cstring>
#include <vector>

#include "lb/xmit/xmit.h"

namespace xvs::lb {
namespace {

Conn* make(ConnTable& t, uint32_t client, uint16_t cport, uint16_t lport, uint8_t proto = 6) {
    Conn* c = t.alloc(false);
    if (!c) return nullptr;
    c->proto = proto;
    // 10.1.1.100 the VIP, 10.2.2.100 the local address, 10.2.2.2 the RS.
    c->set_addrs(net::InetAddr::v4(client), net::InetAddr::v4(0x6401010a),
                 net::InetAddr::v4(0x6402020a), net::InetAddr::v4(0x0202020a));
    c->cport = cport;
    c->vport = 0x5000;
    c->dport = 0x901f;
    c->lport = lport;
    return c;
}

ConnKey key_in(const Conn& c) {
    return conn_key(c.proto, c.caddr(), c.vaddr(), c.cport, c.vport);
}
ConnKey key_out(const Conn& c) {
    return conn_key(c.proto, c.daddr(), c.laddr_ip(), c.dport, c.lport);
}

// conn_key stores the ports, proto and padding as one word: each field reads back as given,
// and the padding is zero (the table hashes all 40 bytes, so equal tuples must be equal keys).
TEST(ConnKey, FieldsReadBackAndPaddingIsZero) {
    const net::InetAddr s6 = *net::parse_inet("2001:db8::1");
    for (const auto& [saddr, daddr] :
         {std::pair{net::InetAddr::v4(0x0201010a), net::InetAddr::v4(0x6401010a)},
          std::pair{s6, net::InetAddr::v4(0xffffffff)}}) {
        const ConnKey k = conn_key(17, saddr, daddr, 0xa1b2, 0xc3d4);
        EXPECT_EQ(k.saddr, saddr);
        EXPECT_EQ(k.daddr, daddr);
        EXPECT_EQ(k.sport, 0xa1b2);
        EXPECT_EQ(k.dport, 0xc3d4);
        EXPECT_EQ(k.proto, 17);
        EXPECT_EQ(k.pad[0] | k.pad[1] | k.pad[2], 0);
        ConnKey fieldwise{};  // value-initialized: the padding is zero
        fieldwise.saddr = saddr;
        fieldwise.daddr = daddr;
        fieldwise.sport = 0xa1b2;
        fieldwise.dport = 0xc3d4;
        fieldwise.proto = 17;
        EXPECT_EQ(std::memcmp(&k, &fieldwise, sizeof k), 0);
    }
}

TEST(ConnTable, FindsBothDirections) {
    auto t = ConnTable::create("t1", 16);
    ASSERT_TRUE(t.ok()) << t.error();
    Conn* c = make(**t, 0x0201010a, 1234, 5000);
    ASSERT_TRUE((*t)->insert(c));
    ConnRef in = (*t)->lookup(key_in(*c));
    ConnRef out = (*t)->lookup(key_out(*c));
    EXPECT_EQ(in.conn, c);
    EXPECT_EQ(in.dir, ConnDir::In);
    EXPECT_EQ(out.conn, c);
    EXPECT_EQ(out.dir, ConnDir::Out);
    // Same tuple, other protocol: not found.
    ConnKey udp = key_in(*c);
    udp.proto = 17;
    EXPECT_EQ((*t)->lookup(udp).conn, nullptr);
    // Reversed tuple is not the outbound key.
    ConnKey rev = conn_key(6, c->vaddr(), c->caddr(), c->vport, c->cport);
    EXPECT_EQ((*t)->lookup(rev).conn, nullptr);
}

// adds() moves with every tuple insertion (maybe_added answers "no" for every miss while it
// has not moved since the bulk lookup) and not with lookups or removals.
TEST(ConnTable, AddsCountsTupleInsertions) {
    auto t = ConnTable::create("t5", 16);
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ((*t)->adds(), 0u);
    Conn* c = make(**t, 0x0201010a, 1234, 5000);
    ASSERT_TRUE((*t)->insert(c));
    EXPECT_EQ((*t)->adds(), 2u);  // FULLNAT: inbound and outbound tuple
    (void)(*t)->lookup(key_in(*c));
    (*t)->remove(c);
    EXPECT_EQ((*t)->adds(), 2u);
    ASSERT_TRUE((*t)->insert(c));
    EXPECT_EQ((*t)->adds(), 4u);
}

// maybe_added: a miss of the last lookup_bulk is a "maybe" only once a key of its signature
// was inserted since (lb_handle looks it up again then, else trusts the miss).
TEST(ConnTable, MaybeAddedTracksInsertionsSinceBulkLookup) {
    auto t = ConnTable::create("t6", 4096);
    ASSERT_TRUE(t.ok()) << t.error();
    ConnTable& tab = **t;
    Conn* a = make(tab, 0x0201010a, 1234, 5000);
    const ConnKey a_in = key_in(*a), a_out = key_out(*a);
    // Signatures of a's two tuples, from misses of a bulk lookup.
    const ConnKey* ka[2] = {&a_in, &a_out};
    ConnRef ra[2];
    tab.lookup_bulk(ka, 2, ra);
    ASSERT_EQ(ra[0].conn, nullptr);
    ASSERT_EQ(ra[1].conn, nullptr);
    ASSERT_NE(ra[0].sig, ConnRef::kNoSig);
    auto bit = [](uint32_t sig) { return sig % 512; };
    // A client whose inbound signature shares no bit with a's tuples.
    ConnKey b_in{};
    ConnRef rb{};
    for (uint32_t client = 0x0301010a; client < 0x0301010a + 1000; client += 0x100) {
        b_in = conn_key(6, net::InetAddr::v4(client), a->vaddr(), 999, a->vport);
        const ConnKey* kb[1] = {&b_in};
        tab.lookup_bulk(kb, 1, &rb);
        if (bit(rb.sig) != bit(ra[0].sig) && bit(rb.sig) != bit(ra[1].sig)) break;
    }
    ASSERT_NE(bit(rb.sig), bit(ra[0].sig));
    ASSERT_NE(bit(rb.sig), bit(ra[1].sig));
    // One bulk lookup of both clients, then a's conn made (as an earlier packet of the burst).
    const ConnKey* kab[2] = {&a_in, &b_in};
    ConnRef r[2];
    tab.lookup_bulk(kab, 2, r);
    EXPECT_FALSE(tab.maybe_added(r[0]));
    EXPECT_FALSE(tab.maybe_added(r[1]));
    EXPECT_FALSE(tab.maybe_added(ConnRef{}));
    ASSERT_TRUE(tab.insert(a));
    EXPECT_TRUE(tab.maybe_added(r[0]));   // a's own: must be looked up again, and is there
    EXPECT_EQ(tab.lookup(a_in).conn, a);
    EXPECT_FALSE(tab.maybe_added(r[1]));  // b's: still a miss, no second search
    EXPECT_TRUE(tab.maybe_added(ConnRef{}));  // not from lookup_bulk: any insertion counts
    // The next bulk lookup starts a new window.
    tab.lookup_bulk(kab, 2, r);
    EXPECT_EQ(r[0].conn, a);
    EXPECT_EQ(r[1].conn, nullptr);
    EXPECT_FALSE(tab.maybe_added(r[1]));
    EXPECT_FALSE(tab.maybe_added(ConnRef{}));
}

// insert with the inbound tuple's miss from lookup_bulk takes that call's hash of it (a new
// flow's key is not hashed twice); a ref of an earlier lookup_bulk whose place now holds
// another key's hash is hashed again. Either way the conn is found in both directions.
TEST(ConnTable, InsertWithBulkMissFindsTheConn) {
    auto t = ConnTable::create("t7", 4096);
    ASSERT_TRUE(t.ok()) << t.error();
    ConnTable& tab = **t;
    Conn* c[4];
    ConnKey in[4];
    for (unsigned i = 0; i < 4; ++i) {
        c[i] = make(tab, 0x0201010a + (i << 24), static_cast<uint16_t>(1000 + i),
                    static_cast<uint16_t>(5000 + i));
        in[i] = key_in(*c[i]);
    }
    const ConnKey* k3[3] = {&in[0], &in[1], &in[2]};
    ConnRef r[3];
    tab.lookup_bulk(k3, 3, r);
    for (const ConnRef& ref : r) ASSERT_EQ(ref.conn, nullptr);
    EXPECT_EQ(r[1].bulk_index, 1);
    ASSERT_TRUE(tab.insert(c[1], r[1]));
    // A later lookup_bulk keeps c[3]'s hash where c[0]'s was: c[0]'s ref is stale now (its
    // tuple must be hashed again, not put in c[3]'s buckets); c[2]'s place is untouched.
    const ConnKey* k1[1] = {&in[3]};
    ConnRef r3;
    tab.lookup_bulk(k1, 1, &r3);
    ASSERT_EQ(r3.conn, nullptr);
    ASSERT_EQ(r3.bulk_index, r[0].bulk_index);
    ASSERT_NE(r3.sig, r[0].sig);
    ASSERT_TRUE(tab.insert(c[0], r[0]));
    ASSERT_TRUE(tab.insert(c[2], r[2]));
    ASSERT_TRUE(tab.insert(c[3], r3));
    const ConnKey* all[8];
    ConnKey out[4];
    for (unsigned i = 0; i < 4; ++i) {
        out[i] = key_out(*c[i]);
        all[i] = &in[i];
        all[4 + i] = &out[i];
    }
    ConnRef found[8];
    tab.lookup_bulk(all, 8, found);
    for (unsigned i = 0; i < 4; ++i) {
        EXPECT_EQ(found[i].conn, c[i]) << i;
        EXPECT_EQ(found[i].dir, ConnDir::In) << i;
        EXPECT_EQ(found[4 + i].conn, c[i]) << i;
        EXPECT_EQ(found[4 + i].dir, ConnDir::Out) << i;
        EXPECT_EQ(tab.lookup(in[i]).conn, c[i]) << i;
    }
}

// The xmit decides the tuples: a mode without an outbound tuple (DR, TUN: the director never
// sees RS -> client) puts only the inbound one in the table, and remove() takes out just that.
TEST(ConnTable, ModeWithoutOutTupleInsertsInboundOnly) {
    static_assert(xmit_traits(FwdMode::FullNat).inserts_out_tuple);
    static_assert(!xmit_traits(FwdMode::Dr).inserts_out_tuple &&
                  !xmit_traits(FwdMode::Tun).inserts_out_tuple);
    auto t = ConnTable::create("t_in_only", 16);
    ASSERT_TRUE(t.ok()) << t.error();
    Conn* c = make(**t, 0x0201010a, 1234, 5000);
    c->mode = FwdMode::Dr;
    ASSERT_TRUE((*t)->insert(c));
    EXPECT_EQ((*t)->lookup(key_in(*c)).conn, c);
    EXPECT_EQ((*t)->lookup(key_out(*c)).conn, nullptr);
    (*t)->remove(c);
    EXPECT_EQ((*t)->lookup(key_in(*c)).conn, nullptr);
    // A FULLNAT conn on the same outbound tuple is unaffected by the DR conn's removal.
    (*t)->release(c);
    Conn* f = make(**t, 0x0301010a, 1234, 5000);
    ASSERT_TRUE((*t)->insert(f));
    EXPECT_EQ((*t)->lookup(key_out(*f)).conn, f);
    EXPECT_EQ((*t)->lookup(key_out(*f)).dir, ConnDir::Out);
}

// An outbound tuple inserted with its hash_prefetch is queued: found only after settle(); a
// conn removed before settle() takes its queued tuple with it.
TEST(ConnTable, DeferredOutTupleAppearsAtSettle) {
    auto t = ConnTable::create("t6", 16);
    ASSERT_TRUE(t.ok()) << t.error();
    ConnTable& tab = **t;
    Conn* a = make(tab, 0x0201010a, 1234, 5000);
    Conn* b = make(tab, 0x0301010a, 1234, 5001);
    const ConnTable::Hash ha = tab.hash_prefetch(key_out(*a));
    const ConnTable::Hash hb = tab.hash_prefetch(key_out(*b));
    ASSERT_TRUE(tab.insert(a, ConnRef{}, &ha));
    ASSERT_TRUE(tab.insert(b, ConnRef{}, &hb));
    EXPECT_TRUE(tab.unsettled());
    EXPECT_EQ(tab.lookup(key_in(*a)).conn, a);  // the inbound tuple is in at once
    EXPECT_EQ(tab.lookup(key_out(*a)).conn, nullptr);
    const ConnKey b_out = key_out(*b);
    tab.remove(b);
    tab.release(b);
    Conn* failed[ConnTable::kMaxUnsettled];
    EXPECT_EQ(tab.settle(failed), 0u);
    EXPECT_FALSE(tab.unsettled());
    const ConnRef out = tab.lookup(key_out(*a));
    EXPECT_EQ(out.conn, a);
    EXPECT_EQ(out.dir, ConnDir::Out);
    EXPECT_EQ(tab.lookup(b_out).conn, nullptr);
    // Removed after settle(): both tuples go, as for an immediate insert.
    tab.remove(a);
    EXPECT_EQ(tab.lookup(key_out(*a)).conn, nullptr);
    EXPECT_EQ(tab.lookup(key_in(*a)).conn, nullptr);
}

// More new conns than the queue holds: the tuples past it are added at once.
TEST(ConnTable, DeferredOutTupleQueueFullAddsAtOnce) {
    auto t = ConnTable::create("t7", 256);
    ASSERT_TRUE(t.ok()) << t.error();
    ConnTable& tab = **t;
    std::vector<Conn*> conns;
    for (uint32_t i = 0; i < ConnTable::kMaxUnsettled + 3; ++i) {
        Conn* c = make(tab, 0x0a000000u + i, 1000, static_cast<uint16_t>(2000 + i));
        const ConnTable::Hash h = tab.hash_prefetch(key_out(*c));
        ASSERT_TRUE(tab.insert(c, ConnRef{}, &h));
        conns.push_back(c);
    }
    for (uint32_t i = 0; i < conns.size(); ++i)
        EXPECT_EQ(tab.lookup(key_out(*conns[i])).conn != nullptr, i >= ConnTable::kMaxUnsettled) << i;
    Conn* failed[ConnTable::kMaxUnsettled];
    EXPECT_EQ(tab.settle(failed), 0u);
    for (Conn* c : conns) EXPECT_EQ(tab.lookup(key_out(*c)).conn, c);
}

// settle() reports a queued outbound tuple whose two buckets are full; the conn keeps its
// inbound tuple for the caller to end it.
TEST(ConnTable, DeferredOutTupleIntoFullBucketsFails) {
    auto t = ConnTable::create("t8", 64);
    ASSERT_TRUE(t.ok()) << t.error();
    ConnTable& tab = **t;
    // One conn inserted again and again fills its tuples' bucket pairs (every entry in them
    // is its own, whose other bucket is in the same pair: no displacement helps).
    Conn* a = make(tab, 0x0201010a, 1234, 5000);
    int inserts = 0;
    while (tab.insert(a) && inserts < 1000) ++inserts;
    ASSERT_LT(inserts, 1000);
    // Another client (its inbound tuple elsewhere) whose outbound tuple is a's.
    Conn* b = make(tab, 0x0901010a, 4321, 5000);
    const ConnTable::Hash hb = tab.hash_prefetch(key_out(*b));
    ASSERT_TRUE(tab.insert(b, ConnRef{}, &hb));
    Conn* failed[ConnTable::kMaxUnsettled];
    ASSERT_EQ(tab.settle(failed), 1u);
    EXPECT_EQ(failed[0], b);
    EXPECT_EQ(tab.lookup(key_in(*b)).conn, b);
    EXPECT_FALSE(tab.unsettled());
}

TEST(ConnTable, RemoveAndReuse) {
    auto t = ConnTable::create("t2", 4);
    ASSERT_TRUE(t.ok());
    Conn* c = make(**t, 1, 2, 3);
    ASSERT_TRUE((*t)->insert(c));
    ConnKey k = key_in(*c);
    (*t)->remove(c);
    (*t)->release(c);
    EXPECT_EQ((*t)->lookup(k).conn, nullptr);
    EXPECT_EQ((*t)->in_use(), 0u);
}

TEST(ConnTable, PoolExhaustion) {
    auto t = ConnTable::create("t3", 3);
    ASSERT_TRUE(t.ok());
    for (int i = 0; i < 3; ++i) ASSERT_NE(make(**t, i, i, i), nullptr);
    EXPECT_EQ((*t)->alloc(false), nullptr);
    EXPECT_EQ((*t)->in_use(), 3u);
}

// A wide conn (any address not IPv4) takes an aligned pair of slots and holds its four
// addresses in the second; the tuples are found both ways and read back whole.
TEST(ConnTable, WideConnHoldsIpv6AddressesInItsSecondSlot) {
    auto t = ConnTable::create("t_wide", 8);
    ASSERT_TRUE(t.ok());
    Conn* narrow = make(**t, 0x0101010a, 1000, 2000);
    ASSERT_TRUE((*t)->insert(narrow));
    const auto c6 = *net::parse_inet("2001:db8::1");
    const auto v6 = *net::parse_inet("2001:db8::100");
    const auto l4 = net::InetAddr::v4(0x6402020a);
    const auto d4 = net::InetAddr::v4(0x0202020a);
    ASSERT_TRUE(Conn::needs_wide(c6, v6, l4, d4));  // NAT64: a pair
    ASSERT_FALSE(Conn::needs_wide(d4, d4, net::InetAddr{}, d4));  // a template's unset laddr
    Conn* wide = (*t)->alloc(true);
    ASSERT_NE(wide, nullptr);
    EXPECT_EQ((*t)->index_of(wide) % 2, 0u);
    EXPECT_NE((*t)->index_of(wide) / 2, (*t)->index_of(narrow) / 2);  // not the split pair
    wide->proto = 6;
    wide->set_addrs(c6, v6, l4, d4);
    wide->cport = 1;
    wide->vport = 2;
    wide->lport = 3;
    wide->dport = 4;
    ASSERT_TRUE((*t)->insert(wide));
    EXPECT_EQ(wide->caddr(), c6);
    EXPECT_EQ(wide->vaddr(), v6);
    EXPECT_EQ(wide->laddr_ip(), l4);
    EXPECT_EQ(wide->daddr(), d4);
    // The packet path's readers: an IPv6 header's addresses from the second slot, an IPv4
    // header's (NAT64's RS side) from the 4-byte fields the wide conn fills too.
    EXPECT_EQ(wide->caddr_as<net::Af6>(), c6);
    EXPECT_EQ(wide->vaddr_as<net::Af6>(), v6);
    EXPECT_EQ(wide->laddr_as<net::Af4>(), l4.v4_be());
    EXPECT_EQ(wide->daddr_as<net::Af4>(), d4.v4_be());
    EXPECT_EQ(narrow->caddr_as<net::Af4>(), 0x0101010au);
    EXPECT_EQ((*t)->lookup(key_in(*wide)).conn, wide);
    EXPECT_EQ((*t)->lookup(key_out(*wide)).conn, wide);
    EXPECT_EQ((*t)->lookup(key_in(*narrow)).conn, narrow);
    EXPECT_EQ((*t)->in_use(), 2u);
    EXPECT_EQ((*t)->slots_in_use(), 3u);
    // The walkers see two conns; the pair's second slot is none.
    std::vector<const Conn*> seen;
    (*t)->for_each([&](const Conn& c) { seen.push_back(&c); });
    EXPECT_EQ(seen.size(), 2u);
    std::vector<const Conn*> walked;
    for (uint32_t i = 0; i < (*t)->capacity(); ++i)
        if (const Conn* c = (*t)->live(i)) walked.push_back(c);
    EXPECT_EQ(walked, seen);
    EXPECT_EQ((*t)->live((*t)->index_of(wide) + 1), nullptr);
    (*t)->remove(wide);
    (*t)->release(wide);
    EXPECT_EQ((*t)->lookup(key_in(*narrow)).conn, narrow);
    EXPECT_EQ((*t)->slots_in_use(), 1u);
}

// Pairs are split for singles only when no single is free, and a freed slot whose buddy is
// free makes a pair again: after any order of releases the whole pool is pairs once more.
TEST(ConnTable, PairsSplitLastAndMergeBack) {
    auto t = ConnTable::create("t_buddy", 8);
    ASSERT_TRUE(t.ok());
    std::vector<Conn*> singles;
    for (int i = 0; i < 3; ++i) singles.push_back((*t)->alloc(false));  // slots 0, 1, 2
    for (int i = 0; i < 3; ++i) EXPECT_EQ((*t)->index_of(singles[i]), uint32_t(i));
    Conn* w1 = (*t)->alloc(true);  // slot 3 stays the only single
    ASSERT_NE(w1, nullptr);
    EXPECT_EQ((*t)->index_of(w1), 4u);
    Conn* s3 = (*t)->alloc(false);
    EXPECT_EQ((*t)->index_of(s3), 3u);  // the free single, not the last pair
    Conn* w2 = (*t)->alloc(true);
    EXPECT_EQ((*t)->index_of(w2), 6u);
    EXPECT_EQ((*t)->alloc(true), nullptr);
    EXPECT_EQ((*t)->alloc(false), nullptr);
    // Slots 0 and 3 free: half of two pairs each, so no pair yet.
    (*t)->release(singles[0]);
    (*t)->release(s3);
    EXPECT_EQ((*t)->alloc(true), nullptr);
    (*t)->release(singles[2]);  // 2 and 3: a pair again
    Conn* w3 = (*t)->alloc(true);
    ASSERT_NE(w3, nullptr);
    EXPECT_EQ((*t)->index_of(w3), 2u);
    for (Conn* c : {singles[1], w1, w2, w3}) (*t)->release(c);
    EXPECT_EQ((*t)->in_use(), 0u);
    for (int i = 0; i < 4; ++i) EXPECT_NE((*t)->alloc(true), nullptr) << i;
    EXPECT_EQ((*t)->alloc(false), nullptr);
}

// An odd capacity's last slot serves one narrow conn, after the pairs.
TEST(ConnTable, OddCapacityLastSlotIsASingle) {
    auto t = ConnTable::create("t_odd", 5);
    ASSERT_TRUE(t.ok());
    EXPECT_NE((*t)->alloc(true), nullptr);
    EXPECT_NE((*t)->alloc(true), nullptr);
    EXPECT_EQ((*t)->alloc(true), nullptr);
    Conn* last = (*t)->alloc(false);
    ASSERT_NE(last, nullptr);
    EXPECT_EQ((*t)->index_of(last), 4u);
    EXPECT_EQ((*t)->alloc(false), nullptr);
    (*t)->release(last);
    EXPECT_EQ((*t)->alloc(true), nullptr);  // its buddy is past the end: never a pair
    EXPECT_EQ((*t)->alloc(false), last);
}

// Narrow and wide conns churned at random against a reference: every live conn is found both
// ways with its addresses intact, the walkers agree, and once all are gone the pool is whole.
TEST(ConnTable, ChurnOfMixedWidthsMatchesReference) {
    const uint32_t cap = 4096;
    auto t = ConnTable::create("t_mixed", cap);
    ASSERT_TRUE(t.ok());
    std::mt19937_64 rng(11);
    struct Want {
        Conn* c;
        net::InetAddr caddr, daddr;
    };
    std::vector<Want> live;
    uint32_t serial = 0, wide_failed = 0;
    for (int round = 0; round < 60000; ++round) {
        if (live.empty() || rng() % 5 < 3) {  // fills the pool, then churns it full
            const bool wide = rng() % 3 == 0;
            Conn* c = (*t)->alloc(wide);
            if (!c) {
                wide_failed += wide;
                continue;
            }
            ++serial;
            uint8_t b6[16] = {0x20, 0x01, 0x0d, 0xb8};
            std::memcpy(b6 + 12, &serial, 4);
            const net::InetAddr caddr = wide ? net::InetAddr::v6(b6) : net::InetAddr::v4(serial);
            const net::InetAddr vaddr = wide ? caddr : net::InetAddr::v4(0x6401010a);
            const net::InetAddr daddr = net::InetAddr::v4(0x0202020a + (serial << 8));
            c->proto = 17;
            c->set_addrs(caddr, vaddr, net::InetAddr::v4(0x6402020a), daddr);
            c->cport = c->lport = static_cast<uint16_t>(serial);
            c->vport = c->dport = 0x3500;
            ASSERT_TRUE((*t)->insert(c));
            live.push_back({c, caddr, daddr});
        } else {
            const size_t i = rng() % live.size();
            (*t)->remove(live[i].c);
            (*t)->release(live[i].c);
            live[i] = live.back();
            live.pop_back();
        }
    }
    EXPECT_GT(wide_failed, 0u);          // it was full
    EXPECT_GT(live.size(), cap / 2);  // and pairs were found while singles came and went
    std::set<const Conn*> want;
    for (const Want& w : live) {
        ASSERT_EQ(w.c->caddr(), w.caddr);
        ASSERT_EQ(w.c->daddr(), w.daddr);
        ASSERT_EQ((*t)->lookup(key_in(*w.c)).conn, w.c);
        ASSERT_EQ((*t)->lookup(key_out(*w.c)).conn, w.c);
        want.insert(w.c);
    }
    std::set<const Conn*> seen, walked;
    (*t)->for_each([&](const Conn& c) { seen.insert(&c); });
    for (uint32_t i = 0; i < cap; ++i)
        if (const Conn* c = (*t)->live(i)) walked.insert(c);
    EXPECT_EQ(seen, want);
    EXPECT_EQ(walked, want);
    EXPECT_EQ((*t)->in_use(), live.size());
    for (const Want& w : live) {
        (*t)->remove(w.c);
        (*t)->release(w.c);
    }
    for (uint32_t i = 0; i < cap / 2; ++i) ASSERT_NE((*t)->alloc(true), nullptr) << i;
    EXPECT_EQ((*t)->alloc(false), nullptr);
}

TEST(ConnTable, RejectsZeroSize) { EXPECT_FALSE(ConnTable::create("t4", 0).ok()); }

TEST(ConnTable, ChurnAtFullCapacityMatchesReference) {
    const uint32_t cap = 50000;
    auto t = ConnTable::create("t5", cap);
    ASSERT_TRUE(t.ok());
    std::mt19937_64 rng(7);
    std::set<std::tuple<uint32_t, uint16_t>> clients;
    std::vector<Conn*> live_vec;
    uint32_t failed_inserts = 0;
    uint32_t serial = 0;
    for (int round = 0; round < 300000; ++round) {
        if (live_vec.size() < cap && (rng() % 3 != 0 || live_vec.empty())) {
            uint32_t client = static_cast<uint32_t>(rng());
            uint16_t cport = static_cast<uint16_t>(rng());
            if (clients.count({client, cport})) continue;
            Conn* c = make(**t, client, cport, 0);
            ASSERT_NE(c, nullptr);
            // Outbound tuples must be unique too (as FULLNAT's local port allocation makes them).
            c->set_addrs(c->caddr(), c->vaddr(), net::InetAddr::v4(0x0a000000u + serial / 60000),
                         c->daddr());
            c->lport = static_cast<uint16_t>(1025 + serial % 60000);
            ++serial;
            if (!(*t)->insert(c)) {
                ++failed_inserts;
                (*t)->release(c);
                continue;
            }
            clients.insert({client, cport});
            live_vec.push_back(c);
        } else {
            size_t i = rng() % live_vec.size();
            Conn* c = live_vec[i];
            clients.erase({c->caddr().v4_be(), c->cport});
            (*t)->remove(c);
            (*t)->release(c);
            live_vec[i] = live_vec.back();
            live_vec.pop_back();
        }
    }
    EXPECT_EQ(failed_inserts, 0u);
    ASSERT_GT(live_vec.size(), cap / 2);
    std::map<std::tuple<uint32_t, uint16_t>, Conn*> live;
    for (Conn* c : live_vec) live[{c->caddr().v4_be(), c->cport}] = c;
    // Every live conn is found both ways, through single and bulk lookups.
    std::vector<ConnKey> keys;
    std::vector<Conn*> expect;
    for (auto& [k, c] : live) {
        ASSERT_EQ((*t)->lookup(key_in(*c)).conn, c);
        ConnRef o = (*t)->lookup(key_out(*c));
        ASSERT_EQ(o.conn, c);
        ASSERT_EQ(o.dir, ConnDir::Out);
        keys.push_back(key_in(*c));
        expect.push_back(c);
        if (keys.size() == 3) {  // plus misses mixed into the bulk
            keys.push_back(conn_key(6, net::InetAddr::v4(1), net::InetAddr::v4(2), 3, 4));
            expect.push_back(nullptr);
        }
    }
    for (size_t base = 0; base < keys.size(); base += ConnTable::kMaxBulk) {
        unsigned n = static_cast<unsigned>(std::min<size_t>(ConnTable::kMaxBulk, keys.size() - base));
        const ConnKey* ptrs[ConnTable::kMaxBulk];
        ConnRef refs[ConnTable::kMaxBulk];
        for (unsigned i = 0; i < n; ++i) ptrs[i] = &keys[base + i];
        (*t)->lookup_bulk(ptrs, n, refs);
        for (unsigned i = 0; i < n; ++i) ASSERT_EQ(refs[i].conn, expect[base + i]) << base + i;
    }
    // An IPv4 conn's slot (64) + hash slots at <= 50% load (32 for the two tuples, 42 here
    // with the buckets rounded up to a power of two); the free lists take no memory of their own.
    static_assert(sizeof(Conn) == 64);
    EXPECT_LE((*t)->memory_bytes() / cap, 106u);
}

}  // namespace
}  // namespace xvs::lb

namespace xvs::lb {
namespace {

// The 32-bit deadline reads back exactly across the wrap of its low bits, for deadlines in the
// past (a timer running late) and up to the longest timeout ahead.
TEST(ConnDeadline, ExactAcrossTheWrap) {
    for (const uint64_t now :
         {uint64_t{1000}, uint64_t{0xffffff00}, uint64_t{0x1fffffff0}, uint64_t{0x123456789abc}}) {
        Conn c;
        for (const uint64_t ahead :
             {uint64_t{0}, uint64_t{1}, uint64_t{100'000}, uint64_t{kMaxTimeoutS} * 1000}) {
            c.set_expires(now + ahead);
            EXPECT_EQ(c.expires(now), now + ahead) << now << " + " << ahead;
        }
        for (const uint64_t behind :
             {uint64_t{1}, uint64_t{5'000}, uint64_t{Conn::kDeadlinePastMs}}) {
            if (behind > now) continue;
            c.set_expires(now - behind);
            EXPECT_EQ(c.expires(now), now - behind) << now << " - " << behind;
        }
    }
}

}  // namespace
}  // namespace xvs::lb
