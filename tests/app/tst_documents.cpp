// translate-file's documents (app/documents) translated by a real model (the Marian fixture, whose output is
// arbitrary text): every format keeps its structure byte for byte around the translated text, the input is
// never modified, an existing file is never overwritten, and bad or cancelled jobs leave no output behind.
#include "../engine/test_files.h"
#include "api/model_of.h"
#include "documents/data_formats.h"
#include "documents/document_translation.h"
#include "documents/po_document.h"
#include "package_files.h"
#include "util/error.h"

#include <QCryptographicHash>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <latch>

using namespace dragoman;
using namespace dragoman::test;

namespace {

// What `msgfmt --check` (GNU gettext, which gettext's own tools and every distribution's build run) says of a
// catalog: empty when it compiles, format strings included.
QString msgfmtComplaints(const QString& path) {
    const auto msgfmt = QStandardPaths::findExecutable(QStringLiteral("msgfmt"));
    if (msgfmt.isEmpty()) return QStringLiteral("msgfmt is not installed (installer/packages.txt: gettext)");
    QProcess run;
    run.start(msgfmt, {"--check", "--use-fuzzy", "-o", "/dev/null", path});
    if (!run.waitForFinished(60000)) return QStringLiteral("msgfmt did not finish");
    return run.exitCode() == 0 ? QString() : QString::fromUtf8(run.readAllStandardError());
}

QString documentFixture(const char* name) {
    return QString::fromStdString((test::fixture("documents") / name).string());
}

}  // namespace

class TestDocuments : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void structureIsKept_data();
    void structureIsKept();
    void docxKeepsItsPackage();
    void docxPiecesKeepTheirPlaces_data();
    void docxPiecesKeepTheirPlaces();
    void outputNamesNeverOverwrite();
    void badDocumentsAreRefused_data();
    void badDocumentsAreRefused();
    void cancelledJobLeavesNothing_data();
    void cancelledJobLeavesNothing();
    void fileThatAppearsMeanwhileIsKept_data();
    void fileThatAppearsMeanwhileIsKept();
    void repeatedTextIsTranslatedOnce();
    void malformedCuesAreKeptAndNamed();
    void dialogueCuesKeepTheirSpeakers();
    void markdownTomlFrontMatterAndTablesWithoutOuterPipes();
    void progressCountsFinishedSegments();
    void modelLineBreaksNeverAddLines();
    void emptyTranslationKeepsTheSource_data();
    void emptyTranslationKeepsTheSource();
    void dataKeepsKeysAndLayout_data();
    void dataKeepsKeysAndLayout();
    void dataGoesWholeWhenTheModelKeepsItsShape_data();
    void dataGoesWholeWhenTheModelKeepsItsShape();
    void placeholders_data();
    void placeholders();
    void poCatalogs_data();
    void poCatalogs();
    void realPoCatalog();
    void poCatalogOfAnotherLanguageTakesTheTargetsPlurals();
    void poCatalogsMsgfmtAccepts();
    void inlineMarkup_data();
    void inlineMarkup();

private:
    documents::DocumentRequest request(const QString& input, const QString& output);

    QTemporaryDir cache_;
    QTemporaryDir work_;
    std::shared_ptr<RunnableModel> model_;
    std::shared_ptr<const Model> translator_;
    int calls_ = 0;
};

void TestDocuments::initTestCase() {
    const ModelStore store(StoreRoots{cache_.path().toStdString(), "/nonexistent", {}});
    model_ = openModel(store, test::fixture("marian-tiny").string());
    translator_ = modelOf(model_);
}

documents::DocumentRequest TestDocuments::request(const QString& input, const QString& output) {
    documents::DocumentRequest r;
    r.input = input;
    r.output = output;
    r.to = "de";
    r.translate = [this](const std::string& text) {
        ++calls_;
        // The tiny fixture model answers most sentences with nothing, which the document translator refuses (the
        // source would stay, see emptyTranslationKeepsTheSource): marks around its answer show each replacement.
        return "«" + translator_->translate({text, "en", "de", 1, 1, {}}) + "»";
    };
    return r;
}

void TestDocuments::structureIsKept_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("outputName");
    QTest::addColumn<QStringList>("kept");        // must appear in the output exactly
    QTest::addColumn<QStringList>("translated");  // source text that must be gone
    QTest::newRow("plain text") << "sample.txt"
                                << "out.txt" << QStringList{"\n\n"} << QStringList{"The weather is nice today."};
    QTest::newRow("markdown") << "sample.md"
                              << "out.md"
                              << QStringList{"---\ntitle: Weather\n---\n# ",
                                             "```sh\necho \"do not translate\"\n```\n",
                                             "`make test`",
                                             "](https://example.org/report.html).",
                                             "\n- ",
                                             "|---------|--------|\n",
                                             "| 42 |"}
                              << QStringList{"The weather is nice today.", "Good morning", "a small house"};
    QTest::newRow("markdown inline html") << "inline.md"
                                          << "out-inline.md"
                                          << QStringList{"<b>", "</b>: ", "\n\n<div class=\"x\">\nkept block\n</div>\n\n",
                                                         "[ref]: https://example.org \"Title\"\n"}
                                          << QStringList{"the weather is nice today"};
    QTest::newRow("html") << "sample.html"
                          << "out.html"
                          << QStringList{"<!DOCTYPE html>\n<html lang=\"de\">\n<head><title>",
                                         "<style>p { color: red; }</style>",
                                         "<!-- a comment that stays -->",
                                         "<h1 title=\"",
                                         "<img src=\"house.png\" alt=\"",
                                         "<pre>keep   this  text</pre>",
                                         "<script>var x = \"do not translate\";</script>"}
                          << QStringList{"The weather report", "nice today &amp;", "A small house", "The weather today"};
    QTest::newRow("srt") << "sample.srt"
                         << "out.srt"
                         << QStringList{"1\n00:00:01,000 --> 00:00:03,500\n", "\n\n2\n00:00:04,000 --> 00:00:06,000\n",
                                        "\n\n3\n00:00:07,000 --> 00:00:08,000\n<i>", "</i>\n"}
                         << QStringList{"The weather is nice today.", "The man sees"};
    QTest::newRow("webvtt") << "sample.vtt"
                            << "out.vtt"
                            << QStringList{"WEBVTT\n\nNOTE This note stays as it is.\n\nintro\n00:00:01.000 --> 00:00:03.500 align:start\n"}
                            << QStringList{"The weather is nice today."};
    QTest::newRow("pdf text") << "sample.pdf"
                              << "out.txt" << QStringList{"\f"} << QStringList{"The weather is nice today.", "The house"};
}

void TestDocuments::structureIsKept() {
    QFETCH(QString, file);
    QFETCH(QString, outputName);
    QFETCH(QStringList, kept);
    QFETCH(QStringList, translated);
    const auto input = documentFixture(file.toUtf8().constData());
    const auto before = QCryptographicHash::hash(fileBytes(input), QCryptographicHash::Sha256);
    const auto output = work_.filePath(outputName);
    QFile::remove(output);
    const auto result = documents::translateDocument(request(input, output));
    QCOMPARE(result.output, output);
    QVERIFY(result.segments > 0);
    const auto text = QString::fromUtf8(fileBytes(output));
    QVERIFY(!text.isEmpty());
    for (const auto& k : kept)
        QVERIFY2(text.contains(k), qPrintable("lost: " + k + "\nin:\n" + text));
    for (const auto& t : translated)
        QVERIFY2(!text.contains(t), qPrintable("not translated: " + t + "\nin:\n" + text));
    QCOMPARE(QCryptographicHash::hash(fileBytes(input), QCryptographicHash::Sha256), before);  // the input is untouched
    QCOMPARE(result.keptAsIs, std::vector<std::string>{});                                     // every part read as its format says
    if (file == "sample.pdf") QCOMPARE(text.count('\f'), 2);                                   // one per page
    if (file == "sample.txt") QCOMPARE(text.count('\n'), 3);                                   // lines stay lines
}

