// The main window opens offscreen with empty panes, both language pickers and a status bar.
#include "engine_worker.h"
#include "about_dialog.h"
#include "main_window.h"

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QMenuBar>
#include <QTest>

using dragoman::MainWindow;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void opensWithEmptyPanes();
    void pickersListAllLanguages();
    void swapExchangesLanguages();
    void statusSaysNoModel();
    void translatesWithALoadedModel();
    void aboutCreditsTheTrainingData();
};

void TestMainWindow::opensWithEmptyPanes() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.windowTitle().contains("Dragoman"));
    QVERIFY(window.sourcePane()->toPlainText().isEmpty());
    QVERIFY(window.outputPane()->toPlainText().isEmpty());
    QVERIFY(window.outputPane()->isReadOnly());
    QVERIFY(!window.sourcePane()->accessibleName().isEmpty());
}

void TestMainWindow::pickersListAllLanguages() {
    MainWindow window;
    QCOMPARE(window.fromPicker()->count(), 38);  // 33 languages + 5 dialects
    QCOMPARE(window.toPicker()->count(), 38);
    QVERIFY(window.fromPicker()->findData("zh-Hant") >= 0);
    QVERIFY(window.toPicker()->findData("yue") >= 0);
}

void TestMainWindow::swapExchangesLanguages() {
    MainWindow window;
    window.fromPicker()->setCurrentIndex(window.fromPicker()->findData("en"));
    window.toPicker()->setCurrentIndex(window.toPicker()->findData("zh"));
    window.swapLanguages();
    QCOMPARE(window.fromPicker()->currentData().toString(), QStringLiteral("zh"));
    QCOMPARE(window.toPicker()->currentData().toString(), QStringLiteral("en"));
}

void TestMainWindow::statusSaysNoModel() {
    MainWindow window;
    QVERIFY(window.modelStatus()->text().contains("models import"));
}

void TestMainWindow::translatesWithALoadedModel() {
    dragoman::EngineWorker engine;
    MainWindow window(&engine);
    window.show();
    QVERIFY(!window.translateButton()->isEnabled());
    window.loadModel(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny"));
    QTRY_VERIFY_WITH_TIMEOUT(window.translateButton()->isEnabled(), 30000);
    QVERIFY(!window.loadBar()->isVisible());
    QCOMPARE(window.toPicker()->currentData().toString(), QStringLiteral("de"));  // the model's fixed pair
    QVERIFY(window.modelStatus()->text().contains("marian"));
    window.sourcePane()->setPlainText(QStringLiteral("The man sees a small house today.\n\nMy brother lives in Berlin."));
    QTest::mouseClick(window.translateButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window.statusBar()->currentMessage().contains("tokens/s"), 30000);
    const auto output = window.outputPane()->toPlainText();
    QCOMPARE(output.count('\n'), 2);  // paragraphs stay aligned
    QVERIFY(!output.trimmed().isEmpty());
}

void TestMainWindow::aboutCreditsTheTrainingData() {
    const auto text = dragoman::aboutText();
    QVERIFY(text.contains("Tatoeba"));
    QVERIFY(text.contains("CC-BY 2.0 FR"));
    QVERIFY(text.contains("TICO-19"));
    QVERIFY(text.contains("CC0"));
    MainWindow window;
    QVERIFY(!window.menuBar()->actions().isEmpty());  // Help > About is reachable
}

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
