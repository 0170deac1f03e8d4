// Hugging Face's logits processors, each against scores worked out by hand from transformers' definitions.
#include "decode/logits_processors.h"

#include <QTest>

#include <torch/torch.h>

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

}  // namespace

Q_DECLARE_METATYPE(std::vector<float>)
Q_DECLARE_METATYPE(std::vector<TokenId>)

class TestLogitsProcessors : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void processors_data();
    void processors();
    void noneLeavesScoresAlone();
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

QTEST_GUILESS_MAIN(TestLogitsProcessors)
#include "tst_logits_processors.moc"
