// Marian on the CPU kernels without libtorch (models/marian_cpu.h), which every translation runs: the numbers of the
// libtorch MarianModel bit for bit (the fixture, the bundled W8A8 model, a bf16 copy), greedy and beam ids of the
// golden reference, batched steps and encoder passes that give each request what it gets alone, and checkpoints
// refused by name. (tst_transformers_parity checks this path against transformers on three more configurations.)
#include "decode/beam_search.h"
#include "decode/seq2seq_session.h"
#include "kernels/row_parts.h"
#include "kernels/thread_pool.h"
#include "models/marian_cpu.h"
#include "runtime/generate_ids.h"
#include "runtime/runnable_model.h"
#include "test_files.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>

using namespace dragoman;

namespace {

const std::filesystem::path kDir = test::fixture("marian-tiny");
const std::string kBundled = std::string(DRAGOMAN_SOURCE_DIR) + "/resources/models/dragoman-en-de-zh";

OpenOptions on(const char* device) {
    OpenOptions options;
    options.device = device;
    return options;
}

bool sameRows(const Logits& a, const Logits& b) {
    return a.rows() == b.rows() && a.vocab() == b.vocab() &&
           std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.rows() * a.vocab())) == 0;
}

TokenId best(const Logits& logits, std::int64_t row) {
    return static_cast<TokenId>(std::max_element(logits.row(row), logits.row(row) + logits.vocab()) - logits.row(row));
}

}  // namespace

class TestMarianCpu : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void translationRunsOnTheKernels();
    void equalsLibtorchPath_data();
    void equalsLibtorchPath();
    void goldenIdsMatch();
    void batchedStepEqualsStepsAlone_data();
    void batchedStepEqualsStepsAlone();
    void sourcesEncodedTogetherEqualAlone();
    void rowPartsGiveTheSameNumbers_data();
    void rowPartsGiveTheSameNumbers();
    void panelsMadeAheadChangeNothing();
    void adaptersPerRowInOneStep();
    void refusalsLeaveStatesAsTheyWere();
    void endedCachesAreReused();
    void brokenCheckpointsAreNamed();

private:
    std::vector<std::vector<TokenId>> sources(const Seq2SeqModel& m, const RunnableModel& runnable, int count) const;
    // The first `steps` greedy steps' logits from each source, one state each: stepped alone or all together.
    std::vector<Logits> steps(const Seq2SeqModel& m, const std::vector<std::vector<TokenId>>& sources, std::int64_t beams, int steps,
                              bool together) const;

    QTemporaryDir cache_;
    std::unique_ptr<ModelStore> store_;
    std::shared_ptr<RunnableModel> tiny_, bundled_;
};

void TestMarianCpu::initTestCase() {
    store_ = std::make_unique<ModelStore>(StoreRoots{cache_.path().toStdString(), "/nonexistent", {}});
    tiny_ = openModel(*store_, kDir.string());
    bundled_ = openModel(*store_, kBundled);
}

std::vector<std::vector<TokenId>> TestMarianCpu::sources(const Seq2SeqModel& m, const RunnableModel& runnable, int count) const {
    std::vector<std::vector<TokenId>> out;
    for (int i = 0; i < count; ++i) {
        const std::string& text = test::sampleSentences()[static_cast<std::size_t>(i % 8)];
        auto ids = runnable.requireTokenizer().encode(i >= 8 ? text.substr(0, text.size() / 2) : text);
        for (auto& id : ids)  // the fixture's vocabulary is smaller than the tokenizer's
            id = id % m.vocabSize();
        out.push_back(std::move(ids));
    }
    return out;
}

std::vector<Logits> TestMarianCpu::steps(const Seq2SeqModel& m, const std::vector<std::vector<TokenId>>& sources, std::int64_t beams,
                                         int count, bool together) const {
    std::vector<std::unique_ptr<DecoderState>> states;
    std::vector<std::vector<TokenId>> next;
    const auto memories = together ? m.encodeSources(sources, nullptr) : std::vector<std::shared_ptr<const SourceMemory>>{};
    for (std::size_t i = 0; i < sources.size(); ++i) {
        auto memory = together ? memories[i] : m.encodeSources({sources[i]}, nullptr).front();
        states.push_back(m.startDecoding(std::move(memory), beams, 24, nullptr));
        next.emplace_back(static_cast<std::size_t>(beams), m.decoderStartId());
    }
    std::vector<Logits> out;
    for (int step = 0; step < count; ++step) {
        std::vector<Logits> rows;
        if (together) {
            std::vector<DecoderState*> all;
            for (auto& s : states)
                all.push_back(s.get());
            const auto logits = m.stepMany(all, next);
            for (std::size_t i = 0; i < states.size(); ++i)
                rows.push_back(logits.slice(static_cast<std::int64_t>(i) * beams, beams));
        } else {
            for (std::size_t i = 0; i < states.size(); ++i)
                rows.push_back(m.stepMany({states[i].get()}, {next[i]}));
        }
        for (std::size_t i = 0; i < states.size(); ++i) {
            for (std::int64_t b = 0; b < beams; ++b)  // each hypothesis its own way: the rows differ from the next step on
                next[i][static_cast<std::size_t>(b)] = (best(rows[i], b) + static_cast<TokenId>(b)) % m.vocabSize();
            out.push_back(rows[i]);
        }
    }
    return out;
}

