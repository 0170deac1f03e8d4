// The window translating on a server (a real `dragoman-cli serve` on loopback): servers saved in the settings
// (never their keys) and listed beside local models, the connection dialog listing models and testing the
// connection with a plain verdict, text streamed from the server equal to the local engine's, a document
// translated with several segments in flight, Stop closing every request, and a server that dies.
#include "../app/serve_process.h"
#include "document_panel.h"
#include "documents/document_translation.h"
#include "dragoman.h"
#include "engine_worker.h"
#include "main_window.h"
#include "model_manager_dialog.h"
#include "remote/switching_backend.h"
#include "server_dialog.h"
#include "translation_controller.h"

#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace dragoman;

namespace {

const QString kMarian = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");
const QString kText = QStringLiteral("The man sees a small house today.\n\nMy brother lives in Berlin.");

QString localTranslation(const QString& model, const QString& text) {
    TranslationRequest request{text.toStdString(), "en", "de", 1, 1, {}};
    return QString::fromStdString(Model::load(model.toStdString())->translate(request));
}

bool writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

}  // namespace

class TestRemoteWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { QSettings().remove(QStringLiteral("servers")); }
    void savedServersNeverHoldTheKey();
    void dialogListsModelsAndTestsTheConnection();
    void windowTranslatesOnAServer();
    void managerListsServers();
    void stopClosesADocumentsRequests();
    void loadingWhileAServerStreams();
    void cancelWhileConnecting();
};

void TestRemoteWindow::savedServersNeverHoldTheKey() {
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath("key"), "s3cret-key-42\n"));
    saveServerEngine({"gpu-box", "http://gpu-box:8000", "tencent/HY-MT1.5-7B", dir.filePath("key"), {}, 30});
    QVERIFY_THROWS_EXCEPTION(Error, saveServerEngine({"", "http://x", {}, {}, {}, 30}));
    QVERIFY_THROWS_EXCEPTION(Error, saveServerEngine({"ftp", "ftp://x", {}, {}, {}, 30}));
    QSettings().sync();
    QFile settings(QSettings().fileName());
    QVERIFY(settings.open(QIODevice::ReadOnly));
    QVERIFY(!settings.readAll().contains("s3cret"));
    const auto saved = savedServerEngine(QStringLiteral("server:gpu-box"));
    QVERIFY(saved);
    QCOMPARE(saved->label(), QStringLiteral("HY-MT1.5-7B on gpu-box"));
    QCOMPARE(remoteSettingsOf(*saved).apiKey, QStringLiteral("s3cret-key-42"));  // read when connecting
    QCOMPARE(remoteSettingsOf(*saved).idleTimeoutMs, 30000);
    auto fromEnvironment = *saved;
    fromEnvironment.keyFile.clear();
    fromEnvironment.keyVariable = QStringLiteral("DRAGOMAN_TEST_UNSET_KEY");
    QVERIFY_THROWS_EXCEPTION(Error, remoteSettingsOf(fromEnvironment));  // a variable that is not set says so
    qputenv("DRAGOMAN_TEST_KEY", "from-env");
    fromEnvironment.keyVariable = QStringLiteral("DRAGOMAN_TEST_KEY");
    QCOMPARE(remoteSettingsOf(fromEnvironment).apiKey, QStringLiteral("from-env"));

    EngineWorker engine(0, std::make_unique<SwitchingBackend>());
    TranslationController controller(&engine);
    MainWindow window(&controller);
    const int index = window.modelPicker()->findData(QStringLiteral("server:gpu-box"));
    QVERIFY(index >= 0);  // beside the local models
    QCOMPARE(window.modelPicker()->itemText(index), QStringLiteral("HY-MT1.5-7B on gpu-box"));
    removeServerEngine(QStringLiteral("gpu-box"));
    QVERIFY(!savedServerEngine(QStringLiteral("gpu-box")));
}

