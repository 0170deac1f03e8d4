// XLIFF 1.2 and 2.0 through translate-file: targets written for the units that have none, marked for review,
// inline codes kept around and between their words, everything else in the file kept; a model with the
// formatted-text prompt gets the tagged sentence whole, and an answer that loses a tag falls back to the pieces.
// The 1.2 fixture was written by Qt's lconvert, which also reads the translated copy back.
#include "../engine/test_files.h"
#include "documents/document_translation.h"
#include "package_files.h"
#include "util/error.h"

#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace dragoman;
using namespace dragoman::test;

namespace {

QString documentFixture(const QString& name) {
    return QString::fromStdString((test::fixture("documents") / name.toStdString()).string());
}

documents::DocumentRequest bracketing(const QString& input, const QString& output) {
    documents::DocumentRequest r;
    r.input = input;
    r.output = output;
    r.to = "de";
    r.translate = [](const std::string& text) { return "[" + text + "]"; };
    return r;
}

QString lconvert() {
    return QStandardPaths::findExecutable(QStringLiteral("lconvert"), {QStringLiteral("/usr/lib/qt6/bin"), QStringLiteral("/usr/bin")});
}

}  // namespace

class TestXliffDocuments : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void unitsGetTargets_data();
    void unitsGetTargets();
    void formattedAnswersKeepTheirTags_data();
    void formattedAnswersKeepTheirTags();
    void lconvertReadsTheCopy();
    void attributesAreEscaped();
    void badFilesAreRefused_data();
    void badFilesAreRefused();
};

void TestXliffDocuments::unitsGetTargets_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("retranslate");
    QTest::addColumn<QStringList>("expected");
    QTest::addColumn<QStringList>("absent");
    QTest::newRow("1.2 from lconvert")
        << "linguist.xlf" << false
        << QStringList{"<target xml:space=\"preserve\" state=\"needs-review-translation\" state-qualifier=\"mt-suggestion\">[The weather is "
                       "nice today.]</target>\n        <context-group purpose=\"location\">",
                       "[Open %1 in a new window]", "<target xml:space=\"preserve\">Guten Morgen</target>",
                       "<context context-type=\"x-gettext-msgctxt\">menu entry</context>"}
        << QStringList{"[Good morning]"};
    QTest::newRow("1.2 inline codes")
        << "inline-1.2.xlf" << false
        << QStringList{"<!-- Written for Dragoman's tests: XLIFF 1.2 inline codes. -->",
                       "source-language=\"en\" target-language=\"de\"",
                       "<header><note>Exported from a CMS.</note></header>",
                       "</source><target state=\"needs-review-translation\" state-qualifier=\"mt-suggestion\">[Click] <g id=\"1\" "
                       "ctype=\"bold\">[here]</g> [to see the weather.]</target>\n        <note>a link</note>",
                       "<target state=\"needs-review-translation\" state-qualifier=\"mt-suggestion\">[Good morning]<x id=\"2\" "
                       "ctype=\"lb\"/>[Good "
                       "evening]</target>",
                       "<trans-unit id=\"3\" translate=\"no\">\n        <source>Dragoman</source>\n      </trans-unit>",
                       "<target state=\"translated\">Das Haus ist sehr klein und alt.</target>"}
        << QStringList{"[Dragoman]", "[very]"};
    QTest::newRow("1.2 retranslated")
        << "inline-1.2.xlf" << true
        << QStringList{"<target state=\"needs-review-translation\" state-qualifier=\"mt-suggestion\">[The house is] <bpt "
                       "id=\"3\">&lt;i&gt;</bpt>[very]<ept id=\"3\">&lt;/i&gt;</ept> [small &amp; old.]</target>"}
        << QStringList{"Das Haus ist sehr klein", "[Dragoman]"};
    QTest::newRow("2.0 inline codes")
        << "inline-2.0.xlf" << false
        << QStringList{"version=\"2.0\" srcLang=\"en\" trgLang=\"de\"",
                       "<segment state=\"translated\">\n        <source>Click <pc id=\"1\" dataRefStart=\"d1\" dataRefEnd=\"d2\">here</pc> "
                       "to see "
                       "the weather.</source><target>[Click] <pc id=\"1\" dataRefStart=\"d1\" dataRefEnd=\"d2\">[here]</pc> [to see the "
                       "weather.]</target>",
                       "<ignorable><source> </source></ignorable>",
                       "<target>[Good morning]<ph id=\"2\" dataRef=\"d3\"/>[Good evening]</target>",
                       "<segment state=\"final\">\n        <source>The house is small.</source>\n        <target>Das Haus ist "
                       "klein.</target>",
                       "<data id=\"d3\">&lt;br/&gt;</data>"}
        << QStringList{"[Dragoman]", "[The house is small.]"};
}