// The default open runs Marian on the kernels: no libtorch model behind it.
void TestMarianCpu::translationRunsOnTheKernels() {
    QVERIFY(tiny_->seq2seq());
    QVERIFY(!tiny_->encoderDecoder());
    QVERIFY(dynamic_cast<const MarianCpuModel*>(bundled_->seq2seq()));
    QCOMPARE(QString::fromStdString(bundled_->device()), QStringLiteral("CPU"));
}

void TestMarianCpu::equalsLibtorchPath_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("dtype");
    QTest::newRow("marian-tiny f32") << kDir.string().c_str() << "";
    QTest::newRow("marian-tiny bf16") << kDir.string().c_str() << "bf16";
    QTest::newRow("bundled W8A8") << kBundled.c_str() << "";
}

// Encoder outputs, and the logits of every step of greedy and beam decoding with reordered caches, are the libtorch
// model's bit for bit: the same kernels in the same order.
void TestMarianCpu::equalsLibtorchPath() {
    QFETCH(QString, model);
    QFETCH(QString, dtype);
    QTemporaryDir copy;
    std::string dir = model.toStdString();
    if (dtype == "bf16") {  // every float tensor stored as bf16, as checkpoints exported in bf16 are
        test::copyFolder(dir, copy.path().toStdString());
        auto tensors = test::readTensors(dir);
        for (auto& [name, t] : tensors) {
            if (t.dtype != DType::F32) continue;
            std::vector<std::byte> narrowed(t.bytes.size() / 2);
            for (std::size_t i = 0; i < t.bytes.size() / 4; ++i)
                std::memcpy(&narrowed[2 * i], &t.bytes[4 * i + 2], 2);  // truncation is a valid bf16 value too
            t.bytes = std::move(narrowed);
            t.dtype = DType::BF16;
        }
        test::writeTensors(tensors, copy.filePath("model.safetensors").toStdString());
        dir = copy.path().toStdString();
    }
    const auto cpu = openModel(*store_, dir), torch = openModel(*store_, dir, on("libtorch"));
    QVERIFY(torch->encoderDecoder());
    const auto &a = *cpu->seq2seq(), &b = *torch->seq2seq();
    const auto texts = sources(a, *cpu, 5);
    for (const auto& source : texts)
        QVERIFY(a.encoderOutput(source, nullptr) == b.encoderOutput(source, nullptr));
    for (std::int64_t beams : {1, 3}) {
        const auto ours = steps(a, texts, beams, 6, true), theirs = steps(b, texts, beams, 6, true);
        for (std::size_t i = 0; i < ours.size(); ++i)
            QVERIFY2(sameRows(ours[i], theirs[i]), qPrintable(QString("%1 beams, row set %2").arg(beams).arg(i)));
        // Beam search reorders the caches: the same ids as the libtorch model's.
        for (const auto& source : texts) {
            const SearchOptions options{12, {a.eosId()}, nullptr, {}};
            Seq2SeqSession sa(a, a.encodeSources({source}, nullptr).front(), beams, 13),
                sb(b, b.encodeSources({source}, nullptr).front(), beams, 13);
            QCOMPARE(beamSearch(sa, {a.decoderStartId()}, options, {beams, 1.0, false}),
                     beamSearch(sb, {b.decoderStartId()}, options, {beams, 1.0, false}));
        }
    }
}

