// Weight-only 8-bit models (compressed-tensors int8 and FP8 E4M3) held to their dequantized float32 twins
// (tests/fixtures/quant, written by ../shared/fixtures/gen/quant.py): logits within 1e-4, greedy (and Marian's
// beam) ids exactly. Our own quantizer writes the generator's bytes, its copies of a bf16 model pass the same
// check, and broken quantized checkpoints are refused by name.
#include "io/checkpoint.h"
#include "io/safetensors_writer.h"
#include "kernels/bf16.h"
#include "models/encoder_decoder.h"
#include "quantize/e4m3.h"
#include "quantize/quantize_model.h"
#include "runtime/reference_calls.h"
#include "runtime/runnable_model.h"
#include "store/model_store.h"
#include "test_files.h"
#include "twin_checks.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

using namespace dragoman;
namespace fs = std::filesystem;

namespace {

const fs::path kQuant = fs::path(DRAGOMAN_TEST_FIXTURES) / "quant";

using test::maxDiff;
using test::someIds;

using test::readTensors;
using test::StoredTensors;
using test::writeTensors;

nlohmann::json readConfig(const fs::path& dir) {
    return nlohmann::json::parse(std::ifstream(dir / "config.json"));
}

void writeConfig(const fs::path& dir, const nlohmann::json& config) {
    std::ofstream(dir / "config.json") << config.dump(2);
}

std::vector<std::byte> floatBytes(const torch::Tensor& t) {
    const auto c = t.to(torch::kFloat32).contiguous();
    std::vector<std::byte> bytes(static_cast<std::size_t>(c.numel()) * 4);
    std::memcpy(bytes.data(), c.data_ptr<float>(), bytes.size());
    return bytes;
}

// The float32 twin of a quantized folder, as quant.py's dequantize writes it: codes times scale in float64.
void writeDequantizedTwin(const fs::path& quantized, const fs::path& twin) {
    fs::create_directories(twin);
    for (const char* file : {"generation_config.json"})
        if (fs::exists(quantized / file)) fs::copy_file(quantized / file, twin / file);
    auto config = readConfig(quantized);
    config.erase("quantization_config");
    writeConfig(twin, config);
    const auto tensors = readTensors(quantized);
    StoredTensors out;
    for (const auto& [name, t] : tensors) {
        if (name.ends_with(".weight_scale")) continue;
        const auto count = static_cast<std::int64_t>(t.bytes.size());
        if (t.dtype == DType::I8 || t.dtype == DType::F8_E4M3) {
            auto values = torch::empty({count}, torch::kFloat64);
            auto* v = values.data_ptr<double>();
            for (std::int64_t i = 0; i < count; ++i) {
                const auto byte = static_cast<std::uint8_t>(t.bytes[static_cast<std::size_t>(i)]);
                v[i] = t.dtype == DType::I8 ? static_cast<std::int8_t>(byte) : kernels::widen(kernels::Fp8E4M3{byte});
            }
            const auto& s = tensors.at(name.substr(0, name.size() - 7) + ".weight_scale");
            auto scale = torch::empty({static_cast<std::int64_t>(s.bytes.size() / 4)}, torch::kFloat32);
            std::memcpy(scale.data_ptr<float>(), s.bytes.data(), s.bytes.size());
            values = values.view(t.shape) * (scale.numel() > 1 ? scale.to(torch::kFloat64).view({-1, 1}) : scale.to(torch::kFloat64));
            out[name] = {DType::F32, t.shape, floatBytes(values)};
        } else if (t.dtype == DType::BF16) {
            auto values = torch::empty({count / 2}, torch::kBFloat16);
            std::memcpy(values.data_ptr(), t.bytes.data(), t.bytes.size());
            out[name] = {DType::F32, t.shape, floatBytes(values)};
        } else {
            out[name] = t;
        }
    }
    writeTensors(out, twin / "model.safetensors");
}

}  // namespace

class TestQuantization : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void e4m3EncodingRoundsToNearestEven();
    void matchesDequantizedTwin_data();
    void matchesDequantizedTwin();
    void quantizerWritesTheGeneratorsBytes_data();
    void quantizerWritesTheGeneratorsBytes();
    void ownCopiesMatchTheirTwins_data();
    void ownCopiesMatchTheirTwins();
    void tablesAreQuantized_data();
    void tablesAreQuantized();
    void brokenCheckpointsAreRefused_data();
    void brokenCheckpointsAreRefused();
    void activationSchemes_data();
    void activationSchemes();
    void quantizerNeverOverwrites();

