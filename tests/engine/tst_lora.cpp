// PEFT LoRA adapters applied unmerged, held to their merged twins (tests/fixtures/lora, and more configurations
// made here by ../shared/fixtures/gen/make_lora.py): logits within 1e-4, greedy and beam ids exactly; the base
// stays untouched; requests pick their adapter; broken or foreign adapters are refused by name.
#include "adapters/lora_adapter.h"
#include "api/model_of.h"
#include "models/encoder_decoder.h"
#include "runtime/reference_calls.h"
#include "runtime/runnable_model.h"
#include "test_files.h"
#include "twin_checks.h"
#include "util/error.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <torch/torch.h>

#include <fstream>

using namespace dragoman;

namespace {

const std::filesystem::path kLora = std::filesystem::path(DRAGOMAN_TEST_FIXTURES) / "lora";
const std::filesystem::path kMakeLora = std::filesystem::path(DRAGOMAN_SHARED_FIXTURES) / "gen" / "make_lora.py";

using test::maxDiff;
using test::someIds;

}  // namespace

class TestLora : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void matchesMergedTwin_data();
    void matchesMergedTwin();
    void otherConfigurationsMatch_data();
    void otherConfigurationsMatch();
    void requestsPickTheirAdapter();
    void badAdaptersAreRefused_data();
    void badAdaptersAreRefused();

private:
    std::shared_ptr<RunnableModel> open(const std::filesystem::path& dir) { return openModel(*store_, dir.string()); }
    // Adapter on base vs merged twin: teacher-forced logits, greedy ids, and (Marian) 4-beam ids.
    void compare(const std::filesystem::path& base, const std::filesystem::path& adapter, const std::filesystem::path& merged);
    // make_lora.py BASE ADAPTER MERGED args...; QSKIPs where the generator or numpy is missing.
    void makeLora(const std::filesystem::path& base, const std::filesystem::path& adapter, const std::filesystem::path& merged,
                  const QStringList& args);

    QTemporaryDir cache_, work_;
    std::unique_ptr<ModelStore> store_;
};

void TestLora::initTestCase() {
    store_ = std::make_unique<ModelStore>(StoreRoots{cache_.path().toStdString(), {}, {}});
}

void TestLora::compare(const std::filesystem::path& base, const std::filesystem::path& adapterDir, const std::filesystem::path& merged) {
    const auto model = open(base), twin = open(merged);
    const auto adapter = model->loadAdapter(adapterDir, adapterDir.filename().string());
    QVERIFY(adapter->targeted() > 0);
    const auto vocab = model->causal() ? model->causal()->vocabSize() : model->seq2seq()->vocabSize();
    const auto ids = someIds(12, vocab);
    std::optional<std::vector<TokenId>> decoderIds;
    if (model->seq2seq()) decoderIds = someIds(6, vocab);

    const auto withAdapter = teacherForcedLogits(*model, ids, decoderIds, adapter).logits;
    const auto expected = teacherForcedLogits(*twin, ids, decoderIds).logits;
    const auto plain = teacherForcedLogits(*model, ids, decoderIds).logits;
    QVERIFY2(maxDiff(withAdapter, expected) < 1e-4, std::to_string(maxDiff(withAdapter, expected)).c_str());
    QVERIFY2(maxDiff(plain, expected) > 1e-2, "the adapter changes nothing: the check would not see it ignored");
    // The base is shared and untouched: without the adapter it still computes itself.
    QVERIFY(maxDiff(teacherForcedLogits(*model, ids, decoderIds).logits, plain) == 0.0);

    QCOMPARE(generateIds(*model, ids, 16, 1, true, adapter), generateIds(*twin, ids, 16, 1, true));
    if (model->seq2seq()) QCOMPARE(generateIds(*model, ids, 16, 4, true, adapter), generateIds(*twin, ids, 16, 4, true));
}

void TestLora::makeLora(const std::filesystem::path& base, const std::filesystem::path& adapter, const std::filesystem::path& merged,
                        const QStringList& args) {
    if (!std::filesystem::exists(kMakeLora)) QSKIP("../shared/fixtures/gen/make_lora.py is not here");
    QProcess python;
    python.start(QStringLiteral("/usr/bin/python3"),
                 QStringList{QString::fromStdString(kMakeLora.string()), QString::fromStdString(base.string()),
                             QString::fromStdString(adapter.string()), QString::fromStdString(merged.string())} +
                     args);
    QVERIFY(python.waitForFinished(120000));
    if (python.exitCode() != 0 && python.readAllStandardError().contains("No module named 'numpy'")) QSKIP("python3-numpy is missing");
    QCOMPARE(python.exitCode(), 0);
}

