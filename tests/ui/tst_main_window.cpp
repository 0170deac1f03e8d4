// The main window opens offscreen with empty panes, both language pickers and a status bar.
#include "main_window.h"

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTest>

using dragoman::MainWindow;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void opensWithEmptyPanes();
    void pickersListAllLanguages();
    void swapExchangesLanguages();
    void statusSaysNoModel();
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

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
