#include "decode/batch_search.h"

#include "cpu/projection.h"
#include "kernels/argmax.h"
#include "util/error.h"

#include <algorithm>

namespace dragoman {
namespace {

struct Running {
    BatchedSequence* sequence;
    std::unique_ptr<CausalState> state;
    std::vector<std::vector<TokenId>> history;  // prompt and generated, as the processors read it
};

// Takes the step's scores for one sequence (processors applied, as greedySearch does); false when it ends.
bool advance(Running& r, Logits scores) {
    auto& s = *r.sequence;
    if (s.options.processors) s.options.processors->apply(scores, r.history);
    const auto token = kernels::firstArgmax(scores.row(0), scores.vocab());
    s.generated.push_back(token);
    r.history[0].push_back(token);
    if (s.options.onToken && !s.options.onToken(token)) return false;
    if (std::find(s.options.eosIds.begin(), s.options.eosIds.end(), token) != s.options.eosIds.end()) return false;
    return static_cast<std::int64_t>(s.generated.size()) < s.options.maxNewTokens;
}

}  // namespace

void greedyBatch(const CausalLanguageModel& model, std::vector<BatchedSequence>& sequences, std::size_t maxBatch) {
    // Steps of up to kSmallRows rows run on the decoding kernels, which give each row its numbers alone; wider
    // products (prompts) take other kernels, so a wider batch could change a sequence's tokens.
    maxBatch = std::clamp<std::size_t>(maxBatch, 1, static_cast<std::size_t>(cpu::kSmallRows));
    std::vector<Running> running;
    std::size_t next = 0;
    // Prefills waiting sequences while there is room: each alone, as CausalSession does.
    auto admit = [&] {
        while (running.size() < maxBatch && next < sequences.size()) {
            auto& s = sequences[next++];
            s.generated.clear();
            if (s.prompt.empty()) throw Error("input", "empty prompt");
            if (s.options.maxNewTokens < 1) continue;
            Running r{&s, model.start(static_cast<std::int64_t>(s.prompt.size()) + s.options.maxNewTokens), {s.prompt}};
            r.state->interrupted = s.interrupted;
            r.state->adapter = s.adapter;
            Logits scores;
            try {
                scores = model.forward(*r.state, s.prompt);
            } catch (const Cancelled&) {
                continue;  // stopped during its prompt: it ends with nothing generated
            }
            if (advance(r, scores)) running.push_back(std::move(r));
        }
    };
    admit();
    while (!running.empty()) {
        std::vector<CausalState*> states;
        std::vector<TokenId> last;
        for (auto& r : running) {
            states.push_back(r.state.get());
            last.push_back(r.sequence->generated.back());
        }
        const auto logits = model.stepMany(states, last);  // [B, V]
        std::vector<Running> still;
        for (std::size_t b = 0; b < running.size(); ++b)
            if (advance(running[b], logits.slice(static_cast<std::int64_t>(b), 1))) still.push_back(std::move(running[b]));
        running = std::move(still);
        admit();  // a finished sequence's place goes to the next one at once
    }
}

}  // namespace dragoman
