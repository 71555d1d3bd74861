// lb/command.cpp: commands are served kCommandChunk table slots per call, resuming at the
// cursor, so no call walks more than one chunk; flush_dest expires exactly the conns of its
// dest (through the given expiry), dumps copy every live conn and never grow the reserved room.
#include "lb/command.h"

#include <gtest/gtest.h>

#include <set>

#include "lb/conn_table.h"
#include "lb/dest.h"

namespace xvs::lb {
namespace {

constexpr uint32_t kSlots = 3 * kCommandChunk + 100;  // four chunks, the last one partial

class CommandTest : public ::testing::Test {
  protected:
    void SetUp() override {
        auto t = ConnTable::create("cmd_test", kSlots);
        ASSERT_TRUE(t.ok()) << t.error();
        table = std::move(*t);
        ASSERT_GE(table->capacity(), kSlots);
        // Every slot live: conns alternate between dests a and b.
        for (uint32_t i = 0; i < table->capacity(); ++i) {
            Conn* c = table->alloc(false);
            ASSERT_NE(c, nullptr);
            c->proto = 6;
            c->set_addrs(net::InetAddr::v4(0x0201010a + (i << 8)), net::InetAddr::v4(0x6401010a),
                         net::InetAddr::v4(0x6402020a), net::InetAddr::v4(0x0202020a));
            c->cport = static_cast<uint16_t>(i);
            c->vport = 0x5000;
            c->dport = 0x901f;
            c->lport = static_cast<uint16_t>(i);
            c->dest = (i % 2) ? b.get() : a.get();
            ASSERT_TRUE(table->insert(c));
        }
    }

    // Serves cmd to completion one chunk per call; returns the number of calls.
    template <typename Serve>
    unsigned serve(Command& cmd, Serve&& one_chunk) {
        unsigned calls = 0;
        uint32_t last_cursor = cmd.cursor;
        for (bool done = false; !done;) {
            done = one_chunk();
            ++calls;
            EXPECT_LE(cmd.cursor - last_cursor, kCommandChunk);  // never more than a chunk
            last_cursor = cmd.cursor;
            if (calls > 1000) break;
        }
        return calls;
    }

    std::shared_ptr<Dest> a = std::make_shared<Dest>(), b = std::make_shared<Dest>();
    std::unique_ptr<ConnTable> table;
};

struct ExpireLog {
    ConnTable* table;
    std::set<uint16_t> cports;
};

void expire_into(void* ctx, Conn* c) {
    auto* log = static_cast<ExpireLog*>(ctx);
    log->cports.insert(c->cport);
    log->table->remove(c);
    log->table->release(c);
}

TEST_F(CommandTest, FlushDestExpiresExactlyItsConnsOneChunkPerCall) {
    const uint32_t cap = table->capacity();
    Command cmd;
    cmd.kind = Command::flush_dest;
    cmd.dest = a;
    ExpireLog log{table.get(), {}};
    const unsigned calls =
        serve(cmd, [&] { return command_flush_chunk(cmd, *table, expire_into, &log); });
    EXPECT_EQ(calls, (cap + kCommandChunk - 1) / kCommandChunk);
    const uint32_t of_a = (cap + 1) / 2;  // even slots
    EXPECT_EQ(cmd.flushed, of_a);
    EXPECT_EQ(log.cports.size(), of_a);
    EXPECT_EQ(table->in_use(), cap - of_a);
    table->for_each([&](const Conn& c) { EXPECT_EQ(c.dest, b.get()); });
    // Expired conns are gone from the hash too; the others are still found.
    EXPECT_EQ(table
                  ->lookup(conn_key(6, net::InetAddr::v4(0x0201010a), net::InetAddr::v4(0x6401010a),
                                    0, 0x5000))
                  .conn,
              nullptr);
    EXPECT_NE(table
                  ->lookup(conn_key(6, net::InetAddr::v4(0x0201010a + (1u << 8)),
                                    net::InetAddr::v4(0x6401010a), 1, 0x5000))
                  .conn,
              nullptr);

    // Again: nothing of a is left; a dest with no conns flushes none.
    Command again;
    again.kind = Command::flush_dest;
    again.dest = a;
    serve(again, [&] { return command_flush_chunk(again, *table, expire_into, &log); });
    EXPECT_EQ(again.flushed, 0u);
    EXPECT_EQ(table->in_use(), cap - of_a);
}

TEST_F(CommandTest, DumpResumesAtTheCursorAndMarksTruncationInsteadOfGrowing) {
    const uint32_t cap = table->capacity();
    stack::Neighbours neigh(64);
    Command cmd;
    cmd.kind = Command::dump_conns;
    cmd.conns.reserve(cap);
    const unsigned calls = serve(cmd, [&] { return command_serve_chunk(cmd, *table, neigh, 0); });
    EXPECT_EQ(calls, (cap + kCommandChunk - 1) / kCommandChunk);
    EXPECT_FALSE(cmd.truncated);
    ASSERT_EQ(cmd.conns.size(), cap);
    std::set<uint16_t> cports;
    for (const ConnDumpEntry& e : cmd.conns) cports.insert(e.cport);
    EXPECT_EQ(cports.size(), std::min<size_t>(cap, 65536));

    Command small;
    small.kind = Command::dump_conns;
    small.conns.reserve(10);
    const size_t room = small.conns.capacity();
    serve(small, [&] { return command_serve_chunk(small, *table, neigh, 0); });
    EXPECT_TRUE(small.truncated);
    EXPECT_EQ(small.conns.size(), room);
    EXPECT_EQ(small.conns.capacity(), room);
}

}  // namespace
}  // namespace xvs::lb
