// The libtorch MarianMTModel (models/marian.h; OpenOptions::device "libtorch", what tools/train builds on) against the
// golden reference (tests/fixtures/marian-tiny): sinusoids, encoder layers and teacher-forced logits within 1e-4;
// generated ids exact for greedy, beam, with and without HF processors; batched steps and encoder passes bit for bit
// what each request gets alone. The batcher's prompt runs are tested on the CPU kernels' model, which translation
// runs (tst_marian_cpu checks it against this one).
#include "decode/batched_steps.h"
#include "decode/beam_search.h"
#include "decode/encoder_decoder_session.h"
#include "decode/seq2seq_session.h"
#include "decode/seq2seq_steps.h"
#include "io/safetensors_writer.h"
#include "io/tensor_view.h"
#include "models/marian.h"
#include "runtime/runnable_model.h"
#include "test_files.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <torch/torch.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <latch>
#include <map>
#include <thread>

using namespace dragoman;

namespace {

const std::filesystem::path kDir = test::fixture("marian-tiny");

OpenOptions libtorch() {
    OpenOptions options;
    options.device = "libtorch";
    return options;
}

nlohmann::json expectedJson() {
    std::ifstream in(kDir / "expected.json");
    return nlohmann::json::parse(in);
}

}  // namespace

class TestMarian : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void sinusoidsMatch();
    void encoderMatches_data();
    void encoderMatches();
    void teacherForcedLogitsMatch();
    void paddedBatchForwardMatches();
    void bf16CheckpointComputesOnWidenedWeights();
    void decodesMatch_data();
    void decodesMatch();
    void greedyIsDeterministic();
    void cachePoolKeepsOnlyUnsharedCaches();
    void handedBackCachesDecodeAsFreshOnes();
    void batchedStepEqualsStepsAlone_data();
    void batchedStepEqualsStepsAlone();
    void concurrentRequestsShareSteps_data();
    void concurrentRequestsShareSteps();
    void refusedStepFailsItsRequestOnly();
    void sourcesEncodedTogetherEqualAlone_data();
    void sourcesEncodedTogetherEqualAlone();
    void waitingPromptsRunTogether();
    void requestsBeyondThePlacesWaitEncoded();
    void drivenAndSteppedRequestsShareSteps();
    void promptsRunBetweenDrivenSteps();
    void continuationEndsItsRequestOnly_data();
    void continuationEndsItsRequestOnly();
    void streamingCallbackCanStop();
    void missingKeyIsNamed();
    void unexpectedKeyIsNamed();
    void unsupportedConfigIsNamed();
    void quantizationConfigIsChecked_data();
    void quantizationConfigIsChecked();
    void layoutIsTheCheckpoints();

private:
    torch::Tensor expectedTensor(const std::string& name) const;
    std::vector<TokenId> sourceIds(int caseIndex) const;
    const RunnableModel& modelNamed(const QString& name);

    QTemporaryDir cache_;
    std::unique_ptr<ModelStore> store_;
    std::shared_ptr<RunnableModel> model_;
    std::shared_ptr<const SafetensorsFile> expected_;
    nlohmann::json json_;
    std::shared_ptr<RunnableModel> bundled_, bundledCpu_;
};

void TestMarian::initTestCase() {
    store_ = std::make_unique<ModelStore>(StoreRoots{cache_.path().toStdString(), "/nonexistent", {}});
    model_ = openModel(*store_, kDir.string(), libtorch());
    expected_ = SafetensorsFile::open(kDir / "expected.safetensors");
    json_ = expectedJson();
}

torch::Tensor TestMarian::expectedTensor(const std::string& name) const {
    const auto* info = expected_->find(name);
    if (!info) qFatal("no expected tensor %s", name.c_str());
    return mappedTensor(expected_, *info);
}

std::vector<TokenId> TestMarian::sourceIds(int caseIndex) const {
    return json_.at("cases").at(caseIndex).at("source_ids").get<std::vector<TokenId>>();
}

void TestMarian::sinusoidsMatch() {
    const auto expected = expectedTensor("sinusoidal_positions");
    const auto got = marianSinusoidalPositions(expected.size(0), expected.size(1));
    QVERIFY((got - expected).abs().max().item<float>() <= 1e-6f);
}

void TestMarian::encoderMatches_data() {
    QTest::addColumn<int>("caseIndex");
    const auto json = expectedJson();
    for (int i = 0; i < static_cast<int>(json.at("cases").size()); ++i)
        QTest::newRow(json["cases"][i]["name"].get<std::string>().c_str()) << i;
}

void TestMarian::encoderMatches() {
    QFETCH(int, caseIndex);
    c10::InferenceMode guard;
    const auto& marian = static_cast<const MarianModel&>(*model_->encoderDecoder());
    const auto prefix = "case" + std::to_string(caseIndex) + ".";
    const auto layers = marian.encodeAllLayers(sourceIds(caseIndex));
    const auto expectedLayers = expectedTensor(prefix + "encoder_layer_outputs");
    QCOMPARE(layers.sizes().vec(), expectedLayers.sizes().vec());
    QVERIFY2((layers - expectedLayers).abs().max().item<float>() <= 1e-4f, "encoder layer outputs differ");
    const auto last = marian.encode(sourceIds(caseIndex));
    QVERIFY((last - expectedTensor(prefix + "encoder_last_hidden_state")).abs().max().item<float>() <= 1e-4f);
}

void TestMarian::teacherForcedLogitsMatch() {
    c10::InferenceMode guard;
    const auto& m = *model_->encoderDecoder();
    for (int c = 0; c < static_cast<int>(json_["cases"].size()); ++c) {
        const auto decoderIds = json_["cases"][c]["teacher_forcing"]["decoder_input_ids"].get<std::vector<TokenId>>();
        EncoderDecoderSession session(m, m.encode(sourceIds(c)), 1, static_cast<std::int64_t>(decoderIds.size()));
        std::vector<torch::Tensor> rows;
        for (auto id : decoderIds)
            rows.push_back(tensorOf(session.next({id}))[0]);
        const auto expected = expectedTensor("case" + std::to_string(c) + ".teacher_forcing_logits");
        const float diff = (torch::stack(rows) - expected).abs().max().item<float>();
        QVERIFY2(diff <= 1e-4f, ("case " + std::to_string(c) + ": max diff " + std::to_string(diff)).c_str());
    }
}