private:
    std::shared_ptr<RunnableModel> open(const fs::path& dir) { return openModel(*store_, dir.string()); }
    void compare(const fs::path& quantized, const fs::path& twin);
    QuantizeSummary quantize(const fs::path& base, const fs::path& out, QuantizeSettings settings, ProgressCallback progress = {});

    QTemporaryDir cache_, work_;
    std::unique_ptr<ModelStore> store_;
};

void TestQuantization::initTestCase() {
    store_ = std::make_unique<ModelStore>(StoreRoots{cache_.path().toStdString(), {}, {}});
}

QuantizeSummary TestQuantization::quantize(const fs::path& base, const fs::path& out, QuantizeSettings settings,
                                           ProgressCallback progress) {
    const auto model = open(base);
    ProgressMeter meter(std::move(progress), {}, {{"measure", 1}, {"write", 1}});
    return quantizeModel(*model, out, settings, meter, 0);
}

void TestQuantization::compare(const fs::path& quantizedDir, const fs::path& twinDir) {
    const auto model = open(quantizedDir), twin = open(twinDir);
    const auto vocab = model->causal() ? model->causal()->vocabSize() : model->seq2seq()->vocabSize();
    const auto ids = someIds(12, vocab);
    std::optional<std::vector<TokenId>> decoderIds;
    if (model->seq2seq()) decoderIds = someIds(6, vocab);
    const auto got = teacherForcedLogits(*model, ids, decoderIds).logits;
    const auto expected = teacherForcedLogits(*twin, ids, decoderIds).logits;
    QVERIFY2(maxDiff(got, expected) < 1e-4, std::to_string(maxDiff(got, expected)).c_str());
    // A prompt long enough for the packed GEMM (>= 32 rows) too.
    const auto longIds = someIds(48, vocab);
    const auto longGot = teacherForcedLogits(*model, longIds, decoderIds).logits;
    const auto longExpected = teacherForcedLogits(*twin, longIds, decoderIds).logits;
    QVERIFY2(maxDiff(longGot, longExpected) < 1e-4, std::to_string(maxDiff(longGot, longExpected)).c_str());
    QCOMPARE(generateIds(*model, ids, 16, 1, true), generateIds(*twin, ids, 16, 1, true));
    QCOMPARE(generateIds(*model, ids, 16, 1, false), generateIds(*twin, ids, 16, 1, false));
    if (model->seq2seq()) QCOMPARE(generateIds(*model, ids, 16, 4, true), generateIds(*twin, ids, 16, 4, true));
}

// Every E4M3 code reads back as itself, values between two codes go to the nearer (ties to the even code), and
// magnitudes past the largest code (448) clip to it.
void TestQuantization::e4m3EncodingRoundsToNearestEven() {
    for (int code = 0; code < 256; ++code) {
        if ((code & 0x7F) == 0x7F) continue;  // NaN
        const auto value = kernels::widen(kernels::Fp8E4M3{static_cast<std::uint8_t>(code)});
        QCOMPARE(int(encodeE4M3(value)), code == 0x80 ? 0 : code);
        if ((code & 0x80) || code >= 0x7E) continue;
        const double next = kernels::widen(kernels::Fp8E4M3{static_cast<std::uint8_t>(code + 1)});
        const double middle = (value + next) / 2;
        QCOMPARE(int(encodeE4M3(middle)), code % 2 == 0 ? code : code + 1);
        QCOMPARE(int(encodeE4M3(value + (next - value) * 0.49)), code);
        QCOMPARE(int(encodeE4M3(-(value + (next - value) * 0.51))), (code + 1) | 0x80);
    }
    QCOMPARE(int(encodeE4M3(448.0)), 0x7E);
    QCOMPARE(int(encodeE4M3(1e6)), 0x7E);
    QCOMPARE(int(encodeE4M3(-460.0)), 0xFE);
    QCOMPARE(int(encodeE4M3(std::ldexp(1.0, -10))), 0);  // half the smallest subnormal: ties to 0
    QCOMPARE(int(encodeE4M3(std::ldexp(1.5, -10))), 1);
    QCOMPARE(int(encodeE4M3(-1e-9)), 0);  // -0 is written as +0
    QCOMPARE(int(encodeE4M3(-0.0)), 0);
}

