// The window's logic without a window: languages and settings that survive a restart, a fixed-pair model
// setting the languages, only the latest request reaching the view, translate-as-you-type waiting for a pause,
// an adapter re-translating the text shown, and the startup model's choice. Real engine thread, real fixtures.
#include "dragoman.h"
#include "engine_worker.h"
#include "translation_controller.h"

#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using dragoman::EngineWorker;
using dragoman::TranslationController;
using dragoman::TranslationInfo;

namespace {

const QString kMarian = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");

void loadMarian(TranslationController& controller) {
    QSignalSpy loaded(&controller, &TranslationController::modelLoaded);
    controller.loadModel(kMarian);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
}

QString joined(const QSignalSpy& deltas) {
    QString text;
    for (const auto& args : deltas)
        text += args.at(0).toString();
    return text;
}

}  // namespace

class TestTranslationController : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Settings of this process's own: tests running beside it (ctest -j) write theirs elsewhere.
    void initTestCase() { QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir_.path()); }
    void init();
    void languagesPersist_data();
    void languagesPersist();
    void swapSaysBothLanguages();
    void fixedPairModelSetsTheLanguages();
    void languagesFollowTheModel_data();
    void languagesFollowTheModel();
    void emptyTextIsNotTranslated();
    void detectLanguageThenSwap();
    void documentsQueueInTurn();
    void choicesForModelsOutsideTheTable();
    void onlyTheLatestRequestReachesTheView();
    void asYouTypeWaitsForAPause();
    void adapterTranslatesTheTextAgain();
    void failedAdapterKeepsTheOneInUse();
    void documentBeforeAModelIsRefused();
    void startupModelIsTheLastSessions();
    void instructionsFollowTheModel();
    void promptProfileChosenByHand();

private:
    QTemporaryDir settingsDir_;
};

void TestTranslationController::init() {
    QSettings().clear();
}

void TestTranslationController::languagesPersist_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("expectedFrom");
    QTest::addColumn<QString>("expectedTo");
    QTest::newRow("known pair") << "fr"
                                << "ja"
                                << "fr"
                                << "ja";
    QTest::newRow("dialect") << "zh-Hant"
                             << "yue"
                             << "zh-Hant"
                             << "yue";
    QTest::newRow("unknown code is refused") << "xx"
                                             << "de"
                                             << "en"
                                             << "de";
    QTest::newRow("empty is refused") << ""
                                      << ""
                                      << "en"
                                      << "de";
}

void TestTranslationController::languagesPersist() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, expectedFrom);
    QFETCH(QString, expectedTo);
    {
        TranslationController controller;
        QCOMPARE(controller.sourceLanguage(), QStringLiteral("en"));  // the defaults
        QCOMPARE(controller.targetLanguage(), QStringLiteral("de"));
        controller.setLanguages(from, to);
        controller.setTranslateAsYouType(false);
        controller.setConfiguredThreads(1);
    }
    TranslationController restarted;
    QCOMPARE(restarted.sourceLanguage(), expectedFrom);
    QCOMPARE(restarted.targetLanguage(), expectedTo);
    QVERIFY(!restarted.translatesAsYouType());
    QCOMPARE(TranslationController::configuredThreads(), 1);
}

void TestTranslationController::swapSaysBothLanguages() {
    TranslationController controller;
    QSignalSpy changed(&controller, &TranslationController::languagesChanged);
    controller.setLanguages(QStringLiteral("en"), QStringLiteral("zh"));
    controller.swapLanguages();
    QCOMPARE(changed.count(), 2);
    QCOMPARE(changed.last().at(0).toString(), QStringLiteral("zh"));
    QCOMPARE(changed.last().at(1).toString(), QStringLiteral("en"));
    controller.setLanguages(QStringLiteral("zh"), QStringLiteral("en"));  // no change, no signal
    QCOMPARE(changed.count(), 2);
}

