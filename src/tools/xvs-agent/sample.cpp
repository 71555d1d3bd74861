// Parsing of the kernel's load figures for xvs-agent; see sample.h.
#include "sample.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>

namespace xvs::agent {

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// The next blank-separated word of s, consumed.
std::string_view next_word(std::string_view& s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    size_t n = 0;
    while (n < s.size() && !is_space(s[n])) ++n;
    std::string_view w = s.substr(0, n);
    s.remove_prefix(n);
    return w;
}

std::optional<uint64_t> to_u64(std::string_view w, int base = 10) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v, base);
    if (w.empty() || ec != std::errc() || p != w.data() + w.size()) return std::nullopt;
    return v;
}

// "12.34" -> 1234 (x100); at most two decimals are kept.
std::optional<uint32_t> centi(std::string_view w) {
    const size_t dot = w.find('.');
    auto whole = to_u64(w.substr(0, dot));
    if (!whole || *whole > 40'000'000) return std::nullopt;
    uint64_t v = *whole * 100;
    if (dot != std::string_view::npos) {
        std::string_view frac = w.substr(dot + 1);
        if (frac.empty() || !to_u64(frac)) return std::nullopt;
        if (frac.size() >= 1) v += uint64_t(frac[0] - '0') * 10;
        if (frac.size() >= 2) v += uint64_t(frac[1] - '0');
    }
    return static_cast<uint32_t>(v);
}

// The value of "Key:  N kB" in /proc/meminfo.
std::optional<uint64_t> meminfo_field(std::string_view text, std::string_view key) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ':') {
            std::string_view rest = line.substr(key.size() + 1);
            return to_u64(next_word(rest));
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<CpuTimes> parse_proc_stat(std::string_view text) {
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (proc(5));
    // guest time is already counted in user, so it is not added again.
    if (!text.starts_with("cpu ")) return std::nullopt;
    std::string_view line = text.substr(0, text.find('\n'));
    next_word(line);
    uint64_t f[8] = {};
    int n = 0;
    for (; n < 8; ++n) {
        std::string_view w = next_word(line);
        if (w.empty()) break;
        auto v = to_u64(w);
        if (!v) return std::nullopt;
        f[n] = *v;
    }
    if (n < 4) return std::nullopt;
    CpuTimes t;
    for (int i = 0; i < 8; ++i) t.total += f[i];
    t.busy = t.total - f[3] - f[4];
    return t;
}

uint16_t cpu_permille(const CpuTimes& before, const CpuTimes& after) {
    if (after.total <= before.total || after.busy < before.busy) return 0;
    const uint64_t busy = after.busy - before.busy;
    const uint64_t total = after.total - before.total;
    return static_cast<uint16_t>(std::min<uint64_t>(1000, (busy * 1000 + total / 2) / total));
}

std::optional<LoadAvg> parse_loadavg(std::string_view text) {
    // "0.52 0.58 0.59 2/1234 5678"
    std::string_view rest = text;
    auto one = centi(next_word(rest));
    next_word(rest);
    next_word(rest);
    std::string_view tasks = next_word(rest);
    const size_t slash = tasks.find('/');
    if (!one || slash == std::string_view::npos) return std::nullopt;
    auto running = to_u64(tasks.substr(0, slash));
    if (!running) return std::nullopt;
    return LoadAvg{*one, static_cast<uint16_t>(std::min<uint64_t>(*running, 65535))};
}

std::optional<uint16_t> parse_meminfo_permille(std::string_view text) {
    auto total = meminfo_field(text, "MemTotal");
    auto avail = meminfo_field(text, "MemAvailable");
    if (!total || !avail || *total == 0) return std::nullopt;
    const uint64_t used = *total > *avail ? *total - *avail : 0;
    return static_cast<uint16_t>((used * 1000 + *total / 2) / *total);
}

uint32_t count_established(std::string_view text) {
    // "  sl  local_address rem_address   st ..." then rows "0: 0100007F:1F90 00000000:0000 0A ..."
    uint32_t n = 0;
    size_t pos = text.find('\n');  // header
    while (pos != std::string_view::npos && pos < text.size()) {
        size_t end = text.find('\n', pos + 1);
        std::string_view line =
            text.substr(pos + 1, (end == std::string_view::npos ? text.size() : end) - pos - 1);
        pos = end;
        next_word(line);  // sl
        next_word(line);  // local
        next_word(line);  // remote
        std::string_view st = next_word(line);
        if (auto v = to_u64(st, 16); v && *v == 1) ++n;
    }
    return n;
}

std::optional<uint32_t> parse_load_percent(std::string_view text) {
    std::string_view s = trim(text.substr(0, text.find('\n')));
    if (s.ends_with('%')) s.remove_suffix(1);
    s = trim(s);
    auto v = centi(s);  // percent x 100
    if (!v) return std::nullopt;
    return std::min<uint32_t>(1000, (*v + 5) / 10);
}

std::optional<char> parse_stat_state(std::string_view text) {
    // "PID (COMM) S ...": COMM may hold blanks and parentheses, so from the last ')'.
    const size_t close = text.rfind(')');
    if (close == std::string_view::npos || close + 2 >= text.size() || text[close + 1] != ' ')
        return std::nullopt;
    return text[close + 2];
}

std::optional<uint64_t> parse_cgroup_v2_usage_ns(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (next_word(line) == "usage_usec") {
            auto v = to_u64(next_word(line));
            if (v) return *v * 1000;
        }
    }
    return std::nullopt;
}

std::optional<uint64_t> parse_cgroup_v1_usage_ns(std::string_view text) {
    return to_u64(trim(text));
}

uint16_t cgroup_cpu_permille(uint64_t used_ns, uint64_t wall_ns, unsigned ncpu) {
    if (wall_ns == 0 || ncpu == 0) return 0;
    const long double share = static_cast<long double>(used_ns) / wall_ns / ncpu;
    return static_cast<uint16_t>(std::clamp<long double>(share * 1000 + 0.5, 0, 1000));
}

std::optional<std::string> read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return buf.str();
}

}  // namespace xvs::agent
