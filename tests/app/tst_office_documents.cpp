// Office packages (OpenDocument text and presentations, PowerPoint) translated: the package is copied entry for
// entry with only its text parts replaced, each paragraph's structure (tabs, breaks, links, footnotes, fields,
// formatting) stays, and LibreOffice opens the translated copy. The fixtures were saved by LibreOffice itself
// from the flat sources beside them (tests/fixtures/documents/README.md).
#include "../engine/test_files.h"
#include "documents/document_format.h"
#include "documents/document_translation.h"
#include "package_files.h"
#include "util/error.h"

#include <QCryptographicHash>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <zip.h>

using namespace dragoman;
using namespace dragoman::test;

namespace {

QString documentFixture(const QString& name) {
    return QString::fromStdString((test::fixture("documents") / name.toStdString()).string());
}

// Every translation is the source in brackets, so what was translated, and where it went, is exact.
documents::DocumentRequest bracketing(const QString& input, const QString& output, int* calls = nullptr) {
    documents::DocumentRequest r;
    r.input = input;
    r.output = output;
    r.to = "de";
    r.translate = [calls](const std::string& text) {
        if (calls) ++*calls;
        return "[" + text + "]";
    };
    return r;
}

// An OpenDocument text whose content.xml and styles.xml declare `content` and `styles` bytes of zeros: deflate
// packs them about a thousand to one.
bool writeZipBomb(const QString& path, std::size_t content, std::size_t styles) {
    int error = 0;
    zip_t* z = zip_open(QFile::encodeName(path).constData(), ZIP_CREATE | ZIP_EXCL, &error);
    if (!z) return false;
    static const char mimetype[] = "application/vnd.oasis.opendocument.text";
    zip_source_t* kind = zip_source_buffer(z, mimetype, sizeof mimetype - 1, 0);
    bool ok = kind && zip_file_add(z, "mimetype", kind, 0) >= 0;
    const QByteArray zeros(static_cast<qsizetype>(std::max(content, styles)), '\0');
    for (const auto& [entry, size] : {std::pair{"content.xml", content}, std::pair{"styles.xml", styles}}) {
        zip_source_t* source = ok ? zip_source_buffer(z, zeros.constData(), size, 0) : nullptr;
        const auto index = source ? zip_file_add(z, entry, source, 0) : -1;
        ok = index >= 0 && zip_set_file_compression(z, static_cast<zip_uint64_t>(index), ZIP_CM_DEFLATE, 1) == 0;
    }
    if (!ok) {
        zip_discard(z);
        return false;
    }
    return zip_close(z) == 0;
}

// The part's own root and first paragraph, with `depth` wrappers (content controls, spans) around one run inside it.
QByteArray deeplyNested(const QString& package, const QString& entry, int depth) {
    const bool word = entry.startsWith("word/");
    const auto original = zipEntry(package, entry.toUtf8().constData());
    const auto rootEnd = original.indexOf('>', original.indexOf(word ? "<w:document" : "<office:document-content")) + 1;
    QByteArray open = word ? "<w:sdt><w:sdtContent>" : "<text:span>", close = word ? "</w:sdtContent></w:sdt>" : "</text:span>";
    QByteArray xml = original.left(rootEnd);
    xml += word ? "<w:body><w:p>" : "<office:body><office:text><text:p>";
    xml += open.repeated(depth);
    xml += word ? "<w:r><w:t>Hello world.</w:t></w:r>" : "Hello world.";
    xml += close.repeated(depth);
    xml += word ? "</w:p></w:body></w:document>" : "</text:p></office:text></office:body></office:document-content>";
    return xml;
}

}  // namespace

class TestOfficeDocuments : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void packagesKeepTheirStructure_data();
    void packagesKeepTheirStructure();
    void libreOfficeOpensTheCopy_data();
    void libreOfficeOpensTheCopy();
    void openDocumentSpacesAndMainRuns();
    void badPackagesAreRefused_data();
    void badPackagesAreRefused();
    void utf16PartsComeBackAsUtf8();
};

