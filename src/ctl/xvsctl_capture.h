// xvsctl capture: arms a capture in xvsd, polls it and writes the frames to a pcap file with
// libpcap (pcap_dump), until the count, the time limit or SIGINT/SIGTERM; then ends it.
#pragma once

#include <ostream>

#include "ctl/xvsctl_args.h"

namespace xvs::ctl {

// The exit code: 0 when the capture ran and ended, 1 when xvsd cannot be reached or the file
// cannot be written, 255 when xvsd refuses the capture.
int xvsctl_capture(const CtlCommand& c, std::ostream& err);

}  // namespace xvs::ctl