void TestQuantization::matchesDequantizedTwin_data() {
    QTest::addColumn<QString>("fixture");
    QTest::newRow("marian int8 per channel") << "marian-tiny.int8-channel";
    QTest::newRow("marian fp8 per tensor") << "marian-tiny.fp8-tensor";
    QTest::newRow("hunyuan int8 per tensor") << "hunyuan-tiny-f32.int8-tensor";
    QTest::newRow("hunyuan fp8 per channel") << "hunyuan-tiny-f32.fp8-channel";
}

void TestQuantization::matchesDequantizedTwin() {
    QFETCH(QString, fixture);
    const auto dir = kQuant / fixture.toStdString();
    compare(dir, dir.string() + ".dequantized");
}

void TestQuantization::quantizerWritesTheGeneratorsBytes_data() {
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<bool>("fp8");
    QTest::addColumn<bool>("perChannel");
    QTest::newRow("marian int8 per channel") << "marian-tiny"
                                             << "marian-tiny.int8-channel" << false << true;
    QTest::newRow("marian fp8 per tensor") << "marian-tiny"
                                           << "marian-tiny.fp8-tensor" << true << false;
    QTest::newRow("hunyuan int8 per tensor") << "hunyuan-tiny-f32"
                                             << "hunyuan-tiny-f32.int8-tensor" << false << false;
    QTest::newRow("hunyuan fp8 per channel") << "hunyuan-tiny-f32"
                                             << "hunyuan-tiny-f32.fp8-channel" << true << true;
}

// The same checkpoint quantized by us and by the shared generator: every tensor byte for byte, the same
// quantization_config (its ignore list included).
void TestQuantization::quantizerWritesTheGeneratorsBytes() {
    QFETCH(QString, base);
    QFETCH(QString, fixture);
    QFETCH(bool, fp8);
    QFETCH(bool, perChannel);
    const fs::path out = work_.path().toStdString() + "/" + QTest::currentDataTag();
    // quant.py leaves the embedding and output tables in floating point.
    QuantizeSettings settings{fp8 ? QuantizeSettings::Type::Fp8 : QuantizeSettings::Type::Int8, perChannel, false};
    const auto summary = quantize(test::fixture(base.toStdString().c_str()), out, settings);
    QVERIFY(summary.quantized > 0);
    QVERIFY(summary.bytesAfter < summary.bytesBefore);
    const auto ours = readTensors(out), theirs = readTensors(kQuant / fixture.toStdString());
    QCOMPARE(ours.size(), theirs.size());
    for (const auto& [name, t] : theirs) {
        QVERIFY2(ours.count(name), name.c_str());
        QVERIFY2(ours.at(name).dtype == t.dtype, name.c_str());
        QVERIFY2(ours.at(name).shape == t.shape, name.c_str());
        QVERIFY2(ours.at(name).bytes == t.bytes, (name + " differs").c_str());
    }
    auto mine = readConfig(out)["quantization_config"], generators = readConfig(kQuant / fixture.toStdString())["quantization_config"];
    QCOMPARE(QString::fromStdString(mine.dump()), QString::fromStdString(generators.dump()));
    // The tokenizer and generation files came along; the source's expected outputs did not become weights.
    QVERIFY(fs::exists(out / "generation_config.json"));
}

void TestQuantization::ownCopiesMatchTheirTwins_data() {
    QTest::addColumn<QString>("base");
    QTest::addColumn<bool>("fp8");
    QTest::addColumn<bool>("tables");
    QTest::newRow("hunyuan bf16 -> int8") << "hunyuan-tiny" << false << true;
    QTest::newRow("hunyuan bf16 -> fp8") << "hunyuan-tiny" << true << true;
    QTest::newRow("hunyuan bf16 -> int8, embeddings kept") << "hunyuan-tiny" << false << false;
    QTest::newRow("marian -> fp8 per channel") << "marian-tiny" << true << true;
}

