// The model store: our cache, imported folders, a Hugging Face hub cache layout, and manifests that are
// hashed once and checked with stat afterwards.
#include "store/model_store.h"
#include "test_files.h"
#include "util/error.h"
#include "util/sha256.h"

#include <QTemporaryDir>
#include <QTest>

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
    const auto weights = std::find_if(manifest.files.begin(), manifest.files.end(),
                                      [](const auto& f) { return f.name == "model.safetensors"; });
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
    for (const auto& f : manifest.files) QCOMPARE(f.hashSource, std::string("hub-blob"));
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

QTEST_GUILESS_MAIN(TestModelStore)
#include "tst_model_store.moc"
