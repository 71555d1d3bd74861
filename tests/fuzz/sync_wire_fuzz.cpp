// libFuzzer target for net/sync_wire: arbitrary bytes as a received sync datagram, in an
// exactly sized buffer so ASan flags any read past it. A message the decoder accepts must
// encode back into messages the decoder accepts with the same conns (the encoder never
// writes what the decoder refuses), and its control trailer must survive a round trip.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "net/sync_wire.h"

namespace {

// Not assert(): fuzz builds may define NDEBUG, and a silent pass is worse than no fuzzer.
#define FUZZ_CHECK(cond)  \
    do {                  \
        if (!(cond)) {    \
            std::abort(); \
        }                 \
    } while (0)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace xvs::net;
    const std::vector<uint8_t> buf(data, data + size);
    auto m = sync_decode(buf);
    if (!m) return 0;
    SyncEncoder enc(m->syncid, kSyncMaxMessage);
    std::vector<SyncConn> again;
    auto drain = [&] {
        auto d = sync_decode(enc.bytes());
        FUZZ_CHECK(d);
        FUZZ_CHECK(d->syncid == m->syncid);
        FUZZ_CHECK(d->conns_skipped == 0);
        again.insert(again.end(), d->conns.begin(), d->conns.end());
        enc.reset();
    };
    for (const SyncConn& c : m->conns) {
        if (!enc.add(c)) {
            drain();
            FUZZ_CHECK(enc.add(c));
        }
    }
    drain();
    FUZZ_CHECK(again == m->conns);
    if (m->has_control) {
        auto d = sync_decode(sync_encode_control(m->syncid, m->control));
        FUZZ_CHECK(d && d->has_control && d->control == m->control);
    }
    return 0;
}