void TestXliffDocuments::unitsGetTargets() {
    QFETCH(QString, file);
    QFETCH(bool, retranslate);
    QFETCH(QStringList, expected);
    QFETCH(QStringList, absent);
    QTemporaryDir dir;
    const auto input = documentFixture(file);
    const auto before = fileBytes(input);
    auto r = bracketing(input, dir.filePath("out.xlf"));
    r.retranslate = retranslate;
    documents::translateDocument(r);
    const auto text = QString::fromUtf8(fileBytes(r.output));
    for (const auto& piece : expected)
        QVERIFY2(text.contains(piece), qPrintable("missing: " + piece + "\nin:\n" + text));
    for (const auto& piece : absent)
        QVERIFY2(!text.contains(piece), qPrintable("present: " + piece + "\nin:\n" + text));
    QCOMPARE(fileBytes(input), before);
}

void TestXliffDocuments::formattedAnswersKeepTheirTags_data() {
    QTest::addColumn<QString>("answer");  // the formatted prompt's answer for "Click <s1>here</s1> to see the weather."
    QTest::addColumn<QString>("target");  // what the unit's target holds
    QTest::addColumn<int>("tagsLost");
    QTest::newRow("kept, moved") << "<s1>Hier</s1> klicken, um das Wetter zu sehen."
                                 << "<g id=\"1\" ctype=\"bold\">Hier</g> klicken, um das Wetter zu sehen." << 0;
    QTest::newRow("lost") << "Hier klicken, um das Wetter zu sehen."
                          << "[Click] <g id=\"1\" ctype=\"bold\">[here]</g> [to see the weather.]" << 1;
    QTest::newRow("twice") << "<s1>Hier</s1> <s1>klicken</s1>"
                           << "[Click] <g id=\"1\" ctype=\"bold\">[here]</g> [to see the weather.]" << 1;
    QTest::newRow("bold word emptied") << "<s1></s1> klicken, um das Wetter zu sehen."
                                       << "[Click] <g id=\"1\" ctype=\"bold\">[here]</g> [to see the weather.]" << 1;
    QTest::newRow("unknown tag") << "<s1>Hier</s1> <s2>klicken</s2>"
                                 << "[Click] <g id=\"1\" ctype=\"bold\">[here]</g> [to see the weather.]" << 1;
    QTest::newRow("markup in the words is escaped")
        << "Klicken Sie <s1>hier</s1> & <b>sehen</b>"
        << "Klicken Sie <g id=\"1\" ctype=\"bold\">hier</g> &amp; &lt;b&gt;sehen&lt;/b&gt;" << 0;
}

void TestXliffDocuments::formattedAnswersKeepTheirTags() {
    QFETCH(QString, answer);
    QFETCH(QString, target);
    QFETCH(int, tagsLost);
    QTemporaryDir dir;
    auto r = bracketing(documentFixture("inline-1.2.xlf"), dir.filePath("out.xlf"));
    std::vector<std::string> asked;
    r.translateFormatted = [&](const std::string& tagged) {
        asked.push_back(tagged);
        return tagged.starts_with("Click") ? answer.toStdString() : tagged;
    };
    const auto result = documents::translateDocument(r);
    QCOMPARE(asked.front(), std::string("Click <s1>here</s1> to see the weather."));
    QCOMPARE(asked.back(), std::string("Good morning<s1></s1>Good evening"));  // a standalone code as an empty pair
    QCOMPARE(result.tagged, std::size_t{2});
    QCOMPARE(static_cast<int>(result.tagsLost), tagsLost);
    const auto text = QString::fromUtf8(fileBytes(r.output));
    QVERIFY2(text.contains("state-qualifier=\"mt-suggestion\">" + target + "</target>"), qPrintable(text));
}