void TestDocuments::docxKeepsItsPackage() {
    const auto input = documentFixture("sample.docx");
    const auto output = work_.filePath("out.docx");
    QFile::remove(output);
    auto put = [](const QString& path, const QByteArray& bytes) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(bytes);
    };
    // A partial file a killed job left (its process is gone) is removed; one of a running process (pid 1) and a
    // file of the user's with a similar name stay.
    QProcess gone;
    gone.start(QStringLiteral("true"), {});
    QVERIFY(gone.waitForStarted());
    const auto gonePid = gone.processId();
    QVERIFY(gone.waitForFinished());
    const auto stale = work_.filePath(".out.docx.dragoman-partial-" + QString::number(gonePid));
    const auto running = work_.filePath(".out.docx.dragoman-partial-1");
    put(stale, "half a package");
    put(running, "being written");
    put(output + ".partial", "mine");
    documents::translateDocument(request(input, output));
    QVERIFY(!QFile::exists(stale));
    QCOMPARE(fileBytes(running), QByteArray("being written"));
    QCOMPARE(fileBytes(output + ".partial"), QByteArray("mine"));
    QFile::remove(output + ".partial");
    QFile::remove(running);
    // Untranslated parts are copied as they are; the body and the header are translated, the number kept.
    QCOMPARE(zipEntry(output, "word/styles.xml"), zipEntry(input, "word/styles.xml"));
    QCOMPARE(zipEntry(output, "[Content_Types].xml"), zipEntry(input, "[Content_Types].xml"));
    const auto body = QString::fromUtf8(zipEntry(output, "word/document.xml"));
    QVERIFY(body.contains("<w:pStyle w:val=\"Heading1\"/>"));
    QVERIFY(body.contains("<w:b/>"));  // the runs and their formatting stay
    QVERIFY(body.contains("<w:t xml:space=\"preserve\">42</w:t>") || body.contains("<w:t>42</w:t>"));
    QVERIFY(!body.contains("The weather"));
    QVERIFY(!QString::fromUtf8(zipEntry(output, "word/header1.xml")).contains("Good morning"));
    QCOMPARE(QDir(work_.path()).entryList({".out.docx*"}, QDir::Files | QDir::Hidden), QStringList{});
}

// A paragraph's tabs and line breaks split it into pieces translated apart, each staying in its place; a
// piece's translation goes into the run that held most of its text (its dominant formatting), keeping the
// whitespace around it. The "translation" here marks each segment, so the placement is checked exactly.
void TestDocuments::docxPiecesKeepTheirPlaces_data() {
    QTest::addColumn<QString>("paragraph");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<QString>("answer");  // the formatted prompt's answer; empty: none (piece by piece)
    QTest::newRow("tab between columns")
        << "<w:p><w:pPr><w:tabs><w:tab w:val='left' w:pos='2000'/></w:tabs></w:pPr><w:r><w:t>Name</w:t></w:r><w:r><w:tab/><w:t>The "
           "weather</w:t></w:r></w:p>"
        << "<w:p><w:pPr><w:tabs><w:tab w:val='left' w:pos='2000'/></w:tabs></w:pPr><w:r><w:t "
           "xml:space='preserve'>[Name]</w:t></w:r><w:r><w:tab/><w:t xml:space='preserve'>[The weather]</w:t></w:r></w:p>"
        << QString();
    QTest::newRow("line breaks")
        << "<w:p><w:r><w:t>Good morning</w:t><w:br/><w:t xml:space='preserve'>  Good evening </w:t><w:cr/><w:t>42</w:t></w:r></w:p>"
        << "<w:p><w:r><w:t xml:space='preserve'>[Good morning]</w:t><w:br/><w:t xml:space='preserve'>  [Good evening] "
           "</w:t><w:cr/><w:t>42</w:t></w:r></w:p>"
        << QString();
    // A run formatted unlike most of its piece is a tagged span: piece by piece here, its words in its own run.
    QTest::newRow("bold lead-in")
        << "<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>Note:</w:t></w:r><w:r><w:t xml:space='preserve'> it is very nice today.</w:t></w:r></w:p>"
        << "<w:p><w:r><w:rPr><w:b/></w:rPr><w:t xml:space='preserve'>[Note:]</w:t></w:r><w:r><w:t xml:space='preserve'> [it is very "
           "nice today.]</w:t></w:r></w:p>"
        << QString();
    QTest::newRow("hyperlink inside a sentence")
        << "<w:p><w:r><w:t xml:space='preserve'>See </w:t></w:r><w:hyperlink r:id='rId5'><w:r><w:rPr><w:rStyle "
           "w:val='Hyperlink'/></w:rPr><w:t>our report</w:t></w:r></w:hyperlink><w:r><w:t xml:space='preserve'> for the "
           "weather.</w:t></w:r></w:p>"
        << "<w:p><w:r><w:t xml:space='preserve'>[See] </w:t></w:r><w:hyperlink r:id='rId5'><w:r><w:rPr><w:rStyle "
           "w:val='Hyperlink'/></w:rPr><w:t xml:space='preserve'>[our report]</w:t></w:r></w:hyperlink><w:r><w:t "
           "xml:space='preserve'> [for the weather.]</w:t></w:r></w:p>"
        << QString();
    QTest::newRow("simple field and a link that is the whole paragraph")
        << "<w:p><w:fldSimple w:instr=' HYPERLINK &quot;https://example.org&quot; '><w:r><w:t>Good "
           "morning</w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t xml:space='preserve'> everyone</w:t></w:r></w:fldSimple></w:p>"
        << "<w:p><w:fldSimple w:instr=' HYPERLINK &quot;https://example.org&quot; '><w:r><w:t "
           "xml:space='preserve'>[Good morning]</w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t "
           "xml:space='preserve'> [everyone]</w:t></w:r></w:fldSimple></w:p>"
        << QString();
    QTest::newRow("field-code hyperlink inside a sentence")
        << "<w:p><w:r><w:t xml:space='preserve'>Read the </w:t></w:r><w:r><w:fldChar w:fldCharType='begin'/></w:r><w:r><w:instrText "
           "xml:space='preserve'> HYPERLINK 'https://example.org' </w:instrText></w:r><w:r><w:fldChar "
           "w:fldCharType='separate'/></w:r><w:r><w:t>weather report</w:t></w:r><w:r><w:fldChar w:fldCharType='end'/></w:r><w:r><w:t "
           "xml:space='preserve'> today.</w:t></w:r></w:p>"
        << "<w:p><w:r><w:t xml:space='preserve'>[Read the] </w:t></w:r><w:r><w:fldChar w:fldCharType='begin'/></w:r><w:r><w:instrText "
           "xml:space='preserve'> HYPERLINK 'https://example.org' </w:instrText></w:r><w:r><w:fldChar "
           "w:fldCharType='separate'/></w:r><w:r><w:t xml:space='preserve'>[weather report]</w:t></w:r><w:r><w:fldChar "
           "w:fldCharType='end'/></w:r><w:r><w:t xml:space='preserve'> [today.]</w:t></w:r></w:p>"
        << QString();
    QTest::newRow("text box keeps its own paragraph")
        << "<w:p><w:r><w:t>Outer text</w:t></w:r><w:r><w:txbxContent><w:p><w:r><w:t>Inner "
           "text</w:t></w:r></w:p></w:txbxContent></w:r></w:p>"
        << "<w:p><w:r><w:t xml:space='preserve'>[Outer text]</w:t></w:r><w:r><w:txbxContent><w:p><w:r><w:t xml:space='preserve'>[Inner "
           "text]</w:t></w:r></w:p></w:txbxContent></w:r></w:p>"
        << QString();
    // With the formatted prompt the bold word goes where the answer puts it, in its own run ...
    QTest::newRow("formatted: a bold word moves with its words")
        << "<w:p><w:r><w:t xml:space='preserve'>Click </w:t></w:r><w:r><w:rPr><w:b/><w:lang "
           "w:val='en-US'/></w:rPr><w:t>here</w:t></w:r><w:r><w:rPr><w:lang "
           "w:val='en-GB'/></w:rPr><w:t xml:space='preserve'> to see the weather.</w:t></w:r></w:p>"
        << "<w:p><w:r><w:t xml:space='preserve'></w:t></w:r><w:r><w:rPr><w:b/><w:lang w:val='en-US'/></w:rPr><w:t "
           "xml:space='preserve'>Hier</w:t></w:r><w:r><w:rPr><w:lang w:val='en-GB'/></w:rPr><w:t xml:space='preserve'> klicken, um das "
           "Wetter zu sehen.</w:t></w:r></w:p>"
        << "<s1>Hier</s1> klicken, um das Wetter zu sehen.";
    // ... unless the answer orders the spans in a way the runs cannot follow: then all of it in the main run.
    QTest::newRow("formatted: spans swapped")
        << "<w:p><w:r><w:t xml:space='preserve'>The </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>cat</w:t></w:r><w:r><w:t "
           "xml:space='preserve'> and the </w:t></w:r><w:r><w:rPr><w:i/></w:rPr><w:t>dog</w:t></w:r><w:r><w:t xml:space='preserve'> "
           "play.</w:t></w:r></w:p>"
        << "<w:p><w:r><w:t xml:space='preserve'></w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t></w:t></w:r><w:r><w:t xml:space='preserve'>Der "
           "Hund und die Katze spielen.</w:t></w:r><w:r><w:rPr><w:i/></w:rPr><w:t></w:t></w:r><w:r><w:t "
           "xml:space='preserve'></w:t></w:r></w:p>"
        << "Der <s2>Hund</s2> und die <s1>Katze</s1> spielen.";
}