// The fixture's golden greedy and beam ids, through generate() as the CLI runs it.
void TestMarianCpu::goldenIdsMatch() {
    std::ifstream in(kDir / "expected.json");
    const auto json = nlohmann::json::parse(in);
    const std::int64_t maxNew = json.at("max_new_tokens");
    for (const auto& c : json.at("cases")) {
        const auto ids = c.at("source_ids").get<std::vector<TokenId>>();
        QCOMPARE(generateIds(*tiny_, ids, maxNew, 1, true), c.at("greedy").at("generated_ids").get<std::vector<TokenId>>());
        QCOMPARE(generateIds(*tiny_, ids, maxNew, 1, false), c.at("greedy_hf_processors").at("generated_ids").get<std::vector<TokenId>>());
        const std::int64_t beams = c.at("beam_hf_processors").at("num_beams");
        QCOMPARE(generateIds(*tiny_, ids, maxNew, beams, false),
                 c.at("beam_hf_processors").at("generated_ids").get<std::vector<TokenId>>());
    }
}

void TestMarianCpu::batchedStepEqualsStepsAlone_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("requests");
    QTest::addColumn<int>("beams");
    for (const char* model : {"marian-tiny", "bundled"})
        for (auto [requests, beams] : {std::pair{2, 1}, {16, 1}, {3, 4}})
            QTest::addRow("%s, %d requests, %d beams", model, requests, beams) << QString(model) << requests << beams;
}

// Each request's rows of a batched step are bit for bit its logits alone, over sources of different lengths.
void TestMarianCpu::batchedStepEqualsStepsAlone() {
    QFETCH(QString, model);
    QFETCH(int, requests);
    QFETCH(int, beams);
    const auto& runnable = model == "bundled" ? *bundled_ : *tiny_;
    const auto& m = *runnable.seq2seq();
    const auto texts = sources(m, runnable, requests);
    const auto alone = steps(m, texts, beams, 8, false), together = steps(m, texts, beams, 8, true);
    QCOMPARE(alone.size(), together.size());
    for (std::size_t i = 0; i < alone.size(); ++i)
        QVERIFY2(sameRows(alone[i], together[i]), qPrintable(QString("row set %1").arg(i)));
}

// Sources encoded in one pass (a short one, and one past the 64 rows the decoding kernel takes) decode as they do
// encoded alone; a memory another model made is refused.
void TestMarianCpu::sourcesEncodedTogetherEqualAlone() {
    const auto& m = *bundled_->seq2seq();
    auto texts = sources(m, *bundled_, 7);
    std::vector<TokenId> longer;
    while (longer.size() < 90)
        for (const auto& s : texts)
            longer.insert(longer.end(), s.begin(), s.end() - 1);
    longer.resize(90);
    longer.push_back(m.eosId());
    texts.insert(texts.begin() + 3, longer);
    const auto together = steps(m, texts, 1, 3, true), alone = steps(m, texts, 1, 3, false);
    for (std::size_t i = 0; i < alone.size(); ++i)
        QVERIFY2(sameRows(alone[i], together[i]), qPrintable(QString("row set %1").arg(i)));
    QVERIFY(m.encoderOutput(longer, nullptr) == m.encoderOutput(longer, nullptr));
    struct Foreign : SourceMemory {};
    QVERIFY_THROWS_EXCEPTION(Error, m.startDecoding(std::make_shared<Foreign>(), 1, 8, nullptr));
}

void TestMarianCpu::rowPartsGiveTheSameNumbers_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("beams");
    for (const char* model : {"marian-tiny", "bundled"})
        for (int beams : {1, 3})
            QTest::addRow("%s, %d beams", model, beams) << QString(model) << beams;
}

// Requests' and sources' rows shared out a part per kernel thread (kernels/row_parts.h) give the numbers of every
// operation shared out: the encoder pass, the cross keys and values and each step, bit for bit.
void TestMarianCpu::rowPartsGiveTheSameNumbers() {
    QFETCH(QString, model);
    QFETCH(int, beams);
    if (ThreadPool::shared().size() < 2) QSKIP("one kernel thread: nothing to share out");
    const auto& runnable = model == "bundled" ? *bundled_ : *tiny_;
    const auto& m = *runnable.seq2seq();
    const auto texts = sources(m, runnable, 12);
    const auto inParts = steps(m, texts, beams, 6, true);
    kernels::setRowParts(false);
    const auto shared = steps(m, texts, beams, 6, true);
    kernels::setRowParts(true);
    QCOMPARE(inParts.size(), shared.size());
    for (std::size_t i = 0; i < shared.size(); ++i)
        QVERIFY2(sameRows(shared[i], inParts[i]), qPrintable(QString("row set %1").arg(i)));
}