// The training forward (every case in one padded batch, no dropout) gives the reference logits at every
// real position: padding must not leak through the masks.
void TestMarian::paddedBatchForwardMatches() {
    c10::InferenceMode guard;
    const auto& marian = static_cast<const MarianModel&>(*model_->encoderDecoder());
    const auto count = static_cast<std::int64_t>(json_["cases"].size());
    std::int64_t maxSource = 0, maxTarget = 0;
    for (int c = 0; c < count; ++c) {
        maxSource = std::max<std::int64_t>(maxSource, static_cast<std::int64_t>(sourceIds(c).size()));
        maxTarget = std::max<std::int64_t>(maxTarget, json_["cases"][c]["teacher_forcing"]["decoder_input_ids"].size());
    }
    const auto pad = marian.padId();
    auto source = torch::full({count, maxSource}, pad, torch::kInt64);
    auto valid = torch::zeros({count, maxSource}, torch::kBool);
    auto target = torch::full({count, maxTarget}, pad, torch::kInt64);
    for (int c = 0; c < count; ++c) {
        const auto ids = sourceIds(c);
        const auto decoderIds = json_["cases"][c]["teacher_forcing"]["decoder_input_ids"].get<std::vector<TokenId>>();
        source[c].narrow(0, 0, static_cast<std::int64_t>(ids.size())).copy_(torch::tensor(ids, torch::kInt64));
        valid[c].narrow(0, 0, static_cast<std::int64_t>(ids.size())).fill_(true);
        target[c].narrow(0, 0, static_cast<std::int64_t>(decoderIds.size())).copy_(torch::tensor(decoderIds, torch::kInt64));
    }
    const auto logits = marian.forwardBatch(source, valid, target);
    QCOMPARE(logits.sizes().vec(), (std::vector<std::int64_t>{count, maxTarget, marian.vocabSize()}));
    for (int c = 0; c < count; ++c) {
        const auto expected = expectedTensor("case" + std::to_string(c) + ".teacher_forcing_logits");
        const float diff = (logits[c].narrow(0, 0, expected.size(0)) - expected).abs().max().item<float>();
        QVERIFY2(diff <= 1e-4f, ("case " + std::to_string(c) + ": max diff " + std::to_string(diff)).c_str());
    }
}

// A bf16 checkpoint runs without converting its weights: its logits equal those of an f32 checkpoint holding
// the same (rounded) values, within f32 accumulation order.
void TestMarian::bf16CheckpointComputesOnWidenedWeights() {
    QTemporaryDir dir;
    const std::filesystem::path bf16Dir = dir.path().toStdString() + "/bf16", f32Dir = dir.path().toStdString() + "/f32";
    test::copyFolder(kDir, bf16Dir);
    test::copyFolder(kDir, f32Dir);
    SafetensorsWriter bf16Writer, f32Writer;
    for (const auto& [name, tensor] : tensorsOf(model_->loaded.checkpoint)) {
        const auto rounded = tensor.to(torch::kBFloat16).contiguous();
        // Stored sinusoid tables (older conversions) must equal the computed table in their own dtype: the
        // float32 copy keeps the exact one.
        const bool positions = name.find("embed_positions") != std::string::npos;
        const auto widened = positions ? tensor.contiguous() : rounded.to(torch::kFloat32).contiguous();
        auto bytes = [](const torch::Tensor& t) {
            std::vector<std::byte> out(t.nbytes());
            std::memcpy(out.data(), t.data_ptr(), out.size());
            return out;
        };
        bf16Writer.addBytes(name, DType::BF16, rounded.sizes().vec(), bytes(rounded));
        f32Writer.addBytes(name, DType::F32, widened.sizes().vec(), bytes(widened));
    }
    bf16Writer.write(bf16Dir / "model.safetensors");
    f32Writer.write(f32Dir / "model.safetensors");
    const auto bf16 = openModel(*store_, bf16Dir.string(), libtorch()), f32 = openModel(*store_, f32Dir.string(), libtorch());
    QCOMPARE(tensorsOf(bf16->loaded.checkpoint).at("model.shared.weight").scalar_type(), torch::kBFloat16);
    c10::InferenceMode guard;
    for (int c = 0; c < static_cast<int>(json_["cases"].size()); ++c) {
        const auto decoderIds = json_["cases"][c]["teacher_forcing"]["decoder_input_ids"].get<std::vector<TokenId>>();
        auto logitsOf = [&](const EncoderDecoderModel& m) {
            EncoderDecoderSession session(m, m.encode(sourceIds(c)), 1, static_cast<std::int64_t>(decoderIds.size()));
            std::vector<torch::Tensor> rows;
            for (auto id : decoderIds)
                rows.push_back(tensorOf(session.next({id}))[0]);
            return torch::stack(rows);
        };
        const float diff = (logitsOf(*bf16->encoderDecoder()) - logitsOf(*f32->encoderDecoder())).abs().max().item<float>();
        QVERIFY2(diff <= 1e-4f, ("case " + std::to_string(c) + ": max diff " + std::to_string(diff)).c_str());
    }
}

void TestMarian::decodesMatch_data() {
    QTest::addColumn<int>("caseIndex");
    QTest::addColumn<QString>("mode");
    const auto json = expectedJson();
    for (int i = 0; i < static_cast<int>(json.at("cases").size()); ++i)
        for (const char* mode : {"greedy", "greedy_hf_processors", "beam", "beam_hf_processors"})
            QTest::newRow((json["cases"][i]["name"].get<std::string>() + "/" + mode).c_str()) << i << QString(mode);
}