void TestDocuments::docxPiecesKeepTheirPlaces() {
    QFETCH(QString, paragraph);
    QFETCH(QString, expected);
    QFETCH(QString, answer);
    // Written with single quotes (moc does not read raw strings); pugixml writes attributes with double quotes.
    const auto quoted = [](QString xml) { return xml.replace('\'', '"'); };
    const QString body = quoted(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>"
        "<w:document xmlns:w='http://schemas.openxmlformats.org/wordprocessingml/2006/main'><w:body>%1<w:sectPr/></w:body></w:document>");
    QTemporaryDir dir;
    const auto input = dir.filePath("pieces.docx");
    QVERIFY(QFile::copy(documentFixture("sample.docx"), input));
    QFile::setPermissions(input, QFile::ReadOwner | QFile::WriteOwner);
    QVERIFY(replaceZipEntry(input, "word/document.xml", body.arg(quoted(paragraph)).toUtf8()));
    auto r = request(input, dir.filePath("out.docx"));
    r.translate = [](const std::string& text) { return "[" + text + "]"; };
    if (!answer.isEmpty()) r.translateFormatted = [&](const std::string&) { return answer.toStdString(); };
    documents::translateDocument(r);
    QCOMPARE(QString::fromUtf8(zipEntry(r.output, "word/document.xml")), body.arg(quoted(expected)));
}

void TestDocuments::outputNamesNeverOverwrite() {
    QTemporaryDir dir;
    const auto input = dir.filePath("notes.md");
    QVERIFY(QFile::copy(documentFixture("sample.md"), input));
    QCOMPARE(documents::defaultOutputPath(input, "de"), dir.filePath("notes.de.md"));
    const auto first = documents::translateDocument(request(input, {}));
    QCOMPARE(first.output, dir.filePath("notes.de.md"));
    const auto second = documents::translateDocument(request(input, {}));
    QCOMPARE(second.output, dir.filePath("notes.de (2).md"));
    QCOMPARE(documents::defaultOutputPath(dir.filePath("scan.pdf"), "fr"), dir.filePath("scan.fr.txt"));
    // An explicit output that exists, or the input itself, is refused and left as it was.
    const auto kept = fileBytes(first.output);
    for (const auto& target : {first.output, input}) {
        try {
            documents::translateDocument(request(input, target));
            QFAIL("overwrote a file");
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("io"));
            QVERIFY(QString::fromUtf8(e.what()).contains("never overwrites"));
        }
    }
    QCOMPARE(fileBytes(first.output), kept);
    // A PDF's translation is text: an output named .pdf is refused (a .pdf of plain text would not open), .txt taken.
    const auto pdf = dir.filePath("scan.pdf");
    QVERIFY(QFile::copy(documentFixture("sample.pdf"), pdf));
    try {
        documents::translateDocument(request(pdf, dir.filePath("scan.de.pdf")));
        QFAIL("wrote text into a .pdf");
    } catch (const Error& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains("name the output .txt"), e.what());
    }
    QVERIFY(!QFile::exists(dir.filePath("scan.de.pdf")));
    QCOMPARE(documents::translateDocument(request(pdf, dir.filePath("scan.de.txt"))).output, dir.filePath("scan.de.txt"));
}

void TestDocuments::badDocumentsAreRefused_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("content");  // "@size:N" makes a sparse file of N bytes
    QTest::addColumn<QString>("message");
    QTest::newRow("unsupported type") << "program.exe" << QByteArray("MZ") << "unsupported document type";
    QTest::newRow("invalid UTF-8") << "broken.txt" << QByteArray("caf\xe9 au lait\n") << "not UTF-8";
    QTest::newRow("binary named .md") << "image.md" << QByteArray("\x89PNG\r\n\x1a\n\0\0", 10) << "not UTF-8";
    QTest::newRow("text named .docx") << "letter.docx" << QByteArray("Dear Sir,\n") << "not a Word document";
    QTest::newRow("zip without a body") << "empty.docx" << QByteArray("@zip") << "no word/document.xml";
    QTest::newRow("body not XML") << "broken.docx" << QByteArray("@badxml") << "not valid XML";
    QTest::newRow("garbage named .pdf") << "scan.pdf" << QByteArray("%PDF-1.4 garbage") << "not a readable PDF";
    QTest::newRow("huge") << "huge.txt" << QByteArray("@size:70000000") << "MiB";
    QTest::newRow("missing") << "absent.txt" << QByteArray("@none") << "no such file";
    QTest::newRow("broken JSON") << "strings.json" << QByteArray("{\"a\": \"Hello\",}") << "not valid JSON";
    QTest::newRow("malformed PO") << "app.po" << QByteArray("msgid \"a\"\nmsgstr \"b\nmsgid") << "not a valid PO file";
    QTest::newRow("PO in Latin-1")
        << "old.po" << QByteArray("msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=ISO-8859-1\\n\"\n\nmsgid \"Hi\"\nmsgstr \"\"\n")
        << "msgconv --to-code=UTF-8";
    QTest::newRow("PO plural forms unlike its header, not fuzzy")
        << "plural.po"
        << QByteArray(
               "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; "
               "charset=UTF-8\\n\"\n\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"\n\n"
               "msgid \"%d file\"\nmsgid_plural \"%d files\"\nmsgstr[0] \"a\"\nmsgstr[1] "
               "\"b\"\nmsgstr[2] \"c\"\n\nmsgid \"Hi\"\nmsgstr \"\"\n")
        << "says nplurals=2 but the entry \"%d file\" has 3 plural forms";
    QTest::newRow("broken YAML") << "strings.yaml" << QByteArray("a: [Hello\nb: c\n") << "not valid YAML";
    QTest::newRow("binary named .json") << "data.json" << QByteArray("\x89PNG\r\n\x1a\n\0\0", 10) << "not UTF-8";
}

