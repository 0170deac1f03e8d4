#include "text/regex_split.h"

#include "util/error.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace dragoman {

struct RegexSplit::Compiled {
    pcre2_code* code = nullptr;
    ~Compiled() { pcre2_code_free(code); }
};

RegexSplit::RegexSplit(const std::string& pattern, bool literal, SplitBehavior behavior)
    : compiled_(std::make_unique<Compiled>()), behavior_(behavior) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    // UCP: \s, \w, \d and POSIX classes follow Unicode properties, as in Oniguruma, which tokenizers uses.
    const std::uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK | (literal ? PCRE2_LITERAL : 0u);
    compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &error, &offset, nullptr);
    if (!compiled_->code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(error, message, sizeof message);
        throw Error("tokenizer", "pre-tokenizer regex does not compile at offset " + std::to_string(offset) + ": " +
                                     reinterpret_cast<const char*>(message));
    }
    pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is unavailable
}

RegexSplit::~RegexSplit() = default;
RegexSplit::RegexSplit(RegexSplit&&) noexcept = default;
RegexSplit& RegexSplit::operator=(RegexSplit&&) noexcept = default;

void RegexSplit::split(std::string_view text, std::vector<std::string_view>& out) const {
    // Match data per call: one compiled pattern is shared by every thread that tokenizes.
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
        pcre2_match_data_create_from_pattern(compiled_->code, nullptr), &pcre2_match_data_free);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    std::size_t start = 0, previous = 0;
    std::size_t pendingMergeStart = std::string_view::npos;  // MergedWithNext: start of a match waiting for its successor
    auto emit = [&](std::size_t from, std::size_t to) {
        if (to > from) out.push_back(text.substr(from, to - from));
    };
    while (start <= text.size()) {
        const int rc = pcre2_match(compiled_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) throw Error("tokenizer", "pre-tokenizer regex failed (PCRE2 error " + std::to_string(rc) + ")");
        const auto* ovector = pcre2_get_ovector_pointer(match.get());
        const std::size_t s = ovector[0], e = ovector[1];
        if (e == s) {  // empty matches split nothing (tokenizers skips them); step one character on
            start = s + 1;
            while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
                ++start;
            continue;
        }
        switch (behavior_) {
            case SplitBehavior::Isolated:
                emit(previous, s);
                emit(s, e);
                break;
            case SplitBehavior::Removed:
                emit(previous, s);
                break;
            case SplitBehavior::MergedWithPrevious:
                emit(previous, e);
                break;
            case SplitBehavior::MergedWithNext:
                if (pendingMergeStart != std::string_view::npos)
                    emit(pendingMergeStart, s);
                else
                    emit(previous, s);
                pendingMergeStart = s;
                break;
        }
        previous = e;
        start = e;
    }
    if (behavior_ == SplitBehavior::MergedWithNext && pendingMergeStart != std::string_view::npos)
        emit(pendingMergeStart, text.size());
    else
        emit(previous, text.size());
}

}  // namespace dragoman
