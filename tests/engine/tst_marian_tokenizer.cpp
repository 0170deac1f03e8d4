// MarianTokenizer against the golden fixture (tests/fixtures/marian-tiny/expected.json): source ids exact,
// and decoded text exact for the references' targets and decodes.
#include "text/marian_tokenizer.h"
#include "util/error.h"
#include "util/paths.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace dragoman;
Q_DECLARE_METATYPE(std::vector<dragoman::TokenId>)

namespace {

const std::string kDir = DRAGOMAN_TEST_FIXTURES "/marian-tiny";

nlohmann::json expected() {
    std::ifstream in(kDir + "/expected.json");
    auto json = nlohmann::json::parse(in);
    if (!json.contains("cases") || json["cases"].empty()) qFatal("expected.json has no cases");
    return json;
}

}  // namespace

class TestMarianTokenizer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void encodeMatchesReference_data();
    void encodeMatchesReference();
    void decodeMatchesReference_data();
    void decodeMatchesReference();
    void keepSpecialShowsTokens();
    void encodeTextTakesNoLanguageCode();
    void outOfVocabularyIdIsAnError();
    void missingFilesAreReported();
    void languageTokensFromTheVocabularyAlone();
    void ownLibrariesAreLookedForBesideTheProgram();
    void ownLibraryOpensWithItsEntryPointsOrSaysWhy();
    void firstLibraryGoesOnPastOneWithoutTheEntryPoints();

private:
    std::unique_ptr<MarianTokenizer> tokenizer_;
};

void TestMarianTokenizer::initTestCase() {
    tokenizer_ = std::make_unique<MarianTokenizer>(kDir);
}

void TestMarianTokenizer::encodeMatchesReference_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("ids");
    const auto json = expected();  // kept alive: the loop iterates into it
    for (const auto& c : json.at("cases")) {
        std::string ids;
        for (const auto& id : c.at("source_ids"))
            ids += (ids.empty() ? "" : ",") + std::to_string(id.get<long>());
        QTest::newRow(c.at("name").get<std::string>().c_str())
            << QString::fromStdString(c.at("source_text")) << QString::fromStdString(ids);
    }
}

void TestMarianTokenizer::encodeMatchesReference() {
    QFETCH(QString, text);
    QFETCH(QString, ids);
    std::string got;
    for (auto id : tokenizer_->encode(text.toStdString()))
        got += (got.empty() ? "" : ",") + std::to_string(id);
    QCOMPARE(QString::fromStdString(got), ids);
}

void TestMarianTokenizer::decodeMatchesReference_data() {
    QTest::addColumn<std::vector<TokenId>>("ids");
    QTest::addColumn<QString>("text");
    const auto json = expected();  // kept alive: the loop iterates into it
    for (const auto& c : json.at("cases")) {
        const auto name = c.at("name").get<std::string>();
        const auto& tf = c.at("teacher_forcing");
        const auto labels = tf.at("labels").get<std::vector<TokenId>>();
        // A target with <unk> pieces cannot decode back to its original text; the decodes below cover <unk>.
        if (std::find(labels.begin(), labels.end(), 1) == labels.end())
            QTest::newRow((name + "/target").c_str()) << labels << QString::fromStdString(tf.at("target_text"));
        for (const char* decode : {"greedy", "greedy_hf_processors", "beam", "beam_hf_processors"}) {
            const auto& d = c.at(decode);
            QTest::newRow((name + "/" + decode).c_str())
                << d.at("generated_ids").get<std::vector<TokenId>>() << QString::fromStdString(d.at("text"));
        }
    }
}

void TestMarianTokenizer::decodeMatchesReference() {
    QFETCH(std::vector<TokenId>, ids);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(tokenizer_->decode(ids)), text);
}

void TestMarianTokenizer::keepSpecialShowsTokens() {
    const auto ids = tokenizer_->encode("Hi");
    QCOMPARE(QString::fromStdString(tokenizer_->decode(ids, false)), QStringLiteral("Hi</s>"));
}

void TestMarianTokenizer::encodeTextTakesNoLanguageCode() {
    // encode() reads ">>" ... "<<" at the start as one language code, greedily, as transformers does; text a user
    // wrote ("click >> or <<") must keep every word: encodeText() takes none of it for a code.
    const std::string text = ">> quoted << words";
    const auto coded = tokenizer_->encode(text);
    const auto plain = tokenizer_->encodeText(text);
    QCOMPARE(coded.front(), *tokenizer_->idOf("<unk>"));  // ">> quoted <<" as one unknown code
    QVERIFY2(plain.size() > coded.size(), "encodeText lost words");
    QCOMPARE(plain.back(), tokenizer_->eosId());
    for (const char* ordinary : {"Hi there", "a << b", "x >> y"})  // no leading ">>": the two agree
        QCOMPARE(tokenizer_->encodeText(ordinary), tokenizer_->encode(ordinary));
}

void TestMarianTokenizer::outOfVocabularyIdIsAnError() {
    QVERIFY_THROWS_EXCEPTION(Error, tokenizer_->decode({5, 100000}));
}