void TestTranslationController::fixedPairModelSetsTheLanguages() {
    EngineWorker engine;
    TranslationController controller(&engine);
    controller.setLanguages(QStringLiteral("fr"), QStringLiteral("ja"));
    QVERIFY(!controller.canTranslate());
    QSignalSpy progress(&controller, &TranslationController::loadProgress);
    loadMarian(controller);
    QVERIFY(controller.canTranslate());
    QVERIFY(!progress.isEmpty());
    QCOMPARE(controller.sourceLanguage(), QStringLiteral("en"));
    QCOMPARE(controller.targetLanguage(), QStringLiteral("de"));
    QCOMPARE(controller.lastSessionModel(), controller.loadedModel());
    // The model's pair is shown, the person's choice kept: a model that offers it brings it back.
    QCOMPARE(QSettings().value(QStringLiteral("languages/to")).toString(), QStringLiteral("ja"));
    QSignalSpy loaded(&controller, &TranslationController::modelLoaded);
    controller.loadModel(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny"));
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    QCOMPARE(controller.sourceLanguage(), QStringLiteral("fr"));
    QCOMPARE(controller.targetLanguage(), QStringLiteral("ja"));
}

// The choices offered follow the model: a bilingual pair its two languages (no swap), a multilingual model the
// languages it writes, on both sides; never the same language twice; the pair shown moves into the choices.
void TestTranslationController::languagesFollowTheModel_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QStringList>("sources");  // empty: not compared (many)
    QTest::addColumn<QStringList>("targets");
    QTest::addColumn<int>("count");
    QTest::addColumn<bool>("swaps");
    QTest::newRow("bilingual Marian") << kMarian << QStringList{"en"} << QStringList{"de"} << 1 << false;
    QTest::newRow("multilingual Marian (the bundled model)")
        << QStringLiteral(DRAGOMAN_SOURCE_DIR "/resources/models/dragoman-en-de-zh") << QStringList{"auto", "de", "en", "zh"}
        << QStringList{"de", "en", "zh"} << 3 << true;
    QTest::newRow("HY-MT") << QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny") << QStringList{} << QStringList{} << 33 << true;
}

void TestTranslationController::languagesFollowTheModel() {
    QFETCH(QString, model);
    QFETCH(QStringList, sources);
    QFETCH(QStringList, targets);
    QFETCH(int, count);
    QFETCH(bool, swaps);
    EngineWorker engine;
    TranslationController controller(&engine);
    QCOMPARE(controller.languageChoices().sources.size(), dragoman::allLanguageChoices().sources.size());
    controller.setLanguages(QStringLiteral("fr"), QStringLiteral("fr"));  // never the same language twice
    QCOMPARE(controller.sourceLanguage(), QStringLiteral("en"));
    QSignalSpy choices(&controller, &TranslationController::languageChoicesChanged);
    QSignalSpy loaded(&controller, &TranslationController::modelLoaded);
    controller.setLanguages(QStringLiteral("fr"), QStringLiteral("ja"));
    controller.loadModel(model);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    QCOMPARE(choices.count(), 1);
    const auto& offered = controller.languageChoices();
    const auto sorted = [](QStringList codes) {
        codes.sort();
        return codes;
    };
    if (!sources.isEmpty()) QCOMPARE(sorted(offered.sources), sources);
    if (!targets.isEmpty()) QCOMPARE(sorted(offered.targets), targets);
    QVERIFY2(offered.targets.size() >= count, qPrintable(offered.targets.join(' ')));
    QVERIFY(offered.offers(controller.sourceLanguage(), controller.targetLanguage()));
    QCOMPARE(controller.canSwap(), swaps);
    const auto before = std::make_pair(controller.sourceLanguage(), controller.targetLanguage());
    controller.swapLanguages();
    QCOMPARE(controller.sourceLanguage(), swaps ? before.second : before.first);
    controller.setLanguages(QStringLiteral("xx"), QStringLiteral("de"));  // not offered: nothing changes
    QCOMPARE(controller.sourceLanguage(), swaps ? before.second : before.first);
}