void TestDocuments::badDocumentsAreRefused() {
    QFETCH(QString, name);
    QFETCH(QByteArray, content);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const auto input = dir.filePath(name);
    if (content.startsWith("@size:")) {
        QFile f(input);
        QVERIFY(f.open(QIODevice::WriteOnly) && f.resize(content.mid(6).toLongLong()));
    } else if (content == "@zip" || content == "@badxml") {  // the sample package without its body, or a broken one
        QVERIFY(QFile::copy(documentFixture("sample.docx"), input));
        QFile::setPermissions(input, QFile::ReadOwner | QFile::WriteOwner);
        QVERIFY(replaceZipEntry(input, "word/document.xml",
                                content == "@zip" ? QByteArray() : QByteArray("<w:document><w:body><w:p>unclosed")));
    } else if (content != "@none") {
        QFile f(input);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
    }
    const auto output = dir.filePath("out." + QFileInfo(name).suffix());
    calls_ = 0;
    try {
        documents::translateDocument(request(input, output));
        QFAIL("accepted a bad document");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("input"));
        QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
    }
    QCOMPARE(calls_, 0);  // refused before any translation
    QVERIFY(!QFile::exists(output));
}

void TestDocuments::cancelledJobLeavesNothing_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("markdown") << "sample.md";
    QTest::newRow("docx") << "sample.docx";
}

void TestDocuments::cancelledJobLeavesNothing() {
    QFETCH(QString, file);
    QTemporaryDir dir;
    const auto output = dir.filePath("out." + QFileInfo(file).suffix());
    auto r = request(documentFixture(file.toUtf8().constData()), output);
    int segments = 0;
    r.translate = [&](const std::string&) -> std::string {
        if (++segments == 2) throw Cancelled("stopped by the user");
        return "x";
    };
    QVERIFY_THROWS_EXCEPTION(Cancelled, documents::translateDocument(r));
    QVERIFY(!QFile::exists(output));
    QVERIFY(!QFile::exists(output + ".partial"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{});
}

void TestDocuments::fileThatAppearsMeanwhileIsKept_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("named");  // --out given, or the default name
    for (const char* file : {"sample.md", "sample.docx", "sample.srt"}) {
        QTest::addRow("%s, --out", file) << file << true;
        QTest::addRow("%s, default name", file) << file << false;
    }
    QTest::newRow("po, --out") << "gdk-pixbuf.de.po" << true;
}

// The output's name was free when the job started, but a file took it while the document was translated (another
// program, the person): that file stays as it is, and the translation goes under the next numbered name, which the
// error names.
void TestDocuments::fileThatAppearsMeanwhileIsKept() {
    QFETCH(QString, file);
    QFETCH(bool, named);
    QTemporaryDir dir;
    const auto input = dir.filePath(file);
    QVERIFY(QFile::copy(documentFixture(file.toUtf8().constData()), input));
    const auto output = named ? dir.filePath("report." + QFileInfo(file).suffix()) : documents::defaultOutputPath(input, "de");
    auto r = request(input, named ? output : QString());
    r.retranslate = true;  // the catalog's entries are translated already
    bool written = false;
    r.translate = [&](const std::string& text) {
        if (!written) written = writeBytes(output, "MY REPORT - DO NOT LOSE\n");
        return "[" + text + "]";
    };
    try {
        documents::translateDocument(r);
        QFAIL("replaced a file that appeared meanwhile");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("io"));
        QVERIFY2(QString::fromUtf8(e.what()).contains("appeared while the document was translated"), e.what());
        const QFileInfo taken(output);
        const auto numbered = taken.absolutePath() + "/" + taken.completeBaseName() + " (2)." + taken.suffix();
        QVERIFY2(QString::fromUtf8(e.what()).endsWith("the translation is in " + numbered), e.what());
        QVERIFY(QFileInfo(numbered).size() > 0);
    }
    QVERIFY(written);
    QCOMPARE(fileBytes(output), QByteArray("MY REPORT - DO NOT LOSE\n"));
    for (const auto& name : QDir(dir.path()).entryList(QDir::Files | QDir::Hidden))
        QVERIFY2(!name.contains("dragoman-partial"), qPrintable(name));
}

// A subtitle block without a timing line cannot be placed on the screen: it is kept as it is, and named by its line
// so the person hears of it; a block of digits alone (a stray cue number) has no text to lose and is not named.
void TestDocuments::malformedCuesAreKeptAndNamed() {
    const auto input = work_.filePath("broken.srt");
    const QByteArray source =
        "1\n00:00:01,000 --> 00:00:02,000\nThe weather is nice today.\n\n"
        "2\nThis cue lost its timing line.\n\n"
        "3\n\n"
        "4\n00:00:05,000 --> 00:00:06,000\nThe man sees a small house.\n";
    QFile file(input);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(source);
    file.close();
    const auto output = work_.filePath("broken.de.srt");
    QFile::remove(output);
    const auto result = documents::translateDocument(request(input, output));
    QCOMPARE(result.keptAsIs.size(), std::size_t{1});
    QCOMPARE(result.keptAsIs[0], std::string("line 5: a subtitle block without a timing line (\"-->\") is kept untranslated"));
    const auto text = QString::fromUtf8(fileBytes(output));
    QVERIFY2(text.contains("\n\n2\nThis cue lost its timing line.\n\n3\n\n4\n00:00:05,000 --> 00:00:06,000\n"), qPrintable(text));
    QVERIFY2(!text.contains("The weather is nice today.") && !text.contains("The man sees"), qPrintable(text));
}

// A cue whose lines open with a speaker's dash is two people talking: each line is translated on its own and keeps
// its dash (joined into one sentence and wrapped back, the second speaker's words ran into the first's line).
void TestDocuments::dialogueCuesKeepTheirSpeakers() {
    QTemporaryDir dir;
    const auto input = dir.filePath("talk.srt"), output = dir.filePath("talk.de.srt");
    QVERIFY(writeBytes(input,
                       "1\n00:00:01,000 --> 00:00:03,000\n- Where are you going?\n- To the market.\n\n"
                       "2\n00:00:04,000 --> 00:00:06,000\nWhere are you going?\n\u2013 To the market.\n\n"
                       "3\n00:00:07,000 --> 00:00:09,000\nThe weather is nice\ntoday in Berlin.\n"));
    auto r = request(input, output);
    r.translate = [](const std::string& text) { return "[" + text + "]"; };
    documents::translateDocument(r);
    QCOMPARE(fileBytes(output), QByteArray("1\n00:00:01,000 --> 00:00:03,000\n- [Where are you going?]\n- [To the market.]\n\n"
                                           "2\n00:00:04,000 --> 00:00:06,000\n[Where are you going?]\n\u2013 [To the market.]\n\n"
                                           "3\n00:00:07,000 --> 00:00:09,000\n[The weather is nice\ntoday in Berlin.]\n"));
}

