// Hugging Face's logits processors, each against scores worked out by hand from transformers' definitions.
#include "decode/generation_config.h"
#include "decode/logits_processors.h"
#include "decode/search.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace dragoman;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> run(const GenerationConfig& config, std::int64_t maxLength, std::vector<float> scores,
                       const std::vector<TokenId>& sequence) {
    auto logits = Logits::allocate(1, static_cast<std::int64_t>(scores.size()));
    std::copy(scores.begin(), scores.end(), logits.row(0));
    LogitsProcessors(config, maxLength).apply(logits, {sequence});
    return std::vector<float>(logits.row(0), logits.row(0) + logits.vocab());
}

// Hands greedySearch the given score rows, one per step, whatever token it feeds.
class ScoreRows : public DecodingSession {
public:
    explicit ScoreRows(std::vector<std::vector<float>> rows) : rows_(std::move(rows)) {}
    Logits next(const std::vector<TokenId>&) override {
        const auto& row = rows_.at(step_++);
        auto logits = Logits::allocate(1, static_cast<std::int64_t>(row.size()));
        std::copy(row.begin(), row.end(), logits.row(0));
        return logits;
    }
    void reorder(const std::vector<std::int64_t>&) override {}

private:
    std::vector<std::vector<float>> rows_;
    std::size_t step_ = 0;
};

}  // namespace

Q_DECLARE_METATYPE(std::vector<float>)
Q_DECLARE_METATYPE(std::vector<TokenId>)

class TestLogitsProcessors : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void processors_data();
    void processors();
    void noneLeavesScoresAlone();
    void generationConfigRefusesOutOfRange_data();
    void generationConfigRefusesOutOfRange();
    void greedyPicksAsTorchArgmax();
    void samplingDrawsFromTheWarpedDistribution_data();
    void samplingDrawsFromTheWarpedDistribution();
};

void TestLogitsProcessors::processors_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<std::vector<TokenId>>("sequence");
    QTest::addColumn<std::vector<float>>("expected");
    // Scores before processing: [2, -1, 0.5, -4, 3]
    // repetition_penalty 2: seen tokens 0 and 3: positive divided, negative multiplied, each once.
    QTest::newRow("repetition penalty") << "repetition" << std::vector<TokenId>{0, 3, 3} << std::vector<float>{1, -1, 0.5f, -8, 3};
    // no_repeat_ngram_size 2 after "1 2 ... 1": the bigram (1, 2) was seen, so 2 is banned.
    QTest::newRow("no repeat bigram") << "ngram" << std::vector<TokenId>{1, 2, 4, 1} << std::vector<float>{2, -1, -kInf, -4, 3};
    QTest::newRow("no repeat, nothing seen") << "ngram" << std::vector<TokenId>{1, 2, 4} << std::vector<float>{2, -1, 0.5f, -4, 3};
    // bad_words_ids [[4], [0, 1]]: 4 always; 1 only right after 0.
    QTest::newRow("bad words after prefix") << "bad" << std::vector<TokenId>{2, 0} << std::vector<float>{2, -kInf, 0.5f, -4, -kInf};
    QTest::newRow("bad words elsewhere") << "bad" << std::vector<TokenId>{0, 2} << std::vector<float>{2, -1, 0.5f, -4, -kInf};
    // forced_eos_token_id 3 with max_length 4: at length 3 only EOS is left, with score 0.
    QTest::newRow("forced eos at the end") << "eos" << std::vector<TokenId>{9, 1, 2} << std::vector<float>{-kInf, -kInf, -kInf, 0, -kInf};
    QTest::newRow("forced eos not yet") << "eos" << std::vector<TokenId>{9, 1} << std::vector<float>{2, -1, 0.5f, -4, 3};
}

void TestLogitsProcessors::processors() {
    QFETCH(QString, kind);
    QFETCH(std::vector<TokenId>, sequence);
    QFETCH(std::vector<float>, expected);
    GenerationConfig config;
    if (kind == "repetition") config.repetitionPenalty = 2.0;
    if (kind == "ngram") config.noRepeatNgramSize = 2;
    if (kind == "bad") config.badWordsIds = {{4}, {0, 1}};
    if (kind == "eos") config.forcedEosId = 3;
    QCOMPARE(run(config, 4, {2, -1, 0.5f, -4, 3}, sequence), expected);
}