void TestOfficeDocuments::packagesKeepTheirStructure_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("translatedParts");  // entry=text that must now be there, bracketed
    QTest::addColumn<QStringList>("keptXml");          // structure that must still be in the first part
    QTest::addColumn<QStringList>("unchangedParts");   // entries copied byte for byte
    QTest::newRow("odt")
        << "sample.odt"
        << QStringList{"content.xml=[The weather report]",
                       "content.xml=<text:span text:style-name=\"Strong\">[Note:]</text:span> [the weather is nice today.]",
                       "content.xml=[See] ",
                       "content.xml=[our report]",
                       "content.xml= [for the weather.]",
                       "content.xml=[Name]<text:tab/>[A small house]",
                       "content.xml=[Good morning]<text:line-break/>[Good evening]",
                       "content.xml=[The man sees the house.]<text:note text:id=\"ftn1\" "
                       "text:note-class=\"footnote\"><text:note-citation>1</text:note-citation>",
                       "content.xml=[The house is small.]",
                       "content.xml=[City]",
                       "content.xml=\">42</text:p>",
                       "styles.xml=[Good morning from the header]",
                       "styles.xml=[Page] <text:page-number"}
        << QStringList{"xlink:href=\"https://example.org/report.html\"", "<text:span text:style-name=\"Strong\">",
                       "<text:list text:style-name=\"L1\">", "<table:table table:name=\"T1\""}
        << QStringList{"meta.xml", "settings.xml", "META-INF/manifest.xml", "mimetype"};
    QTest::newRow("odp") << "sample.odp"
                         << QStringList{"content.xml=[The weather report]",
                                        "content.xml=[Good morning]<text:line-break/>[Good evening]",
                                        "content.xml=[our report]",
                                        "content.xml=[The man sees the house.]",  // speaker notes
                                        "content.xml=[City]",
                                        "content.xml=[I like the house.]"}
                         << QStringList{"presentation:class=\"notes\"", "<table:table-cell"}
                         << QStringList{"meta.xml", "styles.xml", "META-INF/manifest.xml", "mimetype"};
    QTest::newRow("pptx") << "sample.pptx"
                          << QStringList{"ppt/slides/slide1.xml=<a:t>[The weather report]</a:t>",
                                         "ppt/slides/slide1.xml=<a:t>[Note:]</a:t>",
                                         "ppt/slides/slide1.xml=<a:t> [the weather is nice today.]</a:t>",
                                         "ppt/slides/slide1.xml=<a:t>[Good morning]</a:t></a:r><a:br>",
                                         "ppt/slides/slide1.xml=<a:t>[our report]</a:t>",
                                         "ppt/slides/slide2.xml=<a:t>[City]</a:t>",
                                         "ppt/slides/slide2.xml=<a:t>42</a:t>",
                                         "ppt/notesSlides/notesSlide1.xml=<a:t>[The man sees the house.]</a:t>"}
                          << QStringList{"<a:hlinkClick r:id=\"rId1\"/>", "b=\"1\""}
                          << QStringList{"[Content_Types].xml", "ppt/presentation.xml", "ppt/slideLayouts/slideLayout2.xml",
                                         "ppt/slideMasters/slideMaster1.xml", "ppt/slides/_rels/slide1.xml.rels"};
}

void TestOfficeDocuments::packagesKeepTheirStructure() {
    QFETCH(QString, file);
    QFETCH(QStringList, translatedParts);
    QFETCH(QStringList, keptXml);
    QFETCH(QStringList, unchangedParts);
    QTemporaryDir dir;
    const auto input = documentFixture(file);
    const auto before = fileBytes(input);
    const auto output = dir.filePath("out." + QFileInfo(file).suffix());
    const auto result = documents::translateDocument(bracketing(input, output));
    QCOMPARE(result.output, output);
    QCOMPARE(fileBytes(input), before);
    QCOMPARE(zipEntryNames(output), zipEntryNames(input));  // every entry, in its order
    for (const auto& entry : unchangedParts)
        QVERIFY2(zipEntry(output, entry.toUtf8().constData()) == zipEntry(input, entry.toUtf8().constData()), qPrintable(entry));
    QString first;
    for (const auto& expected : translatedParts) {
        const auto entry = expected.section('=', 0, 0), text = expected.section('=', 1);
        const auto xml = QString::fromUtf8(zipEntry(output, entry.toUtf8().constData()));
        if (first.isEmpty()) first = xml;
        QVERIFY2(xml.contains(text), qPrintable("no " + text + " in " + entry + ":\n" + xml.right(3000)));
    }
    for (const auto& kept : keptXml)
        QVERIFY2(first.contains(kept), qPrintable("lost " + kept));
    if (file.startsWith("sample.od")) {  // the OpenDocument package rule: mimetype first, stored uncompressed
        QCOMPARE(zipEntryNames(output).value(0), QStringLiteral("mimetype"));
        QVERIFY(zipEntryStored(output, "mimetype"));
    }
}