// A bf16 model (as HY-MT ships) quantized by us: the copy keeps its other tensors bf16, computes its twin's
// logits, and still translates.
void TestQuantization::ownCopiesMatchTheirTwins() {
    QFETCH(QString, base);
    QFETCH(bool, fp8);
    QFETCH(bool, tables);
    const fs::path out = work_.path().toStdString() + "/own " + QTest::currentDataTag();
    quantize(test::fixture(base.toStdString().c_str()), out,
             {fp8 ? QuantizeSettings::Type::Fp8 : QuantizeSettings::Type::Int8, true, tables});
    writeDequantizedTwin(out, out.string() + ".twin");
    compare(out, out.string() + ".twin");
    const auto copy = open(out);
    QVERIFY(copy->strategy);  // tokenizer files came along
    if (base == "hunyuan-tiny") {
        const auto stored = readTensors(out);
        QVERIFY(stored.at("model.embed_tokens.weight").dtype == (!tables ? DType::BF16 : fp8 ? DType::F8_E4M3 : DType::I8));
        QVERIFY(stored.at("model.norm.weight").dtype == DType::BF16);
    }
}

void TestQuantization::tablesAreQuantized_data() {
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("variant");
    QTest::addColumn<bool>("fp8");
    QTest::newRow("marian, hub copies of the shared table") << "marian-tiny"
                                                            << "copies" << false;
    QTest::newRow("hunyuan tied, a copy of the head stored") << "hunyuan-tiny-f32"
                                                             << "copies" << true;
    QTest::newRow("hunyuan untied") << "hunyuan-tiny-f32"
                                    << "untied" << false;
}

// The embedding and output tables in 8 bits (one scale per row): stored copies of a tied table are dropped, a
// separate output layer is quantized on its own, the config targets Embedding too, the twin's logits hold, and
// the copy is smaller than one that keeps the tables.
void TestQuantization::tablesAreQuantized() {
    QFETCH(QString, base);
    QFETCH(QString, variant);
    QFETCH(bool, fp8);
    const std::string tag = QTest::currentDataTag();
    const fs::path source = work_.path().toStdString() + "/tables source " + tag;
    test::copyFolder(test::fixture(base.toStdString().c_str()), source);
    auto tensors = readTensors(source);
    const bool marian = base == "marian-tiny";
    const std::string table = marian ? "model.shared" : "model.embed_tokens";
    std::vector<std::string> copies;
    if (variant == "copies") {
        copies = marian ? std::vector<std::string>{"model.encoder.embed_tokens", "model.decoder.embed_tokens", "lm_head"}
                        : std::vector<std::string>{"lm_head"};
        for (const auto& copy : copies)
            tensors[copy + ".weight"] = tensors.at(table + ".weight");
    } else {
        auto config = readConfig(source);
        config["tie_word_embeddings"] = false;
        writeConfig(source, config);
        auto head = tensors.at(table + ".weight");
        auto* values = reinterpret_cast<float*>(head.bytes.data());
        for (std::size_t i = 0; i < head.bytes.size() / 4; ++i)
            values[i] = values[i] * 2 - 0.01f * static_cast<float>(i % 7);  // its own numbers
        tensors["lm_head.weight"] = head;
    }
    writeTensors(tensors, source / "model.safetensors");

    const auto type = fp8 ? QuantizeSettings::Type::Fp8 : QuantizeSettings::Type::Int8;
    const fs::path out = work_.path().toStdString() + "/tables " + tag, kept = out.string() + " kept";
    const auto summary = quantize(source, out, {type, true});
    const auto keptSummary = quantize(source, kept, {type, true, false});
    QVERIFY(summary.bytesAfter < keptSummary.bytesAfter);
    QCOMPARE(summary.quantized, keptSummary.quantized + (variant == "untied" ? 2 : 1));

    const auto stored = readTensors(out);
    const auto eightBit = fp8 ? DType::F8_E4M3 : DType::I8;
    QVERIFY(stored.at(table + ".weight").dtype == eightBit);
    QVERIFY((stored.at(table + ".weight_scale").shape == std::vector<std::int64_t>{tensors.at(table + ".weight").shape[0], 1}));
    for (const auto& copy : copies)
        QVERIFY2(!stored.count(copy + ".weight"), (copy + " was written").c_str());
    if (variant == "untied") QVERIFY(stored.at("lm_head.weight").dtype == eightBit && stored.count("lm_head.weight_scale"));
    const auto q = readConfig(out)["quantization_config"];
    QCOMPARE(QString::fromStdString(q["config_groups"]["group_0"]["targets"].dump()), QStringLiteral(R"(["Linear","Embedding"])"));
    QVERIFY2(std::find(q["ignore"].begin(), q["ignore"].end(), table) == q["ignore"].end(), q["ignore"].dump().c_str());

    writeDequantizedTwin(out, out.string() + ".twin");
    compare(out, out.string() + ".twin");
}