void TestXliffDocuments::lconvertReadsTheCopy() {
    const auto tool = lconvert();
    if (tool.isEmpty()) QSKIP("Qt's lconvert (qt6-l10n-tools) is not installed");
    QTemporaryDir dir;
    const auto r = bracketing(documentFixture("linguist.xlf"), dir.filePath("out.xlf"));
    documents::translateDocument(r);
    QProcess run;
    run.start(tool, {"-i", r.output, "-o", dir.filePath("back.ts")});
    QVERIFY(run.waitForFinished(60000));
    QCOMPARE(run.exitCode(), 0);
    const auto ts = QString::fromUtf8(fileBytes(dir.filePath("back.ts")));
    QVERIFY2(ts.contains("<translation type=\"unfinished\">[The weather is nice today.]</translation>"), qPrintable(ts));
    QVERIFY(ts.contains("<translation>Guten Morgen</translation>"));
}

// Attribute values of inline codes go back as written: quotes, line ends and ampersands escaped.
void TestXliffDocuments::attributesAreEscaped() {
    QTemporaryDir dir;
    QVERIFY(
        writeBytes(dir.filePath("in.xlf"),
                   "<?xml version=\"1.0\"?>\n<xliff version=\"1.2\"><file source-language=\"en\"><body><trans-unit id=\"1\"><source>Click "
                   "<g id=\"1\" equiv-text=\"&quot;a&quot; &amp; b&#10;c\">here</g> now.</source></trans-unit></body></file></xliff>\n"));
    const auto r = bracketing(dir.filePath("in.xlf"), dir.filePath("out.xlf"));
    documents::translateDocument(r);
    const auto text = QString::fromUtf8(fileBytes(r.output));
    QVERIFY2(text.contains("<target state=\"needs-review-translation\" state-qualifier=\"mt-suggestion\">[Click] <g id=\"1\" "
                           "equiv-text=\"&quot;a&quot; &amp; b&#10;c\">[here]</g> [now.]</target>"),
             qPrintable(text));
    QVERIFY(text.startsWith("<?xml version=\"1.0\"?>\n<xliff") && text.endsWith("</xliff>\n"));  // line ends outside the root kept
    QVERIFY(text.contains("source-language=\"en\" target-language=\"de\""));
}

void TestXliffDocuments::badFilesAreRefused_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("message");
    QTest::newRow("not XML") << QByteArray("<xliff version=\"1.2\"><file>") << "not valid XML";
    QTest::newRow("other XML") << QByteArray("<?xml version=\"1.0\"?><TS version=\"2.1\"/>") << "not an XLIFF document (its root is <TS>)";
    QTest::newRow("unknown version") << QByteArray("<xliff version=\"3.0\"/>") << "XLIFF version '3.0' is not read";
    QTest::newRow("not UTF-8") << QByteArray("<xliff version=\"1.2\"><source>caf\xe9</source></xliff>") << "not UTF-8";
}

void TestXliffDocuments::badFilesAreRefused() {
    QFETCH(QByteArray, content);
    QFETCH(QString, message);
    QTemporaryDir dir;
    QVERIFY(writeBytes(dir.filePath("in.xlf"), content));
    auto r = bracketing(dir.filePath("in.xlf"), dir.filePath("out.xlf"));
    try {
        documents::translateDocument(r);
        QFAIL("accepted a bad file");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("input"));
        QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
    }
    QVERIFY(!QFileInfo::exists(r.output));
}

QTEST_GUILESS_MAIN(TestXliffDocuments)
#include "tst_xliff_documents.moc"
