// Translation of whole texts on the Marian fixture: paragraph structure, long inputs past the model's
// positions, streaming deltas that add up to the result, stopping, determinism and bad input.
#include "api/model_of.h"
#include "test_files.h"
#include "text/streaming_detokenizer.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

using namespace dragoman;

class TestTranslator : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void paragraphsStayAligned_data();
    void paragraphsStayAligned();
    void longParagraphWorks();
    void endlessSentenceGoesInPieces();
    void streamedDeltasAddUp();
    void stopEndsEarly();
    void deterministicTenTimes();
    void badInputIsRefused_data();
    void badInputIsRefused();
    void detokenizerStreamsExactText();
    void incompleteUtf8IsHeldBack_data();
    void incompleteUtf8IsHeldBack();

private:
    QTemporaryDir cache_;
    std::shared_ptr<RunnableModel> model_;
    std::shared_ptr<const Model> translator_;
};

void TestTranslator::initTestCase() {
    const ModelStore store(StoreRoots{cache_.path().toStdString(), "/nonexistent", {}});
    model_ = openModel(store, test::fixture("marian-tiny").string());
    translator_ = modelOf(model_);
}

void TestTranslator::paragraphsStayAligned_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("one line") << "The man sees a small house today.";
    QTest::newRow("blank line kept") << "The man sees a house.\n\nMy brother lives in Berlin.";
    QTest::newRow("two sentences") << "The man sees a house. My brother reads a newspaper.";
    QTest::newRow("trailing newline") << "The cat.\n";
    QTest::newRow("crlf") << "The cat.\r\nThe old car.";
    QTest::newRow("whitespace only") << "   ";
}

void TestTranslator::paragraphsStayAligned() {
    QFETCH(QString, text);
    const auto output = QString::fromStdString(translator_->translate({text.toStdString(), "en", "de", 1, 1, {}}));
    const auto inLines = text.split('\n');
    const auto outLines = output.split('\n');
    QCOMPARE(outLines.size(), inLines.size());
    for (int i = 0; i < inLines.size(); ++i)
        if (inLines[i].trimmed().isEmpty()) QVERIFY(outLines[i].isEmpty());
}

void TestTranslator::longParagraphWorks() {
    // About 700 source tokens in one paragraph, against a model with 64 positions.
    std::string paragraph;
    for (int i = 0; i < 40; ++i)
        paragraph += "My brother lives in Berlin and reads a newspaper every morning. ";
    paragraph += "The man sees a small house today and the woman reads a book by the window every evening without a stop";
    TranslationStats stats;
    const auto output = translator_->translate({paragraph, "en", "de", 1, 2, {}}, &stats);
    QVERIFY2(stats.sourceTokens > 500, std::to_string(stats.sourceTokens).c_str());
    QVERIFY(!output.empty());
    QVERIFY(output.find('\n') == std::string::npos);  // still one paragraph
}

// One sentence without an end, twenty times the model's 64 positions: more pieces than an encoder pass takes (16),
// so it is encoded as it is decoded; the pieces' translations join with single spaces, streamed as returned.
void TestTranslator::endlessSentenceGoesInPieces() {
    std::string sentence = "The man";
    for (int i = 0; i < 160; ++i)
        sentence += " sees a small house";
    std::string streamed;
    TranslationStats stats;
    TranslationRequest request{sentence, "en", "de", 1, 7, [&](std::string_view delta) {
                                   streamed += delta;
                                   return true;
                               }};
    const auto output = translator_->translate(request, &stats);
    QVERIFY2(stats.sourceTokens > 20 * 62, std::to_string(stats.sourceTokens).c_str());
    QVERIFY(!output.empty());
    QCOMPARE(streamed, output);
    QVERIFY(output.find('\n') == std::string::npos);
    QVERIFY(output.find("  ") == std::string::npos);
    QCOMPARE(translator_->translate({sentence, "en", "de", 1, 8, {}}), output);  // and without a reader
}