void TestOfficeDocuments::libreOfficeOpensTheCopy_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("odt") << "sample.odt";
    QTest::newRow("odp") << "sample.odp";
    QTest::newRow("pptx") << "sample.pptx";
    QTest::newRow("docx") << "sample.docx";
}

// LibreOffice (installer/packages.txt installs it for the tests) turns the translated copy into a PDF, and the
// PDF's text holds the translations: the package is one an office suite reads, not only one our reader takes.
void TestOfficeDocuments::libreOfficeOpensTheCopy() {
    QFETCH(QString, file);
    const auto soffice = QStandardPaths::findExecutable(QStringLiteral("soffice"));
    if (soffice.isEmpty()) QSKIP("LibreOffice (soffice) is not installed");
    QTemporaryDir dir;
    const auto output = dir.filePath("translated." + QFileInfo(file).suffix());
    documents::translateDocument(bracketing(documentFixture(file), output));
    QProcess convert;
    convert.setWorkingDirectory(dir.path());
    convert.start(soffice, {"-env:UserInstallation=file://" + dir.filePath("profile"), "--headless", "--convert-to", "pdf", "--outdir",
                            dir.path(), output});
    QVERIFY(convert.waitForFinished(180000));
    QCOMPARE(convert.exitCode(), 0);
    const auto pdf = dir.filePath("translated.pdf");
    QVERIFY2(QFileInfo(pdf).size() > 0, convert.readAllStandardError().constData());
    const auto* format = documents::formatOf(pdf);
    QVERIFY(format);
    std::string text;
    for (const auto& segment : format->read(pdf, {})->segments())
        text += segment + "\n";
    QVERIFY2(text.find("[The weather report]") != std::string::npos || text.find("[The weather is nice today.]") != std::string::npos,
             text.c_str());
}

// OpenDocument spaces: an indent (text:s before the first words) stays, spaces inside a sentence go with its
// translation; a run of whitespace is never the piece's main run, whatever its length.
void TestOfficeDocuments::openDocumentSpacesAndMainRuns() {
    const QString body = QStringLiteral(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><office:document-content "
        "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" "
        "office:version=\"1.3\"><office:body><office:text>%1</office:text></office:body></office:document-content>");
    QTemporaryDir dir;
    const auto input = dir.filePath("spaces.odt");
    QVERIFY(QFile::copy(documentFixture("sample.odt"), input));
    QFile::setPermissions(input, QFile::ReadOwner | QFile::WriteOwner);
    QVERIFY(
        replaceZipEntry(input, "content.xml",
                        body.arg("<text:p><text:s text:c=\"4\"/>Indented text<text:s/> here</text:p><text:p>Name<text:tab/><text:s "
                                 "text:c=\"2\"/>after the tab</text:p><text:p><text:span text:style-name=\"T1\">Bold</text:span><text:span "
                                 "text:style-name=\"T2\">        </text:span></text:p>")
                            .toUtf8()));
    const auto r = bracketing(input, dir.filePath("out.odt"));
    documents::translateDocument(r);
    QCOMPARE(
        QString::fromUtf8(zipEntry(r.output, "content.xml")),
        body.arg("<text:p><text:s text:c=\"4\"/>[Indented text  here]</text:p><text:p>[Name]<text:tab/><text:s text:c=\"2\"/>[after the "
                 "tab]</text:p><text:p><text:span text:style-name=\"T1\">[Bold]</text:span><text:span text:style-name=\"T2\">        "
                 "</text:span></text:p>"));
}

