// The loader: phases and real progress, cancellation in every phase, integrity and memory refusals,
// sharded checkpoints, and zero-copy binding.
#include "io/safetensors_writer.h"
#include "io/tensor_view.h"
#include "load/model_loader.h"
#include "load/page_in.h"
#include "runtime/runnable_model.h"
#include "test_files.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

#include <torch/torch.h>

#include <algorithm>
#include <fstream>

using namespace dragoman;
namespace fs = std::filesystem;
using dragoman::test::copyFolder;
using dragoman::test::fixture;

namespace {

// Splits a single-file checkpoint into two shards plus model.safetensors.index.json.
void shard(const fs::path& dir) {
    const auto single = SafetensorsFile::open(dir / "model.safetensors");
    SafetensorsWriter first, second;
    std::string index = R"({"metadata": {}, "weight_map": {)";
    std::size_t i = 0;
    for (const auto& t : single->tensors()) {
        auto bytes = single->bytes(t);
        auto& writer = (i++ % 2 == 0) ? first : second;
        writer.addBytes(t.name, t.dtype, t.shape, std::vector<std::byte>(bytes.begin(), bytes.end()));
        index += (i > 1 ? ", \"" : "\"") + t.name + "\": \"" +
                 ((i - 1) % 2 == 0 ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors") + "\"";
    }
    index += "}}";
    first.write(dir / "model-00001-of-00002.safetensors");
    second.write(dir / "model-00002-of-00002.safetensors");
    std::ofstream(dir / "model.safetensors.index.json") << index;
    fs::remove(dir / "model.safetensors");
}

// A checkpoint of one float32 tensor "ramp" [layers, 1024, 1024] whose element i is i % modulus, in `dir`.
void writeRampCheckpoint(const fs::path& dir, std::int64_t layers, std::int64_t modulus) {
    SafetensorsWriter writer;
    writer.add("ramp", DType::F32, {layers, 1024, 1024}, [modulus](std::span<std::byte> b, std::uint64_t first) {
        auto* f = reinterpret_cast<float*>(b.data());
        for (std::size_t i = 0; i < b.size() / sizeof(float); ++i)
            f[i] = static_cast<float>((first / sizeof(float) + i) % static_cast<std::uint64_t>(modulus));
    });
    fs::create_directories(dir);
    writer.write(dir / "model.safetensors");
    std::ofstream(dir / "config.json") << R"({"model_type": "test"})";
}

torch::Tensor rampValues(std::int64_t layers, std::int64_t modulus) {
    return torch::arange(layers * 1024 * 1024, torch::kInt64).remainder(modulus).to(torch::kFloat32).view({layers, 1024, 1024});
}

}  // namespace

class TestLoader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void phasesReportInOrder();
    void openingFillsOneBarOnce_data();
    void openingFillsOneBarOnce();
    void cancelTokenStopsTheLoad();
    void weightsAreZeroCopyViews();
    void cancelStopsEachPhase_data();
    void cancelStopsEachPhase();
    void pageInReportsEvery16MiB();
    void coldPageInReadsEveryByte();
    void warmPageInEndsInHugePages();
    void truncatedWeightsAreRefused();
    void corruptCheckpointIsRefused();
    void memoryGuardRefuses();
    void shardedCheckpointLoads();
    void firstSightHashesOnce();

private:
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<ModelStore> store_;
    fs::path root_;
};

void TestLoader::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    root_ = dir_->path().toStdString();
    store_ = std::make_unique<ModelStore>(StoreRoots{root_ / "cache", root_ / "hub", {}});
}

void TestLoader::phasesReportInOrder() {
    std::vector<ProgressReport> seen;
    std::vector<std::string> names;
    LoadOptions options;
    options.progress = [&](const ProgressReport& r) {
        seen.push_back(r);
        names.emplace_back(r.phase);
        return true;
    };
    const auto model = loadModel(*store_, fixture("hunyuan-tiny").string(), options);
    QVERIFY(!seen.empty());
    for (std::size_t i = 1; i < seen.size(); ++i)
        QVERIFY(seen[i].overall >= seen[i - 1].overall);  // one bar that never goes back
    QCOMPARE(seen.back().overall, 1.0);
    for (auto phase : {LoadPhase::Resolve, LoadPhase::Verify, LoadPhase::Map, LoadPhase::PageIn}) {
        const auto name = std::string(phaseName(phase));
        bool finished = false;
        for (std::size_t i = 0; i < seen.size(); ++i)
            finished = finished || (names[i] == name && seen[i].done == seen[i].total);
        QVERIFY2(finished, name.c_str());
    }
    QCOMPARE(model.config.at("model_type").get<std::string>(), std::string("hunyuan_v1_dense"));
    QVERIFY(model.stats.readySeconds > 0);
}

