// The engine thread, through its queued signals only: load progress, streamed tokens that add up to the
// result, cancelling mid-stream, latest-request-wins, and a failed load that keeps the previous model.
#include "engine_worker.h"
#include "queued_signal_spy.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>

using dragoman::EngineWorker;
using dragoman::TranslationInfo;

namespace {

const QString kModel = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");
// Many sentences: the fixture model repeats itself, so this streams for a while.
QString longText() {
    QString text;
    for (int i = 0; i < 80; ++i)
        text += QStringLiteral("My brother lives in Berlin and reads a newspaper every morning. ");
    return text;
}

}  // namespace

class TestEngineWorker : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void loadReportsProgress();
    void tokensAddUpToTheResult();
    void cancelStopsMidStream();
    void onlyTheLatestOfThreeIsDelivered();
    void failedLoadKeepsPreviousModel();
    void onlyTheLatestLoadIsDelivered();
    void translateWithoutModelFails();
    void detectsTheSource_data();
    void detectsTheSource();
    void documentProgressAndCancel();
    void localSegmentsDecodeTogether();

private:
    void loadFixture();
    std::unique_ptr<EngineWorker> worker_;
};

void TestEngineWorker::init() {
    worker_ = std::make_unique<EngineWorker>();
}

void TestEngineWorker::loadFixture() {
    QueuedSignalSpy loaded(worker_.get(), &EngineWorker::loaded);
    worker_->requestLoad(kModel);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
}

void TestEngineWorker::loadReportsProgress() {
    QueuedSignalSpy progress(worker_.get(), &EngineWorker::loadProgress);
    QueuedSignalSpy loaded(worker_.get(), &EngineWorker::loaded);
    worker_->requestLoad(kModel);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    QVERIFY(progress.count() >= 7);  // every phase, named for people, one bar from 0 to 1
    double previous = 0;
    for (const auto& report : progress) {
        QVERIFY(report.at(1).toDouble() >= previous);
        previous = report.at(1).toDouble();
    }
    QCOMPARE(progress.first().at(0).toString(), QStringLiteral("Finding the model"));
    QCOMPARE(progress.last().at(0).toString(), QStringLiteral("Reading the tokenizer"));
    QCOMPARE(progress.last().at(1).toDouble(), 1.0);
    const auto info = loaded.first().at(0).value<dragoman::ModelInfo>();
    QCOMPARE(info.architecture, QStringLiteral("marian"));
    QCOMPARE(info.fixedFrom, QStringLiteral("en"));
    QCOMPARE(info.fixedTo, QStringLiteral("de"));
}

void TestEngineWorker::tokensAddUpToTheResult() {
    loadFixture();
    QueuedSignalSpy tokens(worker_.get(), &EngineWorker::tokenReady);
    QueuedSignalSpy finished(worker_.get(), &EngineWorker::finished);
    const auto id =
        worker_->requestTranslation(QStringLiteral("The man sees a small house today.\n\nMy brother lives in Berlin."), "en", "de");
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QVERIFY(tokens.count() >= 3);
    QString streamed;
    for (const auto& signal : tokens) {
        QCOMPARE(signal.at(0).toULongLong(), id);
        streamed += signal.at(1).toString();
    }
    const auto result = finished.first().at(1).value<TranslationInfo>();
    QCOMPARE(streamed, result.text);
    QCOMPARE(result.text.count('\n'), 2);  // paragraphs stay aligned
    QVERIFY(!result.stopped);
}

void TestEngineWorker::cancelStopsMidStream() {
    loadFixture();
    QueuedSignalSpy tokens(worker_.get(), &EngineWorker::tokenReady);
    QueuedSignalSpy finished(worker_.get(), &EngineWorker::finished);
    const auto id = worker_->requestTranslation(longText(), "en", "de");
    QTRY_VERIFY_WITH_TIMEOUT(tokens.count() >= 1, 30000);
    worker_->cancel(id);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    const auto result = finished.first().at(1).value<TranslationInfo>();
    QVERIFY(result.stopped);
    const int afterStop = tokens.count();
    QTest::qWait(200);
    QCOMPARE(tokens.count(), afterStop);  // nothing arrives after the end
}