void TestTranslator::streamedDeltasAddUp() {
    std::string streamed;
    int deltas = 0;
    TranslationRequest request{
        "The man sees a small house today.\n\nMy brother lives in Berlin.", "en", "de", 1, 3, [&](std::string_view delta) {
            streamed += delta;
            ++deltas;
            return true;
        }};
    const auto output = translator_->translate(request);
    QCOMPARE(streamed, output);
    QVERIFY(deltas > 3);
}

void TestTranslator::stopEndsEarly() {
    std::string streamed;
    TranslationStats stats;
    TranslationRequest request{
        "My brother lives in Berlin and reads a newspaper every morning.", "en", "de", 1, 4, [&](std::string_view delta) {
            streamed += delta;
            return false;
        }};
    translator_->translate(request, &stats);
    QVERIFY(stats.stopped);
    QVERIFY(stats.generatedTokens < 10);
}

void TestTranslator::deterministicTenTimes() {
    const TranslationRequest request{"My brother lives in Berlin. The man sees a small house today.", "en", "de", 1, 5, {}};
    const auto first = translator_->translate(request);
    for (int i = 0; i < 9; ++i)
        QCOMPARE(translator_->translate(request), first);
}

void TestTranslator::badInputIsRefused_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("message");
    QTest::newRow("invalid utf-8") << QByteArray("abc\xff\xfe") << "de"
                                   << "UTF-8";
    QTest::newRow("truncated utf-8") << QByteArray("caf\xc3") << "de"
                                     << "UTF-8";
    QTest::newRow("pair it lacks") << QByteArray("hello") << "fr"
                                   << "en to de only";
}

void TestTranslator::badInputIsRefused() {
    QFETCH(QByteArray, text);
    QFETCH(QString, to);
    QFETCH(QString, message);
    try {
        translator_->translate({text.toStdString(), "en", to.toStdString(), 1, 6, {}});
        QFAIL("accepted bad input");
    } catch (const Error& e) {
        QCOMPARE(e.category(), std::string("input"));
        QVERIFY2(e.detail().find(message.toStdString()) != std::string::npos, e.what());
    }
}

void TestTranslator::detokenizerStreamsExactText() {
    const auto& tokenizer = *model_->tokenizer;
    for (const auto* text : {"The man sees a small house today.", "It costs 5€ at the café!", "   ", "Hi"}) {
        auto ids = tokenizer.encode(text);
        StreamingDetokenizer stream(tokenizer);
        std::string joined;
        for (auto id : ids) {
            const auto delta = stream.push(id);
            QVERIFY(delta.empty() || (delta.back() != ' '));  // never a dangling space
            joined += delta;
        }
        joined += stream.finish();
        QCOMPARE(joined, tokenizer.decode(ids));
    }
}

void TestTranslator::incompleteUtf8IsHeldBack_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("complete");
    QTest::newRow("ascii") << QByteArray("abc") << 3;
    QTest::newRow("cjk cut after 1 byte") << QByteArray("\xe4\xbd\xa0\xe5") << 3;  // 你 + first byte of 好
    QTest::newRow("cjk cut after 2 bytes") << QByteArray("\xe4\xbd\xa0\xe5\xa5") << 3;
    QTest::newRow("emoji cut") << QByteArray("ok\xf0\x9f\x98") << 2;  // 😀 missing its last byte
    QTest::newRow("emoji whole") << QByteArray("ok\xf0\x9f\x98\x80") << 6;
    QTest::newRow("replacement char") << QByteArray("ab\xef\xbf\xbd") << 2;  // a decoder's placeholder
}

void TestTranslator::incompleteUtf8IsHeldBack() {
    QFETCH(QByteArray, text);
    QFETCH(int, complete);
    QCOMPARE(static_cast<int>(completeUtf8Prefix(text.toStdString())), complete);
}

QTEST_GUILESS_MAIN(TestTranslator)
#include "tst_translator.moc"
