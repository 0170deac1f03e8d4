#include "training_data.h"

#include "runtime/language_tokens.h"
#include "util/error.h"

#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

namespace dragoman::train {

std::vector<Example> loadExamples(const std::filesystem::path& tsv, const MarianTokenizer& tokenizer, std::size_t maxTokens) {
    std::ifstream in(tsv);
    if (!in) throw Error("input", "cannot read " + tsv.string());
    const auto languageTokens = tokenizer.languageTokens();
    std::vector<Example> examples;
    std::string line;
    std::size_t lineNumber = 0;
    while (std::getline(in, line)) {
        ++lineNumber;
        const auto tab1 = line.find('\t'), tab2 = line.find('\t', tab1 + 1);
        if (tab1 == std::string::npos || tab2 == std::string::npos)
            throw Error("input", tsv.string() + ":" + std::to_string(lineNumber) + ": expected three tab-separated columns");
        const auto language = line.substr(0, tab1);
        const auto token = languageTokenFor(language, languageTokens);
        if (!token) throw Error("input", tsv.string() + ":" + std::to_string(lineNumber) + ": no token for language '" + language + "'");
        Example example{tokenizer.encode(*token + " " + line.substr(tab1 + 1, tab2 - tab1 - 1)), tokenizer.encode(line.substr(tab2 + 1))};
        if (example.source.size() <= maxTokens && example.target.size() <= maxTokens) examples.push_back(std::move(example));
    }
    return examples;
}

std::vector<std::vector<std::size_t>> makeBatches(const std::vector<Example>& examples, std::size_t targetTokens, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> order(examples.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    // Shuffle, then sort by length with the shuffle breaking ties: similar lengths share a batch (little
    // padding) while the batches' contents still change from epoch to epoch.
    std::shuffle(order.begin(), order.end(), rng);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::max(examples[a].source.size(), examples[a].target.size()) <
               std::max(examples[b].source.size(), examples[b].target.size());
    });
    std::vector<std::vector<std::size_t>> batches;
    std::vector<std::size_t> current;
    std::size_t longest = 0;
    for (auto index : order) {
        const auto length = std::max(examples[index].source.size(), examples[index].target.size());
        if (!current.empty() && std::max(longest, length) * (current.size() + 1) > targetTokens) {
            batches.push_back(std::move(current));
            current.clear();
            longest = 0;
        }
        current.push_back(index);
        longest = std::max(longest, length);
    }
    if (!current.empty()) batches.push_back(std::move(current));
    std::shuffle(batches.begin(), batches.end(), rng);
    return batches;
}

BatchTensors toTensors(const std::vector<Example>& examples, const std::vector<std::size_t>& batch, TokenId pad, TokenId decoderStart) {
    std::int64_t sourceLength = 0, targetLength = 0;
    for (auto i : batch) {
        sourceLength = std::max<std::int64_t>(sourceLength, static_cast<std::int64_t>(examples[i].source.size()));
        targetLength = std::max<std::int64_t>(targetLength, static_cast<std::int64_t>(examples[i].target.size()));
    }
    const auto rows = static_cast<std::int64_t>(batch.size());
    BatchTensors t;
    t.source = torch::full({rows, sourceLength}, pad, torch::kInt64);
    t.sourceValid = torch::zeros({rows, sourceLength}, torch::kBool);
    t.targetIn = torch::full({rows, targetLength}, pad, torch::kInt64);
    t.targetOut = torch::full({rows, targetLength}, pad, torch::kInt64);
    auto source = t.source.accessor<std::int64_t, 2>();
    auto valid = t.sourceValid.accessor<bool, 2>();
    auto in = t.targetIn.accessor<std::int64_t, 2>();
    auto out = t.targetOut.accessor<std::int64_t, 2>();
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto& e = examples[batch[static_cast<std::size_t>(r)]];
        for (std::size_t j = 0; j < e.source.size(); ++j) {
            source[r][static_cast<std::int64_t>(j)] = e.source[j];
            valid[r][static_cast<std::int64_t>(j)] = true;
        }
        // Decoder input is the target shifted right behind the start token, as transformers' shift_tokens_right.
        for (std::size_t j = 0; j < e.target.size(); ++j) {
            in[r][static_cast<std::int64_t>(j)] = j == 0 ? decoderStart : e.target[j - 1];
            out[r][static_cast<std::int64_t>(j)] = e.target[j];
        }
        t.targetTokens += static_cast<std::int64_t>(e.target.size());
    }
    return t;
}

}  // namespace dragoman::train