void TestEngineWorker::onlyTheLatestOfThreeIsDelivered() {
    loadFixture();
    QueuedSignalSpy tokens(worker_.get(), &EngineWorker::tokenReady);
    QueuedSignalSpy finished(worker_.get(), &EngineWorker::finished);
    worker_->requestTranslation(longText(), "en", "de");
    worker_->requestTranslation(longText(), "en", "de");
    const auto last = worker_->requestTranslation(QStringLiteral("The man sees a small house today."), "en", "de");
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QTest::qWait(200);
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.first().at(0).toULongLong(), last);
    // An earlier request may have streamed a token before it was superseded, never after: once the last
    // request's tokens begin, only they arrive, and they add up to its result.
    QString streamed;
    bool lastStarted = false;
    for (const auto& signal : tokens) {
        const bool isLast = signal.at(0).toULongLong() == last;
        QVERIFY2(isLast || !lastStarted, "a superseded request streamed after the latest one began");
        lastStarted = lastStarted || isLast;
        if (isLast) streamed += signal.at(1).toString();
    }
    QCOMPARE(streamed, finished.first().at(1).value<TranslationInfo>().text);
}

void TestEngineWorker::failedLoadKeepsPreviousModel() {
    loadFixture();
    QueuedSignalSpy failedLoad(worker_.get(), &EngineWorker::loadFailed);
    worker_->requestLoad(QStringLiteral("/nonexistent/model"));
    QTRY_COMPARE_WITH_TIMEOUT(failedLoad.count(), 1, 30000);
    QVERIFY(failedLoad.first().at(0).toString().contains("model_not_found"));
    QueuedSignalSpy finished(worker_.get(), &EngineWorker::finished);
    worker_->requestTranslation(QStringLiteral("The man sees a house."), "en", "de");
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
}

// Picking three models quickly loads the last one: the others are cancelled or skipped and report nothing.
void TestEngineWorker::onlyTheLatestLoadIsDelivered() {
    QueuedSignalSpy loaded(worker_.get(), &EngineWorker::loaded);
    QueuedSignalSpy failed(worker_.get(), &EngineWorker::loadFailed);
    // Requested from the engine thread itself, so none of them can start before the last one is queued (from
    // the GUI thread a busy machine could finish the first load before the second click). The worker is handed
    // over through an atomic, not a capture: ThreadSanitizer cannot see Qt's queue synchronise the capture.
    static std::atomic<EngineWorker*> target;
    target = worker_.get();
    QMetaObject::invokeMethod(
        worker_.get(),
        [] {
            auto* worker = target.load();
            worker->requestLoad(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny"));
            worker->requestLoad(QStringLiteral("/no/such/model"));
            worker->requestLoad(kModel);
        },
        Qt::BlockingQueuedConnection);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    QTest::qWait(200);
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(loaded.first().at(0).value<dragoman::ModelInfo>().architecture, QStringLiteral("marian"));
}

void TestEngineWorker::translateWithoutModelFails() {
    QueuedSignalSpy failed(worker_.get(), &EngineWorker::failed);
    const auto id = worker_->requestTranslation(QStringLiteral("hello"), "en", "de");
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    QCOMPARE(failed.first().at(0).toULongLong(), id);
}

// The source "auto": the worker says what the text looks like and what the model was asked for; the output is
// the one of that source named by hand; a text plainly in a language the model does not read fails, saying so.
void TestEngineWorker::detectsTheSource_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("detected");
    QTest::addColumn<QString>("from");  // empty: refused
    const QString bundled = QStringLiteral(DRAGOMAN_SOURCE_DIR "/resources/models/dragoman-en-de-zh");
    const QString german = QStringLiteral("Die Bibliothek öffnet am Montag wieder ihre Türen für alle Besucher.");
    const QString french = QStringLiteral("La bibliothèque rouvrira ses portes lundi pour tous les visiteurs.");
    QTest::newRow("bundled, German") << bundled << german << "en"
                                     << "de"
                                     << "de";
    QTest::newRow("bundled, Chinese") << bundled << QStringLiteral("图书馆星期一将重新向所有访客开放。") << "en"
                                      << "zh"
                                      << "zh";
    QTest::newRow("bundled, French: not one of its languages") << bundled << french << "en"
                                                               << "fr"
                                                               << "";
    QTest::newRow("bilingual, English") << kModel << QStringLiteral("The library opens its doors again on Monday for all visitors.") << "de"
                                        << "en"
                                        << "en";
    QTest::newRow("bilingual, French") << kModel << french << "de"
                                       << "fr"
                                       << "";
}