// Hugo's TOML front matter ("+++") stays as it is, as YAML's does; a pipe table's rows need not start with "|"
// (GFM): each row stays a row, its cells translated (the body rows were joined into one paragraph).
void TestDocuments::markdownTomlFrontMatterAndTablesWithoutOuterPipes() {
    QTemporaryDir dir;
    const auto input = dir.filePath("page.md"), output = dir.filePath("page.de.md");
    QVERIFY(writeBytes(input,
                       "+++\ntitle = \"Prices\"\ndraft = false\n+++\n\nName | Value\n---- | -----\nGreen apple | 3\nThe red car | 42\n\n"
                       "A paragraph\nthat wraps.\n"));
    auto r = request(input, output);
    r.translate = [](const std::string& text) { return "[" + text + "]"; };
    documents::translateDocument(r);
    QCOMPARE(fileBytes(output), QByteArray("+++\ntitle = \"Prices\"\ndraft = false\n+++\n\n[Name] | [Value]\n---- | -----\n"
                                           "[Green apple] | 3\n[The red car] | 42\n\n[A paragraph that wraps.]\n"));
}

void TestDocuments::repeatedTextIsTranslatedOnce() {
    // "Good morning" is in the body's table and in the header: one model call for both, the same text out.
    auto r = request(documentFixture("sample.docx"), work_.filePath("once.docx"));
    QFile::remove(r.output);
    std::vector<std::pair<std::size_t, std::size_t>> progress;
    r.progress = [&](std::size_t done, std::size_t total) { progress.emplace_back(done, total); };
    calls_ = 0;
    const auto result = documents::translateDocument(r);
    QCOMPARE(result.segments, std::size_t{3});  // heading, paragraph, "Good morning"; "42" is not text
    QCOMPARE(calls_, 5);                        // the paragraph's bold words: three pieces without the formatted prompt
    QCOMPARE(progress.front(), (std::pair<std::size_t, std::size_t>{0, 3}));
    QCOMPARE(progress.back(), (std::pair<std::size_t, std::size_t>{3, 3}));
}

// Segments in flight together (the window keeps 32): progress says how many are done, never more, from 0 to all.
void TestDocuments::progressCountsFinishedSegments() {
    const auto input = work_.filePath("three.txt");
    {
        QFile file(input);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("One.\n\nTwo.\n\nThree.\n");
    }
    auto r = request(input, work_.filePath("three.de.txt"));
    QFile::remove(r.output);
    r.parallel = 3;
    std::latch allStarted(3);
    std::atomic<std::size_t> done = 0;
    r.translate = [&](const std::string& text) {
        allStarted.arrive_and_wait();  // all three in flight before any is done
        ++done;
        return "«" + text + "»";
    };
    std::vector<std::pair<std::size_t, std::size_t>> progress;  // reported, done when reported
    r.progress = [&](std::size_t reported, std::size_t total) {
        QCOMPARE(total, std::size_t{3});
        progress.emplace_back(reported, done.load());
    };
    documents::translateDocument(r);
    QCOMPARE(progress.size(), std::size_t{4});
    for (std::size_t i = 0; i < progress.size(); ++i) {
        QCOMPARE(progress[i].first, i);
        QVERIFY2(progress[i].first <= progress[i].second, qPrintable(QString("%1 reported, %2 done").arg(i).arg(progress[i].second)));
    }
}

// Line breaks in a model's output (HY-MT's byte-level BPE can write them) never become lines of the document:
// every cue keeps its place.
void TestDocuments::modelLineBreaksNeverAddLines() {
    const ModelStore store(StoreRoots{cache_.path().toStdString(), "/nonexistent", {}});
    const auto hunyuan = openModel(store, test::fixture("hunyuan-tiny").string());
    const auto translator = modelOf(hunyuan);
    auto r = request(documentFixture("sample.srt"), work_.filePath("hy.srt"));
    QFile::remove(r.output);
    r.translate = [&](const std::string& text) {
        // As a model that ends its output with a line break would.
        return translator->translate({text, "en", "zh", 1, 1, {}}) + "\nan extra line";
    };
    documents::translateDocument(r);
    const auto in = fileBytes(r.input).split('\n'), out = fileBytes(r.output).split('\n');
    QCOMPARE(out.size(), in.size());
    for (qsizetype i = 0; i < in.size(); ++i)
        if (in[i].contains("-->") || in[i].trimmed().isEmpty()) QCOMPARE(out[i], in[i]);
}

void TestDocuments::emptyTranslationKeepsTheSource_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("html emphasis") << "emphasis.html" << QByteArray("<p>This is <b>very</b> important.</p>\n")
                                   << QByteArray("<p>[This is] <b>very</b> [important.]</p>\n");
    QTest::newRow("plain text line") << "lines.txt" << QByteArray("Good morning\nvery\n") << QByteArray("[Good morning]\nvery\n");
}

// A model that answers a segment with nothing (or only whitespace) never erases it: its source text stays.
void TestDocuments::emptyTranslationKeepsTheSource() {
    QFETCH(QString, name);
    QFETCH(QByteArray, source);
    QFETCH(QByteArray, expected);
    QTemporaryDir dir;
    QVERIFY(writeBytes(dir.filePath(name), source));
    auto r = request(dir.filePath(name), dir.filePath("out-" + name));
    r.translate = [](const std::string& text) { return text == "very" ? std::string(" \n") : "[" + text + "]"; };
    const auto result = documents::translateDocument(r);
    QCOMPARE(result.keptSource, std::size_t{1});
    QVERIFY2(fileBytes(r.output).contains(expected), fileBytes(r.output).constData());
}

namespace {

const QByteArray kJson =
    "\xEF\xBB\xBF{\n"
    "  \"title\": \"Welcome to the application\",\n"
    "  \"count\": 3, \"enabled\": true, \"none\": null,\n"
    "  \"messages\": {\"greeting\": \"Good morning, {name}!\", \"id\": \"btn_save\", \"quote\": \"Say \\\"hi\\\"\"},\n"
    "  \"list\": [\"Open the file\", \"42\", \"https://example.org/a\"]\n"
    "}\n";
const QByteArray kJsonTranslated =
    "\xEF\xBB\xBF{\n"
    "  \"title\": \"[Welcome to the application]\",\n"
    "  \"count\": 3, \"enabled\": true, \"none\": null,\n"
    "  \"messages\": {\"greeting\": \"[Good morning, {name}!]\", \"id\": \"btn_save\", \"quote\": "
    "\"[Say \\\"hi\\\"]\"},\n"
    "  \"list\": [\"[Open the file]\", \"42\", \"https://example.org/a\"]\n"
    "}\n";
const QByteArray kYaml =
    "# Application strings\n"
    "title: Welcome to the application\n"
    "enabled: yes\n"
    "count: 3\n"
    "messages:\n"
    "  greeting: \"Good morning, {name}!\"\n"
    "  bye: 'See you tomorrow.'\n"
    "  note: |\n"
    "    The file is open.\n"
    "    The window is closed.\n"
    "\n"
    "  saved: &s Save the file\n"
    "  again: *s\n"
    "list:\n"
    "  - Open the file  # a comment\n"
    "  - [Close it, v1.2]\n";
const QByteArray kYamlTranslated =
    "# Application strings\n"
    "title: \"[Welcome to the application]\"\n"
    "enabled: yes\n"
    "count: 3\n"
    "messages:\n"
    "  greeting: \"[Good morning, {name}!]\"\n"
    "  bye: \"[See you tomorrow.]\"\n"
    "  note: \"[The file is open.\\nThe window is closed.\\n]\"\n"
    "\n"
    "  saved: &s Save the file\n"
    "  again: *s\n"
    "list:\n"
    "  - \"[Open the file]\"  # a comment\n"
    "  - [\"[Close it]\", v1.2]\n";

}  // namespace