void TestMarian::decodesMatch() {
    QFETCH(int, caseIndex);
    QFETCH(QString, mode);
    c10::InferenceMode guard;
    const auto& m = *model_->encoderDecoder();
    const auto& expected = json_["cases"][caseIndex][mode.toStdString()];
    const std::int64_t maxNew = json_.at("max_new_tokens");
    const std::vector<TokenId> prefix{m.decoderStartId()};
    const LogitsProcessors processors(model_->generation, 1 + maxNew);
    SearchOptions options{maxNew, {m.eosId()}, mode.endsWith("hf_processors") ? &processors : nullptr, {}};
    const bool beam = mode.startsWith("beam");
    const std::int64_t beams = beam ? expected.at("num_beams").get<std::int64_t>() : 1;
    EncoderDecoderSession session(m, m.encode(sourceIds(caseIndex)), beams, 1 + maxNew);
    const auto got =
        beam ? beamSearch(session, prefix, options, {beams, expected.at("length_penalty"), false}) : greedySearch(session, prefix, options);
    QCOMPARE(got, expected.at("generated_ids").get<std::vector<TokenId>>());
    QCOMPARE(model_->tokenizer->decode(got), expected.at("text").get<std::string>());
}

void TestMarian::greedyIsDeterministic() {
    c10::InferenceMode guard;
    const auto& m = *model_->encoderDecoder();
    std::vector<TokenId> first;
    for (int run = 0; run < 10; ++run) {
        EncoderDecoderSession session(m, m.encode(sourceIds(4)), 1, 40);
        const auto ids = greedySearch(session, {m.decoderStartId()}, {39, {m.eosId()}, nullptr, {}});
        if (run == 0) first = ids;
        QCOMPARE(ids, first);
    }
}

void TestMarian::cachePoolKeepsOnlyUnsharedCaches() {
    CachePool pool(std::size_t{1} << 20);
    auto first = pool.take({2, 3, 16, 8}, torch::kFloat32);
    const auto* storage = first.data_ptr<float>();
    pool.giveBack(std::move(first));
    QCOMPARE(pool.bytesHeld(), std::size_t{2 * 3 * 16 * 8 * 4});
    QVERIFY(pool.take({2, 3, 16, 4}, torch::kFloat32).data_ptr<float>() != storage);  // another shape: a new tensor
    auto again = pool.take({2, 3, 16, 8}, torch::kFloat32);
    QCOMPARE(again.data_ptr<float>(), storage);
    QCOMPARE(pool.bytesHeld(), std::size_t{0});
    // A cache something else still reads (a view) is not handed out again.
    const auto view = again.narrow(2, 0, 4);
    pool.giveBack(std::move(again));
    QCOMPARE(pool.bytesHeld(), std::size_t{0});
    // A cache made in InferenceMode (an inference tensor, which refuses in-place ATen operations outside it) is not
    // handed to a caller outside it.
    {
        c10::InferenceMode inference;
        pool.giveBack(pool.take({5}, torch::kFloat32));
    }
    QVERIFY(pool.bytesHeld() > 0);
    QVERIFY(!pool.take({5}, torch::kFloat32).is_inference());
    {
        c10::InferenceMode inference;
        QVERIFY(pool.take({5}, torch::kFloat32).is_inference());
    }
    QCOMPARE(pool.bytesHeld(), std::size_t{0});
    // Nor kept past the pool's bound.
    pool.giveBack(torch::empty({1 << 18}, torch::kFloat32));  // exactly 1 MiB
    pool.giveBack(torch::empty({4}, torch::kFloat32));
    QCOMPARE(pool.bytesHeld(), std::size_t{1} << 20);
}

// Every case decoded greedily and with beams, in one order and then the other, on caches the previous sessions
// handed back (their rows past the new sequence's length hold the old sequence's keys): the fixture's ids each time.
void TestMarian::handedBackCachesDecodeAsFreshOnes() {
    c10::InferenceMode guard;
    const auto* marian = dynamic_cast<const MarianModel*>(model_->encoderDecoder());
    QVERIFY(marian);
    const auto& m = *marian;
    const std::int64_t maxNew = json_.at("max_new_tokens");
    const std::vector<TokenId> prefix{m.decoderStartId()};
    const int cases = static_cast<int>(json_.at("cases").size());
    std::vector<int> order;
    for (int i = 0; i < cases; ++i)
        order.push_back(i);
    for (int i = cases - 1; i >= 0; --i)
        order.push_back(i);
    for (const int i : order)
        for (const char* mode : {"greedy", "beam"}) {
            const auto& expected = json_["cases"][i][mode];
            const bool beam = std::string(mode) == "beam";
            const std::int64_t beams = beam ? expected.at("num_beams").get<std::int64_t>() : 1;
            SearchOptions options{maxNew, {m.eosId()}, nullptr, {}};
            EncoderDecoderSession session(m, m.encode(sourceIds(i)), beams, 1 + maxNew);
            const auto got = beam ? beamSearch(session, prefix, options, {beams, expected.at("length_penalty"), false})
                                  : greedySearch(session, prefix, options);
            QCOMPARE(got, expected.at("generated_ids").get<std::vector<TokenId>>());
        }
    QVERIFY(m.cachedBytes() > 0);  // the sessions' caches came back, so the later ones ran on used memory
    // Beams reorder their caches with libtorch's copy_, which an inference tensor refuses outside InferenceMode: a
    // decode outside it must not get the caches the ones above handed back.
    c10::InferenceMode off(false);
    const auto& expected = json_["cases"][0]["beam"];
    const std::int64_t beams = expected.at("num_beams").get<std::int64_t>();
    EncoderDecoderSession session(m, m.encode(sourceIds(0)), beams, 1 + maxNew);
    QCOMPARE(beamSearch(session, prefix, {maxNew, {m.eosId()}, nullptr, {}}, {beams, expected.at("length_penalty"), false}),
             expected.at("generated_ids").get<std::vector<TokenId>>());
}

const RunnableModel& TestMarian::modelNamed(const QString& name) {
    if (name == "marian-tiny") return *model_;
    const std::string bundled = std::string(DRAGOMAN_SOURCE_DIR) + "/resources/models/dragoman-en-de-zh";
    if (name == "bundled-cpu") {
        if (!bundledCpu_) bundledCpu_ = openModel(*store_, bundled);
        return *bundledCpu_;
    }
    if (!bundled_) bundled_ = openModel(*store_, bundled, libtorch());
    return *bundled_;
}