void TestLogitsProcessors::noneLeavesScoresAlone() {
    QVERIFY(LogitsProcessors().empty());
    QCOMPARE(run(GenerationConfig{}, 4, {2, -1, 0.5f}, {0, 1, 2}), (std::vector<float>{2, -1, 0.5f}));
}

void TestLogitsProcessors::generationConfigRefusesOutOfRange_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("field");  // empty: accepted
    QTest::newRow("num_beams 0 (found by fuzz_model_configs)") << R"({"num_beams": 0})"
                                                               << "num_beams";
    QTest::newRow("num_beams negative") << R"({"num_beams": -3})"
                                        << "num_beams";
    QTest::newRow("max_length 0") << R"({"max_length": 0})"
                                  << "max_length";
    QTest::newRow("max_new_tokens negative") << R"({"max_new_tokens": -1})"
                                             << "max_new_tokens";
    QTest::newRow("no_repeat_ngram_size negative") << R"({"no_repeat_ngram_size": -2})"
                                                   << "no_repeat_ngram_size";
    QTest::newRow("top_k negative") << R"({"top_k": -1})"
                                    << "top_k";
    QTest::newRow("top_p above 1") << R"({"top_p": 1.5})"
                                   << "top_p";
    QTest::newRow("temperature negative") << R"({"temperature": -0.5})"
                                          << "temperature";
    QTest::newRow("repetition_penalty 0") << R"({"repetition_penalty": 0})"
                                          << "repetition_penalty";
    QTest::newRow("pad_token_id 7.9e159 (found by fuzz_model_configs)") << R"({"pad_token_id": 7.888e159})"
                                                                        << "pad_token_id";
    QTest::newRow("eos_token_id list with a fraction") << R"({"eos_token_id": [2, 2.5]})"
                                                       << "eos_token_id";
    QTest::newRow("bad_words_ids beyond int64") << R"({"bad_words_ids": [[18446744073709551615]]})"
                                                << "bad_words_ids";
    QTest::newRow("bad_words_ids as a flat list") << R"({"bad_words_ids": [5, 6]})"
                                                  << "bad_words_ids";
    QTest::newRow("num_beams as a string") << R"({"num_beams": "4"})"
                                           << "num_beams";
    QTest::newRow("integers written as floats") << R"({"eos_token_id": 2.0, "num_beams": 4.0, "max_length": 512.0})"
                                                << "";
    QTest::newRow("greedy with temperature 0 and top_p 0") << R"({"do_sample": false, "temperature": 0, "top_p": 0})"
                                                           << "";
    QTest::newRow("a real HY-MT generation config")
        << R"({"do_sample": true, "top_k": 20, "top_p": 0.6, "temperature": 0.7, "repetition_penalty": 1.05})"
        << "";
}

// Values the decoders would divide by, loop over or index with are refused by name when the model is read.
void TestLogitsProcessors::generationConfigRefusesOutOfRange() {
    QFETCH(QString, json);
    QFETCH(QString, field);
    QTemporaryDir dir;
    const std::filesystem::path folder(dir.path().toStdString());
    std::ofstream(folder / "generation_config.json") << json.toStdString();
    try {
        GenerationConfig::load(folder);
        QVERIFY2(field.isEmpty(), qPrintable("accepted " + json));
    } catch (const Error& e) {
        QVERIFY2(!field.isEmpty(), e.what());
        QVERIFY2(QString::fromUtf8(e.what()).contains(field), e.what());
        QVERIFY2(QString::fromUtf8(e.what()).contains("generation_config.json"), e.what());
    }
}

QTEST_GUILESS_MAIN(TestLogitsProcessors)
// Greedy search takes torch.argmax's token at every step: the first of tied maxima, a NaN before any number,
// the first token when every score is -inf.
void TestLogitsProcessors::greedyPicksAsTorchArgmax() {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<std::vector<float>> rows{
        {0.5f, 2.0f, -1.0f, 2.0f},  // a tie: the first
        {-kInf, -kInf, -kInf, -kInf}, {1.0f, nan, 3.0f, nan},      {nan, 9.0f, 1.0f, 0.0f},
        {-3.0f, -2.0f, kInf, -1.0f},  {0.0f, -0.0f, -1.0f, -2.0f},  // -0 equals 0: the first
    };
    std::vector<TokenId> expected;
    for (const auto& row : rows)
        expected.push_back(torch::tensor(row).argmax().item<TokenId>());
    QCOMPARE(expected, (std::vector<TokenId>{1, 0, 1, 0, 2, 0}));
    ScoreRows session(rows);
    SearchOptions options;
    options.maxNewTokens = static_cast<std::int64_t>(rows.size());
    options.eosIds = {99};
    QCOMPARE(greedySearch(session, {7}, options), expected);
}