void TestLoader::openingFillsOneBarOnce_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("marian") << QStringLiteral("marian-tiny");
    QTest::newRow("hunyuan") << QStringLiteral("hunyuan-tiny");
}

// Every phase of opening a model (files, network, tokenizer) moves one bar from 0 to 1, in order.
void TestLoader::openingFillsOneBarOnce() {
    QFETCH(QString, name);
    std::vector<std::string> phases;
    std::vector<double> overall;
    OpenOptions options;
    options.load.progress = [&](const ProgressReport& r) {
        if (phases.empty() || phases.back() != r.phase) phases.emplace_back(r.phase);
        overall.push_back(r.overall);
        return true;
    };
    const auto model = openModel(*store_, fixture(name.toStdString().c_str()).string(), options);
    QVERIFY(model->strategy);
    QVERIFY(std::is_sorted(overall.begin(), overall.end()));
    QCOMPARE(overall.front(), 0.0);
    QCOMPARE(overall.back(), 1.0);
    std::vector<std::string> expected;
    for (const auto& phase : loadPhases())
        expected.push_back(phase.name);
    QCOMPARE(phases, expected);
}

void TestLoader::cancelTokenStopsTheLoad() {
    OpenOptions options;
    int reports = 0;
    options.load.progress = [&](const ProgressReport& r) {
        ++reports;
        if (r.phase == phaseName(LoadPhase::Map)) options.load.cancel.cancel();  // from "another thread"
        return true;
    };
    QVERIFY_THROWS_EXCEPTION(Cancelled, openModel(*store_, fixture("marian-tiny").string(), options));
    QVERIFY(reports > 0);
}

void TestLoader::weightsAreZeroCopyViews() {
    const auto model = loadModel(*store_, fixture("hunyuan-tiny").string());
    CopyCounter copies;
    const auto weights = tensorsOf(model.checkpoint, &copies);
    QCOMPARE(copies.tensors.load(), std::uint64_t(0));
    const auto& embed = weights.at("model.embed_tokens.weight");
    QCOMPARE(embed.scalar_type(), torch::kBFloat16);  // stays bf16: no conversion at load
    QCOMPARE(embed.sizes().vec(), (std::vector<std::int64_t>{763, 64}));
    const auto* entry = model.checkpoint.find("model.embed_tokens.weight");
    QCOMPARE(static_cast<const void*>(embed.data_ptr()), static_cast<const void*>(entry->file->bytes(*entry->info).data()));
}

void TestLoader::cancelStopsEachPhase_data() {
    QTest::addColumn<int>("phase");
    for (auto phase : {LoadPhase::Resolve, LoadPhase::Verify, LoadPhase::Map, LoadPhase::PageIn})
        QTest::newRow(std::string(phaseName(phase)).c_str()) << static_cast<int>(phase);
}

void TestLoader::cancelStopsEachPhase() {
    QFETCH(int, phase);
    int callsAfterStop = 0;
    bool stopped = false;
    LoadOptions options;
    options.progress = [&](const ProgressReport& r) {
        if (stopped) ++callsAfterStop;
        if (r.phase == phaseName(static_cast<LoadPhase>(phase))) stopped = true;
        return !stopped;
    };
    QVERIFY_THROWS_EXCEPTION(Cancelled, loadModel(*store_, fixture("marian-tiny").string(), options));
    QCOMPARE(callsAfterStop, 0);  // nothing runs after "stop"
    // Everything was released: the model loads again normally.
    QVERIFY(loadModel(*store_, fixture("marian-tiny").string()).stats.readySeconds > 0);
}

void TestLoader::pageInReportsEvery16MiB() {
    // 40 MiB of weights: page-in must report at least 3 times (and so can stop within one 16 MiB chunk).
    SafetensorsWriter writer;
    writer.add("big", DType::F32, {10, 1024, 1024}, [](std::span<std::byte> b, std::uint64_t) { std::memset(b.data(), 0, b.size()); });
    const auto dir = root_ / "big";
    fs::create_directories(dir);
    writer.write(dir / "model.safetensors");
    std::ofstream(dir / "config.json") << R"({"model_type": "test"})";
    int pageInCalls = 0;
    LoadOptions options;
    options.progress = [&](const ProgressReport& r) {
        pageInCalls += r.phase == phaseName(LoadPhase::PageIn);
        return true;
    };
    loadModel(*store_, dir.string(), options);
    QVERIFY2(pageInCalls >= 4, std::to_string(pageInCalls).c_str());
}