void TestLora::matchesMergedTwin_data() {
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("adapter");
    QTest::newRow("hunyuan all seven projections") << "hunyuan-tiny-f32"
                                                   << "hunyuan-tiny-f32.all7";
    QTest::newRow("hunyuan q/v, one layer, rsLoRA, bf16") << "hunyuan-tiny-f32"
                                                          << "hunyuan-tiny-f32.qv-rslora-bf16";
    QTest::newRow("marian attention and ffn, rank_pattern") << "marian-tiny"
                                                            << "marian-tiny.attn-ffn";
}

void TestLora::matchesMergedTwin() {
    QFETCH(QString, base);
    QFETCH(QString, adapter);
    compare(test::fixture(base.toStdString().c_str()), kLora / adapter.toStdString(), kLora / (adapter.toStdString() + ".merged"));
}

void TestLora::otherConfigurationsMatch_data() {
    QTest::addColumn<QString>("base");
    QTest::addColumn<QStringList>("args");
    QTest::newRow("regex targets, f16") << "hunyuan-tiny-f32"
                                        << QStringList{"--targets-regex", R"(.*\.(gate|down)_proj)", "--dtype", "F16", "--r", "3"};
    QTest::newRow("exclude, alpha_pattern") << "hunyuan-tiny-f32"
                                            << QStringList{"--targets",
                                                           "q_proj,k_proj,o_proj,up_proj",
                                                           "--exclude",
                                                           "model.layers.0.self_attn.k_proj",
                                                           "--alpha-pattern",
                                                           "o_proj=3",
                                                           "--r",
                                                           "16",
                                                           "--alpha",
                                                           "4"};
    QTest::newRow("marian layers_to_transform, rsLoRA, bf16")
        << "marian-tiny" << QStringList{"--targets", "k_proj,v_proj,fc1", "--layers", "0", "--rslora", "--dtype", "BF16", "--r", "2"};
    QTest::newRow("marian cross-attention by regex")
        << "marian-tiny" << QStringList{"--targets-regex", R"(.*encoder_attn\.(q|k|out)_proj)", "--r", "6"};
}

void TestLora::otherConfigurationsMatch() {
    QFETCH(QString, base);
    QFETCH(QStringList, args);
    const std::filesystem::path dir = work_.path().toStdString() + "/" + QTest::currentDataTag();
    const auto baseDir = test::fixture(base.toStdString().c_str());
    makeLora(baseDir, dir / "adapter", dir / "merged", args);
    if (QTest::currentTestFailed() || !std::filesystem::exists(dir / "merged")) return;  // failed, or skipped inside makeLora
    compare(baseDir, dir / "adapter", dir / "merged");
}

// One base, two requests, two answers: the base's and the merged twin's; no reload between them.
void TestLora::requestsPickTheirAdapter() {
    const auto model = open(test::fixture("hunyuan-tiny-f32"));
    const auto twin = open(kLora / "hunyuan-tiny-f32.all7.merged");
    const auto adapter = model->loadAdapter(kLora / "hunyuan-tiny-f32.all7", "all7");
    const auto translator = modelOf(model), merged = modelOf(twin);
    TranslationRequest plain;
    plain.text = "It is raining.";
    plain.from = "en";
    plain.to = "de";
    TranslationRequest adapted = plain;
    adapted.adapter = adapter;
    const auto baseText = translator->translate(plain);
    const auto adaptedText = translator->translate(adapted);
    QCOMPARE(adaptedText, merged->translate(plain));
    QCOMPARE(translator->translate(plain), baseText);
    QCOMPARE(translator->translate(adapted), adaptedText);
}