void TestRemoteWindow::dialogListsModelsAndTestsTheConnection() {
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath("key"), "right-key\n"));
    QVERIFY(writeFile(dir.filePath("wrong"), "wrong-key\n"));
    Server server({"--model", kMarian, "--api-key-file", dir.filePath("key"), "--adapter",
                   "tuned=" DRAGOMAN_TEST_FIXTURES "/lora/marian-tiny.attn-ffn"});
    QVERIFY(!server.url().isEmpty());
    ServerDialog dialog;
    dialog.nameField()->setText(QStringLiteral("loopback"));
    dialog.urlField()->setText(server.url());
    dialog.keySource()->setCurrentIndex(dialog.keySource()->findData(QStringLiteral("file")));
    dialog.keyField()->setText(dir.filePath("key"));
    QSignalSpy listed(&dialog, &ServerDialog::modelsListed);
    QTest::mouseClick(dialog.listButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(listed.count(), 1, 30000);
    QCOMPARE(listed.last().at(0).toInt(), 2);  // the base and its adapter
    QCOMPARE(dialog.modelPicker()->count(), 2);
    QVERIFY(dialog.modelPicker()->findText(QStringLiteral("tuned")) >= 0);

    QSignalSpy tested(&dialog, &ServerDialog::testFinished);
    QTest::mouseClick(dialog.testButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(tested.count(), 1, 30000);
    QVERIFY2(tested.last().at(0).toBool(), qPrintable(dialog.verdict()->text()));
    QVERIFY2(dialog.verdict()->text().startsWith("Connected"), qPrintable(dialog.verdict()->text()));

    dialog.keyField()->setText(dir.filePath("wrong"));
    dialog.testConnection();
    QTRY_COMPARE_WITH_TIMEOUT(tested.count(), 2, 30000);
    QVERIFY(!tested.last().at(0).toBool());
    QVERIFY2(dialog.verdict()->text().contains("refused the API key"), qPrintable(dialog.verdict()->text()));
    dialog.urlField()->setText(QStringLiteral("http://127.0.0.1:9"));
    dialog.testConnection();
    QTRY_COMPARE_WITH_TIMEOUT(tested.count(), 3, 30000);
    QVERIFY2(dialog.verdict()->text().contains("cannot reach"), qPrintable(dialog.verdict()->text()));

    dialog.urlField()->setText(QStringLiteral("not a url at all"));
    dialog.accept();  // refused with the reason, nothing saved
    QVERIFY(!dialog.verdict()->text().isEmpty());
    QVERIFY(!savedServerEngine(QStringLiteral("loopback")));
    dialog.urlField()->setText(server.url());
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(savedServerEngine(QStringLiteral("loopback"))->keyFile, dir.filePath("wrong"));
}

// The model manager lists saved servers beside the local models: Verify connects and asks for the languages, Use
// loads it in the window, Forget removes it from the list (and the window's picker) once it is not in use.
void TestRemoteWindow::managerListsServers() {
    Server server({"--model", kMarian});
    QVERIFY(!server.url().isEmpty());
    saveServerEngine({"loopback", server.url(), {}, {}, {}, 10});
    EngineWorker engine(0, std::make_unique<SwitchingBackend>());
    TranslationController controller(&engine);
    MainWindow window(&controller);
    window.show();
    auto* manager = window.manageModels();
    QVERIFY(manager->selectModel(QStringLiteral("server:loopback")));
    const auto row = manager->table()->currentRow();
    QVERIFY(manager->table()->item(row, 1)->text().startsWith(QStringLiteral("Server:")));
    QCOMPARE(manager->table()->item(row, 6)->text(), server.url());
    manager->verifySelected(false);
    QTRY_VERIFY_WITH_TIMEOUT(manager->message()->text().contains(QStringLiteral("answers")), 30000);
    QVERIFY2(manager->message()->text().contains(QStringLiteral("into 1 language")), qPrintable(manager->message()->text()));

    QTest::mouseClick(manager->useButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window.modelStatus()->text().startsWith("Translating on loopback"), 30000);
    QVERIFY(manager->selectModel(QStringLiteral("server:loopback")));
    QVERIFY(!manager->forgetButton()->isEnabled());  // in use
    window.loadModel(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny"));
    QTRY_VERIFY_WITH_TIMEOUT(window.modelStatus()->text().startsWith("Model "), 30000);
    QVERIFY(manager->selectModel(QStringLiteral("server:loopback")));
    QTRY_VERIFY(manager->forgetButton()->isEnabled());
    manager->forgetSelected();
    QVERIFY2(manager->message()->text().startsWith(QStringLiteral("Removed the server loopback")), qPrintable(manager->message()->text()));
    QVERIFY(!manager->selectModel(QStringLiteral("server:loopback")));
    QVERIFY(window.modelPicker()->findData(QStringLiteral("server:loopback")) < 0);
    QVERIFY(!savedServerEngine(QStringLiteral("loopback")));
}

void TestRemoteWindow::windowTranslatesOnAServer() {
    auto server = std::make_unique<Server>(QStringList{"--model", kMarian});
    QVERIFY(!server->url().isEmpty());
    saveServerEngine({"loopback", server->url(), {}, {}, {}, 10});
    const auto expected = localTranslation(kMarian, kText);
    EngineWorker engine(0, std::make_unique<SwitchingBackend>());
    TranslationController controller(&engine);
    controller.setTranslateAsYouType(false);
    MainWindow window(&controller);
    window.show();
    window.loadModel(QStringLiteral("server:loopback"));
    QTRY_VERIFY_WITH_TIMEOUT(window.modelStatus()->text().startsWith("Translating on loopback"), 30000);
    QCOMPARE(window.toPicker()->currentData().toString(), QStringLiteral("de"));  // the served pair, from /languages
    window.sourcePane()->setPlainText(kText);
    QTest::mouseClick(window.translateButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window.translationStatus()->text().contains("tokens/s"), 30000);
    QCOMPARE(window.outputPane()->toPlainText(), expected);

    // A document, its segments in flight together on the server: the same file as the local engine writes.
    QTemporaryDir dir;
    QVERIFY(QFile::copy(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/documents/sample.md"), dir.filePath("sample.md")));
    QSignalSpy done(&controller, &TranslationController::documentFinished);
    window.translateDocument(dir.filePath("sample.md"));
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
    QFile remote(done.last().at(0).toString());
    QVERIFY(remote.open(QIODevice::ReadOnly));
    documents::DocumentRequest local;
    local.input = dir.filePath("sample.md");
    local.output = dir.filePath("local.md");
    local.to = "de";
    const auto model = Model::load(kMarian.toStdString());
    local.translate = [&](const std::string& text) { return model->translate({text, "en", "de", 1, 1, {}}); };
    documents::translateDocument(local);
    QFile localFile(local.output);
    QVERIFY(localFile.open(QIODevice::ReadOnly));
    QCOMPARE(remote.readAll(), localFile.readAll());

    // The server goes away: one clear message, and the window still works with a local model.
    server.reset();
    QSignalSpy failed(&controller, &TranslationController::translationFailed);
    window.translateNow();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
    QVERIFY2(failed.last().at(0).toString().contains("cannot reach"), qPrintable(failed.last().at(0).toString()));
    window.loadModel(kMarian);
    QTRY_VERIFY_WITH_TIMEOUT(window.modelStatus()->text().startsWith("Model"), 30000);
    window.translateNow();
    QTRY_COMPARE_WITH_TIMEOUT(window.outputPane()->toPlainText(), expected, 30000);
}

// Stop during a document on a (slow, HY-MT) server: every request in flight ends, no file is written.
void TestRemoteWindow::stopClosesADocumentsRequests() {
    Server server({"--model", DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny", "--max-batch", "8"});
    QVERIFY(!server.url().isEmpty());
    saveServerEngine({"slow", server.url(), {}, {}, {}, 30});
    EngineWorker engine(0, std::make_unique<SwitchingBackend>());
    TranslationController controller(&engine);
    MainWindow window(&controller);
    window.loadModel(QStringLiteral("server:slow"));
    QTRY_VERIFY_WITH_TIMEOUT(window.modelStatus()->text().startsWith("Translating on slow"), 30000);
    QTemporaryDir dir;
    QByteArray text;
    for (int i = 0; i < 40; ++i)
        text += "Paragraph " + QByteArray::number(i) + ": the weather is nice today and my brother lives in Berlin.\n\n";
    QVERIFY(writeFile(dir.filePath("long.txt"), text));
    QSignalSpy progress(&controller, &TranslationController::documentProgress);
    QSignalSpy failed(&controller, &TranslationController::documentFailed);
    window.translateDocument(dir.filePath("long.txt"));
    QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 2, 60000);
    QElapsedTimer stopping;
    stopping.start();
    QTest::mouseClick(window.documentPanel()->cancelAllButton(), Qt::LeftButton);  // Stop (Esc) is the text's
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
    QVERIFY2(stopping.elapsed() < 5000, qPrintable(QString::number(stopping.elapsed())));  // not after the segments' ends
    QVERIFY(failed.last().at(0).toString().contains("nothing was written"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("long.txt")});
}

// Choosing a local model while a slow server streams: the load waits for the translation's step, nothing runs
// inside it, and the local model is the one in use afterwards.
void TestRemoteWindow::loadingWhileAServerStreams() {
    Server server({"--model", DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny"});
    QVERIFY(!server.url().isEmpty());
    saveServerEngine({"slow", server.url(), {}, {}, {}, 30});
    EngineWorker engine(0, std::make_unique<SwitchingBackend>());
    TranslationController controller(&engine);
    controller.setTranslateAsYouType(false);
    MainWindow window(&controller);
    window.loadModel(QStringLiteral("server:slow"));
    QTRY_VERIFY_WITH_TIMEOUT(window.modelStatus()->text().startsWith("Translating on slow"), 30000);
    QSignalSpy deltas(&controller, &TranslationController::outputAppended);
    window.sourcePane()->setPlainText(QStringLiteral("The weather is nice today.\nMy brother lives in Berlin.\nGood morning."));
    window.translateNow();
    QTRY_VERIFY_WITH_TIMEOUT(deltas.count() > 0, 30000);
    window.loadModel(kMarian);  // while the server streams
    window.translateNow();
    QTRY_VERIFY_WITH_TIMEOUT(window.modelStatus()->text().startsWith("Model"), 30000);
    QTRY_VERIFY_WITH_TIMEOUT(window.translationStatus()->text().contains("tokens/s"), 30000);
    window.translateNow();  // the local model now
    QTRY_COMPARE_WITH_TIMEOUT(
        window.outputPane()->toPlainText(),
        localTranslation(kMarian, QStringLiteral("The weather is nice today.\nMy brother lives in Berlin.\nGood morning.")), 30000);
}

// A server that takes the connection and never answers: Cancel loading ends the attempt at once.
void TestRemoteWindow::cancelWhileConnecting() {
    QTcpServer silent;
    QVERIFY(silent.listen(QHostAddress::LocalHost));
    saveServerEngine({"silent", QStringLiteral("http://127.0.0.1:%1").arg(silent.serverPort()), {}, {}, {}, 120});
    EngineWorker engine(0, std::make_unique<SwitchingBackend>());
    TranslationController controller(&engine);
    QSignalSpy failed(&controller, &TranslationController::loadFailed);
    controller.loadModel(QStringLiteral("server:silent"));
    QTRY_VERIFY_WITH_TIMEOUT(silent.hasPendingConnections() || silent.waitForNewConnection(100), 10000);
    QElapsedTimer cancelling;
    cancelling.start();
    controller.cancelLoad();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    QVERIFY(cancelling.elapsed() < 3000);
    QVERIFY2(failed.last().at(0).toString().contains("cancelled"), qPrintable(failed.last().at(0).toString()));
}

QTEST_MAIN(TestRemoteWindow)
#include "tst_remote_window.moc"
