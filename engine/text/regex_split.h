#pragma once
// tokenizers' Split pre-tokenizer on a real regex engine (PCRE2 with Unicode properties, JIT-compiled):
// cuts a piece of text at each match, keeping or merging the matches as the behavior says.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dragoman {

enum class SplitBehavior { Isolated, Removed, MergedWithPrevious, MergedWithNext };

class RegexSplit {
public:
    // Throws Error("tokenizer") when the pattern does not compile.
    RegexSplit(const std::string& pattern, bool literal, SplitBehavior behavior);
    ~RegexSplit();
    RegexSplit(RegexSplit&&) noexcept;
    RegexSplit& operator=(RegexSplit&&) noexcept;

    // Appends the pieces of `text` (valid UTF-8) to `out`; empty pieces are dropped.
    void split(std::string_view text, std::vector<std::string_view>& out) const;

private:
    struct Compiled;
    std::unique_ptr<Compiled> compiled_;
    SplitBehavior behavior_;
};

}  // namespace dragoman