// prepareAhead() lays out one kept weight's panels a call (the opener calls it while the tokenizer loads), at most
// once each: 6 per encoder layer, 10 per decoder layer and the output layer for the bundled model's W8A8 weights,
// none for a float32 model; the numbers are the same with every panel made ahead.
void TestMarianCpu::panelsMadeAheadChangeNothing() {
    QVERIFY(!tiny_->seq2seq()->prepareAhead());
    const auto& m = *bundled_->seq2seq();
    const auto& config = dynamic_cast<const MarianCpuModel&>(m).config();
    const auto texts = sources(m, *bundled_, 5);
    const auto before = steps(m, texts, 1, 4, true);
    int made = 0;
    while (m.prepareAhead())
        ++made;
    QVERIFY(made <= config.encoderLayers * 6 + config.decoderLayers * 10 + 1);
    QVERIFY(!m.prepareAhead());
    const auto after = steps(m, texts, 1, 4, true);
    for (std::size_t i = 0; i < before.size(); ++i)
        QVERIFY(sameRows(before[i], after[i]));
}

// Requests with and without an adapter in one batched step: each row gets its own adapter's numbers, bit for bit what
// it gets stepped alone, and the adapter changes them.
void TestMarianCpu::adaptersPerRowInOneStep() {
    const auto& m = *tiny_->seq2seq();
    const auto adapter = tiny_->loadAdapter(test::fixture("lora") / "marian-tiny.attn-ffn", "attn-ffn");
    const auto texts = sources(m, *tiny_, 3);
    const std::vector<std::shared_ptr<const LoraSet>> adapters{adapter, nullptr, adapter};
    const auto start = [&](std::size_t i) {
        return m.startDecoding(m.encodeSources({texts[i]}, adapters[i].get()).front(), 2, 16, adapters[i]);
    };
    std::vector<std::unique_ptr<DecoderState>> alone, together;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        alone.push_back(start(i));
        together.push_back(start(i));
    }
    auto plain = m.startDecoding(m.encodeSources({texts[0]}, nullptr).front(), 2, 16, nullptr);
    std::vector<std::vector<TokenId>> next(texts.size(), std::vector<TokenId>(2, m.decoderStartId()));
    for (int step = 0; step < 4; ++step) {
        const auto logits = m.stepMany({together[0].get(), together[1].get(), together[2].get()}, next);
        if (step == 0) QVERIFY(!sameRows(m.stepMany({plain.get()}, {next[0]}), logits.slice(0, 2)));
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const auto own = m.stepMany({alone[i].get()}, {next[i]});
            QVERIFY2(sameRows(own, logits.slice(static_cast<std::int64_t>(i) * 2, 2)),
                     qPrintable(QString("request %1, step %2").arg(i).arg(step)));
            next[i] = {best(own, 0), (best(own, 1) + 1) % static_cast<TokenId>(m.vocabSize())};
        }
    }
}

// A step past a state's capacity, or with an id outside the vocabulary, throws before any state changes: the others
// in the same call step on as if it had not been there.
void TestMarianCpu::refusalsLeaveStatesAsTheyWere() {
    const auto& m = *tiny_->seq2seq();
    const auto texts = sources(m, *tiny_, 2);
    auto memories = m.encodeSources(texts, nullptr);
    auto roomy = m.startDecoding(memories[0], 1, 8, nullptr), cramped = m.startDecoding(memories[1], 1, 1, nullptr);
    auto reference = m.startDecoding(memories[0], 1, 8, nullptr);
    const std::vector<TokenId> start{m.decoderStartId()};
    m.stepMany({cramped.get()}, {start});
    try {
        m.stepMany({roomy.get(), cramped.get()}, {start, start});
        QFAIL("stepped past a state's capacity");
    } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).find("positions") != std::string::npos, e.what());
    }
    try {
        m.stepMany({roomy.get()}, {{static_cast<TokenId>(m.vocabSize())}});
        QFAIL("accepted an id outside the vocabulary");
    } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).find("outside the vocabulary") != std::string::npos, e.what());
    }
    QCOMPARE(roomy->length(), std::int64_t(0));
    QVERIFY(sameRows(m.stepMany({roomy.get()}, {start}), m.stepMany({reference.get()}, {start})));
    QVERIFY_THROWS_EXCEPTION(Error, m.encodeSources({{}}, nullptr));
    QVERIFY_THROWS_EXCEPTION(Error, m.encodeSources({std::vector<TokenId>(static_cast<std::size_t>(m.maxPositions()) + 1, 3)}, nullptr));
}