// "Detect language" on a multilingual model: the controller hears what was detected, saves "auto" as the source,
// and a swap takes the detected language as the new target.
void TestTranslationController::detectLanguageThenSwap() {
    EngineWorker engine;
    TranslationController controller(&engine);
    controller.setTranslateAsYouType(false);
    QSignalSpy loaded(&controller, &TranslationController::modelLoaded);
    controller.loadModel(QStringLiteral(DRAGOMAN_SOURCE_DIR "/resources/models/dragoman-en-de-zh"));
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    QCOMPARE(controller.languageChoices().sources.value(0), dragoman::kDetectLanguage);
    controller.setLanguages(dragoman::kDetectLanguage, QStringLiteral("en"));
    QCOMPARE(controller.sourceLanguage(), dragoman::kDetectLanguage);
    QCOMPARE(QSettings().value(QStringLiteral("languages/from")).toString(), dragoman::kDetectLanguage);  // kept for next time
    QVERIFY(!controller.canSwap());                                                                       // nothing detected yet
    QSignalSpy detected(&controller, &TranslationController::sourceDetected);
    QSignalSpy finished(&controller, &TranslationController::translationFinished);
    controller.setSourceText(QStringLiteral("Die Bibliothek öffnet am Montag wieder ihre Türen für alle Besucher."));
    controller.translate();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QCOMPARE(detected.count(), 1);
    QCOMPARE(detected.first().at(0).toString(), QStringLiteral("de"));
    QCOMPARE(detected.first().at(2).toString(), QStringLiteral("de"));
    QVERIFY(controller.canSwap());
    controller.swapLanguages();
    QCOMPARE(controller.sourceLanguage(), QStringLiteral("en"));
    QCOMPARE(controller.targetLanguage(), QStringLiteral("de"));
    QVERIFY(controller.detectedSource().isEmpty());  // it belonged to "Detect language"
    controller.setLanguages(dragoman::kDetectLanguage, QStringLiteral("de"));
    QVERIFY(!controller.canSwap());  // nothing detected since
}

// Ctrl+Enter on an empty pane starts nothing, so nothing reports a first token that never came.
void TestTranslationController::emptyTextIsNotTranslated() {
    EngineWorker engine;
    TranslationController controller(&engine);
    loadMarian(controller);
    QSignalSpy started(&controller, &TranslationController::translationStarted);
    QSignalSpy finished(&controller, &TranslationController::translationFinished);
    controller.setSourceText(QStringLiteral("  \n "));
    controller.translate();
    QTest::qWait(200);
    QCOMPARE(started.count(), 0);
    QCOMPARE(finished.count(), 0);
}

// Documents dropped together are translated one at a time, in order, each into the languages of when it was
// added, each ending in its own state; a folder brings its documents; a queued one cancelled never runs.
void TestTranslationController::documentsQueueInTurn() {
    EngineWorker engine;
    TranslationController controller(&engine);
    loadMarian(controller);
    QTemporaryDir dir;
    const QString fixtures = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/documents/");
    QVERIFY(QDir().mkpath(dir.filePath("folder/inner")));
    QVERIFY(QFile::copy(fixtures + "sample.srt", dir.filePath("a.srt")));
    QVERIFY(QFile::copy(fixtures + "sample.md", dir.filePath("folder/inner/b.md")));
    QVERIFY(QFile::copy(fixtures + "sample.txt", dir.filePath("folder/c.txt")));
    QVERIFY(QFile::copy(fixtures + "sample.txt", dir.filePath("folder/c.de.txt")));  // an earlier drop's copy: skipped
    QFile broken(dir.filePath("broken.docx"));
    QVERIFY(broken.open(QIODevice::WriteOnly) && broken.write("not a zip") > 0);
    broken.close();
    QVERIFY(QFile::copy(fixtures + "sample.txt", dir.filePath("d.txt")));
    QFile ignored(dir.filePath("folder/notes.exe"));
    QVERIFY(ignored.open(QIODevice::WriteOnly));
    ignored.close();

    auto* queue = controller.documentQueue();
    QSignalSpy refused(&controller, &TranslationController::documentFailed);
    controller.translateDocuments({dir.filePath("folder/notes.exe")});  // nothing supported: said, not ignored
    QCOMPARE(refused.count(), 1);
    QVERIFY(refused.first().at(0).toString().contains(QStringLiteral("nothing to translate")));
    QCOMPARE(queue->size(), 0);
    controller.translateDocuments({dir.filePath("a.srt"), dir.filePath("folder"), dir.filePath("broken.docx"), dir.filePath("d.txt")});
    QCOMPARE(queue->size(), 5);  // the folder's two documents, sorted, in its place; not the .exe
    QCOMPARE(queue->job(1).path, dir.filePath("folder/c.txt"));
    QCOMPARE(queue->job(2).path, dir.filePath("folder/inner/b.md"));
    QCOMPARE(queue->job(0).state, dragoman::DocumentQueue::State::Translating);
    controller.cancelDocument(4);  // d.txt, still queued
    QCOMPARE(queue->job(4).state, dragoman::DocumentQueue::State::Cancelled);
    const auto ended = [queue] {
        for (int row = 0; row < queue->size(); ++row)
            if (!queue->finished(row)) return false;
        return true;
    };
    QTRY_VERIFY_WITH_TIMEOUT(ended(), 60000);
    using State = dragoman::DocumentQueue::State;
    QCOMPARE(queue->job(0).state, State::Done);
    QCOMPARE(queue->job(0).output, dir.filePath("a.de.srt"));
    QCOMPARE(queue->job(1).state, State::Done);
    QCOMPARE(queue->job(2).state, State::Done);
    QVERIFY(QFile::exists(dir.filePath("folder/inner/b.de.md")));
    QCOMPARE(queue->job(3).state, State::Failed);
    QVERIFY2(queue->job(3).message.contains("not a Word document"), qPrintable(queue->job(3).message));
    QCOMPARE(queue->job(4).state, State::Cancelled);
    QVERIFY(!QFile::exists(dir.filePath("d.de.txt")));
    QVERIFY(queue->data(queue->index(0, dragoman::DocumentQueue::StateColumn)).toString().startsWith(QStringLiteral("Done")));
    QCOMPARE(queue->data(queue->index(0, dragoman::DocumentQueue::OutputColumn)).toString(), QStringLiteral("a.de.srt"));
    queue->clearFinished();
    QCOMPARE(queue->size(), 0);
}

