// Tokenizer for xvs.conf; see config_lexer.h. Includes are expanded while lexing so the parser
// sees one flat token stream and never deals with files.
#include "ctl/config_lexer.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/utf8.h"

namespace xvs::ctl {

namespace {

std::string format_line(std::string_view file, uint32_t line, std::string_view message) {
    std::string out(file);
    if (line != 0) {
        out += ':';
        out += std::to_string(line);
    }
    out += ": ";
    out += message;
    return out;
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool has_glob_magic(std::string_view pattern) {
    return pattern.find_first_of("*?[") != std::string_view::npos;
}

std::string dir_of(const std::string& name) {
    size_t slash = name.rfind('/');
    if (slash == std::string::npos) return "";
    return name.substr(0, slash + 1);  // keeps the trailing '/'; "/x.conf" -> "/"
}

// Includes must be regular files (a glob must not pull in /dev/zero or a FIFO and hang);
// the main file may be anything readable but a directory (e.g. -f /dev/stdin).
bool read_file(const std::string& path, std::string& text, std::string& why, bool regular_only) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            why = "is a directory";
            return false;
        }
        if (regular_only && !S_ISREG(st.st_mode)) {
            why = "not a regular file";
            return false;
        }
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        why = std::strerror(errno);
        return false;
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) {
        why = "read error";
        return false;
    }
    text = buf.str();
    return true;
}

// Expands one `include PATTERN` found at (file, line) of a text at level `depth`.
void expand_include(const std::string& pattern_text, const std::string& including_name,
                    uint32_t line, int depth, TokenStream& out, Diagnostics& diag) {
    std::string pattern = pattern_text;
    if (pattern.empty() || pattern[0] != '/') pattern = dir_of(including_name) + pattern;
    if (depth + 1 > kMaxIncludeDepth) {
        diag.error(including_name, line,
                   "include: nesting deeper than " + std::to_string(kMaxIncludeDepth) +
                       " levels (include loop?)");
        return;
    }
    glob_t matches{};
    int rc = glob(pattern.c_str(), 0, nullptr, &matches);
    if (rc != 0) {
        globfree(&matches);
        if (rc == GLOB_NOMATCH && has_glob_magic(pattern)) {
            // An empty conf.d directory is normal; say so, but it is not an error.
            diag.warning(including_name, line, "include: no file matches '" + pattern + "'");
        } else if (rc == GLOB_NOMATCH) {
            diag.error(including_name, line, "include: file not found: " + pattern);
        } else {
            diag.error(including_name, line, "include: cannot expand '" + pattern + "'");
        }
        return;
    }
    std::vector<std::string> paths(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
    globfree(&matches);
    for (const std::string& path : paths) {
        std::string text;
        std::string why;
        if (!read_file(path, text, why, /*regular_only=*/true)) {
            diag.error(including_name, line, "include: cannot read " + path + ": " + why);
            continue;
        }
        config_lex(text, path, depth + 1, out, diag);
    }
}

}  // namespace

void Diagnostics::error(std::string_view file, uint32_t line, std::string_view message) {
    errors.push_back(format_line(file, line, message));
}

void Diagnostics::warning(std::string_view file, uint32_t line, std::string_view message) {
    warnings.push_back(format_line(file, line, message));
}

void config_lex(std::string_view text, const std::string& name, int depth, TokenStream& out,
                Diagnostics& diag) {
    out.files.push_back(name);
    const auto file = static_cast<uint32_t>(out.files.size() - 1);
    // Names and strings from the file end up in log lines and JSON replies, which must be
    // UTF-8: a stray byte is refused here, with its place, rather than carried along.
    if (size_t bad = utf8_invalid_offset(text); bad != std::string_view::npos) {
        const auto bad_line = static_cast<uint32_t>(1 + std::count(text.begin(), text.begin() + long(bad), '\n'));
        const size_t newline = bad == 0 ? std::string_view::npos : text.rfind('\n', bad - 1);
        const size_t column = bad - (newline == std::string_view::npos ? 0 : newline + 1) + 1;
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[bad]));
        diag.error(name, bad_line,
                   "column " + std::to_string(column) + ": byte " + byte +
                       " is not valid UTF-8; the configuration must be UTF-8 text (retype the line)");
        return;
    }
    if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
        const auto nul_line = static_cast<uint32_t>(1 + std::count(text.begin(), text.begin() + long(nul), '\n'));
        diag.error(name, nul_line, "NUL byte in the configuration (binary file?)");
        return;
    }
    uint32_t line = 1;
    uint32_t last_token_line = 0;  // line of the previous token of this text (0 = none)
    size_t i = 0;
    // `include` seen as the first token of a line: the next token on that line is its pattern.
    bool pending_include = false;
    uint32_t include_line = 0;

    auto emit = [&](TokenKind kind, std::string tok_text) {
        if (pending_include) {
            pending_include = false;
            if (line == include_line && (kind == TokenKind::Word || kind == TokenKind::String)) {
                last_token_line = line;
                expand_include(tok_text, name, include_line, depth, out, diag);
                return;
            }
            diag.error(name, include_line, "include: missing file pattern");
        }
        if (kind == TokenKind::Word && tok_text == "include" && last_token_line != line) {
            pending_include = true;
            include_line = line;
            last_token_line = line;
            return;
        }
        last_token_line = line;
        out.tokens.push_back(Token{kind, std::move(tok_text), file, line});
    };

    while (i < text.size()) {
        char c = text[i];
        if (c == '\n') {
            if (pending_include && line == include_line) {
                pending_include = false;
                diag.error(name, include_line, "include: missing file pattern");
            }
            ++line;
            ++i;
        } else if (is_space(c)) {
            ++i;
        } else if (c == '#' || c == '!') {
            while (i < text.size() && text[i] != '\n') ++i;
        } else if (c == '{' || c == '}') {
            emit(c == '{' ? TokenKind::LBrace : TokenKind::RBrace, std::string(1, c));
            ++i;
        } else if (c == '"') {
            std::string value;
            uint32_t start_line = line;
            ++i;
            bool closed = false;
            while (i < text.size() && text[i] != '\n') {
                if (text[i] == '\\' && i + 1 < text.size() &&
                    (text[i + 1] == '"' || text[i + 1] == '\\')) {
                    value += text[i + 1];
                    i += 2;
                } else if (text[i] == '"') {
                    closed = true;
                    ++i;
                    break;
                } else {
                    value += text[i++];
                }
            }
            if (!closed) {
                diag.error(name, start_line, "unterminated quoted string");
                continue;  // the newline (if any) is handled by the main loop
            }
            emit(TokenKind::String, std::move(value));
        } else {
            size_t start = i;
            while (i < text.size() && !is_space(text[i]) && text[i] != '{' && text[i] != '}') ++i;
            emit(TokenKind::Word, std::string(text.substr(start, i - start)));
        }
    }
    if (pending_include) diag.error(name, include_line, "include: missing file pattern");
}

bool config_lex_file(const std::string& path, TokenStream& out, Diagnostics& diag) {
    std::string text;
    std::string why;
    if (!read_file(path, text, why, /*regular_only=*/false)) {
        diag.error(path, 0, "cannot read configuration: " + why);
        return false;
    }
    config_lex(text, path, 0, out, diag);
    return true;
}

}  // namespace xvs::ctl
