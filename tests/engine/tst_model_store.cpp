// The model store: our cache, imported folders, a Hugging Face hub cache layout, and manifests that are
// hashed once and checked with stat afterwards.
#include "store/model_store.h"
#include "test_files.h"
#include "util/error.h"
#include "util/sha256.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace dragoman;
namespace fs = std::filesystem;
using dragoman::test::copyFolder;
using dragoman::test::fixture;

namespace {

// models--ORG--NAME/{blobs/<sha256>, snapshots/<rev>/<file> -> ../../blobs/<sha256>, refs/main}
fs::path makeHubRepo(const fs::path& hub, const std::string& org, const std::string& name, const fs::path& model) {
    const auto repo = hub / ("models--" + org + "--" + name);
    const std::string revision = "0123456789abcdef0123456789abcdef01234567";
    fs::create_directories(repo / "blobs");
    fs::create_directories(repo / "snapshots" / revision);
    fs::create_directories(repo / "refs");
    std::ofstream(repo / "refs" / "main") << revision;
    for (const auto& f : fs::directory_iterator(model)) {
        const auto digest = sha256File(f.path());
        fs::copy_file(f.path(), repo / "blobs" / digest, fs::copy_options::overwrite_existing);
        fs::create_symlink(fs::path("../../blobs") / digest, repo / "snapshots" / revision / f.path().filename());
    }
    return repo / "snapshots" / revision;
}

}  // namespace

class TestModelStore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void emptyStoreListsNothing();
    void importRecordsHashesOnce();
    void cacheFolderIsListed();
    void hubCacheUsesBlobNames();
    void resolveByPathAndUnknownId();
    void changedFileIsReported_data();
    void changedFileIsReported();
    void bundledModelFollowsItsShippedChecksums_data();
    void bundledModelFollowsItsShippedChecksums();
    void damagedManifestIsRebuilt_data();
    void damagedManifestIsRebuilt();
    void manifestWriteLeavesNoTemporary();
    void quantizationIsNamed_data();
    void quantizationIsNamed();

private:
    std::unique_ptr<QTemporaryDir> dir_;
    StoreRoots roots_;
};

void TestModelStore::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    const fs::path root = dir_->path().toStdString();
    roots_ = {root / "cache", root / "hub", {root / "bundled"}};
}

void TestModelStore::emptyStoreListsNothing() {
    const ModelStore store(roots_);
    QVERIFY(store.list().empty());
    QVERIFY_THROWS_EXCEPTION(Error, store.defaultModel());
}

void TestModelStore::importRecordsHashesOnce() {
    const fs::path model = fs::path(dir_->path().toStdString()) / "elsewhere" / "marian";
    copyFolder(fixture("marian-tiny"), model);
    const ModelStore store(roots_);
    const auto entry = store.importModel(model, "my/marian");
    QCOMPARE(entry.id, std::string("my/marian"));
    QCOMPARE(entry.architecture, std::string("MarianMTModel"));

    const auto listed = store.list();
    QCOMPARE(listed.size(), std::size_t(1));
    QCOMPARE(listed[0].source, ModelSource::Imported);
    const auto manifest = readManifest(store.manifestPath(listed[0]));
    const auto weights =
        std::find_if(manifest.files.begin(), manifest.files.end(), [](const auto& f) { return f.name == "model.safetensors"; });
    QVERIFY(weights != manifest.files.end());
    QCOMPARE(weights->sha256, sha256File(model / "model.safetensors"));
    QCOMPARE(weights->hashSource, std::string("computed"));
    QVERIFY(statMismatches(manifest).empty());
    QVERIFY(hashMismatches(manifest).empty());

    // A later look uses the recorded manifest (no re-hash): same record, byte for byte.
    const auto again = store.ensureManifest(store.resolve("my/marian"));
    QCOMPARE(again.files.size(), manifest.files.size());
}

void TestModelStore::cacheFolderIsListed() {
    copyFolder(fixture("hunyuan-tiny"), roots_.cache / "hy-tiny");
    const ModelStore store(roots_);
    const auto entry = store.resolve("hy-tiny");
    QCOMPARE(entry.source, ModelSource::Cache);
    QCOMPARE(entry.modelType, std::string("hunyuan_v1_dense"));
    QVERIFY(entry.weightBytes > 0);
}

void TestModelStore::hubCacheUsesBlobNames() {
    makeHubRepo(roots_.hub, "tencent", "HY-MT-tiny", fixture("hunyuan-tiny"));
    const ModelStore store(roots_);
    const auto entry = store.resolve("tencent/HY-MT-tiny");
    QCOMPARE(entry.source, ModelSource::HubCache);
    QCOMPARE(entry.revision, std::string("0123456789abcdef0123456789abcdef01234567"));
    const auto manifest = store.ensureManifest(entry);
    for (const auto& f : manifest.files)
        QCOMPARE(f.hashSource, std::string("hub-blob"));
    QVERIFY(hashMismatches(manifest).empty());
    // The manifest lives in our cache, never in the hub's folders.
    QVERIFY(store.manifestPath(entry).string().rfind(roots_.cache.string(), 0) == 0);
}