// Bilingual models whose languages the table lacks offer their own codes (named by Qt); a "mul" source reads any
// language; HY-MT-like prompts offer what they name.
void TestTranslationController::choicesForModelsOutsideTheTable() {
    dragoman::ModelInfo swedish;
    swedish.fixedFrom = QStringLiteral("en");
    swedish.fixedTo = QStringLiteral("sv");
    auto choices = dragoman::languageChoicesFor(swedish);
    QCOMPARE(choices.sources, QStringList{"en"});
    QCOMPARE(choices.targets, QStringList{"sv"});
    QCOMPARE(dragoman::languageName(QStringLiteral("sv")), QStringLiteral("Swedish"));
    QCOMPARE(dragoman::pairWithin(choices, QStringLiteral("en"), QStringLiteral("de")),
             std::make_pair(QStringLiteral("en"), QStringLiteral("sv")));
    dragoman::ModelInfo anyToEnglish;
    anyToEnglish.fixedFrom = QStringLiteral("mul");
    anyToEnglish.fixedTo = QStringLiteral("en");
    choices = dragoman::languageChoicesFor(anyToEnglish);
    QCOMPARE(choices.targets, QStringList{"en"});
    QVERIFY(choices.sources.size() > 30 && choices.sources.contains(QStringLiteral("fr")));
    QVERIFY(choices.offers(QStringLiteral("fr"), QStringLiteral("en")));
}

// Three requests in a row: the view hears three starts (each clears the pane) but the deltas and the finish of
// the last one only, and those deltas add up to its text.
void TestTranslationController::onlyTheLatestRequestReachesTheView() {
    EngineWorker engine;
    TranslationController controller(&engine);
    controller.setTranslateAsYouType(false);
    loadMarian(controller);
    QSignalSpy started(&controller, &TranslationController::translationStarted);
    QSignalSpy deltas(&controller, &TranslationController::outputAppended);
    QSignalSpy finished(&controller, &TranslationController::translationFinished);
    QString text;
    for (int i = 0; i < 40; ++i)
        text += QStringLiteral("My brother lives in Berlin and reads a newspaper every morning. ");
    controller.setSourceText(text);
    controller.translate();
    controller.setSourceText(text + text);
    controller.translate();
    controller.setSourceText(QStringLiteral("The man sees a small house today."));
    controller.translate();
    QCOMPARE(started.count(), 3);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QTest::qWait(200);  // nothing of the superseded two arrives late
    QCOMPARE(finished.count(), 1);
    const auto stats = finished.first().at(0).value<TranslationInfo>();
    QCOMPARE(joined(deltas), stats.text);
    QVERIFY(!stats.text.isEmpty());
}

