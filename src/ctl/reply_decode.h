// Shared by the xvsadm and xvsctl reply decoders: a decode step throws DecodeError (or lets
// nlohmann's type errors escape) and decode() turns either into one Result error text, so a
// daemon bug shows as "Malformed reply from xvsd: ..." and never as garbage output.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace xvs::ctl::reply {

struct DecodeError {
    std::string what;
};

template <typename F>
auto decode(F&& body) -> Result<decltype(body())> {
    try {
        return body();
    } catch (const DecodeError& e) {
        return make_error("Malformed reply from xvsd: " + e.what);
    } catch (const nlohmann::json::exception& e) {
        return make_error(std::string("Malformed reply from xvsd: ") + e.what());
    }
}

}  // namespace xvs::ctl::reply