void TestLoader::coldPageInReadsEveryByte() {
    // A file evicted from the page cache is read back whole by the page-in, in 2 MiB folios where the kernel
    // offers them (what decoding needs to stream at full speed), and the tensors see the file's bytes.
    const auto dir = root_ / "cold";
    writeRampCheckpoint(dir, 12, 1000003);
    loadModel(*store_, dir.string());  // first sight: hashed and recorded
    if (!evictFromPageCache(dir / "model.safetensors")) QSKIP("the page cache cannot be dropped here");
    const auto model = loadModel(*store_, dir.string());
    const auto weights = tensorsOf(model.checkpoint);
    const auto& ramp = weights.at("ramp");
    QVERIFY(torch::equal(ramp, rampValues(12, 1000003)));
    const auto& mapping = *model.checkpoint.files().front()->mapping();
    const auto huge = mapping.hugePageBytes();
    qInfo("%llu of %llu bytes mapped in 2 MiB pages", static_cast<unsigned long long>(huge),
          static_cast<unsigned long long>(mapping.size()));
    if (pageInReadsHugeFolios() && huge > 0)  // 0: the filesystem keeps small folios (tmpfs, old kernels)
        QVERIFY2(huge >= mapping.size() / 2, (std::to_string(huge) + " of " + std::to_string(mapping.size())).c_str());
}

// A file the page cache holds in small folios (written or copied here) is read again into 2 MiB
// folios by the page-in, where the filesystem has them: what a cold load gives, every load gets.
void TestLoader::warmPageInEndsInHugePages() {
    const auto dir = root_ / "warm";
    writeRampCheckpoint(dir, 20, 999983);
    loadModel(*store_, dir.string());  // first sight: hashed and recorded, the written pages still cached
    std::uint64_t warmHuge = 0, size = 0;
    {
        const auto model = loadModel(*store_, dir.string());
        QVERIFY(torch::equal(tensorsOf(model.checkpoint).at("ramp"), rampValues(20, 999983)));
        const auto& mapping = *model.checkpoint.files().front()->mapping();
        warmHuge = mapping.hugePageBytes();
        size = mapping.size();
    }
    // What this machine gives a cold load is the bar.
    if (!pageInReadsHugeFolios() || !evictFromPageCache(dir / "model.safetensors")) QSKIP("no 2 MiB folios for mapped files here");
    std::uint64_t coldHuge = 0;
    {
        const auto cold = loadModel(*store_, dir.string());
        coldHuge = cold.checkpoint.files().front()->mapping()->hugePageBytes();
    }
    qInfo("warm: %llu, cold: %llu of %llu bytes in 2 MiB pages", static_cast<unsigned long long>(warmHuge),
          static_cast<unsigned long long>(coldHuge), static_cast<unsigned long long>(size));
    if (coldHuge < size / 2) QSKIP("this filesystem keeps small folios");
    QVERIFY2(warmHuge >= size / 2, (std::to_string(warmHuge) + " of " + std::to_string(size)).c_str());

    // All but the first 16 MiB cached again by read() (as a hash or a copy reads a file: folios of the readahead
    // window, too small for 2 MiB entries): the page-in finds the rest in small pages and reads it again.
    const auto file = dir / "model.safetensors";
    {
        const int fd = ::open(file.c_str(), O_RDONLY);
        QVERIFY(fd >= 0);
        const off_t first = off_t{16} << 20;
        QCOMPARE(::posix_fadvise(fd, first, 0, POSIX_FADV_DONTNEED), 0);
        std::vector<char> buffer(1 << 20);
        for (off_t at = first; ::pread(fd, buffer.data(), buffer.size(), at) > 0; at += static_cast<off_t>(buffer.size())) {
        }
        ::close(fd);
    }
    const auto partly = loadModel(*store_, dir.string());
    QVERIFY(torch::equal(tensorsOf(partly.checkpoint).at("ramp"), rampValues(20, 999983)));
    const auto partlyHuge = partly.checkpoint.files().front()->mapping()->hugePageBytes();
    QVERIFY2(partlyHuge >= coldHuge / 10 * 9, (std::to_string(partlyHuge) + " of " + std::to_string(size)).c_str());
}

void TestLoader::truncatedWeightsAreRefused() {
    const auto dir = root_ / "m";
    copyFolder(fixture("marian-tiny"), dir);
    loadModel(*store_, dir.string());  // first sight: hashed and recorded
    fs::resize_file(dir / "model.safetensors", fs::file_size(dir / "model.safetensors") - 7);
    try {
        loadModel(*store_, dir.string());
        QFAIL("loaded a truncated checkpoint");
    } catch (const Error& e) {
        QCOMPARE(e.category(), std::string("integrity"));
        QVERIFY2(e.detail().find("model.safetensors") != std::string::npos, e.what());
        QVERIFY2(e.detail().find("truncated") != std::string::npos, e.what());
    }
}

