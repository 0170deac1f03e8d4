// Languages: which one a text is written in (detectLanguage), what `from: auto` becomes for a model
// (sourceLanguageFor), and what a model folder offers without loading it (modelLanguages), which must be what the
// loaded model says.
#include "dragoman.h"
#include "text/sentence_splitter.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace dragoman;

Q_DECLARE_METATYPE(dragoman::ModelDescription)

namespace {

const std::filesystem::path kFixtures = DRAGOMAN_TEST_FIXTURES;
const std::filesystem::path kBundled = std::filesystem::path(DRAGOMAN_SOURCE_DIR) / "resources/models/dragoman-en-de-zh";

ModelDescription bilingual(const std::string& from, const std::string& to) {
    ModelDescription d;
    d.id = "opus-mt-" + from + "-" + to;
    d.fixedFrom = from;
    d.fixedTo = to;
    return d;
}

ModelDescription multilingual(std::vector<std::string> targets, bool prompts) {
    ModelDescription d;
    d.id = prompts ? "HY-MT1.5-1.8B" : "opus-mt-en-de-zh";
    d.targetLanguages = std::move(targets);
    d.prompts = prompts;
    if (!prompts) d.fixedFrom = d.fixedTo = "mul";
    return d;
}

}  // namespace

class TestLanguages : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void detectsTheLanguage_data();
    void detectsTheLanguage();
    void tellsNothingFromTooLittle_data();
    void tellsNothingFromTooLittle();
    void detectsLongAndBrokenText();
    void splitsSentences_data();
    void splitsSentences();
    void splitsSentencesOnManyThreads();
    void sourceForAModel_data();
    void sourceForAModel();
    void folderLanguagesAreTheLoadedModels_data();
    void folderLanguagesAreTheLoadedModels();
    void folderWithoutTokenizerOffersNothing();
};

// `sure`: CLD2 on the words; not sure: a few words, or the script alone (Cyrillic and Arabic letters that only
// some of their languages use; Hebrew, Tibetan, Hangul, kana: one language of ours each).
void TestLanguages::detectsTheLanguage_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("code");
    QTest::addColumn<bool>("sure");
    QTest::newRow("English") << "The committee will publish its report on the new railway next spring."
                             << "en" << true;
    QTest::newRow("German") << "Der Ausschuss veröffentlicht seinen Bericht über die neue Bahnstrecke im nächsten Frühjahr."
                            << "de" << true;
    QTest::newRow("French") << "Le comité publiera son rapport sur la nouvelle ligne ferroviaire au printemps prochain."
                            << "fr" << true;
    QTest::newRow("Spanish") << "El comité publicará su informe sobre la nueva línea ferroviaria la próxima primavera."
                             << "es" << true;
    QTest::newRow("Simplified Chinese") << "委员会将于明年春天发布关于新铁路线的报告。"
                                        << "zh" << true;
    QTest::newRow("Traditional Chinese") << "委員會將於明年春天發佈關於新鐵路線的報告，我們會繼續關注。"
                                         << "zh-Hant" << true;
    QTest::newRow("Japanese") << "委員会は来年の春に新しい鉄道路線に関する報告書を発表します。"
                              << "ja" << true;
    QTest::newRow("Korean") << "위원회는 내년 봄에 새 철도 노선에 관한 보고서를 발표할 것입니다."
                            << "ko" << true;
    QTest::newRow("Russian") << "Комитет опубликует свой доклад о новой железной дороге следующей весной."
                             << "ru" << true;
    QTest::newRow("Ukrainian") << "Комітет опублікує свою доповідь про нову залізницю наступної весни."
                               << "uk" << true;
    QTest::newRow("Arabic") << "ستنشر اللجنة تقريرها عن خط السكك الحديدية الجديد في الربيع المقبل."
                            << "ar" << true;
    QTest::newRow("Persian") << "کمیته گزارش خود را درباره خط راه آهن جدید در بهار آینده منتشر خواهد کرد."
                             << "fa" << true;
    QTest::newRow("Hebrew (CLD2 says iw)") << "הוועדה תפרסם את הדוח שלה על קו הרכבת החדש באביב הבא."
                                           << "he" << true;
    QTest::newRow("Hindi") << "समिति अगले वसंत में नई रेल लाइन पर अपनी रिपोर्ट प्रकाशित करेगी।"
                           << "hi" << true;
    QTest::newRow("Thai") << "คณะกรรมการจะเผยแพร่รายงานเกี่ยวกับเส้นทางรถไฟสายใหม่ในฤดูใบไม้ผลิหน้า"
                          << "th" << true;
    QTest::newRow("Vietnamese") << "Ủy ban sẽ công bố báo cáo về tuyến đường sắt mới vào mùa xuân tới."
                                << "vi" << true;
    QTest::newRow("Turkish") << "Komite, yeni demiryolu hattı hakkındaki raporunu önümüzdeki bahar yayımlayacak."
                             << "tr" << true;
    QTest::newRow("Polish") << "Komisja opublikuje swój raport o nowej linii kolejowej przyszłej wiosny."
                            << "pl" << true;
    // Too short for CLD2: the script decides.
    QTest::newRow("Russian greeting (Cyrillic)") << "Привет, как дела?"
                                                 << "ru" << false;
    QTest::newRow("Arabic greeting") << "مرحبا كيف حالك"
                                     << "ar" << false;
    QTest::newRow("Hebrew greeting") << "שלום מה שלומך"
                                     << "he" << false;
    QTest::newRow("Tibetan greeting") << "བཀྲ་ཤིས་བདེ་ལེགས།"
                                      << "bo" << false;
    QTest::newRow("Uyghur greeting (its own letters)") << "ئەسسالامۇ ئەلەيكۇم"
                                                       << "ug" << false;
    QTest::newRow("Mongolian (ө, ү)") << "Өглөөний мэнд"
                                      << "mn" << false;
    QTest::newRow("a few Han characters") << "今天天气很好"
                                          << "zh" << false;
}