void TestLora::badAdaptersAreRefused_data() {
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("adapter");
    QTest::addColumn<QString>("config");  // a field set in adapter_config.json, key=JSON (empty: none)
    QTest::addColumn<QString>("damage");  // truncate | drop-b | none
    QTest::addColumn<QString>("named");   // what the message must name
    QTest::newRow("dora") << "hunyuan-tiny-f32"
                          << "hunyuan-tiny-f32.all7"
                          << "use_dora=true"
                          << "none"
                          << "use_dora";
    QTest::newRow("prefix tuning") << "hunyuan-tiny-f32"
                                   << "hunyuan-tiny-f32.all7"
                                   << R"(peft_type="PREFIX_TUNING")"
                                   << "none"
                                   << "PREFIX_TUNING";
    QTest::newRow("lora bias") << "hunyuan-tiny-f32"
                               << "hunyuan-tiny-f32.all7"
                               << "lora_bias=true"
                               << "none"
                               << "lora_bias";
    QTest::newRow("modules to save") << "hunyuan-tiny-f32"
                                     << "hunyuan-tiny-f32.all7"
                                     << R"(modules_to_save=["lm_head"])"
                                     << "none"
                                     << "modules_to_save";
    QTest::newRow("fan in fan out") << "hunyuan-tiny-f32"
                                    << "hunyuan-tiny-f32.all7"
                                    << "fan_in_fan_out=true"
                                    << "none"
                                    << "fan_in_fan_out";
    QTest::newRow("other architecture") << "hunyuan-tiny-f32"
                                        << "marian-tiny.attn-ffn"
                                        << ""
                                        << "none"
                                        << "does not fit";
    QTest::newRow("targets a module without tensors") << "hunyuan-tiny-f32"
                                                      << "hunyuan-tiny-f32.qv-rslora-bf16"
                                                      << R"(target_modules=["q_proj","v_proj","k_proj"])"
                                                      << "none"
                                                      << "k_proj";
    QTest::newRow("wrong rank") << "hunyuan-tiny-f32"
                                << "hunyuan-tiny-f32.all7"
                                << "r=5"
                                << "none"
                                << "do not fit";
    QTest::newRow("rank as a huge float") << "hunyuan-tiny-f32"
                                          << "hunyuan-tiny-f32.all7"
                                          << "r=1e300"
                                          << "none"
                                          << "r must be an integer";
    QTest::newRow("rank_pattern with a fraction") << "hunyuan-tiny-f32"
                                                  << "hunyuan-tiny-f32.all7"
                                                  << R"(rank_pattern={"q_proj": 2.5})"
                                                  << "none"
                                                  << "rank_pattern.q_proj";
    QTest::newRow("truncated tensors") << "hunyuan-tiny-f32"
                                       << "hunyuan-tiny-f32.all7"
                                       << ""
                                       << "truncate"
                                       << "adapter_model.safetensors";
    QTest::newRow("not json") << "marian-tiny"
                              << "marian-tiny.attn-ffn"
                              << ""
                              << "garbage-config"
                              << "adapter_config.json";
}

void TestLora::badAdaptersAreRefused() {
    QFETCH(QString, base);
    QFETCH(QString, adapter);
    QFETCH(QString, config);
    QFETCH(QString, damage);
    QFETCH(QString, named);
    const std::filesystem::path dir = work_.path().toStdString() + "/bad-" + QTest::currentDataTag();
    test::copyFolder(kLora / adapter.toStdString(), dir);
    if (!config.isEmpty()) {
        std::ifstream in(dir / "adapter_config.json");
        auto json = nlohmann::json::parse(in);
        const auto eq = config.indexOf('=');
        json[config.left(eq).toStdString()] = nlohmann::json::parse(config.mid(eq + 1).toStdString());
        std::ofstream(dir / "adapter_config.json") << json.dump(2);
    }
    if (damage == "truncate")
        std::filesystem::resize_file(dir / "adapter_model.safetensors", std::filesystem::file_size(dir / "adapter_model.safetensors") / 2);
    if (damage == "garbage-config") std::ofstream(dir / "adapter_config.json") << "{ not json";
    const auto model = open(test::fixture(base.toStdString().c_str()));
    try {
        model->loadAdapter(dir, "bad");
        QFAIL("a bad adapter was accepted");
    } catch (const Error& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(named), e.what());
    }
    // The base stays loaded and usable.
    QVERIFY(teacherForcedLogits(*model, {3, 4, 5}, std::nullopt).logits.defined());
}

QTEST_GUILESS_MAIN(TestLora)
#include "tst_lora.moc"
