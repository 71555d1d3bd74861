// Unit tests for persistence templates (lb/persist.cpp) on a bare worker context, without DPDK:
// the template key (granularity), template lifetime (kept while conns use it, a timeout after
// its last use or its last conn, refreshed by use), and expire_quiescent_template.
#include "lb/persist.h"

#include <gtest/gtest.h>

#include <memory>

#include "lb/conn_ops.h"
#include "lb/director.h"
#include "lb/worker_ctx.h"

namespace xvs::lb {
namespace {

const net::InetAddr kVip = net::InetAddr::v4(net::hton32(0x0a0a0164));  // 10.10.1.100

net::InetAddr v4(const char* text) {
    return *net::parse_inet(text);
}

bool same(const ConnKey& a, const ConnKey& b) {
    return a.saddr == b.saddr && a.daddr == b.daddr && a.sport == b.sport && a.dport == b.dport &&
           a.proto == b.proto;
}

class PersistTest : public ::testing::Test {
  protected:
    static constexpr uint32_t kTimeoutS = 300;
    static constexpr uint32_t kSlots = 64;

    void SetUp() override { configure(24); }

    void configure(uint8_t prefix) {
        ServiceSpec s{6, kVip, 80, "rr"};
        s.persistence_s = kTimeoutS;
        s.persist_prefix = prefix;
        ASSERT_TRUE(director.service_add(s).ok());
        for (const char* rs : {"10.10.2.2", "10.10.2.3"}) {
            DestSpec d{v4(rs), 8080, 1};
            d.fwd = FwdMode::Nat;
            ASSERT_TRUE(director.dest_add(key(), d).ok());
        }
        director.commit();
        WorkerConfig cfg;
        w = std::make_unique<WorkerCtx>(director, cfg, 0);
        w->snap = director.snapshot();
        auto table = ConnTable::create("persist_test", kSlots);
        ASSERT_TRUE(table.ok());
        w->set_conns(std::move(*table));
        w->feat.resize(kSlots);
        w->laddr.assign(kSlots, nullptr);
        w->persist.assign(kSlots, PersistSlot{});
    }
    static ServiceKey key() { return make_service_key(6, kVip, 80); }
    const ServiceView& view() const { return *w->snap->service(6, kVip, net::hton16(80)); }
    Dest* dest(size_t i) const { return director.service_find(key())->dests[i].get(); }
    void recommit() {
        director.commit();
        w->snap = director.snapshot();
    }
    ConnKey flow(const char* client, uint16_t cport) const {
        return conn_key(6, v4(client), kVip, net::hton16(cport), net::hton16(80));
    }
    ConnKey tkey(const char* client, uint16_t cport) const {
        return persist_key(view(), flow(client, cport), 0);
    }
    Conn* make(const char* client, uint16_t cport, Dest* d) {
        stack::Counter why{};
        return persist_create(*w, view(), tkey(client, cport), d, &why);
    }
    // A conn the template controls (not in the table: only its link matters here).
    Conn* controlled(Conn* tpl) {
        Conn* c = w->conns->alloc(false);
        c->proto = 6;
        persist_attach(*w, c, tpl);
        return c;
    }
    void release(Conn* c) {
        persist_detach(*w, c);
        w->conns->release(c);
    }
    // Moves the clock to t seconds and fires due timers as the worker does.
    void at(uint64_t t_s) {
        w->stack.now_ms = t_s * 1000;
        w->timers.advance(t_s * 1000, [&](TimerNode* n) { conn_timer(*w, n, t_s * 1000); });
    }
    bool alive(const char* client) { return w->conns->lookup(tkey(client, 1)).conn != nullptr; }