// Sources of different lengths for `count` requests: the fixture's cases, then the same with words left off.
static std::vector<std::vector<TokenId>> sourcesFor(const RunnableModel& model, int count) {
    std::vector<std::vector<TokenId>> sources;
    for (int i = 0; i < count; ++i) {
        const std::string& text = test::sampleSentences()[static_cast<std::size_t>(i % 8)];
        auto ids = model.requireTokenizer().encode(i >= 8 ? text.substr(0, text.size() / 2) : text);
        for (auto& id : ids)  // the fixture's vocabulary is smaller than the tokenizer's
            id = id % model.seq2seq()->vocabSize();
        sources.push_back(std::move(ids));
    }
    return sources;
}

// Each source's greedy translation (40 tokens at most) decoded alone, without a batcher.
static std::vector<std::vector<TokenId>> greedyEachAlone(const Seq2SeqModel& m, const std::vector<std::vector<TokenId>>& sources,
                                                         const LogitsProcessors& processors) {
    std::vector<std::vector<TokenId>> ids;
    for (const auto& source : sources) {
        Seq2SeqSession session(m, m.encodeSources({source}, nullptr).front(), 1, 41);
        ids.push_back(greedySearch(session, {m.decoderStartId()}, {40, {m.eosId()}, &processors, {}}));
    }
    return ids;
}

// The bundled model's first `count` test sources, the generation settings' processors, and what greedy search gives
// each source alone: what the tests of requests sharing a batcher compare with.
struct GreedyAlone {
    GreedyAlone(const RunnableModel& runnable, int count)
        : model(*runnable.seq2seq()),
          sources(sourcesFor(runnable, count)),
          processors(runnable.generation, 41),
          expected(greedyEachAlone(model, sources, processors)) {}
    const Seq2SeqModel& model;
    const std::vector<std::vector<TokenId>> sources;
    const LogitsProcessors processors;
    const std::vector<std::vector<TokenId>> expected;
};

// Request r on a thread of its own, all starting at once: its source through the batcher's encoder passes, then
// decode(r, session) on a session sharing the batcher's steps.
template <typename Decode>
static void decodeOnThreads(StepBatcher& batcher, const Seq2SeqModel& m, const std::vector<std::vector<TokenId>>& sources,
                            const Decode& decode) {
    std::latch started(static_cast<std::ptrdiff_t>(sources.size()));
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < sources.size(); ++r)
        threads.emplace_back([&, r] {
            SourcePrompt prompt{{&sources[r]}, nullptr, {}};
            started.arrive_and_wait();
            batcher.together(&prompt);
            Seq2SeqSession session(m, prompt.memories.front(), 1, 41, nullptr, &batcher);
            decode(static_cast<int>(r), session);
        });
    for (auto& t : threads)
        t.join();
}

void TestMarian::batchedStepEqualsStepsAlone_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("requests");
    QTest::addColumn<int>("beams");
    for (const char* model : {"marian-tiny", "bundled"})
        for (auto [requests, beams] : {std::pair{2, 1}, {5, 1}, {16, 1}, {3, 4}})
            QTest::newRow(QStringLiteral("%1, %2 requests, %3 beams").arg(model).arg(requests).arg(beams).toUtf8().constData())
                << QString(model) << requests << beams;
}

// Each request's rows of a batched step are bit for bit its logits alone, though the requests started at
// different steps (different cache lengths) over sources of different lengths.
void TestMarian::batchedStepEqualsStepsAlone() {
    QFETCH(QString, model);
    QFETCH(int, requests);
    QFETCH(int, beams);
    c10::InferenceMode guard;
    const auto& runnable = modelNamed(model);
    const auto& m = *runnable.encoderDecoder();
    const auto* batched = dynamic_cast<const BatchedDecoder*>(&m);
    QVERIFY(batched);
    const auto sources = sourcesFor(runnable, requests);
    std::vector<std::unique_ptr<DecoderState>> alone, together;
    std::vector<torch::Tensor> next;
    for (int r = 0; r < requests; ++r) {
        const auto encoded = m.encode(sources[r]);
        alone.push_back(m.startDecoding(encoded, beams, 24));
        together.push_back(m.startDecoding(encoded, beams, 24));
        next.push_back(torch::full({beams}, m.decoderStartId(), torch::kInt64));
        for (int warm = 0; warm < r % 3; ++warm) {  // some requests are further along
            m.step(*alone.back(), next.back());
            m.step(*together.back(), next.back());
        }
    }
    for (int step = 0; step < 8; ++step) {
        std::vector<DecoderState*> states;
        for (auto& s : together)
            states.push_back(s.get());
        const auto logits = batched->stepMany(states, next);
        QCOMPARE(logits.size(0), static_cast<std::int64_t>(requests * beams));
        for (int r = 0; r < requests; ++r) {
            const auto one = m.step(*alone[r], next[r]);
            const auto rows = logits.narrow(0, r * beams, beams);
            QVERIFY2(torch::equal(rows, one),
                     qPrintable(QString("request %1, step %2: max diff %3").arg(r).arg(step).arg((rows - one).abs().max().item<float>())));
            next[r] = one.argmax(1);
        }
    }
}

void TestMarian::concurrentRequestsShareSteps_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("beams");
    for (const char* model : {"marian-tiny", "bundled"})
        for (int beams : {1, 3})
            QTest::newRow(QStringLiteral("%1, %2 beams").arg(model).arg(beams).toUtf8().constData()) << QString(model) << beams;
}