// An ended request's caches go to the next one of the same size, which decodes as on fresh memory (its rows past the
// new length hold the old sequence's keys); so do encoded sources' keys and values.
void TestMarianCpu::endedCachesAreReused() {
    const auto& model = dynamic_cast<const MarianCpuModel&>(*tiny_->seq2seq());
    const auto texts = sources(model, *tiny_, 3);
    const auto first = steps(model, texts, 2, 6, false);
    QVERIFY(model.cachedBytes() > 0);
    QVERIFY2(model.cachedBytes() <= (std::size_t{64} << 20), "the pool holds at most 64 MiB");
    const auto again = steps(model, texts, 2, 6, false);
    for (std::size_t i = 0; i < first.size(); ++i)
        QVERIFY(sameRows(first[i], again[i]));

    // Sources encoded in one pass share its memory, which comes back when the last of them lets go; a later pass on
    // it reads as on fresh memory.
    auto memories = model.encodeSources(texts, nullptr);
    const auto held = model.cachedBytes();
    memories.resize(1);
    QCOMPARE(model.cachedBytes(), held);
    memories.clear();
    QVERIFY(model.cachedBytes() > held);
    const auto together = steps(model, texts, 2, 6, true), togetherAgain = steps(model, texts, 2, 6, true);
    for (std::size_t i = 0; i < first.size(); ++i) {
        QVERIFY(sameRows(first[i], together[i]));
        QVERIFY(sameRows(first[i], togetherAgain[i]));
    }

    // A step's logits come back once read: the next step of as many rows writes into the same memory, and its numbers
    // are its own (a second state on the same source, stepped alone on fresh memory, gives the same).
    auto memory = model.encodeSources({texts[0]}, nullptr).front();
    auto state = model.startDecoding(memory, 2, 8, nullptr), twin = model.startDecoding(memory, 2, 8, nullptr);
    const std::vector<TokenId> start(2, model.decoderStartId());
    const auto alone = model.stepMany({twin.get()}, {start});
    const float* written = nullptr;
    {
        const auto logits = model.stepMany({state.get()}, {start});
        written = logits.data();
        QVERIFY(sameRows(logits, alone));
    }
    const auto next = model.stepMany({state.get()}, {start});
    QCOMPARE(next.data(), written);
    QVERIFY(sameRows(next, model.stepMany({twin.get()}, {start})));
}

// A missing tensor, an unexpected one and a stored copy that differs from what it copies are named; copies equal to
// what they copy (the shared table's three names, the positions) are accepted.
void TestMarianCpu::brokenCheckpointsAreNamed() {
    const auto tensors = test::readTensors(kDir);
    const auto config = nlohmann::json::parse(std::ifstream(kDir / "config.json"));
    const auto tryOpen = [&](const test::StoredTensors& changed) -> std::string {
        QTemporaryDir dir;
        test::copyFolder(kDir, dir.path().toStdString());
        test::writeTensors(changed, dir.filePath("model.safetensors").toStdString());
        try {
            openModel(*store_, dir.path().toStdString());
            return "";
        } catch (const Error& e) {
            return e.what();
        }
    };
    auto missing = tensors;
    missing.erase("model.decoder.layers.0.fc2.bias");
    QVERIFY(tryOpen(missing).find("missing keys: model.decoder.layers.0.fc2.bias") != std::string::npos);
    auto unexpected = tensors;
    unexpected["model.encoder.layers.9.fc1.weight"] = tensors.at("final_logits_bias");
    QVERIFY(tryOpen(unexpected).find("unexpected keys: model.encoder.layers.9.fc1.weight") != std::string::npos);
    auto differing = tensors;
    differing["lm_head.weight"] = tensors.at("model.shared.weight");
    std::fill(differing["lm_head.weight"].bytes.begin(), differing["lm_head.weight"].bytes.begin() + 4, std::byte{0x3f});
    QVERIFY(tryOpen(differing).find("lm_head.weight is stored but differs") != std::string::npos);
    auto copies = tensors;
    copies["lm_head.weight"] = copies["model.encoder.embed_tokens.weight"] = tensors.at("model.shared.weight");
    const std::int64_t positions = config.at("max_position_embeddings"), d = config.at("d_model");
    const auto table = cpu::marianSinusoids(positions, d);
    test::StoredTensor stored{DType::F32, {positions, d}, std::vector<std::byte>(table.size() * 4)};
    std::memcpy(stored.bytes.data(), table.data(), stored.bytes.size());
    copies["model.decoder.embed_positions.weight"] = stored;
    QCOMPARE(tryOpen(copies), std::string());
    reinterpret_cast<float*>(stored.bytes.data())[5] += 1.0f;
    copies["model.decoder.embed_positions.weight"] = stored;
    QVERIFY(tryOpen(copies).find("embed_positions.weight is stored but differs") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestMarianCpu)
#include "tst_marian_cpu.moc"