void TestQuantization::brokenCheckpointsAreRefused_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<QString>("named");  // what the message must say
    QTest::newRow("scale of the wrong shape") << "scale-shape"
                                              << "model.layers.0.mlp.down_proj.weight_scale' is [3]";
    QTest::newRow("weight without a scale") << "no-scale"
                                            << "has no model.layers.0.self_attn.q_proj.weight_scale";
    QTest::newRow("integer scale") << "int-scale"
                                   << "not a float type";
    QTest::newRow("E5M2 weights") << "e5m2"
                                  << "F8_E5M2";
    QTest::newRow("block scales") << "block-scales"
                                  << "block scales";
    QTest::newRow("no quantization_config") << "no-config"
                                            << "no quantization_config";
    QTest::newRow("unknown format") << "format"
                                    << "format pack-quantized";
    QTest::newRow("unknown weight type") << "type"
                                         << "weight type \"nf4\"";
    QTest::newRow("config says FP8, tensors are int8") << "mismatch"
                                                       << "describes FP8";
    QTest::newRow("U16 tensor") << "u16"
                                << "U16";
    QTest::newRow("8-bit embeddings without a scale") << "table-no-scale"
                                                      << "has no model.embed_tokens.weight_scale";
    QTest::newRow("targets named by expression") << "targets"
                                                 << "targets [\"re:.*_proj\"]";
    QTest::newRow("int8 activations with FP8 weights") << "w8a8-fp8"
                                                       << "int8 activations with FP8 weights";
    QTest::newRow("groups mixing activations") << "mixed-activations"
                                               << "mixing int8 and float activations";
}

// One clear error per broken quantized checkpoint, naming the tensor or setting, before any number is computed.
void TestQuantization::brokenCheckpointsAreRefused() {
    QFETCH(QString, change);
    QFETCH(QString, named);
    const fs::path dir = work_.path().toStdString() + "/broken-" + change.toStdString();
    test::copyFolder(kQuant / "hunyuan-tiny-f32.int8-tensor", dir);
    auto tensors = readTensors(dir);
    auto config = readConfig(dir);
    const std::string layer = "model.layers.0.";
    if (change == "scale-shape") tensors[layer + "mlp.down_proj.weight_scale"] = {DType::F32, {3}, std::vector<std::byte>(12)};
    if (change == "no-scale") tensors.erase(layer + "self_attn.q_proj.weight_scale");
    if (change == "int-scale") tensors[layer + "self_attn.k_proj.weight_scale"].dtype = DType::I32;
    if (change == "e5m2") tensors[layer + "mlp.up_proj.weight"].dtype = DType::F8_E5M2;
    if (change == "block-scales") tensors[layer + "mlp.up_proj.weight_scale_inv"] = {DType::F32, {1}, std::vector<std::byte>(4)};
    if (change == "no-config") config.erase("quantization_config");
    if (change == "format") config["quantization_config"]["format"] = "pack-quantized";
    if (change == "type") config["quantization_config"]["config_groups"]["group_0"]["weights"]["type"] = "nf4";
    if (change == "mismatch") {
        config["quantization_config"]["format"] = "float-quantized";
        config["quantization_config"]["config_groups"]["group_0"]["weights"]["type"] = "float";
    }
    if (change == "u16") tensors["extra.table"] = {DType::U16, {2}, std::vector<std::byte>(4)};
    if (change == "table-no-scale") {
        auto& embeddings = tensors.at("model.embed_tokens.weight");
        embeddings = {DType::I8, embeddings.shape, std::vector<std::byte>(embeddings.bytes.size() / 4)};
    }
    if (change == "targets") config["quantization_config"]["config_groups"]["group_0"]["targets"] = {"re:.*_proj"};
    const nlohmann::json perToken{{"num_bits", 8}, {"type", "int"}, {"symmetric", true}, {"dynamic", true}, {"strategy", "token"}};
    if (change == "w8a8-fp8") {
        config["quantization_config"]["format"] = "float-quantized";
        config["quantization_config"]["config_groups"]["group_0"]["weights"]["type"] = "float";
        config["quantization_config"]["config_groups"]["group_0"]["input_activations"] = perToken;
    }
    if (change == "mixed-activations") {
        auto second = config["quantization_config"]["config_groups"]["group_0"];
        second["targets"] = {"Embedding"};
        second["input_activations"] = perToken;
        config["quantization_config"]["config_groups"]["group_1"] = second;
    }
    writeTensors(tensors, dir / "model.safetensors");
    writeConfig(dir, config);
    try {
        open(dir);
        QFAIL("a broken quantized checkpoint opened");
    } catch (const Error& e) {
        QVERIFY2(QString::fromStdString(e.what()).contains(named), e.what());
    }
}