void TestDocuments::dataKeepsKeysAndLayout_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("json") << "strings.json" << kJson << kJsonTranslated;
    QTest::newRow("yaml") << "strings.yaml" << kYaml << kYamlTranslated;
    QTest::newRow("yml, non-ASCII before a value")
        << "fr.yml" << QByteArray("café: Très bien\nnom: Ça va\n") << QByteArray("café: \"[Très bien]\"\nnom: \"[Ça va]\"\n");
}

// One value at a time (any model): only text values change, written back as quoted strings; keys, numbers,
// booleans, identifiers, URLs, anchors, aliases, comments and the layout stay byte for byte.
void TestDocuments::dataKeepsKeysAndLayout() {
    QFETCH(QString, name);
    QFETCH(QByteArray, source);
    QFETCH(QByteArray, expected);
    QTemporaryDir dir;
    QVERIFY(writeBytes(dir.filePath(name), source));
    auto r = request(dir.filePath(name), dir.filePath("out-" + name));
    r.translate = [](const std::string& text) { return "[" + text + "]"; };
    const auto result = documents::translateDocument(r);
    QVERIFY(!result.whole);
    QCOMPARE(fileBytes(r.output), expected);
}

void TestDocuments::dataGoesWholeWhenTheModelKeepsItsShape_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QByteArray>("answer");  // the model's whole answer
    QTest::addColumn<bool>("whole");
    QTest::addColumn<int>("alone");  // values then translated one at a time
    QTest::addColumn<QByteArray>("expected");
    const QByteArray json = "{\"a\": \"Good morning, {name}!\", \"n\": 1, \"b\": [\"Open the file\"]}";
    const QByteArray kept = "{\"a\": \"Guten Morgen, {name}!\", \"n\": 1, \"b\": [\"Datei öffnen\"]}";
    QTest::newRow("json kept") << "a.json" << json << kept << true << 0
                               << QByteArray("{\"a\": \"Guten Morgen, {name}!\", \"n\": 1, \"b\": [\"Datei öffnen\"]}");
    QTest::newRow("json in a code fence") << "a.json" << json << "```json\n" + kept + "\n```" << true << 0
                                          << QByteArray("{\"a\": \"Guten Morgen, {name}!\", \"n\": 1, \"b\": [\"Datei öffnen\"]}");
    QTest::newRow("a translated key falls back")
        << "a.json" << json << QByteArray("{\"A\": \"Guten Morgen, {name}!\", \"n\": 1, \"b\": [\"Datei öffnen\"]}") << false << 2
        << QByteArray("{\"a\": \"[Good morning, {name}!]\", \"n\": 1, \"b\": [\"[Open the file]\"]}");
    QTest::newRow("a changed number falls back")
        << "a.json" << json << QByteArray("{\"a\": \"Guten Morgen, {name}!\", \"n\": 2, \"b\": [\"Datei öffnen\"]}") << false << 2
        << QByteArray("{\"a\": \"[Good morning, {name}!]\", \"n\": 1, \"b\": [\"[Open the file]\"]}");
    QTest::newRow("prose instead of data falls back")
        << "a.json" << json << QByteArray("Here is the translation: Guten Morgen") << false << 2
        << QByteArray("{\"a\": \"[Good morning, {name}!]\", \"n\": 1, \"b\": [\"[Open the file]\"]}");
    QTest::newRow("a lost placeholder goes again alone")
        << "a.json" << json << QByteArray("{\"a\": \"Guten Morgen, {Name}!\", \"n\": 1, \"b\": [\"Datei öffnen\"]}") << true << 1
        << QByteArray("{\"a\": \"[Good morning, {name}!]\", \"n\": 1, \"b\": [\"Datei öffnen\"]}");
    const QByteArray yaml = "# strings\ngreeting: Good morning\nitems:\n  - Open the file\n";
    QTest::newRow("yaml kept") << "a.yaml" << yaml << QByteArray("greeting: Guten Morgen\nitems:\n  - Datei öffnen\n") << true << 0
                               << QByteArray("# strings\ngreeting: \"Guten Morgen\"\nitems:\n  - \"Datei öffnen\"\n");
    QTest::newRow("yaml with a translated key falls back")
        << "a.yaml" << yaml << QByteArray("Gruß: Guten Morgen\nitems:\n  - Datei öffnen\n") << false << 2
        << QByteArray("# strings\ngreeting: \"[Good morning]\"\nitems:\n  - \"[Open the file]\"\n");
}

// Hy-MT2's structured prompt: the document goes whole; an answer is used only when its shape is the source's.
void TestDocuments::dataGoesWholeWhenTheModelKeepsItsShape() {
    QFETCH(QString, name);
    QFETCH(QByteArray, source);
    QFETCH(QByteArray, answer);
    QFETCH(bool, whole);
    QFETCH(int, alone);
    QFETCH(QByteArray, expected);
    QTemporaryDir dir;
    QVERIFY(writeBytes(dir.filePath(name), source));
    auto r = request(dir.filePath(name), dir.filePath("out-" + name));
    int calls = 0;
    r.translate = [&](const std::string& text) {
        ++calls;
        return "[" + text + "]";
    };
    std::string sentFormat, sentText;
    r.translateStructured = [&](const std::string& text, const std::string& format) {
        sentText = text;
        sentFormat = format;
        return answer.toStdString();
    };
    const auto result = documents::translateDocument(r);
    QCOMPARE(QString::fromStdString(sentText), QString::fromUtf8(source));
    QCOMPARE(QString::fromStdString(sentFormat), name.endsWith(".json") ? QStringLiteral("JSON") : QStringLiteral("YAML"));
    QCOMPARE(result.whole, whole);
    QCOMPARE(calls, alone);
    QCOMPARE(result.changedPlaceholders, std::size_t{0});
    QCOMPARE(fileBytes(r.output), expected);
}

void TestDocuments::placeholders_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("braces") << "Hello {name}, {{count}} new, ${user}, {0}" << QStringList{"{name}", "{{count}}", "${user}", "{0}"};
    QTest::newRow("printf") << "%s has %d files (%1$s, %.2f, %%)" << QStringList{"%s", "%d", "%1$s", "%.2f", "%%"};
    QTest::newRow("python, named") << "Hello %(user)s, %(count)d new, %(ratio).1f%%"
                                   << QStringList{"%(user)s", "%(count)d", "%(ratio).1f", "%%"};
    QTest::newRow("a percent sign is not one") << "50% off, 100 %" << QStringList{};
    QTest::newRow("none") << "Open the file." << QStringList{};
}