// Requests on their own threads, sharing a batcher, each get exactly what they get alone, and their steps
// really run together.
void TestMarian::concurrentRequestsShareSteps() {
    QFETCH(QString, model);
    QFETCH(int, beams);
    const auto& runnable = modelNamed(model);
    const auto& m = *runnable.encoderDecoder();
    constexpr int kRequests = 8;
    const auto sources = sourcesFor(runnable, kRequests);
    const LogitsProcessors processors(runnable.generation, 41);
    // Together, every request's first step waits until all have joined (a tiny model could end one before the
    // next starts); beam search has no token callback, so the wait is on the session's side.
    std::latch started(kRequests);
    auto decode = [&](int r, StepBatcher* batcher) {
        c10::InferenceMode guard;
        EncoderDecoderSession session(m, m.encode(sources[r]), beams, 41, nullptr, batcher);
        if (batcher) started.arrive_and_wait();
        const SearchOptions options{40, {m.eosId()}, &processors, {}};
        return beams == 1 ? greedySearch(session, {m.decoderStartId()}, options)
                          : beamSearch(session, {m.decoderStartId()}, options, {beams, 1.0, false});
    };
    std::vector<std::vector<TokenId>> expected, got(kRequests);
    for (int r = 0; r < kRequests; ++r)
        expected.push_back(decode(r, nullptr));
    StepBatcher batcher(encoderDecoderSteps(m), 16, {}, inferenceMode());
    std::vector<std::thread> threads;
    for (int r = 0; r < kRequests; ++r)
        threads.emplace_back([&, r] { got[r] = decode(r, &batcher); });
    for (auto& t : threads)
        t.join();
    for (int r = 0; r < kRequests; ++r)
        QCOMPARE(got[r], expected[r]);
    const auto counts = batcher.counts();
    QVERIFY2(counts.widest > beams, qPrintable(QString("at most %1 rows stepped together").arg(counts.widest)));
    QVERIFY(counts.widest <= 16);
}

// A request whose step is refused (its cache is full) gets the error; the others in the same step go on.
void TestMarian::refusedStepFailsItsRequestOnly() {
    c10::InferenceMode guard;
    const auto& m = *model_->encoderDecoder();
    StepBatcher batcher(encoderDecoderSteps(m), 16, {}, inferenceMode());
    const std::vector<TokenId> start{m.decoderStartId()};
    EncoderDecoderSession roomy(m, m.encode(sourceIds(0)), 1, 20, nullptr, &batcher);
    std::string refused;
    std::thread cramped([&] {
        c10::InferenceMode inner;
        EncoderDecoderSession session(m, m.encode(sourceIds(1)), 1, 1, nullptr, &batcher);
        session.next(start);
        try {
            session.next(start);  // past its one position
        } catch (const Error& e) {
            refused = e.what();
        }
    });
    for (int i = 0; i < 4; ++i)
        QCOMPARE(roomy.next(start).rows(), std::int64_t(1));
    cramped.join();
    QVERIFY2(refused.find("positions") != std::string::npos, refused.c_str());
}

void TestMarian::sourcesEncodedTogetherEqualAlone_data() {
    QTest::addColumn<QString>("model");
    for (const char* model : {"marian-tiny", "bundled"})
        QTest::newRow(model) << QString(model);
}

// A source's rows go through every projection with the other sources' rows (encodeMany), yet its encoding is
// bit for bit what it gets alone: short sources, and one longer than the kernels' 16-row decoding batch.
void TestMarian::sourcesEncodedTogetherEqualAlone() {
    QFETCH(QString, model);
    c10::InferenceMode guard;
    const auto& runnable = modelNamed(model);
    const auto& m = *runnable.encoderDecoder();
    const auto* batched = dynamic_cast<const BatchedDecoder*>(&m);
    QVERIFY(batched);
    auto sources = sourcesFor(runnable, 7);
    std::vector<TokenId> longer;
    for (const auto& s : sources)
        longer.insert(longer.end(), s.begin(), s.end());
    longer.resize(static_cast<std::size_t>(std::min<std::int64_t>(40, m.maxPositions())));
    sources.insert(sources.begin() + 3, longer);
    const auto together = batched->encodeMany(sources, nullptr);
    QCOMPARE(together.size(), sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto alone = m.encode(sources[i]);
        QCOMPARE(together[i].sizes(), alone.sizes());
        QVERIFY2(torch::equal(together[i], alone),
                 qPrintable(QString("source %1: max diff %2").arg(i).arg((together[i] - alone).abs().max().item<float>())));
    }
    // Their decoder memories made together (every source's rows through each cross-attention product at once):
    // two greedy steps from each give the logits a decoding started from its encoding alone gets.
    const auto memories = batched->rememberMany(together, nullptr);
    QCOMPARE(memories.size(), sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
        auto fromMemory = m.startDecoding(memories[i], 2, 8);
        auto alone = m.startDecoding(m.encode(sources[i]), 2, 8);
        auto tokens = torch::full({2}, m.decoderStartId(), torch::kInt64);
        for (int step = 0; step < 2; ++step) {
            const auto got = m.step(*fromMemory, tokens), want = m.step(*alone, tokens);
            QVERIFY2(torch::equal(got, want), qPrintable(QString("source %1, step %2").arg(i).arg(step)));
            tokens = want.argmax(-1);
        }
    }
    // A memory the model did not make is refused by name, never read as its own.
    struct Foreign : SourceMemory {};
    QVERIFY_THROWS_EXCEPTION(Error, m.startDecoding(std::make_shared<Foreign>(), 1, 8));
}