void TestLanguages::detectsTheLanguage() {
    QFETCH(QString, text);
    QFETCH(QString, code);
    QFETCH(bool, sure);
    const auto found = detectLanguage(text.toStdString());
    QVERIFY(found);
    QCOMPARE(QString::fromStdString(found->code), code);
    QCOMPARE(found->reliable, sure);
}

void TestLanguages::tellsNothingFromTooLittle_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("digits and punctuation") << QByteArray("12:30, 4.5 % (2026)");
    QTest::newRow("one Latin word") << QByteArray("Hello");
    QTest::newRow("invalid UTF-8 only") << QByteArray("\xff\xfe\xc3");
}

void TestLanguages::tellsNothingFromTooLittle() {
    QFETCH(QByteArray, text);
    QVERIFY(!detectLanguage(text.toStdString()));
}

// A document's worth of text is cut to what the detector needs (quickly); invalid UTF-8 is detected on the valid
// part before it, and never read past.
// splitSentences (text/sentence_splitter.h): ICU's sentence breaks for the source's locale, each sentence trimmed.
void TestLanguages::splitsSentences_data() {
    QTest::addColumn<QString>("paragraph");
    QTest::addColumn<QString>("locale");
    QTest::addColumn<QStringList>("sentences");
    QTest::newRow("two") << "Where is the station? The weather is nice today."
                         << "en" << QStringList{"Where is the station?", "The weather is nice today."};
    QTest::newRow("one, padded") << "  One sentence without a stop  "
                                 << "en" << QStringList{"One sentence without a stop"};
    QTest::newRow("blank") << " \t "
                           << "en" << QStringList{};
    QTest::newRow("empty") << ""
                           << "en" << QStringList{};
    QTest::newRow("german") << "Das ist gut. Wirklich? Ja!"
                            << "de" << QStringList{"Das ist gut.", "Wirklich?", "Ja!"};
    QTest::newRow("chinese") << "今天天气很好。我们去公园吧！"
                             << "zh" << QStringList{"今天天气很好。", "我们去公园吧！"};
    QTest::newRow("unknown locale") << "First. Second."
                                    << "xx-unknown" << QStringList{"First.", "Second."};
}

