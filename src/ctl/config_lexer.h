// Tokenizer for xvs.conf (keepalived syntax): words, double-quoted strings, `{` and `}`;
// `#` or `!` at the start of a token comments out the rest of the line. `include GLOB` as the
// first token of a line is expanded in place (glob(3), relative to the including file's
// directory, at most kMaxIncludeDepth levels). Every token keeps its file and line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xvs::ctl {

inline constexpr int kMaxIncludeDepth = 8;

// Errors and warnings as "file:line: message" lines, in the order found.
struct Diagnostics {
    std::vector<std::string> errors;
    std::vector<std::string> warnings;

    void error(std::string_view file, uint32_t line, std::string_view message);
    void warning(std::string_view file, uint32_t line, std::string_view message);
};

enum class TokenKind : uint8_t { Word, String, LBrace, RBrace };

struct Token {
    TokenKind kind = TokenKind::Word;
    std::string text;   // without quotes for String
    uint32_t file = 0;  // index into TokenStream::files
    uint32_t line = 0;  // 1-based
};

// Tokens of the main file with every include spliced in. Each inclusion of a file gets its
// own `files` entry, so (file, line) identifies one physical line of one inclusion.
struct TokenStream {
    std::vector<Token> tokens;
    std::vector<std::string> files;

    const std::string& file_of(const Token& tok) const { return files[tok.file]; }
};

// Appends the tokens of `text`, named `name` (used in messages and as the base directory of
// relative includes). `depth` is the include level of `text` (0 for the main file).
void config_lex(std::string_view text, const std::string& name, int depth, TokenStream& out,
                Diagnostics& diag);

// Reads `path` and lexes it at include level 0. Returns false (with a message) if unreadable.
bool config_lex_file(const std::string& path, TokenStream& out, Diagnostics& diag);

}  // namespace xvs::ctl