// Prompts waiting while the batcher is busy run as one encoder pass when it is free; each request gets its own
// encoding, and a source the model refuses fails its request alone.
void TestMarian::waitingPromptsRunTogether() {
    const auto& runnable = modelNamed("bundled-cpu");
    const auto& m = *runnable.seq2seq();
    StepBatcher batcher(seq2seqSteps(m), 16, seq2seqPrompts(m));
    constexpr int kRequests = 6;
    auto sources = sourcesFor(runnable, kRequests);
    sources[4] = {static_cast<TokenId>(m.vocabSize()) + 5, 2};  // outside the vocabulary
    std::vector<SourcePrompt> prompts(kRequests);
    std::vector<std::string> errors(kRequests);
    std::atomic<bool> holding = false;
    std::thread busy([&] {
        // Holds the batcher's thread until every request has queued its prompt (a slow machine may take long to
        // start six threads, so it watches the queue rather than a clock).
        batcher.between([&] {
            holding = true;
            const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (batcher.counts().waitingPrompts < kRequests && std::chrono::steady_clock::now() < giveUp)
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
        });
    });
    while (!holding)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the busy prompt runs first
    std::vector<std::thread> requests;
    for (int r = 0; r < kRequests; ++r)
        requests.emplace_back([&, r] {
            prompts[r] = {{&sources[r]}, nullptr, {}};
            try {
                batcher.together(&prompts[r]);
            } catch (const Error& e) {
                errors[r] = e.what();
            }
        });
    for (auto& t : requests)
        t.join();
    busy.join();
    // Two greedy steps from a memory give what the same steps from the source encoded alone give.
    const auto sameAsAlone = [&](const std::shared_ptr<const SourceMemory>& memory, const std::vector<TokenId>& source) {
        auto fromMemory = m.startDecoding(memory, 1, 4, nullptr);
        auto alone = m.startDecoding(m.encodeSources({source}, nullptr).front(), 1, 4, nullptr);
        std::vector<TokenId> tokens{m.decoderStartId()};
        for (int step = 0; step < 2; ++step) {
            const auto got = m.stepMany({fromMemory.get()}, {tokens}), want = m.stepMany({alone.get()}, {tokens});
            if (std::memcmp(got.data(), want.data(), sizeof(float) * static_cast<std::size_t>(want.vocab())) != 0) return false;
            tokens = {static_cast<TokenId>(std::max_element(want.row(0), want.row(0) + want.vocab()) - want.row(0))};
        }
        return true;
    };
    for (int r = 0; r < kRequests; ++r) {
        if (r == 4) {
            QVERIFY2(errors[r].find("outside the vocabulary") != std::string::npos, errors[r].c_str());
            continue;
        }
        QVERIFY2(errors[r].empty(), errors[r].c_str());
        QCOMPARE(prompts[r].memories.size(), std::size_t(1));
        QVERIFY(sameAsAlone(prompts[r].memories.front(), sources[r]));
    }
    // More source tokens than one encoder pass takes (2,048) still give each source its numbers alone.
    std::vector<std::vector<TokenId>> many;
    for (int i = 0; i < 60; ++i) {
        auto source = sources[static_cast<std::size_t>(i % 4)];
        while (source.size() < 40)
            source.insert(source.end(), source.begin(), source.end());
        source.resize(40 - static_cast<std::size_t>(i % 3));
        many.push_back(std::move(source));
    }
    SourcePrompt big{{}, nullptr, {}};
    for (const auto& source : many)
        big.sources.push_back(&source);
    seq2seqPrompts(m)({&big});
    QCOMPARE(big.memories.size(), many.size());
    for (std::size_t i = 0; i < many.size(); i += 7)
        QVERIFY(sameAsAlone(big.memories[i], many[i]));
    // The busy prompt, then one run for the six (which, refused for one source, ran each alone to find whose it
    // was); a prompt each would be seven runs.
    QVERIFY2(batcher.counts().promptRuns <= 3, qPrintable(QString("%1 prompt runs").arg(batcher.counts().promptRuns)));
}

// More requests than the batcher has places (maxRows): at most that many decode at once, the others wait with their
// sources encoded, and the prompts of requests that start meanwhile are held back to go through the encoder as one
// pass (`translate --batch` runs twice as many lines as places); each request gets what it gets alone.
void TestMarian::requestsBeyondThePlacesWaitEncoded() {
    constexpr int kPlaces = 2, kRequests = 10;
    const GreedyAlone alone(modelNamed("bundled-cpu"), kRequests);
    const auto& [m, sources, processors, expected] = alone;
    const SearchOptions options{40, {m.eosId()}, &processors, {}};
    std::vector<std::vector<TokenId>> got(kRequests);
    StepBatcher batcher(seq2seqSteps(m), kPlaces, seq2seqPrompts(m));
    decodeOnThreads(batcher, m, sources,
                    [&](int r, Seq2SeqSession& session) { got[r] = greedySearch(session, {m.decoderStartId()}, options); });
    for (int r = 0; r < kRequests; ++r)
        QCOMPARE(got[r], expected[r]);
    const auto counts = batcher.counts();
    QCOMPARE(counts.mostMembers, std::int64_t(kPlaces));
    QVERIFY(counts.widest <= kPlaces);
    QVERIFY2(counts.widestPromptRun >= 2 && counts.promptRuns < kRequests,
             qPrintable(QString("%1 prompt runs, %2 sources at most").arg(counts.promptRuns).arg(counts.widestPromptRun)));
}

// Requests whose search runs on the batcher's thread (a token callback that only computes: drive()) and requests
// that step from their own threads (a callback that may wait) share steps, and each gets what it gets alone, its
// callback called with every token in order.
void TestMarian::drivenAndSteppedRequestsShareSteps() {
    constexpr int kRequests = 8;
    const GreedyAlone alone(modelNamed("bundled-cpu"), kRequests);
    const auto& [m, sources, processors, expected] = alone;
    std::vector<std::vector<TokenId>> got(kRequests), called(kRequests);
    std::vector<std::thread::id> callers(kRequests);
    std::vector<char> calledHere(kRequests);
    StepBatcher batcher(seq2seqSteps(m), 16, seq2seqPrompts(m));
    decodeOnThreads(batcher, m, sources, [&](int r, Seq2SeqSession& session) {
        SearchOptions options{40, {m.eosId()}, &processors, [&, r](TokenId id) {
                                  called[r].push_back(id);
                                  callers[r] = std::this_thread::get_id();
                                  return true;
                              }};
        options.onTokenAnyThread = r % 2 == 0;
        got[r] = greedySearch(session, {m.decoderStartId()}, options);
        calledHere[r] = callers[r] == std::this_thread::get_id();
    });
    for (int r = 0; r < kRequests; ++r) {
        QCOMPARE(got[r], expected[r]);
        QCOMPARE(called[r], expected[r]);
        // The driven requests' callbacks ran elsewhere (the batcher's thread), the others' on their own threads.
        QCOMPARE(calledHere[r], r % 2 == 1);
    }
    QVERIFY2(batcher.counts().widest >= 2, qPrintable(QString("at most %1 rows stepped together").arg(batcher.counts().widest)));
}