void TestLanguages::splitsSentences() {
    QFETCH(QString, paragraph);
    QFETCH(QString, locale);
    QFETCH(QStringList, sentences);
    // Twice, the second time after a paragraph of another locale: the thread's iterator is made again for it.
    for (int pass = 0; pass < 2; ++pass) {
        QStringList got;
        for (const auto& sentence : splitSentences(paragraph.toStdString(), locale.toStdString()))
            got << QString::fromStdString(sentence);
        QCOMPARE(got, sentences);
        QCOMPARE(splitSentences("A. B.", locale == "fr" ? "de" : "fr").size(), std::size_t{2});
    }
}

// Threads splitting at once, each alternating locales, get what one thread gets (each has its own iterator).
void TestLanguages::splitsSentencesOnManyThreads() {
    const std::vector<std::pair<std::string, std::string>> cases{{"Where is the station? The weather is nice today.", "en"},
                                                                 {"Das ist gut. Wirklich? Ja!", "de"},
                                                                 {"今天天气很好。我们去公园吧！", "zh"}};
    std::vector<std::vector<std::string>> expected;
    for (const auto& [text, locale] : cases)
        expected.push_back(splitSentences(text, locale));
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 300; ++i) {
                const auto c = static_cast<std::size_t>((i + t) % 3);
                if (splitSentences(cases[c].first, cases[c].second) != expected[c]) ++wrong;
            }
        });
    for (auto& thread : threads)
        thread.join();
    QCOMPARE(wrong.load(), 0);
    QCOMPARE(expected[2].size(), std::size_t{2});
}

void TestLanguages::detectsLongAndBrokenText() {
    std::string german;
    while (german.size() < 8 * 1024 * 1024)
        german += "Die Bibliothek öffnet am Montag wieder ihre Türen für alle Besucher. ";
    QElapsedTimer timer;
    timer.start();
    auto found = detectLanguage(german);
    QVERIFY(found);
    QCOMPARE(found->code, std::string("de"));
    QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));  // 64 KiB looked at, not 8 MiB
    found = detectLanguage(german.substr(0, 200) + "\xff\xfe" + "garbage after the break");
    QVERIFY(found);
    QCOMPARE(found->code, std::string("de"));
    // What comes after an invalid byte or a control character counts too (CLD2 alone would stop there).
    found = detectLanguage("\x01\xc2\x85\xef\xbf\xbe" + german.substr(0, 300));
    QVERIFY(found);
    QCOMPARE(found->code, std::string("de"));
    QVERIFY(found->reliable);
}

// `from` is what the model is asked for; `unreadable`: the text is plainly in a language it does not read.
void TestLanguages::sourceForAModel_data() {
    QTest::addColumn<ModelDescription>("model");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("from");
    QTest::addColumn<bool>("unreadable");
    QTest::addColumn<QString>("reason");  // part of it, where refused
    const QString french = "Le comité publiera son rapport sur la nouvelle ligne ferroviaire au printemps prochain.";
    const QString english = "The committee will publish its report on the new railway next spring.";
    const QString chinese = "委员会将于明年春天发布关于新铁路线的报告。";
    const QString traditional = "委員會將於明年春天發佈關於新鐵路線的報告，我們會繼續關注。";
    auto server = multilingual({"de"}, false);
    server.fixedFrom = server.fixedTo = "";
    server.anySource = true;
    QTest::newRow("bilingual, its language") << bilingual("en", "de") << english << "en" << false << "";
    QTest::newRow("bilingual, plainly another")
        << bilingual("en", "de") << french << "en" << true << "looks like French, and opus-mt-en-de reads English only";
    QTest::newRow("bilingual, too little to tell") << bilingual("en", "de") << "Hello"
                                                   << "en" << false << "";
    QTest::newRow("bilingual zh reads Traditional Chinese") << bilingual("zh", "en") << traditional << "zh" << false << "";
    QTest::newRow("a group source (gem) is not judged") << bilingual("gem", "en") << french << "gem" << false << "";
    QTest::newRow("mul source without tokens reads any") << bilingual("mul", "en") << french << "fr" << false << "";
    QTest::newRow("multilingual Marian, listed") << multilingual({"de", "en", "zh"}, false) << chinese << "zh" << false << "";
    QTest::newRow("multilingual Marian, Traditional as Chinese")
        << multilingual({"de", "en", "zh"}, false) << traditional << "zh" << false << "";
    QTest::newRow("multilingual Marian, not listed")
        << multilingual({"de", "en", "zh"}, false) << french << "" << true << "reads German, English and Chinese only";
    QTest::newRow("a server: its sources unknown") << server << french << "fr" << false << "";
    QTest::newRow("HY-MT, Chinese picks its Chinese prompt") << multilingual({"zh", "en", "fr"}, true) << chinese << "zh" << false << "";
    QTest::newRow("HY-MT reads what it does not list") << multilingual({"zh", "en"}, true) << "Die Bibliothek öffnet am Montag wieder."
                                                       << "de" << false << "";
    QTest::newRow("HY-MT, too little: nothing named") << multilingual({"zh", "en"}, true) << "OK"
                                                      << "" << false << "";
}

