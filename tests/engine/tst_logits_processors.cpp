// Hugging Face's logits processors, each against scores worked out by hand from transformers' definitions.
#include "decode/generation_config.h"
#include "decode/logits_processors.h"
#include "decode/search.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <limits>

using namespace dragoman;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> run(const GenerationConfig& config, std::int64_t maxLength, std::vector<float> scores,
                       const std::vector<TokenId>& sequence) {
    auto tensor = torch::tensor(scores).view({1, -1}).clone();
    LogitsProcessors(config, maxLength).apply(tensor, {sequence});
    return std::vector<float>(tensor.data_ptr<float>(), tensor.data_ptr<float>() + tensor.numel());
}

// Hands greedySearch the given score rows, one per step, whatever token it feeds.
class ScoreRows : public DecodingSession {
public:
    explicit ScoreRows(std::vector<std::vector<float>> rows) : rows_(std::move(rows)) {}
    torch::Tensor next(const torch::Tensor&) override { return torch::tensor(rows_.at(step_++)).view({1, -1}).clone(); }
    void reorder(const torch::Tensor&) override {}

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

#include "tst_logits_processors.moc"