void TestEngineWorker::detectsTheSource() {
    QFETCH(QString, model);
    QFETCH(QString, text);
    QFETCH(QString, to);
    QFETCH(QString, detected);
    QFETCH(QString, from);
    QueuedSignalSpy loaded(worker_.get(), &EngineWorker::loaded);
    worker_->requestLoad(model);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    QueuedSignalSpy found(worker_.get(), &EngineWorker::sourceDetected);
    QueuedSignalSpy finished(worker_.get(), &EngineWorker::finished);
    QueuedSignalSpy failed(worker_.get(), &EngineWorker::failed);
    const auto id = worker_->requestTranslation(text, QStringLiteral("auto"), to);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, 30000);
    QCOMPARE(found.count(), 1);
    QCOMPARE(found.first().at(0).toULongLong(), id);
    QCOMPARE(found.first().at(1).toString(), detected);
    QVERIFY(found.first().at(2).toBool());  // whole sentences: the detector is sure
    if (from.isEmpty()) {
        QCOMPARE(failed.count(), 1);
        const auto message = failed.first().at(1).toString();
        QVERIFY2(message.contains(QStringLiteral("looks like French")), qPrintable(message));
        return;
    }
    QCOMPARE(found.first().at(3).toString(), from);
    const auto automatic = finished.first().at(1).value<TranslationInfo>().text;
    worker_->requestTranslation(text, from, to);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 30000);
    QCOMPARE(automatic, finished.at(1).at(1).value<TranslationInfo>().text);
}

// A document job reports progress up to done == total and names its output; a job stopped before it starts
// fails with "nothing was written" and leaves no file.
void TestEngineWorker::documentProgressAndCancel() {
    QTemporaryDir dir;
    const auto input = dir.filePath("notes.md");
    QVERIFY(QFile::copy(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/documents/sample.md"), input));
    QueuedSignalSpy progress(worker_.get(), &EngineWorker::documentProgress);
    QueuedSignalSpy finished(worker_.get(), &EngineWorker::documentFinished);
    QueuedSignalSpy failed(worker_.get(), &EngineWorker::documentFailed);
    // The load keeps the engine thread busy, so the stop lands before the first job starts.
    worker_->requestLoad(kModel);
    const auto stopped = worker_->requestDocument(input, "en", "de");
    worker_->cancelDocument();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
    QCOMPARE(failed.at(0).at(0).toULongLong(), stopped);
    QVERIFY(failed.at(0).at(1).toString().contains("nothing was written"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"notes.md"});

    const auto job = worker_->requestDocument(input, "en", "de");
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QCOMPARE(finished.at(0).at(0).toULongLong(), job);
    QCOMPARE(finished.at(0).at(1).toString(), dir.filePath("notes.de.md"));
    QVERIFY(QFile::exists(dir.filePath("notes.de.md")));
    QVERIFY(!progress.isEmpty());
    const auto last = progress.last();
    QCOMPARE(last.at(1).toInt(), last.at(2).toInt());  // done == total at the end
    QVERIFY(last.at(2).toInt() > 0);
}

// The window's documents on a local translation model keep as many segments in flight as `translate-file`: 16
// decoding together and 16 more whose sources the encoder takes in one pass; a chat model's are 8.
void TestEngineWorker::localSegmentsDecodeTogether() {
    dragoman::LocalBackend backend("cpu");
    QCOMPARE(backend.capabilities().concurrency, 1);  // nothing loaded
    const auto model = backend.load(kModel.toStdString(), {}, {});
    QCOMPARE(model.encodesAhead, 16);
    QCOMPARE(backend.capabilities().concurrency, 32);
    dragoman::ModelDescription chat;
    chat.chat = true;
    QCOMPARE(dragoman::requestsInFlight(chat, dragoman::defaultTogether(chat)), 8);
    QCOMPARE(dragoman::requestsInFlight(model, 8), 8);  // fewer than the model's places: none waiting, none ahead
}

QTEST_GUILESS_MAIN(TestEngineWorker)
#include "tst_engine_worker.moc"
