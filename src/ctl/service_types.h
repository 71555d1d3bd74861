// Service attributes shared by the configuration model (config.h), the ipvsadm command line
// (ipvsadm_args.h) and the control protocol: one definition of each, so a value means the same
// thing in every layer of ctl.
#pragma once

#include <cstdint>

namespace xvs::ctl {

enum class Proto : uint8_t { Tcp, Udp };
// PROXY protocol header towards the real server (HAProxy's spec, v1 text / v2 binary).
enum class ProxyProtocol : uint8_t { Off, V1, V2 };
// UOA (UDP services): opp = protocol-248 header (DPVS's default mode), ipo = IPv4 option.
enum class Uoa : uint8_t { Off, Opp, Ipo };

}  // namespace xvs::ctl
