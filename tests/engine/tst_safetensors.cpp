// The safetensors reader against every fixture of tests/fixtures/safetensors-bad, plus truncations and
// byte flips of the good files. Built twice: normally and under AddressSanitizer/UBSan (torch-free).
#include "fixture_cases.h"
#include "io/safetensors.h"
#include "io/safetensors_writer.h"
#include "util/error.h"
#include "util/sha256.h"

#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>
#include <fstream>
#include <iterator>

using namespace dragoman;
using dragoman::test::SafetensorsCase;

Q_DECLARE_METATYPE(SafetensorsCase)

namespace {

std::string toHex(std::span<const std::byte> bytes) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (auto b : bytes) {
        out += digits[static_cast<unsigned>(b) >> 4];
        out += digits[static_cast<unsigned>(b) & 15];
    }
    return out;
}

std::vector<std::byte> readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> bytes(chars.size());
    std::memcpy(bytes.data(), chars.data(), chars.size());
    return bytes;
}

// Parses a heap copy of exactly `size` bytes, so that any read past the end is caught by ASan.
// Returns the error category, or "ok".
std::string parseCopy(const std::vector<std::byte>& source, std::size_t size) {
    std::vector<std::byte> copy(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(size));
    try {
        auto header = parseSafetensorsHeader(copy, "copy");
        std::uint64_t touched = 0;
        for (const auto& t : header.tensors)  // read every byte the header points at
            for (std::uint64_t i = header.dataStart + t.begin; i < header.dataStart + t.end; ++i)
                touched += static_cast<std::uint8_t>(copy.at(i));
        (void)touched;
        return "ok";
    } catch (const Error& e) {
        return e.category();
    }
}

}  // namespace

class TestSafetensors : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fixtureCase_data();
    void fixtureCase();
    void allFixturesCovered();
    void metadataIsRead();
    void truncationsFailCleanly_data();
    void truncationsFailCleanly();
    void byteFlipsFailCleanly();
    void missingFileIsAnIoError();
    void writerRoundTrips_data();
    void writerRoundTrips();
    void writerLeavesNothingWhenAFillFails();
    void everyDtypeOfTheSpecification_data();
    void everyDtypeOfTheSpecification();
};

void TestSafetensors::fixtureCase_data() {
    QTest::addColumn<SafetensorsCase>("fixture");
    for (const auto& c : test::safetensorsCases())
        QTest::newRow(c.file.c_str()) << c;
}

void TestSafetensors::fixtureCase() {
    QFETCH(SafetensorsCase, fixture);
    const std::string path = test::fixturesDir() + "/safetensors-bad/" + fixture.file;
    if (fixture.expect == "error") {
        try {
            SafetensorsFile::open(path);
            QFAIL(("loaded a malformed file: " + fixture.note).c_str());
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.category()), QString::fromStdString(fixture.category));
            QVERIFY2(e.detail().find(fixture.file) != std::string::npos, e.what());  // names the file
        }
        return;
    }
    const auto file = SafetensorsFile::open(path);
    QCOMPARE(file->tensors().size(), fixture.tensors.size());
    for (const auto& expected : fixture.tensors) {
        const TensorInfo* t = file->find(expected.name);
        QVERIFY2(t, expected.name.c_str());
        QCOMPARE(std::string(dtypeName(t->dtype)), expected.dtype);
        QCOMPARE(t->shape, expected.shape);
        QCOMPARE(t->begin, expected.begin);
        QCOMPARE(t->end, expected.end);
        QCOMPARE(sha256Hex(file->bytes(*t)), expected.sha256);
        if (!expected.rawHex.empty()) QCOMPARE(toHex(file->bytes(*t)), expected.rawHex);
    }
}

void TestSafetensors::allFixturesCovered() {
    // 24 malformed + 4 valid files: none may be silently skipped.
    const auto cases = test::safetensorsCases();
    QCOMPARE(cases.size(), std::size_t(28));
    QCOMPARE(std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.expect == "ok"; }), 4);
}

void TestSafetensors::metadataIsRead() {
    const auto file = SafetensorsFile::open(test::fixturesDir() + "/safetensors-bad/good.safetensors");
    QCOMPARE(file->header().metadata.at("format"), std::string("pt"));
    QCOMPARE(file->header().metadata.at("note"), std::string("fixture"));
}

void TestSafetensors::truncationsFailCleanly_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("good") << "good.safetensors";
    QTest::newRow("unpadded") << "good_unpadded_reordered.safetensors";
}

