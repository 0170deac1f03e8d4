// dragoman-cli as a real process: the exit-code and output contract of CLI.md.
#include <QProcess>
#include <QTest>

class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exitCodes_data();
    void exitCodes();
    void inspectListsTensors();
    void inspectRejectsMalformed_data();
    void inspectRejectsMalformed();

private:
    struct Result {
        int code;
        QString out, err;
    };
    Result run(const QStringList& args);
};

TestCli::Result TestCli::run(const QStringList& args) {
    QProcess process;
    process.start(qEnvironmentVariable("DRAGOMAN_CLI"), args);
    if (!process.waitForFinished(60000)) return {-1, {}, QStringLiteral("timeout")};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2,
            QString::fromUtf8(process.readAllStandardOutput()), QString::fromUtf8(process.readAllStandardError())};
}

void TestCli::exitCodes_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("stdoutContains");
    QTest::addColumn<QString>("stderrStartsWith");
    QTest::newRow("help") << QStringList{"--help"} << 0 << "translate-file" << "";
    QTest::newRow("version") << QStringList{"--version"} << 0 << "dragoman-cli 0." << "";
    QTest::newRow("no args") << QStringList{} << 2 << "" << "Usage:";
    QTest::newRow("unknown option") << QStringList{"--frobnicate"} << 2 << "" << "error: unknown option";
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << 2 << "" << "error: unknown command";
    QTest::newRow("unknown subcommand option") << QStringList{"inspect", "--bogus", "x"} << 2 << "" << "error: Unknown option";
    QTest::newRow("inspect help") << QStringList{"inspect", "--help"} << 0 << "dragoman-cli inspect" << "";
    QTest::newRow("inspect missing arg") << QStringList{"inspect"} << 2 << "" << "error: missing argument";
    QTest::newRow("inspect missing file") << QStringList{"inspect", "/nonexistent.safetensors"} << 1 << "" << "error: io: ";
}

void TestCli::exitCodes() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, stdoutContains);
    QFETCH(QString, stderrStartsWith);
    const auto result = run(args);
    QCOMPARE(result.code, code);
    QVERIFY2(result.out.contains(stdoutContains), qPrintable(result.out));
    if (!stderrStartsWith.isEmpty()) QVERIFY2(result.err.startsWith(stderrStartsWith), qPrintable(result.err));
    if (code == 1) QCOMPARE(result.err.count('\n'), 1);  // exactly one error line
}

void TestCli::inspectListsTensors() {
    const auto result = run({"inspect", QStringLiteral(DRAGOMAN_TEST_FIXTURES "/safetensors-bad/good.safetensors")});
    QCOMPARE(result.code, 0);
    QVERIFY2(result.out.contains("f32_matrix F32 [3,5] 48 108\n"), qPrintable(result.out));
    QVERIFY2(result.out.contains("bf16_block BF16 [2,3,1] 140 152\n"), qPrintable(result.out));
    QVERIFY2(result.out.contains("empty_f32 F32 [0,4] 48 48\n"), qPrintable(result.out));
}

void TestCli::inspectRejectsMalformed_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("category");
    QTest::newRow("empty") << "empty.safetensors" << "too_small";
    QTest::newRow("huge header") << "header_len_huge.safetensors" << "header_too_large";
    QTest::newRow("overlap") << "overlapping_offsets.safetensors" << "offsets";
    QTest::newRow("dtype") << "unknown_dtype.safetensors" << "dtype";
}

void TestCli::inspectRejectsMalformed() {
    QFETCH(QString, file);
    QFETCH(QString, category);
    const auto result = run({"inspect", QStringLiteral(DRAGOMAN_TEST_FIXTURES "/safetensors-bad/") + file});
    QCOMPARE(result.code, 1);
    QVERIFY2(result.err.startsWith("error: " + category + ": "), qPrintable(result.err));
    QVERIFY(result.out.isEmpty());
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
