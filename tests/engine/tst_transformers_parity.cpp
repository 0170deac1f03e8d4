// Parity with transformers itself (5.17, HunYuanDenseV1ForCausalLM and MarianMTModel), on random-weight
// checkpoints in configurations the golden fixtures do not cover: head_dim other than hidden/heads, GQA, MQA
// and MHA, dynamic-alpha and plain RoPE, untied heads and stored tied copies, relu/gelu/swish Marian with and
// without embedding scaling. tests/fixtures/transformers-xcheck was made by tools/xcheck (the README says
// how); these are the calls dragoman-cli's `logits` and `generate` make.
#include "io/tensor_view.h"
#include "models/encoder_decoder.h"
#include "runtime/reference_calls.h"
#include "test_files.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace dragoman;

namespace {

const std::filesystem::path kDir = test::fixture("transformers-xcheck");

nlohmann::json reference() {
    std::ifstream in(kDir / "reference.json");
    return nlohmann::json::parse(in);
}

}  // namespace

class TestTransformersParity : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void matchesTransformers_data();
    void matchesTransformers();

private:
    torch::Tensor expected(const std::string& name) const;

    QTemporaryDir cache_;
    std::unique_ptr<ModelStore> store_;
    std::shared_ptr<const SafetensorsFile> tensors_;
    nlohmann::json reference_;
};

void TestTransformersParity::initTestCase() {
    store_ = std::make_unique<ModelStore>(StoreRoots{cache_.path().toStdString(), "/nonexistent", {}});
    tensors_ = SafetensorsFile::open(kDir / "reference.safetensors");
    reference_ = reference();
    QCOMPARE(reference_.at("models").size(), std::size_t{6});
}

torch::Tensor TestTransformersParity::expected(const std::string& name) const {
    const auto* info = tensors_->find(name);
    if (!info) qFatal("no reference tensor %s", name.c_str());
    return mappedTensor(tensors_, *info);
}

void TestTransformersParity::matchesTransformers_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("caseIndex");
    const auto json = reference();  // a local: iterating a temporary's member would dangle
    for (const auto& [name, runs] : json.at("models").items())
        for (int i = 0; i < static_cast<int>(runs.size()); ++i)
            QTest::addRow("%s/case%d", name.c_str(), i) << QString::fromStdString(name) << i;
}

// Logits (and a Marian encoder's output) within 1e-4 of their largest magnitude; generated ids exact, greedy
// and, for Marian, 4-beam search with the checkpoint's generation_config.json processors.
void TestTransformersParity::matchesTransformers() {
    QFETCH(QString, model);
    QFETCH(int, caseIndex);
    const auto name = model.toStdString();
    const auto& run = reference_.at("models").at(name).at(caseIndex);
    const auto runnable = openModel(*store_, (kDir / name).string());
    const auto ids = run.at("ids").get<std::vector<TokenId>>();
    std::optional<std::vector<TokenId>> decoderIds;
    if (run.contains("decoder_ids")) {
        decoderIds = run.at("decoder_ids").get<std::vector<TokenId>>();
        for (auto& id : *decoderIds)
            if (id == -1) id = runnable->seq2seq()->decoderStartId();  // -1 stands for the start token
    }
    const auto forced = teacherForcedLogits(*runnable, ids, decoderIds);
    const auto prefix = name + "/case" + std::to_string(caseIndex) + "/";
    auto relativeError = [](const torch::Tensor& ours, const torch::Tensor& theirs) {
        if (ours.sizes() != theirs.sizes()) return 1e9;
        return (ours - theirs).abs().max().item<double>() / theirs.abs().max().item<double>();
    };
    const double logitsError = relativeError(forced.logits, expected(prefix + "logits"));
    QVERIFY2(logitsError <= 1e-4, qPrintable(QString("logits differ by %1 of their range").arg(logitsError)));
    if (decoderIds) {
        const double encoderError = relativeError(forced.encoder, expected(prefix + "encoder"));
        QVERIFY2(encoderError <= 1e-4, qPrintable(QString("encoder output differs by %1 of its range").arg(encoderError)));
    }
    const std::int64_t maxNew = run.at("max_new_tokens");
    for (const auto& [beams, generated] : run.at("generated").items()) {
        const auto got = generateIds(*runnable, ids, maxNew, std::stoll(beams), false);
        QVERIFY2(got == generated.get<std::vector<TokenId>>(), qPrintable(QString("%1 beam(s): different ids").arg(beams.c_str())));
    }
}

QTEST_GUILESS_MAIN(TestTransformersParity)
#include "tst_transformers_parity.moc"