void TestSafetensors::truncationsFailCleanly() {
    QFETCH(QString, file);
    const auto bytes = readAll(test::fixturesDir() + "/safetensors-bad/" + file.toStdString());
    QVERIFY(bytes.size() > 100);
    QCOMPARE(parseCopy(bytes, bytes.size()), std::string("ok"));
    for (std::size_t size = 0; size < bytes.size(); ++size) {
        const auto outcome = parseCopy(bytes, size);
        QVERIFY2(outcome != "ok", ("a truncated file loaded at size " + std::to_string(size)).c_str());
    }
}

void TestSafetensors::byteFlipsFailCleanly() {
    // Every single-byte corruption of the header either still parses consistently or fails with a category;
    // under ASan this shows no flip makes the reader touch memory outside the file.
    const auto bytes = readAll(test::fixturesDir() + "/safetensors-bad/good.safetensors");
    int failures = 0;
    const std::size_t headerEnd = std::min<std::size_t>(bytes.size(), 8 + 400);
    for (std::size_t i = 0; i < headerEnd; ++i) {
        for (std::uint8_t value : {std::uint8_t{0x00}, std::uint8_t{0xff}, std::uint8_t{'9'}, std::uint8_t{'"'}}) {
            auto copy = bytes;
            copy[i] = std::byte{value};
            if (parseCopy(copy, copy.size()) != "ok") ++failures;
        }
    }
    QVERIFY(failures > 100);
}

void TestSafetensors::missingFileIsAnIoError() {
    try {
        SafetensorsFile::open("/nonexistent/model.safetensors");
        QFAIL("opened a missing file");
    } catch (const Error& e) {
        QCOMPARE(e.category(), std::string("io"));
        QVERIFY(e.detail().find("/nonexistent/model.safetensors") != std::string::npos);
    }
}

// The writer stages its output in 8 MiB buffers; a tensor whose elements sit at positions that are not a
// multiple of their size (after a bf16 tensor of odd length) has an element straddling each boundary.
void TestSafetensors::writerRoundTrips_data() {
    QTest::addColumn<QString>("firstDtype");
    QTest::addColumn<qint64>("firstCount");
    QTest::addColumn<QString>("bigDtype");
    QTest::addColumn<qint64>("bigCount");
    QTest::newRow("small") << "BF16" << qint64(3) << "F32" << qint64(5);
    QTest::newRow("f32 straddles 8 MiB") << "BF16" << qint64(3) << "F32" << qint64(5'000'001);
    QTest::newRow("f64 straddles 8 and 16 MiB") << "BF16" << qint64(1) << "F64" << qint64(2'500'003);
    QTest::newRow("aligned, exactly 8 MiB of data") << "F32" << qint64(2) << "U8" << qint64((8 << 20) - 8);
}

void TestSafetensors::writerRoundTrips() {
    QFETCH(QString, firstDtype);
    QFETCH(qint64, firstCount);
    QFETCH(QString, bigDtype);
    QFETCH(qint64, bigCount);
    // Byte i of tensor t is a hash of (t, i): any misplaced or duplicated byte changes the content.
    auto byteAt = [](int tensor, std::uint64_t i) { return std::byte(((i * 2654435761u) >> 7) + tensor * 29); };
    bool wholeElements = true;
    SafetensorsWriter writer;
    const std::pair<DType, std::int64_t> specs[] = {{*dtypeFromName(firstDtype.toStdString()), firstCount},
                                                    {*dtypeFromName(bigDtype.toStdString()), bigCount}};
    for (int t = 0; t < 2; ++t) {
        const auto width = dtypeSize(specs[t].first);
        writer.add("t" + std::to_string(t), specs[t].first, {specs[t].second},
                   [&, t, width](std::span<std::byte> out, std::uint64_t offset) {
                       wholeElements = wholeElements && offset % width == 0 && out.size() % width == 0;
                       for (std::size_t i = 0; i < out.size(); ++i)
                           out[i] = byteAt(t, offset + i);
                   });
    }
    QTemporaryDir dir;
    const std::filesystem::path path = dir.filePath("w.safetensors").toStdString();
    writer.write(path);
    QVERIFY2(wholeElements, "fill() was called on a partial element");
    const auto file = SafetensorsFile::open(path);
    QCOMPARE(file->tensors().size(), std::size_t(2));
    // The data starts on a 64-byte line of the file (and of its mapping): the kernels read weights by whole lines.
    QCOMPARE(reinterpret_cast<std::uintptr_t>(file->bytes(file->tensors()[0]).data()) % 64, std::uintptr_t(0));
    for (int t = 0; t < 2; ++t) {
        const auto& info = file->tensors()[t];
        QCOMPARE(info.name, "t" + std::to_string(t));
        const auto bytes = file->bytes(info);
        QCOMPARE(bytes.size(), dtypeSize(specs[t].first) * static_cast<std::size_t>(specs[t].second));
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < bytes.size(); ++i)
            wrong += bytes[i] != byteAt(t, i);
        QCOMPARE(wrong, std::size_t(0));
    }
    QVERIFY(!std::filesystem::exists(path.string() + ".part" + std::to_string(::getpid())));
}

