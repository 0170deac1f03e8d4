// Byte-level BPE from tokenizer.json (tests/fixtures/hunyuan-tiny): every encode case exact (ids, and the
// decode round trip with and without special tokens), the decode cases that cut UTF-8 (U+FFFD), the
// streaming detokenizer on CJK and emoji, and clear errors for bad input and unsupported files.
#include "test_files.h"
#include "text/bpe_tokenizer.h"
#include "text/streaming_detokenizer.h"
#include "util/error.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

using namespace dragoman;

namespace {

const std::filesystem::path kDir = test::fixture("hunyuan-tiny");

nlohmann::json cases() {
    std::ifstream in(kDir / "tokenizer_cases.json");
    return nlohmann::json::parse(in);
}

QString rowName(const std::string& text, std::size_t index) {
    return QString::number(index) + ": " + QString::fromStdString(text).left(40);
}

}  // namespace

class TestBpeTokenizer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { tokenizer_ = std::make_unique<BpeTokenizer>(kDir / "tokenizer.json"); }
    // Tests that point the model cache at their own temporary folder put CTest's back afterwards: later tests
    // would otherwise write compiled tokenizers into a deleted folder's path, recreating it under /tmp.
    void cleanup() { qputenv("DRAGOMAN_MODELS", models_); }
    void encodes_data();
    void encodes();
    void decodesCutUtf8_data();
    void decodesCutUtf8();
    void streamsCjkAndEmojiWithoutBrokenCharacters_data();
    void streamsCjkAndEmojiWithoutBrokenCharacters();
    void specialTokensAreKnown();
    void invalidUtf8IsAnInputError();
    void compiledCacheGivesTheSameTokenizer_data();
    void compiledCacheGivesTheSameTokenizer();
    void addedTokenOptions_data();
    void addedTokenOptions();
    void unsupportedFilesAreNamed_data();
    void unsupportedFilesAreNamed();

private:
    std::unique_ptr<BpeTokenizer> tokenizer_;
    const QByteArray models_ = qgetenv("DRAGOMAN_MODELS");
};

void TestBpeTokenizer::encodes_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("ids");
    QTest::addColumn<QString>("decodedSkip");
    const auto all = cases()["cases"];
    QVERIFY(all.size() >= 40);
    for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& c = all[i];
        QTest::newRow(qPrintable(rowName(c["text"], i))) << QString::fromStdString(c["text"]) << QString::fromStdString(c["ids"].dump())
                                                         << QString::fromStdString(c["decoded_skip_special"]);
    }
}

void TestBpeTokenizer::encodes() {
    QFETCH(QString, text);
    QFETCH(QString, ids);
    QFETCH(QString, decodedSkip);
    const auto expected = nlohmann::json::parse(ids.toStdString()).get<std::vector<TokenId>>();
    const auto got = tokenizer_->encode(text.toStdString());
    QCOMPARE(nlohmann::json(got).dump(), nlohmann::json(expected).dump());
    QCOMPARE(QString::fromStdString(tokenizer_->decode(got, false)), text);
    QCOMPARE(QString::fromStdString(tokenizer_->decode(got, true)), decodedSkip);
}

void TestBpeTokenizer::decodesCutUtf8_data() {
    QTest::addColumn<QString>("ids");
    QTest::addColumn<QString>("decoded");
    QTest::addColumn<QString>("decodedSkip");
    const auto all = cases();  // kept alive: a range-for over a temporary's member would dangle
    for (const auto& c : all["decode_cases"])
        QTest::newRow(c["note"].get<std::string>().c_str())
            << QString::fromStdString(c["ids"].dump()) << QString::fromStdString(c["decoded"])
            << QString::fromStdString(c["decoded_skip_special"]);
}

void TestBpeTokenizer::decodesCutUtf8() {
    QFETCH(QString, ids);
    QFETCH(QString, decoded);
    QFETCH(QString, decodedSkip);
    const auto list = nlohmann::json::parse(ids.toStdString()).get<std::vector<TokenId>>();
    QCOMPARE(QString::fromStdString(tokenizer_->decode(list, false)), decoded);
    QCOMPARE(QString::fromStdString(tokenizer_->decode(list, true)), decodedSkip);
}