// Requests arriving while driven ones decode (a worker translating one line after another, as `translate --batch`
// does): their prompts get a turn between steps, and a place freed by a request that ends goes to a waiting one at
// once, so the steps stay full instead of running the batch down to empty before the next prompts are encoded.
void TestMarian::promptsRunBetweenDrivenSteps() {
    constexpr int kPlaces = 4, kWorkers = 8, kEach = 4;
    const GreedyAlone alone(modelNamed("bundled-cpu"), kWorkers * kEach);
    const auto& [m, sources, processors, expected] = alone;
    std::vector<std::vector<TokenId>> got(sources.size());
    StepBatcher batcher(seq2seqSteps(m), kPlaces, seq2seqPrompts(m));
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w)
        workers.emplace_back([&, w] {
            for (int i = 0; i < kEach; ++i) {
                const auto r = static_cast<std::size_t>(w * kEach + i);
                SourcePrompt prompt{{&sources[r]}, nullptr, {}};
                batcher.together(&prompt);
                Seq2SeqSession session(m, prompt.memories.front(), 1, 41, nullptr, &batcher);
                got[r] = greedySearch(session, {m.decoderStartId()}, {40, {m.eosId()}, &processors, {}});
            }
        });
    for (auto& t : workers)
        t.join();
    QCOMPARE(got, expected);
    const auto counts = batcher.counts();
    const double rows = static_cast<double>(counts.rows) / static_cast<double>(counts.steps);
    QVERIFY2(rows >= 0.75 * kPlaces, qPrintable(QString("%1 rows a step on average of %2 places").arg(rows).arg(kPlaces)));
    QCOMPARE(counts.mostMembers, std::int64_t(kPlaces));
    QCOMPARE(counts.idleSeconds, 0.0);  // a driven request never keeps the others waiting
}

void TestMarian::continuationEndsItsRequestOnly_data() {
    QTest::addColumn<bool>("throws");
    QTest::newRow("callback says stop") << false;
    QTest::newRow("callback throws") << true;
}

// A driven request whose callback stops it (a cancel) or throws ends with 3 tokens or with that error; the requests
// in the same steps go on to their whole translations.
void TestMarian::continuationEndsItsRequestOnly() {
    QFETCH(bool, throws);
    constexpr int kRequests = 4;
    const GreedyAlone alone(modelNamed("bundled-cpu"), kRequests);
    const auto& [m, sources, processors, expected] = alone;
    std::vector<std::vector<TokenId>> got(kRequests);
    QVERIFY(expected[1].size() > 3);
    StepBatcher batcher(seq2seqSteps(m), 16, seq2seqPrompts(m));
    std::string error;
    decodeOnThreads(batcher, m, sources, [&](int r, Seq2SeqSession& session) {
        int tokens = 0;
        SearchOptions options{40, {m.eosId()}, &processors, [&, r](TokenId) {
                                  if (r != 1 || ++tokens < 3) return true;
                                  if (throws) throw Error("input", "request 1 went wrong");
                                  return false;
                              }};
        options.onTokenAnyThread = true;
        try {
            got[r] = greedySearch(session, {m.decoderStartId()}, options);
        } catch (const Error& e) {
            error = e.what();
        }
    });
    for (int r = 0; r < kRequests; ++r) {
        if (r != 1) {
            QCOMPARE(got[r], expected[r]);
        } else if (throws) {
            QVERIFY2(error.find("request 1 went wrong") != std::string::npos, error.c_str());
            QVERIFY(got[r].empty());
        } else {
            QCOMPARE(got[r], std::vector<TokenId>(expected[r].begin(), expected[r].begin() + 3));
        }
    }
    QCOMPARE(error.empty(), !throws);
}

void TestMarian::streamingCallbackCanStop() {
    c10::InferenceMode guard;
    const auto& m = *model_->encoderDecoder();
    std::vector<TokenId> streamed;
    EncoderDecoderSession session(m, m.encode(sourceIds(0)), 1, 13);
    const auto ids = greedySearch(session, {m.decoderStartId()}, {12, {m.eosId()}, nullptr, [&](TokenId id) {
                                                                      streamed.push_back(id);
                                                                      return streamed.size() < 3;
                                                                  }});
    QCOMPARE(ids.size(), std::size_t(3));
    QCOMPARE(ids, streamed);
}

void TestMarian::missingKeyIsNamed() {
    auto weights = tensorsOf(model_->loaded.checkpoint);
    const auto lastLayer = model_->loaded.config["decoder_layers"].get<int>() - 1;
    const auto key = "model.decoder.layers." + std::to_string(lastLayer) + ".fc2.bias";
    weights.erase(key);
    try {
        MarianModel broken(MarianConfig::parse(model_->loaded.config, "config.json"), weights, "broken");
        QFAIL("built without a weight");
    } catch (const Error& e) {
        QCOMPARE(e.category(), std::string("checkpoint"));
        QVERIFY2(e.detail().find("missing keys: " + key) != std::string::npos, e.what());
    }
}

void TestMarian::unexpectedKeyIsNamed() {
    auto weights = tensorsOf(model_->loaded.checkpoint);
    weights["model.encoder.layers.9.fc1.weight"] = torch::zeros({2});
    // An alias that differs from what it aliases is refused too.
    weights["lm_head.weight"] = torch::zeros_like(weights.at("model.shared.weight"));
    try {
        MarianModel broken(MarianConfig::parse(model_->loaded.config, "config.json"), weights, "broken");
        QFAIL("built with an unexpected weight");
    } catch (const Error& e) {
        QVERIFY2(e.detail().find("unexpected keys: model.encoder.layers.9.fc1.weight") != std::string::npos, e.what());
        QVERIFY2(e.detail().find("lm_head.weight") != std::string::npos, e.what());
    }
    // The real aliases, equal to what they alias, are accepted.
    auto aliased = tensorsOf(model_->loaded.checkpoint);
    aliased["lm_head.weight"] = aliased.at("model.shared.weight");
    const auto& config = model_->loaded.config;
    aliased["model.encoder.embed_positions.weight"] =
        marianSinusoidalPositions(config["max_position_embeddings"].get<std::int64_t>(), config["d_model"].get<std::int64_t>());
    MarianModel fine(MarianConfig::parse(config, "config.json"), aliased, "aliased");
    QCOMPARE(fine.vocabSize(), config["vocab_size"].get<std::int64_t>());
}