void TestSafetensors::writerLeavesNothingWhenAFillFails() {
    SafetensorsWriter writer;
    writer.add("ok", DType::F32, {4}, [](std::span<std::byte> out, std::uint64_t) { std::memset(out.data(), 0, out.size()); });
    writer.add("bad", DType::F32, {4}, [](std::span<std::byte>, std::uint64_t) { throw std::runtime_error("source vanished"); });
    QTemporaryDir dir;
    const std::filesystem::path path = dir.filePath("w.safetensors").toStdString();
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, writer.write(path));
    QVERIFY(std::filesystem::is_empty(dir.path().toStdString()));  // neither the file nor its temporary
}

void TestSafetensors::everyDtypeOfTheSpecification_data() {
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<qint64>("count");
    QTest::addColumn<qint64>("bytes");  // -1: refused (elements that do not fill whole bytes)
    QTest::newRow("F8_E4M3") << "F8_E4M3" << qint64(3) << qint64(3);
    QTest::newRow("F8_E5M2") << "F8_E5M2" << qint64(3) << qint64(3);
    QTest::newRow("F8_E8M0") << "F8_E8M0" << qint64(2) << qint64(2);
    QTest::newRow("I16") << "I16" << qint64(3) << qint64(6);
    QTest::newRow("U16") << "U16" << qint64(3) << qint64(6);
    QTest::newRow("U32") << "U32" << qint64(2) << qint64(8);
    QTest::newRow("U64") << "U64" << qint64(2) << qint64(16);
    QTest::newRow("F6_E2M3, whole bytes") << "F6_E2M3" << qint64(4) << qint64(3);
    QTest::newRow("F6_E3M2, partial byte") << "F6_E3M2" << qint64(3) << qint64(-1);
    QTest::newRow("F4, whole bytes") << "F4" << qint64(6) << qint64(3);
    QTest::newRow("F4, partial byte") << "F4" << qint64(3) << qint64(-1);
}

// Every dtype of the format's specification is read (inspect lists what a quantized release holds); sub-byte
// types must fill whole bytes, as the reference reader requires.
void TestSafetensors::everyDtypeOfTheSpecification() {
    QFETCH(QString, dtype);
    QFETCH(qint64, count);
    QFETCH(qint64, bytes);
    const auto span = bytes < 0 ? (count * static_cast<qint64>(dtypeBits(*dtypeFromName(dtype.toStdString()))) + 7) / 8 : bytes;
    std::string header = R"({"t":{"dtype":")" + dtype.toStdString() + R"(","shape":[)" + std::to_string(count) + R"(],"data_offsets":[0,)" +
                         std::to_string(span) + "]}}";
    header.append((8 - header.size() % 8) % 8, ' ');
    QTemporaryDir dir;
    const std::filesystem::path path = dir.filePath("t.safetensors").toStdString();
    {
        std::ofstream out(path, std::ios::binary);
        const std::uint64_t length = header.size();
        out.write(reinterpret_cast<const char*>(&length), 8);
        out << header << std::string(static_cast<std::size_t>(span), '\x11');
    }
    try {
        const auto file = SafetensorsFile::open(path);
        QVERIFY2(bytes >= 0, "a partial byte was accepted");
        QCOMPARE(dtypeName(file->tensors()[0].dtype), std::string_view(dtype.toStdString()));
        QCOMPARE(static_cast<qint64>(file->tensors()[0].nbytes()), bytes);
    } catch (const Error& e) {
        QVERIFY2(bytes < 0, e.what());
        QVERIFY2(e.detail().find("do not fill whole bytes") != std::string::npos, e.what());
    }
}

QTEST_GUILESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