void TestQuantization::activationSchemes_data() {
    QTest::addColumn<QString>("activations");  // input_activations as JSON
    QTest::addColumn<bool>("int8");            // computed with int8 activations (else as float32, like the twin)
    QTest::newRow("none") << "null" << false;
    QTest::newRow("dynamic per token (W8A8)")
        << R"({"num_bits": 8, "type": "int", "symmetric": true, "dynamic": true, "strategy": "token"})" << true;
    QTest::newRow("static per tensor") << R"({"num_bits": 8, "type": "int", "symmetric": true, "dynamic": false, "strategy": "tensor"})"
                                       << false;
    QTest::newRow("dynamic per tensor") << R"({"num_bits": 8, "type": "int", "symmetric": true, "dynamic": true, "strategy": "tensor"})"
                                        << false;
    QTest::newRow("FP8 per token") << R"({"num_bits": 8, "type": "float", "symmetric": true, "dynamic": true, "strategy": "token"})"
                                   << false;
    QTest::newRow("asymmetric per token") << R"({"num_bits": 8, "type": "int", "symmetric": false, "dynamic": true, "strategy": "token"})"
                                          << false;
}

// An int8 checkpoint's input_activations decide its numbers: dynamic per-token int8 (W8A8) quantizes every int8
// layer's input rows (tests/quantized/w8a8_parity.sh holds those numbers to an independent reference); every other
// scheme computes with float32 activations, the same logits as with none.
void TestQuantization::activationSchemes() {
    QFETCH(QString, activations);
    QFETCH(bool, int8);
    const fs::path dir = work_.path().toStdString() + "/activations-" + QTest::currentDataTag();
    test::copyFolder(kQuant / "hunyuan-tiny-f32.int8-tensor", dir);
    auto config = readConfig(dir);
    config["quantization_config"]["config_groups"]["group_0"]["input_activations"] = nlohmann::json::parse(activations.toStdString());
    writeConfig(dir, config);
    const auto ids = someIds(12, 763);
    const auto got = teacherForcedLogits(*open(dir), ids, std::nullopt).logits;
    const auto floatActivations = teacherForcedLogits(*open(kQuant / "hunyuan-tiny-f32.int8-tensor"), ids, std::nullopt).logits;
    QCOMPARE(torch::equal(got, floatActivations), !int8);
    if (int8) QVERIFY(maxDiff(got, floatActivations) < 0.3);  // the same model, its activations rounded to 8 bits
}

// The copy goes into a new or empty folder only; an already quantized model is not quantized again; a cancel
// leaves nothing behind.
void TestQuantization::quantizerNeverOverwrites() {
    const fs::path busy = work_.path().toStdString() + "/busy";
    fs::create_directories(busy);
    std::ofstream(busy / "notes.txt") << "mine";
    QVERIFY_THROWS_EXCEPTION(Error, quantize(test::fixture("marian-tiny"), busy, {}));
    QCOMPARE(fs::file_size(busy / "notes.txt"), std::uintmax_t(4));
    QCOMPARE(std::distance(fs::directory_iterator(busy), fs::directory_iterator()), std::ptrdiff_t(1));

    try {
        quantize(kQuant / "marian-tiny.int8-channel", work_.path().toStdString() + "/again", {});
        QFAIL("quantized a quantized model");
    } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).find("already quantized") != std::string::npos, e.what());
    }
    QVERIFY(!fs::exists(work_.path().toStdString() + "/again"));

    const fs::path cancelled = work_.path().toStdString() + "/cancelled";
    QVERIFY_THROWS_EXCEPTION(Cancelled, quantize(test::fixture("hunyuan-tiny"), cancelled, {}, [](const ProgressReport& r) {
                                 return r.overall < 0.6;  // stops while writing
                             }));
    QVERIFY(!fs::exists(cancelled));
}

QTEST_GUILESS_MAIN(TestQuantization)
#include "tst_quantization.moc"