void TestLanguages::sourceForAModel() {
    QFETCH(ModelDescription, model);
    QFETCH(QString, text);
    QFETCH(QString, from);
    QFETCH(bool, unreadable);
    QFETCH(QString, reason);
    const auto guess = sourceLanguageFor(text.toStdString(), model);
    QCOMPARE(QString::fromStdString(guess.from), from);
    QCOMPARE(guess.unreadable, unreadable);
    QVERIFY2(QString::fromStdString(guess.reason).contains(reason), guess.reason.c_str());
}

void TestLanguages::folderLanguagesAreTheLoadedModels_data() {
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("targets");
    QTest::addColumn<QString>("fixedFrom");
    QTest::addColumn<QString>("fixedTo");
    QTest::newRow("bilingual Marian") << QString::fromStdString((kFixtures / "marian-tiny").string()) << 0 << "en"
                                      << "de";
    QTest::newRow("bundled multilingual Marian") << QString::fromStdString(kBundled.string()) << 3 << "mul"
                                                 << "mul";
    QTest::newRow("HY-MT") << QString::fromStdString((kFixtures / "hunyuan-tiny").string()) << 38 << ""
                           << "";
}

void TestLanguages::folderLanguagesAreTheLoadedModels() {
    QFETCH(QString, folder);
    QFETCH(int, targets);
    QFETCH(QString, fixedFrom);
    QFETCH(QString, fixedTo);
    const auto listing = findModel(folder.toStdString());
    const auto offered = modelLanguages(listing);
    QCOMPARE(static_cast<int>(offered.targets.size()), targets);
    QCOMPARE(QString::fromStdString(offered.fixedFrom), fixedFrom);
    QCOMPARE(QString::fromStdString(offered.fixedTo), fixedTo);
    ModelParams params;
    params.device = "cpu";
    params.pageIn = false;
    const auto model = Model::load(folder.toStdString(), params);
    QCOMPARE(offered.targets, model->description().targetLanguages);
    QCOMPARE(offered.fixedFrom, model->description().fixedFrom);
    QCOMPARE(offered.fixedTo, model->description().fixedTo);
}

// Weights without tokenizer files translate nothing, so there is nothing to offer; an unknown architecture is
// refused by name.
void TestLanguages::folderWithoutTokenizerOffersNothing() {
    QTemporaryDir dir;
    const std::filesystem::path folder = dir.path().toStdString();
    std::filesystem::copy_file(kFixtures / "hunyuan-tiny/config.json", folder / "config.json");
    std::filesystem::copy_file(kFixtures / "hunyuan-tiny/model.safetensors", folder / "model.safetensors");
    auto offered = modelLanguages(findModel(folder.string()));
    QVERIFY(offered.targets.empty());
    QVERIFY(offered.fixedFrom.empty());
    auto listing = findModel(folder.string());
    listing.modelType = "llama";
    try {
        modelLanguages(listing);
        QFAIL("an unknown model_type was accepted");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("config"));
        QVERIFY(QString::fromStdString(e.detail()).contains("llama"));
    }
}

QTEST_GUILESS_MAIN(TestLanguages)
#include "tst_languages.moc"