void TestBpeTokenizer::streamsCjkAndEmojiWithoutBrokenCharacters_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("chinese") << QStringLiteral("你好，世界！今天天气很好。");
    QTest::newRow("emoji") << QStringLiteral("Party 🎉🎉 time 😀👍🏽 ok");
    QTest::newRow("mixed") << QStringLiteral("Straße 12345 你好，世界！😀 It's fine.");
    QTest::newRow("japanese") << QStringLiteral("こんにちは、カタカナ。");
}

void TestBpeTokenizer::streamsCjkAndEmojiWithoutBrokenCharacters() {
    QFETCH(QString, text);
    const auto ids = tokenizer_->encode(text.toStdString());
    StreamingDetokenizer stream(*tokenizer_);
    std::string joined;
    int deltas = 0;
    for (auto id : ids) {
        const auto delta = stream.push(id);
        QVERIFY2(delta.find("\xEF\xBF\xBD") == std::string::npos, "a delta contains U+FFFD");
        QVERIFY2(QString::fromUtf8(delta.data(), static_cast<int>(delta.size())).toUtf8().toStdString() == delta,
                 "a delta is not whole UTF-8");
        deltas += delta.empty() ? 0 : 1;
        joined += delta;
    }
    joined += stream.finish();
    QCOMPARE(QString::fromStdString(joined), QString::fromStdString(tokenizer_->decode(ids)));
    QCOMPARE(QString::fromStdString(joined), text);
    QVERIFY(deltas >= 3);  // it streamed, rather than holding everything back
}

void TestBpeTokenizer::specialTokensAreKnown() {
    // Every added token of tokenizer.json by its content, with its special flag; ids from the file, so the test
    // also runs on fixtures made with another seed or size ($DRAGOMAN_TEST_FIXTURES).
    std::ifstream in(kDir / "tokenizer.json");
    const auto json = nlohmann::json::parse(in);
    std::set<TokenId> ids;
    for (const auto& [piece, id] : json["model"]["vocab"].items())
        ids.insert(id.get<TokenId>());
    for (const auto& token : json["added_tokens"]) {
        const auto id = token["id"].get<TokenId>();
        const auto content = token["content"].get<std::string>();
        ids.insert(id);
        QCOMPARE(tokenizer_->idOf(content).value_or(-1), id);
        QCOMPARE(tokenizer_->tokenText(id).value_or(""), content);
        QCOMPARE(tokenizer_->isSpecial(id), token.value("special", false));
    }
    QVERIFY(tokenizer_->idOf("<｜hy_begin▁of▁sentence｜>").has_value());
    QVERIFY(tokenizer_->idOf("<｜hy_place▁holder▁no▁2｜>").has_value());
    QVERIFY(!tokenizer_->isSpecial(tokenizer_->encodePlain("A").front()));
    QCOMPARE(tokenizer_->vocabSize(), ids.size());
}

void TestBpeTokenizer::invalidUtf8IsAnInputError() {
    try {
        tokenizer_->encode("ok \xC3\x28 broken");
        QFAIL("invalid UTF-8 was accepted");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("input"));
        QVERIFY(QString::fromUtf8(e.what()).contains("UTF-8"));
    }
}

// The second load of a tokenizer.json comes from its compiled form; it must encode exactly like the first,
// and a damaged compiled file is ignored rather than trusted.
void TestBpeTokenizer::compiledCacheGivesTheSameTokenizer_data() {
    QTest::addColumn<bool>("rewritten");
    QTest::newRow("fixture") << false;
    // The same tokenizer with an NFKC normalizer and a template that puts the begin-of-sentence token first, written
    // with its fields in another order ("model" between others, not last).
    QTest::newRow("normalizer and template") << true;
}