void TestTranslationController::asYouTypeWaitsForAPause() {
    EngineWorker engine;
    TranslationController controller(&engine);
    loadMarian(controller);
    QSignalSpy started(&controller, &TranslationController::translationStarted);
    QSignalSpy finished(&controller, &TranslationController::translationFinished);
    controller.setTranslateAsYouType(false);
    controller.setSourceText(QStringLiteral("The cat."));
    QTest::qWait(controller.typingPauseMs() * 2);
    QCOMPARE(started.count(), 0);
    controller.setTranslateAsYouType(true);
    const QString typed = QStringLiteral("The old car is red.");
    for (int i = 1; i <= typed.size(); ++i)
        controller.setSourceText(typed.left(i));  // keystrokes faster than the pause: one request at the end
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QCOMPARE(started.count(), 1);
    controller.setSourceText(QStringLiteral("   "));  // blank text is not sent
    QTest::qWait(controller.typingPauseMs() * 2);
    QCOMPARE(started.count(), 1);
}

void TestTranslationController::adapterTranslatesTheTextAgain() {
    const QString adapter = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/lora/marian-tiny.attn-ffn");
    const QString text = QStringLiteral("The man sees a small house today.");
    dragoman::TranslationRequest request;
    request.text = text.toStdString();
    request.from = "en";
    request.to = "de";
    const auto merged = QString::fromStdString(dragoman::Model::load((adapter + ".merged").toStdString())->translate(request));

    EngineWorker engine;
    TranslationController controller(&engine);
    controller.setTranslateAsYouType(false);
    loadMarian(controller);
    QSignalSpy finished(&controller, &TranslationController::translationFinished);
    QSignalSpy changed(&controller, &TranslationController::adapterChanged);
    controller.setSourceText(text);
    controller.translate();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    controller.useAdapter(adapter);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 30000);  // no new request from the view
    QCOMPARE(changed.count(), 1);
    QCOMPARE(controller.adapterInUse(), adapter);
    QCOMPARE(finished.last().at(0).value<TranslationInfo>().text, merged);
    QVERIFY(finished.first().at(0).value<TranslationInfo>().text != merged);
}

