#pragma once
// HY-MT1.5's official prompt templates (README "Prompts") and its chat format. Which template applies:
// Chinese (zh, zh-Hant, yue) on either side -> the Chinese template with the target's Chinese name;
// otherwise the English template with the target's English name. A glossary selects the terminology
// template, preceding text the contextual one; formatted text (with <sn> tags) its own.
#include "text/tokenizer.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dragoman {

struct PromptRequest {
    std::string source, from, to;                               // Dragoman language codes; `from` may be empty
    std::vector<std::pair<std::string, std::string>> glossary;  // source term -> target term
    std::string context;                                        // preceding text
    bool formatted = false;                                     // source carries <sn></sn> tags
    // Hy-MT2's instruction modes (runtime/hymt2_prompt.h); HY-MT1.5's templates refuse them.
    std::string style{};
    std::vector<std::string> preferences{};
    bool keepDelimiters = false;
    std::string structuredFormat{};  // "JSON", "YAML": the source is data whose keys and nesting stay
};

// The user message. Throws Error("input") for a target language HY-MT does not know, and for Hy-MT2's
// instruction modes, which HY-MT1.5's card has no template for.
std::string hymtUserMessage(const PromptRequest& request);
// The HY-MT1.5 card's formatted-text template (<sn></sn> tags kept, the answer inside <target></target>); the
// Hy-MT2 card has none of its own, so both profiles use it.
std::string formattedUserMessage(const PromptRequest& request);

// The two chat formats HY-MT1.5 ships with, read off the model's own tokens.
struct ChatFormat {
    std::string begin, user, assistant;  // 1.8B: BOS, <｜hy_User｜>, <｜hy_Assistant｜>; 7B: <|startoftext|>, "", <|extra_0|>
    std::vector<std::string> stopTokens;

    std::string render(const std::string& userMessage) const { return begin + user + userMessage + assistant; }
};

// Picks the chat format whose special tokens the tokenizer knows (`has` answers for a token's text).
// Throws Error("tokenizer") when neither is present.
template <typename HasToken>
ChatFormat detectChatFormat(HasToken has);

// Reads the text inside <target></target> of a formatted translation (the whole text when absent).
std::string stripTargetTags(const std::string& output);

}  // namespace dragoman

#include "runtime/hymt_prompt_impl.h"