void TestMarianTokenizer::missingFilesAreReported() {
    try {
        MarianTokenizer tokenizer(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny");
        QFAIL("loaded without source.spm");
    } catch (const Error& e) {
        QCOMPARE(e.category(), std::string("tokenizer"));
        QVERIFY(e.detail().find("source.spm") != std::string::npos);
    }
}

// A folder's language tokens as listed without loading its sentencepiece models: those of the loaded tokenizer, in its
// order, where an id given twice keeps its last piece; a vocabulary the tokenizer refuses is refused alike.
void TestMarianTokenizer::languageTokensFromTheVocabularyAlone() {
    QTemporaryDir dir;
    const std::filesystem::path folder = dir.path().toStdString();
    for (const char* file : {"source.spm", "target.spm"})
        std::filesystem::copy_file(std::filesystem::path(kDir) / file, folder / file);
    auto vocab = nlohmann::json::parse(std::ifstream(kDir + "/vocab.json"));
    const auto size = static_cast<int>(vocab.size());
    vocab[">>zho<<"] = size;
    vocab[">>fra<<"] = size + 2;
    vocab[">>deu<<"] = size + 1;
    vocab[">>xx<<"] = 3;  // an id an ordinary piece holds too (whichever comes last in the file wins, as in the table)
    vocab["<<>>"] = size + 3;
    std::ofstream(folder / "vocab.json") << vocab.dump();
    const MarianTokenizer loaded(folder);
    QCOMPARE(MarianTokenizer::languageTokensIn(folder), loaded.languageTokens());
    QVERIFY(loaded.languageTokens().size() >= 3);
    std::ofstream(folder / "vocab.json") << R"({"<unk>": 1, "</s>": 0, ">>deu<<": "two"})";
    QVERIFY_THROWS_EXCEPTION(Error, MarianTokenizer::languageTokensIn(folder));
    std::filesystem::remove(folder / "vocab.json");
    QVERIFY_THROWS_EXCEPTION(Error, MarianTokenizer::languageTokensIn(folder));
}

// libdragoman_spm.so (and the PDF and developer-command libraries) are looked for beside the program, then in
// lib/dragoman above it (an installed tree, a build's lib/), then where the build put them.
void TestMarianTokenizer::ownLibrariesAreLookedForBesideTheProgram() {
    const auto program = std::filesystem::read_symlink("/proc/self/exe").parent_path();
    const std::vector<std::filesystem::path> withBuild{program / "libx.so", program.parent_path() / "lib" / "dragoman" / "libx.so",
                                                       "/build/libx.so"};
    QCOMPARE(paths::ownLibraryCandidates("libx.so", "/build/libx.so"), withBuild);
    QCOMPARE(paths::ownLibraryCandidates("libx.so"), std::vector<std::filesystem::path>(withBuild.begin(), withBuild.end() - 1));
}

// The first candidate that exists, loads and has every entry point gives their addresses; otherwise the reason: none
// installed, or what the one found lacks.
void TestMarianTokenizer::ownLibraryOpensWithItsEntryPointsOrSaysWhy() {
    Dl_info libm{};  // a library no sanitizer stands in for
    QVERIFY(::dladdr(reinterpret_cast<const void*>(&::cbrt), &libm) && libm.dli_fname);
    std::string why;
    const auto found = paths::openOwnLibrary("libdragoman_nothing.so", libm.dli_fname, {"cbrt", "hypot"}, why);
    QCOMPARE(found.size(), std::size_t(2));
    QCOMPARE(found[0], reinterpret_cast<void*>(&::cbrt));
    QVERIFY(paths::openOwnLibrary("libdragoman_nothing.so", {}, {"cbrt"}, why).empty());
    QCOMPARE(why, std::string(": not installed"));
    QVERIFY(paths::openOwnLibrary("libdragoman_nothing.so", libm.dli_fname, {"cbrt", "dragoman_no_such_entry"}, why).empty());
    QVERIFY2(why.find(std::string(libm.dli_fname) + " lacks its entry points") != std::string::npos, why.c_str());
}

// libdragoman_spm.so's loader passes its own candidates (the environment's override first) and opener (deep binding,
// or a link namespace of its own under the sanitizers): a candidate without the entry points is passed over for the
// next, and an opener that fails without a dlerror() text still gets a reason.
void TestMarianTokenizer::firstLibraryGoesOnPastOneWithoutTheEntryPoints() {
    Dl_info libm{}, libc{};
    QVERIFY(::dladdr(reinterpret_cast<const void*>(&::cbrt), &libm) && libm.dli_fname);
    QVERIFY(::dladdr(reinterpret_cast<const void*>(&::getpid), &libc) && libc.dli_fname);  // no sanitizer stands in for it
    // The candidate without the entry point must be a library of its own: the program's handle would find cbrt in the
    // libraries it loaded.
    if (std::filesystem::equivalent(libc.dli_fname, "/proc/self/exe")) QSKIP("getpid() resolves into the program here");
    static int opened = 0;
    opened = 0;
    const auto counting = [](const std::filesystem::path& path) -> void* {
        ++opened;
        return ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    };
    std::string why;
    const auto found = paths::openFirstLibrary({"/nonexistent/libx.so", libc.dli_fname, libm.dli_fname}, {"cbrt"}, why, counting);
    QCOMPARE(found.size(), std::size_t(1));
    QCOMPARE(found[0], reinterpret_cast<void*>(&::cbrt));
    QCOMPARE(opened, 2);  // the missing file is not opened at all

    const auto refusing = [](const std::filesystem::path&) -> void* { return nullptr; };
    QVERIFY(paths::openFirstLibrary({libc.dli_fname, libm.dli_fname}, {"cbrt"}, why, refusing).empty());
    QVERIFY2(why.find(std::string(libm.dli_fname) + ": cannot be opened") != std::string::npos, why.c_str());
    QVERIFY2(why.find(std::string(libc.dli_fname) + ": cannot be opened") != std::string::npos, why.c_str());
}

QTEST_GUILESS_MAIN(TestMarianTokenizer)
#include "tst_marian_tokenizer.moc"
