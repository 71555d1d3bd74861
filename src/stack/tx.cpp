// TX flush: one burst call per port; what the queue does not take is freed and counted.
#include "stack/tx.h"

#include <rte_mbuf.h>

#include "port/ethdev.h"
#include "stack/capture.h"

namespace xvs::stack {

void TxBuffers::flush_port(uint8_t port, Counters& counters) {
    Buffer& b = ports_[port];
    if (capture_wants(capture_, CapturePoint::Tx, port)) [[unlikely]]
        for (uint16_t i = 0; i < b.count; ++i)
            capture_->offer(CapturePoint::Tx, port, Counter::Count, b.pkts[i]);
    uint16_t sent = port::port_tx_burst(b.port_id, queue_, b.pkts.data(), b.count);
    counters.inc(sent_, sent);
    if (sent < b.count) {
        counters.inc(full_, b.count - sent);
        if (capture_wants(capture_, CapturePoint::Drop, port, full_)) [[unlikely]]
            for (uint16_t i = sent; i < b.count; ++i)
                capture_->offer(CapturePoint::Drop, port, full_, b.pkts[i]);
        rte_pktmbuf_free_bulk(&b.pkts[sent], b.count - sent);
    }
    b.count = 0;
    b.kicks_left = kKicksAfterSend;
}

void TxBuffers::kick_port(uint8_t port) {
    Buffer& b = ports_[port];
    --b.kicks_left;
    port::port_tx_burst(b.port_id, queue_, b.pkts.data(), 0);
}

}  // namespace xvs::stack