    Director director;
    std::unique_ptr<WorkerCtx> w;
};

TEST_F(PersistTest, GranularityGroupsClientsOfOnePrefix) {
    // persistence_granularity 255.255.255.0: 10.0.0.1 and 10.0.0.2 share a template (and so
    // a dest); 10.0.1.1 is another client. The client port never counts.
    EXPECT_TRUE(same(tkey("10.0.0.1", 1000), tkey("10.0.0.2", 2000)));
    EXPECT_FALSE(same(tkey("10.0.0.1", 1000), tkey("10.0.1.1", 1000)));
    Conn* t = make("10.0.0.1", 1000, dest(1));
    ASSERT_NE(t, nullptr);
    Conn* found = persist_lookup(*w, view(), tkey("10.0.0.2", 40000));
    ASSERT_EQ(found, t);
    EXPECT_EQ(found->dest, dest(1));
    EXPECT_EQ(persist_lookup(*w, view(), tkey("10.0.1.1", 1000)), nullptr);
    EXPECT_EQ(dest(1)->stats[0].persist, 1u);
}

TEST(PersistKey, WholeAddressByDefaultAndPortZeroForMarks) {
    Director d;
    ServiceSpec s{6, kVip, 80, "rr"};
    s.persistence_s = 60;
    ASSERT_TRUE(d.service_add(s).ok());
    d.commit();
    const ServiceView& v = *d.snapshot()->service(6, kVip, net::hton16(80));
    const ConnKey a = conn_key(6, v4("10.0.0.1"), kVip, net::hton16(1), net::hton16(80));
    const ConnKey b = conn_key(6, v4("10.0.0.2"), kVip, net::hton16(1), net::hton16(80));
    EXPECT_FALSE(same(persist_key(v, a, 0), persist_key(v, b, 0)));
    const ConnKey k = persist_key(v, a, 0);
    EXPECT_EQ(k.proto, kProtoTemplate);
    EXPECT_EQ(k.sport, 0);
    EXPECT_EQ(k.dport, net::hton16(80));
    // A firewall-mark service's template: the mark where the VIP would be, port 0, so every
    // VIP and port of the mark shares it.
    const ConnKey m = persist_key(v, a, 7);
    EXPECT_EQ(m.daddr, v4("0.0.0.7"));
    EXPECT_EQ(m.dport, 0);
    EXPECT_TRUE(
        same(m, persist_key(v, conn_key(17, v4("10.0.0.1"), v4("10.10.1.101"), 5, 443), 7)));
}

TEST_F(PersistTest, TemplateOutlivesItsConnsByTheTimeout) {
    Conn* t = make("10.0.0.1", 1000, dest(0));
    ASSERT_NE(t, nullptr);
    Conn* c = controlled(t);
    at(kTimeoutS + 1);  // past the first deadline, but a conn uses it
    EXPECT_TRUE(alive("10.0.0.1"));
    at(2 * kTimeoutS + 50);
    EXPECT_TRUE(alive("10.0.0.1"));
    release(c);  // at 650 s: the last conn goes, the template lives until 950 s
    at(900);
    EXPECT_TRUE(alive("10.0.0.1"));
    at(949);
    EXPECT_TRUE(alive("10.0.0.1"));
    at(951);
    EXPECT_FALSE(alive("10.0.0.1"));
    EXPECT_EQ(w->conns->in_use(), 0u);
    EXPECT_EQ(dest(0)->stats[0].persist, 0u);
    EXPECT_EQ(dest(0)->stats[0].refs, 0u);
    EXPECT_EQ(director.service_find(key())->sum_refs(), 0u);
}

TEST_F(PersistTest, UseRefreshesTheTemplate) {
    ASSERT_NE(make("10.0.0.1", 1000, dest(0)), nullptr);
    at(200);
    ASSERT_NE(persist_lookup(*w, view(), tkey("10.0.0.1", 2000)), nullptr);  // until 500 s
    at(kTimeoutS + 10);
    EXPECT_TRUE(alive("10.0.0.1"));
    at(499);
    EXPECT_TRUE(alive("10.0.0.1"));
    at(501);
    EXPECT_FALSE(alive("10.0.0.1"));
}

TEST_F(PersistTest, UnusedTemplateExpiresAfterTheTimeout) {
    ASSERT_NE(make("10.0.0.1", 1000, dest(0)), nullptr);
    at(kTimeoutS - 1);
    EXPECT_TRUE(alive("10.0.0.1"));
    at(kTimeoutS + 1);
    EXPECT_FALSE(alive("10.0.0.1"));
    EXPECT_EQ(w->conns->in_use(), 0u);
}

TEST_F(PersistTest, QuiescedDestKeepsItsTemplateUnlessExpireQuiescentTemplate) {
    Conn* t = make("10.0.0.1", 1000, dest(0));
    ASSERT_NE(t, nullptr);
    DestSpec quiet{dest(0)->addr, 8080, 0};
    quiet.fwd = FwdMode::Nat;
    ASSERT_TRUE(director.dest_edit(key(), quiet).ok());
    recommit();
    EXPECT_EQ(persist_lookup(*w, view(), tkey("10.0.0.1", 2)), t);  // sysctl off: kept
    director.expire_quiescent_template_set(true);
    recommit();
    EXPECT_EQ(persist_lookup(*w, view(), tkey("10.0.0.1", 3)), nullptr);
    EXPECT_EQ(w->conns->in_use(), 0u);  // no conn used it: freed at once
    EXPECT_EQ(dest(0)->stats[0].persist, 0u);
}

TEST_F(PersistTest, ExpiredTemplateWithConnsLeavesTheTableAndGoesWithTheLastConn) {
    Conn* t = make("10.0.0.1", 1000, dest(0));
    Conn* c = controlled(t);
    director.expire_quiescent_template_set(true);
    DestSpec quiet{dest(0)->addr, 8080, 0};
    quiet.fwd = FwdMode::Nat;
    ASSERT_TRUE(director.dest_edit(key(), quiet).ok());
    recommit();
    EXPECT_EQ(persist_lookup(*w, view(), tkey("10.0.0.1", 2)), nullptr);
    // The key is free for the client's new template, the old one waits for its conn.
    Conn* t2 = make("10.0.0.1", 2, dest(1));
    ASSERT_NE(t2, nullptr);
    EXPECT_EQ(persist_lookup(*w, view(), tkey("10.0.0.1", 3)), t2);
    EXPECT_EQ(w->conns->in_use(), 3u);
    release(c);
    EXPECT_EQ(w->conns->in_use(), 1u);
    EXPECT_EQ(dest(0)->stats[0].persist, 0u);
    EXPECT_EQ(dest(1)->stats[0].persist, 1u);
}

TEST_F(PersistTest, RemovedDestSendsTheClientToTheScheduler) {
    ASSERT_NE(make("10.0.0.1", 1000, dest(0)), nullptr);
    auto keep = director.service_find(key())->dests[0];  // the conn's reference, as a worker's
    ASSERT_TRUE(director.dest_del(key(), keep->addr, 8080).ok());
    recommit();
    EXPECT_EQ(persist_lookup(*w, view(), tkey("10.0.0.1", 2)), nullptr);
    EXPECT_EQ(keep->stats[0].refs, 0u);
}

}  // namespace
}  // namespace xvs::lb