void TestDocuments::placeholders() {
    QFETCH(QString, text);
    QFETCH(QStringList, expected);
    QStringList found;
    for (const auto& p : documents::placeholdersIn(text.toStdString()))
        found << QString::fromStdString(p);
    QCOMPARE(found, expected);
    QVERIFY(documents::keepsPlaceholders("%s and {name}", "{name} und %s"));
    QVERIFY(!documents::keepsPlaceholders("%s and {name}", "{Name} und %s"));
    QVERIFY(!documents::keepsPlaceholders("Progress: 50%%", "Fortschritt: 50% %"));
    QVERIFY(!documents::keepsPlaceholders("Hello %(user)s", "Hallo % (Benutzer)"));
}

namespace {

const QByteArray kPot =
    "# A template.\n"
    "msgid \"\"\n"
    "msgstr \"\"\n"
    "\"Project-Id-Version: app 1.0\\n\"\n"
    "\"Language: \\n\"\n"
    "\"Content-Type: text/plain; charset=CHARSET\\n\"\n"
    "\"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n\"\n"
    "\n"
    "#. Shown on the start page\n"
    "#: src/main.c:10\n"
    "msgid \"Good morning\"\n"
    "msgstr \"\"\n"
    "\n"
    "#: src/main.c:20\n"
    "#, c-format\n"
    "msgctxt \"menu\"\n"
    "msgid \"Open %s\"\n"
    "msgstr \"\"\n"
    "\n"
    "msgid \"Already done\"\n"
    "msgstr \"Schon erledigt\"\n"
    "\n"
    "#, c-format\n"
    "msgid \"%d file\"\n"
    "msgid_plural \"%d files\"\n"
    "msgstr[0] \"\"\n"
    "msgstr[1] \"\"\n"
    "\n"
    "#~ msgid \"Old entry\"\n"
    "#~ msgstr \"Alter Eintrag\"\n";

}  // namespace

void TestDocuments::poCatalogs_data() {
    QTest::addColumn<QString>("to");
    QTest::addColumn<bool>("retranslate");
    QTest::addColumn<QStringList>("expected");  // pieces of the written catalog
    QTest::addColumn<QStringList>("absent");
    QTest::newRow("German, two plural forms")
        << "de" << false
        << QStringList{"\"Language: de\\n\"",
                       "\"Content-Type: text/plain; charset=UTF-8\\n\"",
                       "\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"",
                       "\"X-Generator: Dragoman ",
                       "#. Shown on the start page\n#: src/main.c:10\n#, fuzzy\nmsgid \"Good morning\"\nmsgstr \"[Good morning]\"",
                       "#: src/main.c:20\n#, fuzzy, c-format\nmsgctxt \"menu\"\nmsgid \"Open %s\"\nmsgstr \"[Open %s]\"",
                       "msgid \"Already done\"\nmsgstr \"Schon erledigt\"",
                       "msgstr[0] \"[%d file]\"\nmsgstr[1] \"[%d files]\"",
                       "#~ msgid \"Old entry\"\n#~ msgstr \"Alter Eintrag\""}
        << QStringList{"[Already done]", "[Old entry]"};
    QTest::newRow("Chinese, one form, retranslated") << "zh" << true
                                                     << QStringList{"\"Language: zh_CN\\n\"", "\"Plural-Forms: nplurals=1; plural=0;\\n\"",
                                                                    "msgstr \"[Already done]\"", "msgstr[0] \"[%d files]\""}
                                                     << QStringList{"msgstr[1]", "Schon erledigt"};
}

// A gettext template filled in: entries, plurals and the header as a translator's tools expect them, context,
// comments, flags and obsolete entries kept, machine output marked fuzzy; the copy of a .pot is a .po.
void TestDocuments::poCatalogs() {
    QFETCH(QString, to);
    QFETCH(bool, retranslate);
    QFETCH(QStringList, expected);
    QFETCH(QStringList, absent);
    QTemporaryDir dir;
    QVERIFY(writeBytes(dir.filePath("app.pot"), kPot));
    auto r = request(dir.filePath("app.pot"), {});
    r.to = to.toStdString();
    r.retranslate = retranslate;
    std::vector<std::string> sent;
    r.translate = [&](const std::string& text) {
        sent.push_back(text);
        return "[" + text + "]";
    };
    const auto result = documents::translateDocument(r);
    QCOMPARE(result.output, dir.filePath("app." + to + ".po"));
    const auto text = QString::fromUtf8(fileBytes(result.output));
    for (const auto& piece : expected)
        QVERIFY2(text.contains(piece), qPrintable("missing: " + piece + "\nin:\n" + text));
    for (const auto& piece : absent)
        QVERIFY2(!text.contains(piece), qPrintable("present: " + piece + "\nin:\n" + text));
    QCOMPARE(sent.size(), retranslate ? std::size_t{5} : std::size_t{4});
    QCOMPARE(fileBytes(dir.filePath("app.pot")), kPot);  // the template is untouched
    QCOMPARE(msgfmtComplaints(result.output), QString());
    QCOMPARE(documents::pluralFormsFor("ru").substr(0, 11), std::string("nplurals=3;"));
}

// A Russian catalog filled in again as German: its header's Language and Plural-Forms both become German's (the
// Russian three-form rule, kept beside "Language: de", chose the singular for 21 files), each plural entry two forms.
void TestDocuments::poCatalogOfAnotherLanguageTakesTheTargetsPlurals() {
    QTemporaryDir dir;
    const auto input = dir.filePath("app.ru.po");
    QVERIFY(writeBytes(input,
                       "msgid \"\"\nmsgstr \"\"\n\"Language: ru\\n\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n"
                       "\"Plural-Forms: nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || "
                       "n%100>=20) ? 1 : 2);\\n\"\n\n"
                       "#, c-format\nmsgid \"%d file\"\nmsgid_plural \"%d files\"\nmsgstr[0] \"%d файл\"\nmsgstr[1] \"%d файла\"\n"
                       "msgstr[2] \"%d файлов\"\n"));
    auto r = request(input, dir.filePath("app.de.po"));
    r.retranslate = true;
    r.translate = [](const std::string& text) { return "[" + text + "]"; };
    documents::translateDocument(r);
    const auto text = QString::fromUtf8(fileBytes(r.output));
    QVERIFY2(text.contains("\"Language: de\\n\"") && text.contains("\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\""), qPrintable(text));
    QVERIFY2(text.contains("msgstr[0] \"[%d file]\"\nmsgstr[1] \"[%d files]\"") && !text.contains("msgstr[2]"), qPrintable(text));
    QCOMPARE(msgfmtComplaints(r.output), QString());
}

// A real catalog (gdk-pixbuf's German, 198 entries, contexts and plurals): left alone where everything is
// translated, and with --retranslate every entry, context and plural form filled again, the copy a valid catalog.
void TestDocuments::realPoCatalog() {
    QTemporaryDir dir;
    const auto input = documentFixture("gdk-pixbuf.de.po");
    const auto source = QString::fromUtf8(fileBytes(input));
    auto r = request(input, dir.filePath("kept.po"));
    int calls = 0;
    r.translate = [&](const std::string& text) {
        ++calls;
        return "[" + text + "]";
    };
    QCOMPARE(documents::translateDocument(r).segments, std::size_t{0});  // every entry has its translation
    QCOMPARE(calls, 0);
    r.output = dir.filePath("again.po");
    r.retranslate = true;
    documents::translateDocument(r);
    QCOMPARE(calls, 198 + 4);  // every entry's msgid and each plural entry's msgid_plural
    const auto text = QString::fromUtf8(fileBytes(r.output));
    QCOMPARE(text.count(QStringLiteral("\nmsgctxt ")), source.count(QStringLiteral("\nmsgctxt ")));
    QCOMPARE(text.count(QStringLiteral("\nmsgstr[1] \"[")), 4);
    QCOMPARE(text.count(QStringLiteral("#, fuzzy")), 198);
    QCOMPARE(msgfmtComplaints(r.output), QString());
    // The copy reads back as a catalog whose entries are all translated.
    auto check = request(r.output, dir.filePath("check.po"));
    check.translate = r.translate;
    QCOMPARE(documents::translateDocument(check).segments, std::size_t{0});
}