void TestTranslationController::failedAdapterKeepsTheOneInUse() {
    EngineWorker engine;
    TranslationController controller(&engine);
    loadMarian(controller);
    QSignalSpy failed(&controller, &TranslationController::adapterFailed);
    controller.useAdapter(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/lora/hunyuan-tiny-f32.all7"));  // another architecture's
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
    QVERIFY(!failed.first().at(1).toString().isEmpty());
    QCOMPARE(controller.adapterInUse(), QString());
}

void TestTranslationController::documentBeforeAModelIsRefused() {
    EngineWorker engine;
    TranslationController controller(&engine);
    QSignalSpy failed(&controller, &TranslationController::documentFailed);
    QSignalSpy started(&controller, &TranslationController::documentStarted);
    controller.translateDocument(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/documents/sample.srt"));
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.first().at(0).toString().contains("load a model"));
    QCOMPARE(started.count(), 0);
    QVERIFY(!controller.documentRunning());
}

// The window opens with the model given on the command line, else the last session's (while the store still
// has it).
void TestTranslationController::startupModelIsTheLastSessions() {
    dragoman::importModel(kMarian.toStdString(), "controller-marian");
    {
        EngineWorker engine;
        TranslationController controller(&engine);
        QSignalSpy loaded(&controller, &TranslationController::modelLoaded);
        QSignalSpy started(&controller, &TranslationController::loadStarted);
        QVERIFY(controller.loadStartupModel(QStringLiteral("controller-marian")));
        QCOMPARE(started.first().at(0).toString(), QStringLiteral("controller-marian"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    }
    EngineWorker engine;
    TranslationController restarted(&engine);
    QSignalSpy started(&restarted, &TranslationController::loadStarted);
    QVERIFY(restarted.loadStartupModel());
    QCOMPARE(started.first().at(0).toString(), QStringLiteral("controller-marian"));
    TranslationController withoutEngine;
    QVERIFY(!withoutEngine.loadStartupModel());
}

// A Hy-MT2 model takes a style and preferences: they reach its prompt (the output is the model's own with them),
// re-translate the text shown, are remembered for that model, and are not offered for a model without them.
void TestTranslationController::instructionsFollowTheModel() {
    QTemporaryDir dir;
    const auto hymt2 = dir.filePath("Hy-MT2-tiny");  // the folder's name says which prompts it takes
    QVERIFY(QDir().mkpath(hymt2));
    for (const auto& file : QDir(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny").entryInfoList(QDir::Files))
        QVERIFY(QFile::copy(file.filePath(), hymt2 + "/" + file.fileName()));
    const QString text = QStringLiteral("Good morning.");
    const auto direct = dragoman::Model::load(hymt2.toStdString());
    dragoman::TranslationRequest request{text.toStdString(), "en", "de", 1, 1, {}};
    request.style = "formal";
    const auto formal = QString::fromStdString(direct->translate(request));
    request.style.clear();
    request.preferences = {"The translation style must strictly conform to [formal].", "Keep it short."};
    const auto both = QString::fromStdString(direct->translate(request));

    EngineWorker engine;
    TranslationController controller(&engine);
    controller.setTranslateAsYouType(false);
    QSignalSpy instructions(&controller, &TranslationController::instructionsChanged);
    QSignalSpy loaded(&controller, &TranslationController::modelLoaded);
    controller.loadModel(hymt2);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    QVERIFY(controller.instructionsAvailable());
    QCOMPARE(instructions.last().at(2).toBool(), true);
    QSignalSpy finished(&controller, &TranslationController::translationFinished);
    controller.setSourceText(text);
    controller.setInstructions(QStringLiteral("formal"), {});
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);  // the text shown, translated again
    QCOMPARE(finished.last().at(0).value<TranslationInfo>().text, formal);
    controller.setInstructions(QStringLiteral("formal"), {QStringLiteral("Keep it short."), QStringLiteral("  ")});
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 30000);
    QCOMPARE(finished.last().at(0).value<TranslationInfo>().text, both);
    QCOMPARE(controller.preferences(), QStringList{QStringLiteral("Keep it short.")});

    loadMarian(controller);  // no instructions there
    QVERIFY(!controller.instructionsAvailable());
    QCOMPARE(instructions.last().at(2).toBool(), false);
    QCOMPARE(instructions.last().at(0).toString(), QString());
    controller.loadModel(hymt2);  // the model's own come back
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 3, 30000);
    QCOMPARE(controller.style(), QStringLiteral("formal"));
    QCOMPARE(controller.preferences(), QStringList{QStringLiteral("Keep it short.")});
    QCOMPARE(instructions.last().at(0).toString(), QStringLiteral("formal"));
}

// A HunYuan model whose name says nothing gets HY-MT1.5's prompts; choosing Hy-MT2's for it offers the
// instructions, its prompts change at once, and the choice is remembered for that model.
void TestTranslationController::promptProfileChosenByHand() {
    const QString model = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny");
    const QString text = QStringLiteral("Good morning.");
    const auto direct = dragoman::Model::load(model.toStdString());
    dragoman::TranslationRequest request{text.toStdString(), "en", "de", 1, 1, {}};
    request.promptProfile = "hy-mt2";
    const auto hymt2 = QString::fromStdString(direct->translate(request));
    request.promptProfile.clear();
    const auto hymt15 = QString::fromStdString(direct->translate(request));

    EngineWorker engine;
    TranslationController controller(&engine);
    controller.setTranslateAsYouType(false);
    controller.setLanguages(QStringLiteral("en"), QStringLiteral("de"));
    QSignalSpy loaded(&controller, &TranslationController::modelLoaded);
    controller.loadModel(model);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    QCOMPARE(controller.modelPromptProfile(), QStringLiteral("hy-mt1.5"));
    QVERIFY(!controller.instructionsAvailable());
    QSignalSpy finished(&controller, &TranslationController::translationFinished);
    controller.setSourceText(text);
    controller.translate();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QCOMPARE(finished.last().at(0).value<TranslationInfo>().text, hymt15);
    controller.setPromptProfile(QStringLiteral("hy-mt2"));
    QVERIFY(controller.instructionsAvailable());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 30000);  // translated again with the other prompts
    QCOMPARE(finished.last().at(0).value<TranslationInfo>().text, hymt2);

    loadMarian(controller);  // no prompts: nothing to choose
    controller.setPromptProfile(QStringLiteral("hy-mt1.5"));
    QVERIFY(controller.promptProfile().isEmpty());
    controller.loadModel(model);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 3, 30000);
    QCOMPARE(controller.promptProfile(), QStringLiteral("hy-mt2"));
    QVERIFY(controller.instructionsAvailable());
}

QTEST_MAIN(TestTranslationController)
#include "tst_translation_controller.moc"
