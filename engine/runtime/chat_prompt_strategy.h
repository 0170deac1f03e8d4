#pragma once
// Translation with a chat model (HY-MT1.5, Hy-MT2): its model card's prompt (runtime/prompt_profile.h) in its chat format,
// greedy or sampled generation until a stop token, streamed through the detokenizer. A paragraph longer
// than kSegmentTokens goes in groups of whole sentences, so each prompt starts quickly.
#include "decode/step_batcher.h"
#include "runtime/hymt_prompt.h"
#include "runtime/prompt_profile.h"
#include "runtime/runnable_model.h"

namespace dragoman {

class ChatPromptStrategy : public TranslationStrategy {
public:
    // `model` must outlive the strategy (a RunnableModel owns its strategy).
    explicit ChatPromptStrategy(const RunnableModel& model);

    std::vector<std::string> targetLanguages() const override { return languages(); }
    // Every language of the table: the prompts name the target, in English or Chinese.
    static std::vector<std::string> languages();
    bool takesPrompts() const override { return true; }
    void check(const TranslationRequest& request) const override;
    std::string translateParagraph(const std::string& paragraph, TranslationJob& job) const override;
    std::string promptProfile() const override;
    bool takesInstructions() const override;
    std::vector<std::string> prompts(const std::string& paragraph, const TranslationRequest& request) const override;
    bool chats() const override { return chat_.has_value(); }
    // The conversation in the model's chat format: system messages' text before the first user turn, earlier
    // answers closed with the format's stop token, then the assistant's turn is generated.
    std::string complete(TranslationJob& job) const override;

    static constexpr std::size_t kSegmentTokens = 256;

private:
    // What one paragraph is prompted as: itself, or groups of whole sentences of at most kSegmentTokens when
    // longer (structured data always whole, its structure is the point).
    std::vector<std::string> segmentsOf(const std::string& paragraph, const TranslationRequest& request) const;
    PromptProfile profileFor(const TranslationRequest& request) const;
    std::string userMessageFor(const std::string& segment, const TranslationRequest& request) const;
    std::string translateSegment(const std::string& segment, TranslationJob& job) const;
    // Generates after `prompt` (the chat format spelled out) until a stop token, streaming through the job.
    std::string generate(const std::string& prompt, TranslationJob& job) const;

    const RunnableModel& model_;
    const CausalLanguageModel& network_;
    std::optional<ChatFormat> chat_;  // none when the tokenizer lacks HY-MT's chat tokens
    DetectedProfile profile_;
    std::vector<TokenId> stopIds_;
    // Requests generating at the same time (threads of the server, `translate --batch`, a document's
    // segments) share their decoding steps.
    mutable StepBatcher batcher_;
};

}  // namespace dragoman