void TestMarian::unsupportedConfigIsNamed() {
    auto config = model_->loaded.config;
    config.erase("d_model");
    QVERIFY_THROWS_EXCEPTION(Error, MarianConfig::parse(config, "config.json"));
    config = model_->loaded.config;
    config["normalize_before"] = true;
    try {
        MarianConfig::parse(config, "config.json");
        QFAIL("accepted a pre-LN config");
    } catch (const Error& e) {
        QVERIFY(e.detail().find("normalize_before") != std::string::npos);
    }
}

void TestMarian::quantizationConfigIsChecked_data() {
    QTest::addColumn<QByteArray>("quantization");
    QTest::addColumn<QString>("refusal");  // empty: accepted
    auto group = [](const char* weights, const char* extra = "") {
        return QByteArray(
                   R"({"quant_method": "compressed-tensors", "format": "int-quantized", "config_groups": {"group_0": {"targets": ["Linear"], "weights": )") +
               weights + "}" + extra + "}, \"ignore\": []}";
    };
    const char* channel =
        R"({"num_bits": 8, "type": "int", "symmetric": true, "strategy": "channel", "dynamic": false, "group_size": null})";
    QTest::newRow("int8 per channel") << group(channel) << "";
    QTest::newRow("int8 per tensor, static input scales")
        << group(
               R"({"num_bits": 8, "type": "int", "symmetric": true, "strategy": "tensor"}, "input_activations": {"num_bits": 8, "type": "int", "strategy": "tensor", "dynamic": false})")
        << "";
    QTest::newRow("gptq") << QByteArray(R"({"quant_method": "gptq", "bits": 4, "group_size": 128})") << "quant_method gptq";
    QTest::newRow("bitsandbytes") << QByteArray(R"({"quant_method": "bitsandbytes", "load_in_8bit": true})") << "quant_method bitsandbytes";
    QTest::newRow("fp8 per channel")
        << QByteArray(
               R"({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "symmetric": true, "strategy": "channel"}}}, "ignored_layers": ["lm_head"]})")
        << "";
    QTest::newRow("fp8 method") << QByteArray(R"({"quant_method": "fp8", "activation_scheme": "dynamic", "ignored_layers": []})") << "";
    QTest::newRow("fp8 block scales") << QByteArray(R"({"quant_method": "fp8", "weight_block_size": [128, 128]})") << "weight_block_size";
    QTest::newRow("quantized kv cache")
        << QByteArray(
               R"({"quant_method": "compressed-tensors", "format": "int-quantized", "kv_cache_scheme": {"num_bits": 8}, "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "int", "strategy": "tensor"}}}})")
        << "kv_cache_scheme";
    QTest::newRow("no groups") << QByteArray(R"({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {}})")
                               << "no config_groups";
    QTest::newRow("packed int4") << QByteArray(R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {}})")
                                 << "format pack-quantized";
    QTest::newRow("4 bits") << group(R"({"num_bits": 4, "type": "int", "symmetric": true, "strategy": "channel"})") << "num_bits 4";
    QTest::newRow("zero points") << group(R"({"num_bits": 8, "type": "int", "symmetric": false, "strategy": "channel"})") << "asymmetric";
    QTest::newRow("groups") << group(R"({"num_bits": 8, "type": "int", "symmetric": true, "strategy": "group", "group_size": 128})")
                            << "strategy \"group\"";
    QTest::newRow("not Linear")
        << QByteArray(
               R"({"quant_method": "compressed-tensors", "format": "int-quantized", "config_groups": {"g": {"targets": ["re:.*embed.*"], "weights": )") +
               channel + "}}}"
        << "targets";
    QTest::newRow("not an object") << QByteArray(R"("int8")") << "not an object";
}

// A quantization scheme the engine does not compute is refused by name when the model opens, before it could
// produce wrong numbers; the int8 layout it does compute opens.
void TestMarian::quantizationConfigIsChecked() {
    QFETCH(QByteArray, quantization);
    QFETCH(QString, refusal);
    QTemporaryDir dir;
    test::copyFolder(kDir, dir.path().toStdString());
    auto config = model_->loaded.config;
    config["quantization_config"] = nlohmann::json::parse(quantization.toStdString());
    std::ofstream(dir.filePath("config.json").toStdString()) << config.dump(2);
    try {
        const auto opened = openModel(*store_, dir.path().toStdString());
        QVERIFY2(refusal.isEmpty(), "accepted an unsupported quantization_config");
        QVERIFY(opened->seq2seq());
    } catch (const Error& e) {
        QVERIFY2(!refusal.isEmpty(), e.what());
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("unsupported"));
        QVERIFY2(QString::fromStdString(e.detail()).contains(refusal), e.what());
    }
}

// The parameter layout tools/train starts from is what the constructor binds: every tensor the golden
// checkpoint stores (but the aliases hub files may carry), with its shape, and nothing else.
void TestMarian::layoutIsTheCheckpoints() {
    const auto config = MarianConfig::parse(model_->loaded.config, "config.json");
    const auto checkpoint = SafetensorsFile::open(kDir / "model.safetensors");
    std::map<std::string, std::vector<std::int64_t>> stored;
    for (const auto& tensor : checkpoint->tensors())
        if (tensor.name.find("embed_") == std::string::npos && tensor.name != "lm_head.weight")
            stored.emplace(tensor.name, std::vector<std::int64_t>(tensor.shape.begin(), tensor.shape.end()));
    const auto layout = config.parameterShapes();
    QCOMPARE(layout.size(), stored.size());
    for (const auto& [name, shape] : layout) {
        QVERIFY2(stored.count(name), name.c_str());
        QVERIFY2(stored.at(name) == shape, name.c_str());
    }
    QCOMPARE(layout.front().first, std::string("model.shared.weight"));  // tools/train's seeded order starts here
}

QTEST_GUILESS_MAIN(TestMarian)
#include "tst_marian.moc"