// What msgfmt --check accepts is read: seven plural forms, and a fuzzy entry whose forms do not match (msgfmt
// skips fuzzy entries).
void TestDocuments::poCatalogsMsgfmtAccepts() {
    QTemporaryDir dir;
    QByteArray po(
        "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n"
        "\"Plural-Forms: nplurals=7; plural=(n%7);\\n\"\n\n#, fuzzy\nmsgid \"%d cat\"\nmsgid_plural \"%d cats\"\nmsgstr[0] \"a\"\n"
        "msgstr[1] \"b\"\n\nmsgid \"%d dog\"\nmsgid_plural \"%d dogs\"\n");
    for (int i = 0; i < 7; ++i)
        po += "msgstr[" + QByteArray::number(i) + "] \"%d x" + QByteArray::number(i) + "\"\n";
    po += "\nmsgid \"Hello\"\nmsgstr \"\"\n";
    QVERIFY(writeBytes(dir.filePath("seven.po"), po));
    auto r = request(dir.filePath("seven.po"), dir.filePath("out.po"));
    r.translate = [](const std::string& text) { return "[" + text + "]"; };
    QCOMPARE(documents::translateDocument(r).segments, std::size_t{1});  // "Hello"
    QVERIFY(fileBytes(r.output).contains("msgstr[6] \"%d x6\""));
}

// Inline markup inside a sentence: with the formatted-text prompt the sentence goes whole with its markup as
// <sN> tags (here the "model" marks the sentence and keeps every tag), otherwise the words between the markup go
// piece by piece. Either way every piece of markup is back where the words put it.
void TestDocuments::inlineMarkup_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QStringList>("asked");  // what the formatted prompt gets
    QTest::addColumn<QByteArray>("whole");   // the copy, from the formatted answers
    QTest::addColumn<QByteArray>("pieces");  // the copy, piece by piece
    QTest::newRow("markdown emphasis and link")
        << "a.md" << QByteArray("Click **here** to see the [weather report](https://example.org/r.html) today.\n")
        << QStringList{"Click <s1>here</s1> to see the <s2>weather report</s2> today."}
        << QByteArray("«Click **here** to see the [weather report](https://example.org/r.html) today.»\n")
        << QByteArray("[Click] **[here]** [to see the] [[weather report]](https://example.org/r.html) [today.]\n");
    QTest::newRow("markdown code, snake_case, nested")
        << "b.md" << QByteArray("- Run `make test` in my_project_dir *now* and **_read_ it**.\n")
        << QStringList{"Run <s1></s1> in my_project_dir <s2>now</s2> and <s3><s4>read</s4> it</s3>."}
        << QByteArray("- «Run `make test` in my_project_dir *now* and **_read_ it**.»\n")
        << QByteArray("- [Run] `make test` [in my_project_dir] *[now]* [and] **_[read]_ [it]**.\n");
    QTest::newRow("markdown unpaired asterisk")
        << "c.md" << QByteArray("Prices rise 5 * 3 times, see <https://example.org>.\n")
        << QStringList{"Prices rise 5 * 3 times, see <s1></s1>."} << QByteArray("«Prices rise 5 * 3 times, see <https://example.org>.»\n")
        << QByteArray("[Prices rise 5 * 3 times, see] <https://example.org>.\n");
    QTest::newRow("html inline elements") << "a.html"
                                          << QByteArray("<p>\n  Click <b>here</b> to see the <a href=\"r.html\">weather</a>.\n</p>\n")
                                          << QStringList{"Click <s1>here</s1> to see the <s2>weather</s2>."}
                                          << QByteArray("<p>\n  «Click <b>here</b> to see the <a href=\"r.html\">weather</a>.»\n</p>\n")
                                          << QByteArray(
                                                 "<p>\n  [Click] <b>[here]</b> [to see the] <a href=\"r.html\">[weather]</a>.\n</p>\n");
    QTest::newRow("html line break, entities, code, empty cell")
        << "b.html" << QByteArray("<td>&nbsp;</td><p>Fish &amp; chips<br>\n  are <em>good</em> with <code>x &lt; 2</code></p>")
        << QStringList{"Fish & chips<s1></s1> are <s2>good</s2> with <s3></s3>"}
        << QByteArray("<td>&nbsp;</td><p>«Fish &amp; chips<br> are <em>good</em> with <code>x &lt; 2</code>»</p>")
        << QByteArray("<td>&nbsp;</td><p>[Fish &amp; chips]<br> [are] <em>[good]</em> [with] <code>x &lt; 2</code></p>");
    QTest::newRow("html entities the decoder does not know stay as written")
        << "d.html" << QByteArray("<p>Go &rarr; now &copy; <b>us</b></p>") << QStringList{"Go &rarr; now © <s1>us</s1>"}
        << QByteArray("<p>«Go &rarr; now © <b>us</b>»</p>") << QByteArray("<p>[Go &rarr; now ©] <b>[us]</b></p>");
    // The text "&amp;" is written "&amp;amp;": decoded for the model, it must come back as the same text.
    QTest::newRow("html text that reads as an entity")
        << "e.html" << QByteArray("<p>Use &amp;amp; for <b>an ampersand</b>.</p>") << QStringList{"Use &amp; for <s1>an ampersand</s1>."}
        << QByteArray("<p>«Use &amp;amp; for <b>an ampersand</b>.»</p>") << QByteArray("<p>[Use &amp;amp; for] <b>[an ampersand]</b>.</p>");
    QTest::newRow("html link with a title starts a piece")
        << "c.html" << QByteArray("<p>See <a href=\"r.html\" title=\"The report\">the report</a> now.</p>")
        << QStringList{"the report<s1></s1> now."}
        << QByteArray("<p>«See» <a href=\"r.html\" title=\"«The report»\">«the report</a> now.»</p>")
        << QByteArray("<p>[See] <a href=\"r.html\" title=\"[The report]\">[the report]</a> [now.]</p>");
}

void TestDocuments::inlineMarkup() {
    QFETCH(QString, name);
    QFETCH(QByteArray, content);
    QFETCH(QStringList, asked);
    QFETCH(QByteArray, whole);
    QFETCH(QByteArray, pieces);
    QTemporaryDir dir;
    const auto input = dir.filePath(name);
    QVERIFY(writeBytes(input, content));
    auto r = request(input, dir.filePath("whole-" + name));
    QStringList formatted;
    r.translate = [](const std::string& text) { return "«" + text + "»"; };
    r.translateFormatted = [&](const std::string& tagged) {
        formatted << QString::fromStdString(tagged);
        return "«" + tagged + "»";
    };
    documents::translateDocument(r);
    QCOMPARE(formatted, asked);
    QCOMPARE(fileBytes(r.output), whole);
    r.output = dir.filePath("pieces-" + name);
    r.translateFormatted = nullptr;
    r.translate = [](const std::string& text) { return "[" + text + "]"; };
    documents::translateDocument(r);
    QCOMPARE(fileBytes(r.output), pieces);
}

QTEST_GUILESS_MAIN(TestDocuments)
#include "tst_documents.moc"