Q_DECLARE_METATYPE(std::vector<double>)

void TestLogitsProcessors::samplingDrawsFromTheWarpedDistribution_data() {
    QTest::addColumn<std::vector<float>>("scores");
    QTest::addColumn<double>("temperature");
    QTest::addColumn<double>("topP");
    QTest::addColumn<int>("topK");
    QTest::addColumn<std::vector<double>>("expected");  // each token's probability after the warpers
    const std::vector<float> four{std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
    QTest::newRow("plain softmax") << four << 1.0 << 1.0 << 0 << std::vector<double>{0.5, 0.3, 0.15, 0.05};
    // Temperature 0.5 squares the probabilities: 1, 4, 0.25 over 5.25.
    QTest::newRow("temperature 0.5") << std::vector<float>{0.0f, std::log(2.0f), std::log(0.5f)} << 0.5 << 1.0 << 0
                                     << std::vector<double>{1 / 5.25, 4 / 5.25, 0.25 / 5.25};
    QTest::newRow("top-k 2") << four << 1.0 << 1.0 << 2 << std::vector<double>{0.625, 0.375, 0, 0};
    // Ascending cumulative 0.05, 0.2, 0.5, 1: top_p 0.9 drops what stays <= 0.1 (the last token alone).
    QTest::newRow("top-p 0.9") << four << 1.0 << 0.9 << 0 << std::vector<double>{0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0};
    // After top-k 3: 0.158, 0.474, 1 ascending; top_p 0.6 drops what stays <= 0.4.
    QTest::newRow("top-k 3 then top-p 0.6") << four << 1.0 << 0.6 << 3 << std::vector<double>{0.625, 0.375, 0, 0};
    QTest::newRow("top-p keeps the most likely") << four << 1.0 << 0.1 << 0 << std::vector<double>{1, 0, 0, 0};
    QTest::newRow("filtered tokens are never drawn")
        << std::vector<float>{-kInf, 1.0f, -kInf, 1.0f} << 0.7 << 0.95 << 0 << std::vector<double>{0, 0.5, 0, 0.5};
}

// sampleSearch() draws from softmax(scores / temperature) after HF's top-k and top-p warpers: over 4000 draws each
// token's share lies within 0.035 of its probability (4.4 standard deviations at most), and a filtered token never
// comes. The same seed gives the same tokens; another seed others.
void TestLogitsProcessors::samplingDrawsFromTheWarpedDistribution() {
    QFETCH(std::vector<float>, scores);
    QFETCH(double, temperature);
    QFETCH(double, topP);
    QFETCH(int, topK);
    QFETCH(std::vector<double>, expected);
    constexpr int kDraws = 4000;
    SearchOptions options;
    options.maxNewTokens = kDraws;
    auto sample = [&](std::uint64_t seed) {
        ScoreRows session(std::vector<std::vector<float>>(kDraws, scores));
        return sampleSearch(session, {0}, options, {temperature, topP, topK, seed});
    };
    const auto drawn = sample(11);
    QCOMPARE(drawn.size(), std::size_t(kDraws));
    std::vector<int> counts(scores.size());
    for (auto token : drawn) {
        QVERIFY(token >= 0 && token < static_cast<TokenId>(scores.size()));
        ++counts[static_cast<std::size_t>(token)];
    }
    for (std::size_t t = 0; t < scores.size(); ++t) {
        const double share = static_cast<double>(counts[t]) / kDraws;
        QVERIFY2(expected[t] == 0 ? counts[t] == 0 : std::abs(share - expected[t]) <= 0.035,
                 qPrintable(QString("token %1: drawn %2 of %3, probability %4").arg(t).arg(counts[t]).arg(kDraws).arg(expected[t])));
    }
    QCOMPARE(sample(11), drawn);
    if (std::count(expected.begin(), expected.end(), 0.0) + 1 < static_cast<std::ptrdiff_t>(expected.size())) QVERIFY(sample(12) != drawn);
}

#include "tst_logits_processors.moc"