void TestModelStore::resolveByPathAndUnknownId() {
    const ModelStore store(roots_);
    const auto entry = store.resolve(fixture("marian-tiny").string());
    QCOMPARE(entry.source, ModelSource::Path);
    try {
        store.resolve("no/such-model");
        QFAIL("resolved an unknown id");
    } catch (const Error& e) {
        QCOMPARE(e.category(), std::string("model_not_found"));
        QVERIFY(e.detail().find("no/such-model") != std::string::npos);
    }
}

void TestModelStore::changedFileIsReported_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<bool>("statNotices");
    QTest::newRow("truncated") << "truncate" << true;
    QTest::newRow("deleted") << "delete" << true;
    QTest::newRow("same size, new bytes") << "rewrite" << true;
}

void TestModelStore::changedFileIsReported() {
    QFETCH(QString, change);
    QFETCH(bool, statNotices);
    const fs::path model = fs::path(dir_->path().toStdString()) / "m";
    copyFolder(fixture("marian-tiny"), model);
    const ModelStore store(roots_);
    store.importModel(model, "m");
    const auto manifest = store.ensureManifest(store.resolve("m"));
    const auto weights = model / "model.safetensors";
    if (change == "truncate") {
        fs::resize_file(weights, fs::file_size(weights) - 100);
    } else if (change == "delete") {
        fs::remove(weights);
    } else {
        std::fstream f(weights, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-4, std::ios::end);
        f.write("\x01\x02\x03\x04", 4);
        f.close();
        fs::last_write_time(weights, fs::last_write_time(weights) + std::chrono::seconds(1));
    }
    const auto problems = statMismatches(manifest);
    QCOMPARE(!problems.empty(), statNotices);
    QVERIFY(problems.empty() || problems[0].find("model.safetensors") != std::string::npos);
    if (change == "rewrite") QCOMPARE(hashMismatches(manifest).size(), std::size_t(1));
}

namespace {

// What tools/train/install_default_model.sh writes: sha256sum's format for every file of the folder.
void writeShippedChecksums(const fs::path& model) {
    std::ofstream out(model / "SHA256SUMS", std::ios::trunc);
    for (const auto& f : fs::directory_iterator(model))
        if (f.path().filename() != "SHA256SUMS") out << sha256File(f.path()) << "  " << f.path().filename().string() << "\n";
}

void appendBytes(const fs::path& file, const char* bytes) {
    std::ofstream(file, std::ios::app | std::ios::binary) << bytes;
    fs::last_write_time(file, fs::last_write_time(file) + std::chrono::seconds(1));
}

}  // namespace

void TestModelStore::bundledModelFollowsItsShippedChecksums_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<QString>("expectedError");  // empty: accepted
    QTest::newRow("unchanged") << "none"
                               << "";
    QTest::newRow("updated with the application") << "update"
                                                  << "";
    QTest::newRow("damaged after install") << "damage"
                                           << "vocab.json: SHA-256";
    QTest::newRow("file missing") << "remove"
                                  << "vocab.json is missing";
}

void TestModelStore::bundledModelFollowsItsShippedChecksums() {
    // A bundled model is hashed at first sight and checked against the SHA256SUMS it ships with. When an
    // update of the application replaces it (new files, new checksums) it is hashed again, not refused;
    // a file that does not match what was shipped is an integrity error naming it.
    QFETCH(QString, change);
    QFETCH(QString, expectedError);
    const auto model = roots_.bundled.front() / "dragoman-test";
    copyFolder(fixture("marian-tiny"), model);
    writeShippedChecksums(model);
    const ModelStore store(roots_);
    const auto entry = store.resolve("dragoman-test");
    QCOMPARE(entry.source, ModelSource::Bundled);
    store.ensureManifest(entry);  // first sight
    if (change == "update") {
        appendBytes(model / "vocab.json", " ");
        writeShippedChecksums(model);
    } else if (change == "damage") {
        appendBytes(model / "vocab.json", " ");
    } else if (change == "remove") {
        fs::remove(model / "vocab.json");
    }
    try {
        const auto manifest = store.ensureManifest(store.resolve("dragoman-test"));
        QVERIFY2(expectedError.isEmpty(), "accepted a bundled model that does not match its checksums");
        QVERIFY(statMismatches(manifest).empty());
        QVERIFY(statMismatches(store.ensureManifest(store.resolve("dragoman-test"))).empty());  // recorded
    } catch (const Error& e) {
        QVERIFY2(!expectedError.isEmpty(), e.what());
        QCOMPARE(e.category(), std::string("integrity"));
        QVERIFY2(QString(e.what()).contains(expectedError), e.what());
    }
}