void TestLoader::corruptCheckpointIsRefused() {
    const auto dir = root_ / "bad";
    fs::create_directories(dir);
    fs::copy_file(fixture("safetensors-bad") / "overlapping_offsets.safetensors", dir / "model.safetensors");
    std::ofstream(dir / "config.json") << R"({"model_type": "marian"})";
    try {
        loadModel(*store_, dir.string());
        QFAIL("loaded a corrupt checkpoint");
    } catch (const Error& e) {
        QCOMPARE(e.category(), std::string("offsets"));
        QVERIFY(e.detail().find("model.safetensors") != std::string::npos);
    }
}

void TestLoader::memoryGuardRefuses() {
    LoadOptions options;
    options.memoryLimitBytes = 1000;  // far below the fixture's weights
    try {
        loadModel(*store_, fixture("hunyuan-tiny").string(), options);
        QFAIL("loaded past the memory limit");
    } catch (const Error& e) {
        QCOMPARE(e.category(), std::string("memory"));
        QVERIFY(e.detail().find("GiB") != std::string::npos);
    }
}

void TestLoader::shardedCheckpointLoads() {
    const auto dir = root_ / "sharded";
    copyFolder(fixture("hunyuan-tiny"), dir);
    const auto reference = SafetensorsFile::open(fixture("hunyuan-tiny") / "model.safetensors");
    shard(dir);
    const auto model = loadModel(*store_, dir.string());
    QCOMPARE(model.checkpoint.files().size(), std::size_t(2));
    const auto weights = tensorsOf(model.checkpoint);
    QCOMPARE(weights.size(), reference->tensors().size());
    for (const auto& t : reference->tensors()) {
        const auto& w = weights.at(t.name);
        QCOMPARE(std::memcmp(w.data_ptr(), reference->bytes(t).data(), t.nbytes()), 0);
    }
    // An index that names only the first shard opens only that shard, as transformers does; the model then
    // lacks the second shard's weights and the loader names one of them.
    const auto firstShardOnly = [&] {
        std::string index = R"({"weight_map": {)";
        const auto first = SafetensorsFile::open(dir / "model-00001-of-00002.safetensors");
        for (const auto& t : first->tensors())
            index += (index.back() == '{' ? "\"" : ", \"") + t.name + "\": \"model-00001-of-00002.safetensors\"";
        return index + "}}";
    }();
    std::ofstream(dir / "model.safetensors.index.json") << firstShardOnly;
    fs::remove(store_->manifestPath(store_->resolve(dir.string())));
    try {
        openModel(*store_, dir.string());
        QFAIL("opened with half of the weights");
    } catch (const Error& e) {
        const auto second = SafetensorsFile::open(dir / "model-00002-of-00002.safetensors");
        const bool namesOne = std::any_of(second->tensors().begin(), second->tensors().end(),
                                          [&](const auto& t) { return e.detail().find(t.name) != std::string::npos; });
        QVERIFY2(namesOne, e.what());
    }
    // An index that names a tensor no shard has is refused by name.
    std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map": {"ghost.weight": "model-00001-of-00002.safetensors"}})";
    fs::remove(store_->manifestPath(store_->resolve(dir.string())));
    try {
        loadModel(*store_, dir.string());
        QFAIL("loaded with a wrong index");
    } catch (const Error& e) {
        QVERIFY2(e.detail().find("ghost.weight") != std::string::npos || e.detail().find("missing from the index") != std::string::npos,
                 e.what());
    }
    // An index that lists nothing is refused too, not opened as a model without weights.
    std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map": {}})";
    fs::remove(store_->manifestPath(store_->resolve(dir.string())));
    try {
        loadModel(*store_, dir.string());
        QFAIL("loaded with an empty index");
    } catch (const Error& e) {
        QVERIFY2(e.detail().find("lists no tensors") != std::string::npos, e.what());
    }
}

void TestLoader::firstSightHashesOnce() {
    const auto dir = root_ / "once";
    copyFolder(fixture("marian-tiny"), dir);
    QVERIFY(loadModel(*store_, dir.string()).stats.hashedOnLoad);
    QVERIFY(!loadModel(*store_, dir.string()).stats.hashedOnLoad);
}

QTEST_GUILESS_MAIN(TestLoader)
#include "tst_loader.moc"