void TestBpeTokenizer::compiledCacheGivesTheSameTokenizer() {
    QFETCH(bool, rewritten);
    QTemporaryDir dir;
    qputenv("DRAGOMAN_MODELS", QFile::encodeName(dir.path()));
    const auto json = std::filesystem::path(dir.path().toStdString()) / "tokenizer.json";
    if (rewritten) {
        std::ifstream in(kDir / "tokenizer.json");
        auto doc = nlohmann::json::parse(in);  // written back with its keys sorted
        doc["normalizer"] = {{"type", "NFKC"}};
        const std::string bos = doc["added_tokens"][0]["content"];
        const int bosId = doc["added_tokens"][0]["id"];
        doc["post_processor"] = {
            {"type", "TemplateProcessing"},
            {"single", {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
            {"pair", nlohmann::json::array()},
            {"special_tokens", {{bos, {{"id", bos}, {"ids", {bosId}}, {"tokens", {bos}}}}}}};
        std::ofstream(json) << doc.dump(1);
    } else {
        std::filesystem::copy_file(kDir / "tokenizer.json", json);
    }
    const BpeTokenizer fromJson(json);
    const auto compiledDir = std::filesystem::path(dir.path().toStdString()) / ".compiled";
    QVERIFY(std::filesystem::exists(compiledDir) && !std::filesystem::is_empty(compiledDir));
    // From the cache only the rest of the JSON is parsed (added tokens, normalizer, pre-tokenizers, post-processor):
    // all of it must come through as the full parse reads it.
    const BpeTokenizer fromCache(json);
    QCOMPARE(fromCache.vocabSize(), fromJson.vocabSize());
    const auto all = cases();  // alive for the loop: a member of a temporary is not
    for (const auto& c : all["cases"]) {
        const auto text = c["text"].get<std::string>();
        const auto ids = fromJson.encode(text);
        QCOMPARE(nlohmann::json(fromCache.encode(text)).dump(), nlohmann::json(ids).dump());
        QCOMPARE(nlohmann::json(fromCache.encodePlain(text)).dump(), nlohmann::json(fromJson.encodePlain(text)).dump());
        QCOMPARE(fromCache.decode(ids, false), fromJson.decode(ids, false));
        QCOMPARE(fromCache.decode(ids, true), fromJson.decode(ids, true));
        for (const auto id : ids)
            QCOMPARE(fromCache.isSpecial(id), fromJson.isSpecial(id));
    }
    if (rewritten) {  // the rewritten fields are in force from the cache too
        QCOMPARE(fromCache.encode("a")[0], fromCache.encodePlain("<｜hy_begin▁of▁sentence｜>")[0]);
        QCOMPARE(nlohmann::json(fromCache.encodePlain("\uFB01x")).dump(), nlohmann::json(fromCache.encodePlain("fix")).dump());
    }
    // Damage anywhere (the header, the settings, the merge table, the last bytes) is noticed: the tokenizer is compiled
    // again from the JSON, never read from a file it would misread.
    std::vector<std::filesystem::path> files(std::filesystem::directory_iterator(compiledDir), {});
    QCOMPARE(files.size(), std::size_t{1});
    const auto size = static_cast<std::streamoff>(std::filesystem::file_size(files[0]));
    for (const std::streamoff at : {std::streamoff{40}, std::streamoff{70}, size / 2, size - 3}) {
        {
            std::fstream damage(files[0], std::ios::binary | std::ios::in | std::ios::out);
            damage.seekg(at);
            const char was = static_cast<char>(damage.get());
            damage.seekp(at);
            damage.put(static_cast<char>(was ^ 0x21));
        }
        const BpeTokenizer afterDamage(json);
        for (const auto& c : all["cases"]) {
            const auto text = c["text"].get<std::string>();
            QCOMPARE(nlohmann::json(afterDamage.encode(text)).dump(), nlohmann::json(fromJson.encode(text)).dump());
            QCOMPARE(afterDamage.decode(afterDamage.encode(text), false), fromJson.decode(fromJson.encode(text), false));
        }
        if (rewritten) QCOMPARE(afterDamage.encode("a")[0], fromCache.encode("a")[0]);
    }
}

// tokenizers' AddedToken options: lstrip/rstrip take the neighbouring whitespace, single_word matches only
// whole words. The fixture's <｜hy_User｜> is given each option in turn.
void TestBpeTokenizer::addedTokenOptions_data() {
    QTest::addColumn<QString>("option");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("withOption");  // encodePlain(text) with the option == encodePlain(this) without it
    QTest::newRow("lstrip") << "lstrip"
                            << "A  <｜hy_User｜>B"
                            << "A<｜hy_User｜>B";
    QTest::newRow("rstrip") << "rstrip"
                            << "A<｜hy_User｜>  B"
                            << "A<｜hy_User｜>B";
    QTest::newRow("single_word inside a word") << "single_word"
                                               << "x<｜hy_User｜>y"
                                               << "";
    QTest::newRow("single_word alone") << "single_word"
                                       << "x <｜hy_User｜> y"
                                       << "x <｜hy_User｜> y";
}

void TestBpeTokenizer::addedTokenOptions() {
    QFETCH(QString, option);
    QFETCH(QString, text);
    QFETCH(QString, withOption);
    QTemporaryDir dir;
    qputenv("DRAGOMAN_MODELS", QFile::encodeName(dir.path()));
    std::ifstream in(kDir / "tokenizer.json");
    auto json = nlohmann::json::parse(in);
    const auto user = tokenizer_->idOf("<｜hy_User｜>").value();
    for (auto& token : json["added_tokens"])
        if (token["id"] == user) token[option.toStdString()] = true;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "tokenizer.json";
    std::ofstream(path) << json.dump();
    const BpeTokenizer tokenizer(path);
    const auto got = tokenizer.encodePlain(text.toStdString());
    if (withOption.isEmpty()) {  // not split out: the token's id is not among the ids
        QVERIFY(std::find(got.begin(), got.end(), user) == got.end());
    } else {
        QCOMPARE(nlohmann::json(got).dump(), nlohmann::json(tokenizer_->encodePlain(withOption.toStdString())).dump());
    }
}

void TestBpeTokenizer::unsupportedFilesAreNamed_data() {
    QTest::addColumn<QString>("edit");  // JSON pointer = value to replace, as "pointer|json"
    QTest::addColumn<QString>("message");
    QTest::newRow("wordpiece") << "/model/type|\"WordPiece\""
                               << "WordPiece";
    QTest::newRow("metaspace") << "/pre_tokenizer|{\"type\":\"Metaspace\"}"
                               << "Metaspace";
    QTest::newRow("bad regex") << "/pre_tokenizer/pretokenizers/0/pattern/Regex|\"(unclosed\""
                               << "regex";
    QTest::newRow("unknown merge side") << "/model/merges/0|\"zz@@ qq@@\""
                                        << "merge";
    QTest::newRow("not json") << ""
                              << "JSON";
}

void TestBpeTokenizer::unsupportedFilesAreNamed() {
    QFETCH(QString, edit);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "tokenizer.json";
    if (edit.isEmpty()) {
        std::ofstream(path) << "{ this is not json";
    } else {
        std::ifstream in(kDir / "tokenizer.json");
        auto json = nlohmann::json::parse(in);
        const auto parts = edit.split('|');
        json[nlohmann::json::json_pointer(parts[0].toStdString())] = nlohmann::json::parse(parts[1].toStdString());
        std::ofstream(path) << json.dump();
    }
    try {
        BpeTokenizer tokenizer(path);
        QFAIL("an unsupported tokenizer.json loaded");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("tokenizer"));
        QVERIFY2(QString::fromUtf8(e.what()).contains(message, Qt::CaseInsensitive), e.what());
        QVERIFY2(QString::fromUtf8(e.what()).contains("tokenizer.json"), "the error names the file");
    }
}

QTEST_GUILESS_MAIN(TestBpeTokenizer)
#include "tst_bpe_tokenizer.moc"