// A manifest damaged on disk (truncated by a crash of another tool, overwritten, emptied): never a crash. The
// import stays listed while the manifest still names its folder, and the next load hashes the files again and
// writes a whole manifest.
void TestModelStore::damagedManifestIsRebuilt_data() {
    QTest::addColumn<int>("keep");  // bytes of the manifest kept; -1: replaced by garbage
    QTest::addColumn<bool>("stillListed");
    QTest::newRow("truncated after the folder") << 200 << true;
    QTest::newRow("truncated inside the files") << 400 << true;
    QTest::newRow("truncated inside the id") << 12 << false;
    QTest::newRow("empty") << 0 << false;
    QTest::newRow("garbage") << -1 << false;
}

void TestModelStore::damagedManifestIsRebuilt() {
    QFETCH(int, keep);
    QFETCH(bool, stillListed);
    const fs::path model = fs::path(dir_->path().toStdString()) / "elsewhere" / "marian";
    copyFolder(fixture("marian-tiny"), model);
    const ModelStore store(roots_);
    const auto path = store.manifestPath(store.importModel(model, "my/marian"));
    const auto before = readManifest(path);
    if (keep >= 0) {
        QVERIFY(static_cast<std::uintmax_t>(keep) < fs::file_size(path));
        fs::resize_file(path, static_cast<std::uintmax_t>(keep));
    } else {
        std::ofstream(path, std::ios::trunc) << "\x89PNG not a manifest {\"id\": 3";
    }
    QVERIFY_THROWS_EXCEPTION(Error, readManifest(path));

    const auto listed = store.list();
    QCOMPARE(listed.size(), std::size_t(stillListed ? 1 : 0));
    if (!stillListed) return;
    QCOMPARE(listed[0].dir, model);
    const auto rebuilt = store.ensureUnchanged(store.resolve("my/marian"));
    QCOMPARE(rebuilt.files.size(), before.files.size());
    for (std::size_t i = 0; i < before.files.size(); ++i)
        QCOMPARE(rebuilt.files[i].sha256, before.files[i].sha256);
    QCOMPARE(readManifest(path).files.size(), before.files.size());  // whole again on disk
}

void TestModelStore::manifestWriteLeavesNoTemporary() {
    const fs::path model = fs::path(dir_->path().toStdString()) / "elsewhere" / "marian";
    copyFolder(fixture("marian-tiny"), model);
    const ModelStore store(roots_);
    const auto path = store.manifestPath(store.importModel(model, "my/marian"));
    std::vector<std::string> names;
    for (const auto& f : fs::directory_iterator(path.parent_path()))
        names.push_back(f.path().filename().string());
    QCOMPARE(names, std::vector<std::string>{path.filename().string()});
    // Written again over the old one: still one file, the new record.
    writeManifest(path, buildManifest("my/marian", model));
    QCOMPARE(std::distance(fs::directory_iterator(path.parent_path()), fs::directory_iterator()), 1);
    QCOMPARE(readManifest(path).id, std::string("my/marian"));
}

QTEST_GUILESS_MAIN(TestModelStore)
void TestModelStore::quantizationIsNamed_data() {
    QTest::addColumn<QString>("activations");  // an int8 checkpoint's input_activations, as JSON
    QTest::addColumn<QString>("named");        // what the listing says
    QTest::newRow("weights only") << "null"
                                  << "int8";
    QTest::newRow("W8A8") << R"({"num_bits": 8, "type": "int", "symmetric": true, "dynamic": true, "strategy": "token"})"
                          << "w8a8";
    QTest::newRow("static activations") << R"({"num_bits": 8, "type": "int", "dynamic": false, "strategy": "tensor"})"
                                        << "int8";
    QTest::newRow("asymmetric") << R"({"num_bits": 8, "type": "int", "symmetric": false, "dynamic": true, "strategy": "token"})"
                                << "int8";
    QTest::newRow("fields of other types") << R"({"num_bits": "8", "type": 3, "dynamic": "yes", "strategy": ["token"]})"
                                           << "int8";
}

// The listing names what the engine computes ("w8a8": int8 activations per token as well), never throwing on a
// config whose fields have unexpected types.
void TestModelStore::quantizationIsNamed() {
    QFETCH(QString, activations);
    QFETCH(QString, named);
    const fs::path model = fs::path(dir_->path().toStdString()) / "quantized";
    copyFolder(fixture("quant/marian-tiny.int8-channel"), model);
    auto config = nlohmann::json::parse(std::ifstream(model / "config.json"));
    config["quantization_config"]["config_groups"]["group_0"]["input_activations"] = nlohmann::json::parse(activations.toStdString());
    std::ofstream(model / "config.json") << config.dump(2);
    const auto entry = describeModelFolder(model, "quantized", ModelSource::Imported);
    QVERIFY(entry);
    QCOMPARE(QString::fromStdString(entry->quantization), named);
}

#include "tst_model_store.moc"