void TestOfficeDocuments::badPackagesAreRefused_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("make");  // how the file is made
    QTest::addColumn<QString>("message");
    QTest::newRow("text named .odt") << "letter.odt"
                                     << "text"
                                     << "is not an OpenDocument text (not a readable ZIP package";
    QTest::newRow("text named .pptx") << "slides.pptx"
                                      << "text"
                                      << "is not a PowerPoint presentation (not a readable ZIP package";
    QTest::newRow("presentation named .odt") << "deck.odt"
                                             << "copy:sample.odp"
                                             << "its mimetype is application/vnd.oasis.opendocument.presentation";
    QTest::newRow("word document named .pptx") << "deck.pptx"
                                               << "copy:sample.docx"
                                               << "no ppt/presentation.xml in the package";
    QTest::newRow("odt without content") << "empty.odt"
                                         << "delete:sample.odt:content.xml"
                                         << "no content.xml in the package";
    QTest::newRow("odt with broken XML") << "broken.odt"
                                         << "break:sample.odt:content.xml"
                                         << "content.xml is not valid XML";
    QTest::newRow("slide with broken XML") << "broken.pptx"
                                           << "break:sample.pptx:ppt/slides/slide2.xml"
                                           << "slide2.xml is not valid XML";
    // Nested past any real document (a few kilobytes once deflated): refused before anything walks it.
    QTest::newRow("odt nested 30,000 deep") << "deep.odt"
                                            << "deep:sample.odt:content.xml"
                                            << "content.xml nests its elements more than 1000 levels deep";
    QTest::newRow("docx nested 30,000 deep") << "deep.docx"
                                             << "deep:sample.docx:word/document.xml"
                                             << "word/document.xml nests its elements more than 1000 levels deep";
    QTest::newRow("zip bomb, one part") << "bomb.odt"
                                        << "bomb:150:1"
                                        << "content.xml is unreadable or too large";
    QTest::newRow("zip bomb, parts together") << "bombs.odt"
                                              << "bomb:100:100"
                                              << "its text parts unpack to more than 192 MiB";
}

void TestOfficeDocuments::badPackagesAreRefused() {
    QFETCH(QString, name);
    QFETCH(QString, make);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const auto input = dir.filePath(name);
    const auto how = make.split(':');
    if (how[0] == "text") {
        QVERIFY(writeBytes(input, "Dear Sir,\n"));
    } else if (how[0] == "bomb") {  // bomb:CONTENT_MIB:STYLES_MIB
        QVERIFY(writeZipBomb(input, how[1].toULongLong() << 20, how[2].toULongLong() << 20));
        QVERIFY(QFileInfo(input).size() < 2 << 20);
    } else {
        QVERIFY(QFile::copy(documentFixture(how[1]), input));
        QFile::setPermissions(input, QFile::ReadOwner | QFile::WriteOwner);
        if (how[0] == "delete") QVERIFY(replaceZipEntry(input, how[2].toUtf8().constData(), {}));
        if (how[0] == "break") QVERIFY(replaceZipEntry(input, how[2].toUtf8().constData(), "<office:document-content><text:p>unclosed"));
        if (how[0] == "deep") QVERIFY(replaceZipEntry(input, how[2].toUtf8().constData(), deeplyNested(input, how[2], 30000)));
    }
    const auto before = fileBytes(input);
    int calls = 0;
    const auto output = dir.filePath("out." + QFileInfo(name).suffix());
    try {
        documents::translateDocument(bracketing(input, output, &calls));
        QFAIL("accepted a bad package");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("input"));
        QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
    }
    QCOMPARE(calls, 0);
    QVERIFY(!QFile::exists(output));
    QCOMPARE(fileBytes(input), before);
}

// A part may be stored in UTF-16 (the package format allows it): the copy is written in UTF-8, so its declaration must
// say UTF-8, or Word refuses the file.
void TestOfficeDocuments::utf16PartsComeBackAsUtf8() {
    QTemporaryDir dir;
    const auto input = dir.filePath("utf16.docx"), output = dir.filePath("out.docx");
    QVERIFY(QFile::copy(documentFixture("sample.docx"), input));
    QFile::setPermissions(input, QFile::ReadOwner | QFile::WriteOwner);
    auto xml = QString::fromUtf8(zipEntry(input, "word/document.xml"));
    QVERIFY(xml.startsWith("<?xml"));
    xml.replace(QRegularExpression(R"(encoding="[^"]*")"), R"(encoding="UTF-16")");
    QByteArray utf16("\xFF\xFE", 2);
    utf16.append(reinterpret_cast<const char*>(xml.utf16()), xml.size() * 2);
    QVERIFY(replaceZipEntry(input, "word/document.xml", utf16));
    int calls = 0;
    documents::translateDocument(bracketing(input, output, &calls));
    QVERIFY(calls > 0);
    const auto written = zipEntry(output, "word/document.xml");
    QVERIFY2(written.startsWith(R"(<?xml version="1.0" encoding="UTF-8")"), written.left(80).constData());
    QVERIFY2(written.contains(">[The weather report]</w:t>"), written.constData());
}

QTEST_GUILESS_MAIN(TestOfficeDocuments)
#include "tst_office_documents.moc"
