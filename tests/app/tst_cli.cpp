// dragoman-cli as a real process: the exit-code and output contract of CLI.md.
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exitCodes_data();
    void exitCodes();
    void nonUtf8ArgumentIsRefused();
    void inputsThatAreNotTextFilesAreRefused_data();
    void inputsThatAreNotTextFilesAreRefused();
    void interruptedWriteLeavesNoPartialFile();
    void lostOutputIsAnError_data();
    void lostOutputIsAnError();
    void documentThatCannotBeWrittenLeavesNothing_data();
    void documentThatCannotBeWrittenLeavesNothing();
    void outputsNeverReplaceOtherFiles();
    void inspectListsTensors();
    void inspectRejectsMalformed_data();
    void inspectRejectsMalformed();
    void makeSyntheticWritesRealShapes_data();
    void makeSyntheticWritesRealShapes();
    void modelsImportListVerify();
    void importRefusesTakenIdsAndBrokenWeights();
    void quantizeWritesARegisteredCopy();
    void benchLoadReportsContractKeys();
    void benchTranslateTimesTheRealTranslation();
    void benchWeightsComparesCopiesSideBySide();
    void benchKernelsMeasuresAgainstThePeak();
    void benchLimitsMeasuresTheMachine();
    void loadIsLoggedWithModelId();
    void generateMatchesReference_data();
    void generateMatchesReference();
    void logitsWritesTensors();
    void translateKeepsLines();
    void translateFromAuto();
    void translateBatchMatchesOneAtATime_data();
    void translateBatchMatchesOneAtATime();
    void translateBatchStopsAtABadLine_data();
    void translateBatchStopsAtABadLine();
    void hunyuanGenerateMatchesReference_data();
    void hunyuanGenerateMatchesReference();
    void hunyuanTokenizeAndLogits();
    void hunyuanTranslateOptions();
    void translateFileContract();
    void popplerOnlyForPdf();
    void formattedDocuments();
    void poFormatStringsAreChecked();
    void adaptersOnTheCommandLine();
    void promptCommand_data();
    void promptCommand();
    void instructionsOnTranslateAndDataFiles();

private:
    struct Result {
        int code;
        QString out, err;
    };
    Result run(const QStringList& args);
    QString modelsDir_;
    QMap<QString, QString> extraEnv_;
};

TestCli::Result TestCli::run(const QStringList& args) {
    QProcess process;
    auto env = QProcessEnvironment::systemEnvironment();
    if (!modelsDir_.isEmpty()) env.insert("DRAGOMAN_MODELS", modelsDir_);
    for (auto it = extraEnv_.begin(); it != extraEnv_.end(); ++it)
        env.insert(it.key(), it.value());
    process.setProcessEnvironment(env);
    process.start(qEnvironmentVariable("DRAGOMAN_CLI"), args);
    if (!process.waitForFinished(60000)) return {-1, {}, QStringLiteral("timeout")};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2, QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

void TestCli::exitCodes_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("stdoutContains");
    QTest::addColumn<QString>("stderrStartsWith");
    QTest::newRow("help") << QStringList{"--help"} << 0 << "translate-file"
                          << "";
    QTest::newRow("version") << QStringList{"--version"} << 0 << "dragoman-cli 0."
                             << "";
    QTest::newRow("no args") << QStringList{} << 2 << ""
                             << "Usage:";
    QTest::newRow("unknown option") << QStringList{"--frobnicate"} << 2 << ""
                                    << "error: unknown option";
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << 2 << ""
                                     << "error: unknown command";
    QTest::newRow("unknown subcommand option") << QStringList{"inspect", "--bogus", "x"} << 2 << ""
                                               << "error: Unknown option";
    QTest::newRow("inspect help") << QStringList{"inspect", "--help"} << 0 << "dragoman-cli inspect"
                                  << "";
    QTest::newRow("inspect missing arg") << QStringList{"inspect"} << 2 << ""
                                         << "error: missing argument";
    const QString marian = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");
    // "auto" is a source for the commands that translate (translate, translate-file), not for prompt.
    QTest::newRow("prompt --from auto") << QStringList{"prompt", "--model", marian, "--from", "auto", "--to", "de", "--text", "a"} << 2
                                        << ""
                                        << "error: --from: unknown language code 'auto'";
    QTest::newRow("tokenize") << QStringList{"tokenize", "--model", marian, "--text", "The man sees a small house today."} << 0
                              << "5,66,32,24,8,57,39,15,15,31,23,25,10,3,0\n"
                              << "";
    QTest::newRow("detokenize") << QStringList{"detokenize", "--model", marian, "--ids", "120,96,15,15,68,0"} << 0 << "Hallo\n"
                                << "";
    QTest::newRow("detokenize keep special") << QStringList{"detokenize", "--model", marian, "--ids", "120,96,0", "--keep-special"} << 0
                                             << "Ha</s>\n"
                                             << "";
    QTest::newRow("detokenize bad ids") << QStringList{"detokenize", "--model", marian, "--ids", "1,x"} << 2 << ""
                                        << "error: --ids";
    QTest::newRow("tokenize no model") << QStringList{"tokenize", "--model", "/nonexistent", "--text", "x"} << 1 << ""
                                       << "error: model_not_found: ";
    // One value asked for, two given: a usage error, not "the last one wins".
    QTest::newRow("an option given twice") << QStringList{"translate", "--model", marian, "--from", "en", "--to",
                                                          "de",        "--to",    "zh",   "--text", "a"}
                                           << 2 << ""
                                           << "error: --to is given 2 times; give it once";
    QTest::newRow("inspect missing file") << QStringList{"inspect", "/nonexistent.safetensors"} << 1 << ""
                                          << "error: io: ";
    // --batch is checked with --text too (one line, but a bad value is a usage error either way).
    QTest::newRow("translate --text --batch abc")
        << QStringList{"translate", "--model", marian, "--from", "en", "--to", "de", "--text", "The man.", "--batch", "abc"} << 2 << ""
        << "error: ";
    const QString hunyuan = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny");
    // HY-MT's prompts decode greedily or sample: a request for beams is refused, not quietly decoded greedily.
    QTest::newRow("translate --beams on a chat model")
        << QStringList{"translate", "--model", hunyuan, "--from", "en", "--to", "de", "--text", "The man.", "--beams", "2"} << 1 << ""
        << "error: unsupported: beam search is not available";
    // generate's beam search works for a decoder-only model too (generate(num_beams=K); tst_hunyuan checks the ids).
    QTest::newRow("generate --beams on a causal model")
        << QStringList{"generate", "--model", hunyuan, "--ids", "756,757,108,758", "--max-new-tokens", "5", "--beams", "2"} << 0 << ","
        << "";
}

// logits --out replaces an earlier logits file (or an empty one a script made), never another file; make-synthetic
// writes into an empty folder or over its own checkpoint, never beside a user's files.
void TestCli::outputsNeverReplaceOtherFiles() {
    QTemporaryDir dir;
    const QString marian = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");
    QFile document(dir.filePath("notes.txt"));
    QVERIFY(document.open(QIODevice::WriteOnly));
    document.write("my notes\n");
    document.close();
    const auto refused = run({"logits", "--model", marian, "--ids", "5,66,0", "--out", document.fileName()});
    QCOMPARE(refused.code, 1);
    QVERIFY2(refused.err.startsWith("error: io: ") && refused.err.contains("not overwritten"), qPrintable(refused.err));
    QVERIFY(document.open(QIODevice::ReadOnly));
    QCOMPARE(document.readAll(), QByteArray("my notes\n"));
    document.close();
    const auto logits = dir.filePath("logits.safetensors");
    QCOMPARE(run({"logits", "--model", marian, "--ids", "5,66,0", "--out", logits}).code, 0);
    QCOMPARE(run({"logits", "--model", marian, "--ids", "5,66,32,0", "--out", logits}).code, 0);  // its own, again
    QVERIFY(run({"inspect", logits}).out.contains("encoder_last_hidden_state F32 [4,"));
    const auto besides = run({"make-synthetic", "--arch", "marian", "--preset", "tiny", "--dtype", "f32", "--out", dir.path()});
    QCOMPARE(besides.code, 1);
    QVERIFY2(besides.err.contains("holds other files"), qPrintable(besides.err));
    QVERIFY(QFile::exists(document.fileName()));
    const auto fresh = dir.filePath("synthetic");
    QCOMPARE(run({"make-synthetic", "--arch", "hunyuan", "--preset", "tiny", "--dtype", "f32", "--out", fresh}).code, 0);
    QCOMPARE(run({"make-synthetic", "--arch", "hunyuan", "--preset", "tiny", "--dtype", "f32", "--out", fresh, "--seed", "2"}).code, 0);

    // A real checkpoint has the same file names as a synthetic one: its weights say who wrote them, and neither
    // make-synthetic nor logits --out writes over a model's weights.
    const auto real = dir.filePath("real");
    QVERIFY(QDir().mkpath(real));
    for (const char* name : {"config.json", "generation_config.json", "model.safetensors"})
        QVERIFY(QFile::copy(marian + "/" + name, real + "/" + name));
    const auto weights = QDir(real).filePath("model.safetensors");
    QFile original(weights);
    QVERIFY(original.open(QIODevice::ReadOnly));
    const auto before = original.readAll();
    original.close();
    const auto overSynthetic = run({"make-synthetic", "--arch", "marian", "--preset", "tiny", "--dtype", "f32", "--out", real});
    QCOMPARE(overSynthetic.code, 1);
    QVERIFY2(overSynthetic.err.contains("holds a checkpoint that make-synthetic did not write"), qPrintable(overSynthetic.err));
    const auto overWeights = run({"logits", "--model", real, "--ids", "5,66,0", "--out", weights});
    QCOMPARE(overWeights.code, 1);
    QVERIFY2(overWeights.err.contains("not overwritten"), qPrintable(overWeights.err));
    QVERIFY(original.open(QIODevice::ReadOnly));
    QCOMPARE(original.readAll(), before);
}

// An argument that is not UTF-8 (a --text in another encoding) is refused as the same bytes on stdin are, instead of
// reaching the model as U+FFFD. (Through the shell: QProcess takes arguments as text.)
void TestCli::nonUtf8ArgumentIsRefused() {
    QProcess process;
    process.start("/bin/sh", {"-c", "exec \"$0\" translate --model \"$1\" --from en --to de --text \"$(printf 'bad \\377 utf')\"",
                              qEnvironmentVariable("DRAGOMAN_CLI"), QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny")});
    QVERIFY(process.waitForFinished(60000));
    QCOMPARE(process.exitCode(), 1);
    const auto err = QString::fromUtf8(process.readAllStandardError());
    QVERIFY2(err.startsWith("error: input: argument 9 is not valid UTF-8"), qPrintable(err));
    QVERIFY(process.readAllStandardOutput().isEmpty());
}

void TestCli::inputsThatAreNotTextFilesAreRefused_data() {
    QTest::addColumn<QString>("command");  // $0 the CLI, $1 marian-tiny, $2 hunyuan-tiny-f32; run in a folder with a named pipe "fifo"
    QTest::addColumn<QString>("error");
    QTest::newRow("inspect a named pipe") << R"("$0" inspect fifo)"
                                          << "error: io: fifo is a named pipe, not a file to read";
    QTest::newRow("a glossary that is a named pipe") << R"("$0" translate --model "$2" --from en --to de --text Hello --glossary fifo)"
                                                     << "error: io: fifo is a named pipe, not a file to read";
    QTest::newRow("an adapter's weights that are a named pipe")
        << R"(mkdir a && cp "$3"/adapter_config.json a/ && mkfifo a/adapter_model.safetensors && "$0" translate --model "$2" --adapter a --from en --to de --text Hello)"
        << "error: adapter: ";
    QTest::newRow("a glossary that is not UTF-8")
        << R"(printf 'a\377\tb\n' > g.tsv; "$0" translate --model "$2" --from en --to de --text Hello --glossary g.tsv)"
        << "error: input: glossary g.tsv line 1 is not valid UTF-8";
    QTest::newRow("translate from a folder") << R"("$0" translate --model "$1" --from en --to de < .)"
                                             << "error: input: standard input is a folder, not text to read";
    QTest::newRow("tokenize bytes that are not UTF-8") << R"(printf 'good\na\377b\n' | "$0" tokenize --model "$1")"
                                                       << "error: input: line 2 is not valid UTF-8";
}

// A named pipe where a file is read would block its open() until something wrote to it (a hang to whoever named
// the wrong path); a folder on stdin reads as nothing; bytes that are not UTF-8 would be read as something else.
// Each is refused at once with exit 1 and one line that names it.
void TestCli::inputsThatAreNotTextFilesAreRefused() {
    QFETCH(QString, command);
    QFETCH(QString, error);
    QTemporaryDir dir;
    QProcess process;
    process.setWorkingDirectory(dir.path());
    process.start(
        "/bin/bash",
        {"-c", "mkfifo fifo && " + command, qEnvironmentVariable("DRAGOMAN_CLI"), QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny"),
         QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny-f32"), QStringLiteral(DRAGOMAN_TEST_FIXTURES "/lora/hunyuan-tiny-f32.all7")});
    process.closeWriteChannel();
    if (!process.waitForFinished(20000)) {
        process.kill();
        QFAIL("still waiting after 20 s");
    }
    QCOMPARE(process.exitCode(), 1);
    const auto err = QString::fromUtf8(process.readAllStandardError());
    QVERIFY2(err.startsWith(error), qPrintable(err));
    QVERIFY2(!error.startsWith("error: adapter") || err.contains("adapter_model.safetensors is a named pipe"), qPrintable(err));
    QCOMPARE(err.count('\n'), 1);
}

// Ctrl-C (SIGINT) or SIGTERM while a checkpoint is written removes its temporary file (hundreds of megabytes were left
// under a name nothing cleans up), and the command ends as an interrupted one does. SIGTERM here: a test run in the
// background ignores SIGINT, and so do the commands it starts.
void TestCli::interruptedWriteLeavesNoPartialFile() {
    QTemporaryDir dir;
    const auto out = dir.filePath("big");
    QProcess process;
    process.start(qEnvironmentVariable("DRAGOMAN_CLI"),
                  {"make-synthetic", "--arch", "marian", "--preset", "opus-mt-base", "--dtype", "f32", "--out", out});
    QVERIFY(process.waitForStarted());
    const auto partials = [&] { return QDir(out).entryList({"*.part*"}, QDir::Files | QDir::Hidden); };
    QTRY_VERIFY_WITH_TIMEOUT(!partials().isEmpty() || process.state() == QProcess::NotRunning, 60000);
    if (process.state() == QProcess::NotRunning) QSKIP("the checkpoint was written before it could be interrupted");
    ::kill(static_cast<pid_t>(process.processId()), SIGTERM);
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitStatus(), QProcess::CrashExit);  // ended by the signal, as a shell expects
    QCOMPARE(partials(), QStringList{});
    QVERIFY(!QFile::exists(QDir(out).filePath("model.safetensors")));
}

void TestCli::lostOutputIsAnError_data() {
    QTest::addColumn<QString>("command");  // a shell command line: $0 the CLI, $1 the model, stdin the 48 lines
    QTest::addColumn<QString>("reason");
    QTest::newRow("translate to a full disk") << R"("$0" translate --model "$1" --from en --to de >/dev/full)"
                                              << "No space left on device";
    QTest::newRow("translate --batch 1 to a full disk") << R"("$0" translate --model "$1" --from en --to de --batch 1 >/dev/full)"
                                                        << "No space left on device";
    QTest::newRow("tokenize to a full disk") << R"("$0" tokenize --model "$1" --text hello >/dev/full)"
                                             << "No space left on device";
    // The reader leaves after one line: the rest cannot be written (EPIPE), and no SIGPIPE ends the process.
    QTest::newRow("translate into a closed pipe")
        << R"("$0" translate --model "$1" --from en --to de | head -c 1 >/dev/null; echo "status=${PIPESTATUS[0]}")"
        << "Broken pipe";
    QTest::newRow("stream into a closed pipe")
        << R"("$0" translate --model "$1" --from en --to de --stream | head -c 1 >/dev/null; echo "status=${PIPESTATUS[0]}")"
        << "Broken pipe";
}

// Output that cannot be written (a full disk, a reader that went away) ends the command with exit 1 and one error
// line saying why, never exit 0 with the output cut short, never a signal.
void TestCli::lostOutputIsAnError() {
    QFETCH(QString, command);
    QFETCH(QString, reason);
    QByteArray input;
    for (int i = 1; i <= 48; ++i)
        input += "Line " + QByteArray::number(i) + " is here, and it is long enough to fill a pipe's buffer soon.\n";
    QProcess process;
    process.start("/bin/bash",
                  {"-c", command, qEnvironmentVariable("DRAGOMAN_CLI"), QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny")});
    process.write(input.repeated(40));
    process.closeWriteChannel();
    QVERIFY(process.waitForFinished(120000));
    const auto err = QString::fromUtf8(process.readAllStandardError());
    const auto out = QString::fromUtf8(process.readAllStandardOutput()).trimmed();
    const int status = command.contains("status=") ? out.mid(out.indexOf("status=") + 7).toInt() : process.exitCode();
    QCOMPARE(status, 1);
    QVERIFY2(err.startsWith("error: output: cannot write to standard output: " + reason), qPrintable(err));
    QCOMPARE(err.count('\n'), 1);
}

void TestCli::documentThatCannotBeWrittenLeavesNothing_data() {
    QTest::addColumn<QString>("suffix");
    for (const char* suffix : {"po", "txt", "md", "srt"})
        QTest::newRow(suffix) << suffix;
}

// A translated document the disk cannot take whole (here a file size limit of 8 KiB, as a full disk refuses) ends
// with exit 1 and the reason, and leaves no file behind: libgettextpo does not report such a write at all.
void TestCli::documentThatCannotBeWrittenLeavesNothing() {
    QFETCH(QString, suffix);
    QTemporaryDir dir;
    QByteArray text = suffix == "po" ? "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n" : "";
    for (int i = 1; i <= 200; ++i) {
        const auto sentence = "The man sees a small house today, number " + QByteArray::number(i) + ".";
        if (suffix == "po")
            text += "msgid \"" + sentence + "\"\nmsgstr \"\"\n\n";
        else if (suffix == "srt")
            text += QByteArray::number(i) + "\n00:00:0" + QByteArray::number(i % 9) + ",000 --> 00:00:0" + QByteArray::number(i % 9 + 1) +
                    ",000\n" + sentence + "\n\n";
        else
            text += sentence + "\n\n";
    }
    const auto input = dir.filePath("big." + suffix), output = dir.filePath("out." + suffix);
    QFile file(input);
    QVERIFY(file.open(QIODevice::WriteOnly) && file.write(text) == text.size());
    file.close();
    QProcess process;
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("HOME", dir.filePath("home"));
    env.insert("DRAGOMAN_LOG", "error");  // the log stays under the limit
    env.insert("DRAGOMAN_MODELS", dir.filePath("models"));
    process.setProcessEnvironment(env);
    process.start("/bin/bash",
                  {"-c", R"(ulimit -f 8; trap "" XFSZ; exec "$0" translate-file "$1" --model "$2" --to de --out "$3")",
                   qEnvironmentVariable("DRAGOMAN_CLI"), input, QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny"), output});
    QVERIFY(process.waitForFinished(120000));
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 1);
    const auto err = QString::fromUtf8(process.readAllStandardError());
    QVERIFY2(err.startsWith("error: io: cannot write " + output + ": "), qPrintable(err));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"big." + suffix});
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
    QTest::newRow("empty") << "empty.safetensors"
                           << "too_small";
    QTest::newRow("huge header") << "header_len_huge.safetensors"
                                 << "header_too_large";
    QTest::newRow("overlap") << "overlapping_offsets.safetensors"
                             << "offsets";
    QTest::newRow("dtype") << "unknown_dtype.safetensors"
                           << "dtype";
}

void TestCli::inspectRejectsMalformed() {
    QFETCH(QString, file);
    QFETCH(QString, category);
    const auto result = run({"inspect", QStringLiteral(DRAGOMAN_TEST_FIXTURES "/safetensors-bad/") + file});
    QCOMPARE(result.code, 1);
    QVERIFY2(result.err.startsWith("error: " + category + ": "), qPrintable(result.err));
    QVERIFY(result.out.isEmpty());
}

void TestCli::makeSyntheticWritesRealShapes_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expectedLine");
    QTest::newRow("marian tiny f32") << QStringList{"--arch", "marian", "--preset", "tiny", "--dtype", "f32"}
                                     << "model.shared.weight F32 [332,32]";
    QTest::newRow("hunyuan tiny bf16") << QStringList{"--arch", "hunyuan", "--preset", "tiny", "--dtype", "bf16"}
                                       << "model.layers.1.self_attn.k_proj.weight BF16 [32,64]";
}

void TestCli::makeSyntheticWritesRealShapes() {
    QFETCH(QStringList, args);
    QFETCH(QString, expectedLine);
    QTemporaryDir dir;
    const auto made = run(QStringList{"make-synthetic"} + args + QStringList{"--out", dir.path() + "/m"});
    QCOMPARE(made.code, 0);
    QVERIFY(QFile::exists(dir.path() + "/m/config.json"));
    const auto listing = run({"inspect", dir.path() + "/m/model.safetensors"});
    QCOMPARE(listing.code, 0);
    QVERIFY2(listing.out.contains(expectedLine), qPrintable(listing.out));
    // Same seed, same bytes: the checkpoint is reproducible.
    run(QStringList{"make-synthetic"} + args + QStringList{"--out", dir.path() + "/again"});
    QFile a(dir.path() + "/m/model.safetensors"), b(dir.path() + "/again/model.safetensors");
    QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
    QVERIFY(a.readAll() == b.readAll());
    QCOMPARE(run(QStringList{"make-synthetic", "--arch", "marian", "--preset", "huge", "--dtype", "f32", "--out", dir.path()}).code, 2);
}

void TestCli::modelsImportListVerify() {
    QTemporaryDir cache, source;
    modelsDir_ = cache.path();
    const QString model = source.path() + "/opus-tiny";
    QDir().mkpath(model);
    for (const auto& name : QDir(DRAGOMAN_TEST_FIXTURES "/marian-tiny").entryList(QDir::Files)) {
        QFile::copy(DRAGOMAN_TEST_FIXTURES "/marian-tiny/" + name, model + "/" + name);
        QFile::setPermissions(model + "/" + name, QFile::ReadOwner | QFile::WriteOwner);
    }
    QCOMPARE(run({"models", "import", model, "--id", "test/opus-tiny"}).code, 0);
    const auto listed = run({"models", "list", "--json"});
    QCOMPARE(listed.code, 0);
    // The bundled default model, when installed, is listed too: look at the imported ones.
    QJsonArray models;
    for (const auto& m : QJsonDocument::fromJson(listed.out.toUtf8()).object().value("models").toArray())
        if (m.toObject().value("source").toString() != "bundled") models.append(m);
    QCOMPARE(models.size(), 1);
    QCOMPARE(models[0].toObject().value("id").toString(), QStringLiteral("test/opus-tiny"));
    QCOMPARE(models[0].toObject().value("architecture").toString(), QStringLiteral("MarianMTModel"));
    QCOMPARE(run({"models", "verify", "test/opus-tiny", "--full"}).code, 0);

    // Rewritten with the same bytes (new mtime): the stat check refuses it, a full re-hash accepts and re-records it.
    QFile same(model + "/config.json");
    QVERIFY(same.open(QIODevice::ReadWrite));
    QVERIFY(same.setFileTime(QDateTime::currentDateTime().addSecs(5), QFileDevice::FileModificationTime));
    same.close();
    const auto stale = run({"models", "verify", "test/opus-tiny"});
    QCOMPARE(stale.code, 1);
    QVERIFY2(stale.err.contains("config.json was modified since it was hashed"), qPrintable(stale.err));
    const auto rehashed = run({"models", "verify", "test/opus-tiny", "--full"});
    QCOMPARE(rehashed.code, 0);
    QVERIFY2(rehashed.out.contains("content unchanged, new file times recorded"), qPrintable(rehashed.out));
    QCOMPARE(run({"models", "verify", "test/opus-tiny"}).code, 0);

    QFile weights(model + "/model.safetensors");
    QVERIFY(weights.open(QIODevice::ReadWrite));
    weights.seek(weights.size() - 4);
    weights.write("\x01\x02\x03\x04", 4);
    weights.close();
    const auto verified = run({"models", "verify", "test/opus-tiny", "--full"});
    QCOMPARE(verified.code, 1);
    QVERIFY2(verified.err.startsWith("error: integrity: "), qPrintable(verified.err));
    QCOMPARE(run({"models", "frobnicate"}).code, 2);

    // Forgetting an import drops its record, never its folder; a model that was not imported is refused by name.
    const auto forgot = run({"models", "forget", "test/opus-tiny"});
    QCOMPARE(forgot.code, 0);
    QVERIFY2(forgot.out.contains("forgot test/opus-tiny"), qPrintable(forgot.out));
    QVERIFY(QFile::exists(model + "/config.json"));
    QVERIFY(!run({"models", "list"}).out.contains("test/opus-tiny"));
    const auto notImported = run({"models", "forget", model});
    QCOMPARE(notImported.code, 1);
    QVERIFY2(notImported.err.contains("not imported: only imported models are forgotten"), qPrintable(notImported.err));
    QCOMPARE(run({"models", "forget", "no/such-model"}).code, 1);
    modelsDir_.clear();
}

// One id, one model: an id taken by another folder (or the bundled model) is refused, and so is one whose record
// another id holds; the same folder imported again is hashed again. Weights are checked at import: a truncated
// model.safetensors or a broken header is refused there, not recorded as good.
void TestCli::importRefusesTakenIdsAndBrokenWeights() {
    QTemporaryDir cache, source;
    modelsDir_ = cache.path();
    const auto copyOf = [&](const QString& name) {
        const QString folder = source.path() + "/" + name;
        QDir().mkpath(folder);
        for (const auto& file : QDir(DRAGOMAN_TEST_FIXTURES "/marian-tiny").entryList(QDir::Files)) {
            QFile::copy(DRAGOMAN_TEST_FIXTURES "/marian-tiny/" + file, folder + "/" + file);
            QFile::setPermissions(folder + "/" + file, QFile::ReadOwner | QFile::WriteOwner);
        }
        return folder;
    };
    const auto first = copyOf("first"), second = copyOf("second");
    QCOMPARE(run({"models", "import", first, "--id", "team/opus"}).code, 0);
    QCOMPARE(run({"models", "import", first, "--id", "team/opus"}).code, 0);  // the same folder again
    const auto taken = run({"models", "import", second, "--id", "team/opus"});
    QCOMPARE(taken.code, 1);
    QVERIFY2(taken.err.startsWith("error: input: the id team/opus is taken") && taken.err.contains(first), qPrintable(taken.err));
    const auto sharesRecord = run({"models", "import", second, "--id", "team~opus"});
    QCOMPARE(sharesRecord.code, 1);
    QVERIFY2(sharesRecord.err.contains("would share its record with the imported model team/opus"), qPrintable(sharesRecord.err));
    const auto listed = run({"models", "list"}).out;
    QCOMPARE(listed.count("team/opus"), 1);
    QVERIFY(!listed.contains("team~opus"));
    QString bundledId;  // the bundled model's, when it is installed
    for (const auto& m : QJsonDocument::fromJson(run({"models", "list", "--json"}).out.toUtf8()).object().value("models").toArray())
        if (m.toObject().value("source").toString() == "bundled") bundledId = m.toObject().value("id").toString();
    if (!bundledId.isEmpty()) {
        const auto bundled = run({"models", "import", second, "--id", bundledId});
        QCOMPARE(bundled.code, 1);
        QVERIFY2(bundled.err.contains("is taken by the bundled model"), qPrintable(bundled.err));
    }

    QFile weights(second + "/model.safetensors");
    QVERIFY(weights.resize(weights.size() / 2));
    const auto truncated = run({"models", "import", second, "--id", "truncated"});
    QCOMPARE(truncated.code, 1);
    QVERIFY2(truncated.err.startsWith("error: "), qPrintable(truncated.err));
    QFile::remove(second + "/model.safetensors");
    QFile broken(second + "/model.safetensors");
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write(QByteArray("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\": [1, 2,", 24));
    broken.close();
    QCOMPARE(run({"models", "import", second, "--id", "broken"}).code, 1);
    QVERIFY(!run({"models", "list"}).out.contains("truncated"));
    QVERIFY(!run({"models", "list"}).out.contains("broken"));
    modelsDir_.clear();
}

// quantize and models import --quantize: a registered int8 / FP8 copy that generates what the shared generator's
// copy generates (the same bytes), never written over a folder in use; bad options are usage errors.
void TestCli::quantizeWritesARegisteredCopy() {
    QTemporaryDir cache, work;
    modelsDir_ = cache.path();
    const QString base = DRAGOMAN_TEST_FIXTURES "/marian-tiny";
    const QString out = work.path() + "/marian-int8";
    // --keep-embeddings: the linear layers only, as the generator writes.
    const auto made = run({"quantize", "--model", base, "--to", "int8", "--out", out, "--id", "test/marian-int8", "--keep-embeddings"});
    QCOMPARE(made.code, 0);
    QVERIFY2(made.out.contains("registered as test/marian-int8"), qPrintable(made.out));
    QVERIFY2(run({"models", "list"}).out.contains("test/marian-int8"), "the copy is not registered");
    const QStringList ids{"--ids", "5,17,33,2,90,0", "--max-new-tokens", "12"};
    const auto ours = run(QStringList{"generate", "--model", "test/marian-int8"} + ids);
    const auto generators = run(QStringList{"generate", "--model", DRAGOMAN_TEST_FIXTURES "/quant/marian-tiny.int8-channel"} + ids);
    QCOMPARE(ours.code, 0);
    QCOMPARE(ours.out, generators.out);
    QCOMPARE(run({"translate", "--model", "test/marian-int8", "--from", "en", "--to", "de", "--text", "Hello"}).code, 0);
    QCOMPARE(run({"models", "verify", "test/marian-int8", "--full"}).code, 0);
    // By default the shared embedding table (the output layer) is quantized too.
    const auto tables = run({"quantize", "--model", base, "--to", "int8", "--out", work.path() + "/tables", "--id", "test/tables"});
    QCOMPARE(tables.code, 0);
    const auto stored = run({"inspect", work.path() + "/tables/model.safetensors"}).out;
    QVERIFY2(stored.contains("model.shared.weight I8 [332,32]") && stored.contains("model.shared.weight_scale F32 [332,1]"),
             qPrintable(stored));
    QCOMPARE(run({"translate", "--model", "test/tables", "--from", "en", "--to", "de", "--text", "Hello"}).code, 0);

    // The same folder again: refused, the copy untouched; the id taken: refused.
    const auto again = run({"quantize", "--model", base, "--to", "fp8", "--out", out});
    QCOMPARE(again.code, 1);
    QVERIFY2(again.err.startsWith("error: input: ") && again.err.contains("not empty"), qPrintable(again.err));
    const auto taken = run({"quantize", "--model", base, "--to", "fp8", "--out", work.path() + "/other", "--id", "test/marian-int8"});
    QCOMPARE(taken.code, 1);
    QVERIFY2(taken.err.contains("there is already a model 'test/marian-int8'"), qPrintable(taken.err));
    QVERIFY(!QFile::exists(work.path() + "/other"));
    const auto twice = run({"quantize", "--model", "test/marian-int8", "--to", "int8", "--out", work.path() + "/twice"});
    QCOMPARE(twice.code, 1);
    QVERIFY2(twice.err.contains("already quantized"), qPrintable(twice.err));

    // models import --quantize: the copy goes into our cache under FOLDER-TYPE.
    const auto imported = run({"models", "import", base, "--quantize", "fp8"});
    QCOMPARE(imported.code, 0);
    QVERIFY2(imported.out.contains("registered as marian-tiny-fp8"), qPrintable(imported.out));
    QVERIFY(QFile::exists(cache.path() + "/quantized/marian-tiny-fp8/model.safetensors"));
    QCOMPARE(run({"generate", "--model", "marian-tiny-fp8", "--ids", "5,17,0", "--max-new-tokens", "4"}).code, 0);
    // Forgotten, its folder stays (the store deletes no folder); made again, the copy goes into a fresh one.
    QCOMPARE(run({"models", "forget", "marian-tiny-fp8"}).code, 0);
    const auto remade = run({"models", "import", base + "/", "--quantize", "fp8"});
    QCOMPARE(remade.code, 0);
    QVERIFY2(remade.out.contains("registered as marian-tiny-fp8 ") && remade.out.contains("marian-tiny-fp8-2"), qPrintable(remade.out));

    QCOMPARE(run({"quantize", "--model", base, "--to", "int4", "--out", work.path() + "/x"}).code, 2);
    QCOMPARE(run({"quantize", "--model", base, "--out", work.path() + "/x"}).code, 2);
    QCOMPARE(run({"quantize", "--model", base, "--to", "int8", "--strategy", "group", "--out", work.path() + "/x"}).code, 2);
    modelsDir_.clear();
}

void TestCli::benchLoadReportsContractKeys() {
    QTemporaryDir cache;
    modelsDir_ = cache.path();
    const auto result = run({"bench", "load", "--model", DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny", "--json", "--baselines"});
    modelsDir_.clear();
    QCOMPARE(result.code, 0);
    const auto json = QJsonDocument::fromJson(result.out.toUtf8()).object();
    for (const char* key : {"open_s", "build_s", "page_in_s", "ready_s", "bytes", "copies", "peak_rss_bytes", "raw_read_s", "eager_copy_s"})
        QVERIFY2(json.contains(key), key);
    QCOMPARE(json.value("copies").toInt(), 0);
    QVERIFY(json.value("bytes").toDouble() > 200000);
    QVERIFY(json.value("ready_s").toDouble() >= json.value("page_in_s").toDouble());
}

void TestCli::benchTranslateTimesTheRealTranslation() {
    QTemporaryDir cache;
    modelsDir_ = cache.path();
    const QString model = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");
    const QString text = QStringLiteral("The man sees a small house today.");
    const auto bench = run({"bench", "translate", "--model", model, "--text", text, "--repeat", "3", "--json"});
    const auto plain = run({"translate", "--model", model, "--from", "en", "--to", "de", "--text", text});
    modelsDir_.clear();
    QVERIFY2(bench.code == 0, qPrintable(bench.err));
    const auto json = QJsonDocument::fromJson(bench.out.toUtf8()).object();
    for (const char* key : {"ready_s", "median_s", "max_s", "source_tokens", "generated_tokens", "output"})
        QVERIFY2(json.contains(key), key);
    QCOMPARE(json.value("output").toString() + "\n", plain.out);  // the timed work is the real translation
    QVERIFY(json.value("generated_tokens").toInt() > 0);
    QVERIFY(json.value("ready_s").toDouble() > 0);
    QVERIFY(json.value("median_s").toDouble() > 0 && json.value("median_s").toDouble() <= json.value("max_s").toDouble());
}

// bench weights: a model and its FP8 copy decoded in turns in one process; the ratios are per round, the first
// model's exactly 1, and the bandwidth is probed every round. Models it cannot compare are usage errors.
void TestCli::benchWeightsComparesCopiesSideBySide() {
    QTemporaryDir cache, work;
    modelsDir_ = cache.path();
    const QString base = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny"), copy = work.path() + "/fp8";
    QCOMPARE(run({"quantize", "--model", base, "--to", "fp8", "--out", copy, "--id", "test/tiny-fp8"}).code, 0);
    const auto result = run(
        {"bench", "weights", "--model", base, "--model", copy, "--rounds", "3", "--block-tokens", "2", "--prompt-tokens", "4", "--json"});
    QVERIFY2(result.code == 0, qPrintable(result.err));
    const auto json = QJsonDocument::fromJson(result.out.toUtf8()).object();
    const auto bandwidth = json.value("memory_bandwidth_bytes_per_s").toArray();
    QCOMPARE(bandwidth.size(), 3);
    for (const auto& b : bandwidth)
        QVERIFY(b.toDouble() > 1e8);
    const auto models = json.value("models").toArray();
    QCOMPARE(models.size(), 2);
    const auto first = models[0].toObject(), second = models[1].toObject();
    QCOMPARE(first.value("weight_type").toString(), QStringLiteral("bf16"));
    QCOMPARE(second.value("weight_type").toString(), QStringLiteral("fp8"));
    QCOMPARE(first.value("vs_first").toDouble(), 1.0);
    QVERIFY(second.value("weight_bytes_per_token").toDouble() < first.value("weight_bytes_per_token").toDouble());
    const auto rounds = second.value("vs_first_rounds").toArray();
    QCOMPARE(rounds.size(), 3);
    for (const auto& r : rounds)
        QVERIFY(r.toDouble() >= second.value("vs_first_min").toDouble() && r.toDouble() <= second.value("vs_first_max").toDouble());
    QVERIFY(second.value("decode_tokens_per_s").toDouble() > 0);

    QCOMPARE(run({"bench", "weights", "--model", base}).code, 2);
    const auto tooLong = run({"bench", "weights", "--model", base, "--model", copy, "--rounds", "10000", "--block-tokens", "4096"});
    QCOMPARE(tooLong.code, 2);
    QVERIFY2(tooLong.err.contains("positions"), qPrintable(tooLong.err));
    const auto marian = run({"bench", "weights", "--model", base, "--model", DRAGOMAN_TEST_FIXTURES "/marian-tiny"});
    QCOMPARE(marian.code, 2);
    QVERIFY2(marian.err.contains("decoder-only"), qPrintable(marian.err));
    modelsDir_.clear();
}

// bench kernels: every product shape measured on the one-row kernel and, where the CPU has them, on panels, with the
// vpdpbusd peak beside them; attention per key and head. Measures only: every number positive, every shape there.
void TestCli::benchKernelsMeasuresAgainstThePeak() {
    const auto result = run({"bench", "kernels", "--rounds", "1", "--json"});
    QVERIFY2(result.code == 0, qPrintable(result.err));
    const auto json = QJsonDocument::fromJson(result.out.toUtf8()).object();
    const bool vnni = json.value("w8a8_kernel").toString() == "avx512-vnni";
    QCOMPARE(json.value("vnni_peak_gmacs").toDouble() > 0, vnni);
    const auto products = json.value("products").toArray();
    QCOMPARE(products.size(), 5);
    for (const auto& p : products) {
        const auto product = p.toObject();
        QVERIFY(product.value("one_row_gmacs").toDouble() > 0);
        // Kept panels serve every row count; panels made per call, four rows on.
        const bool panelled = json.value("panels").toBool();
        QCOMPARE(product.contains("panels_kept_gmacs"), panelled);
        QCOMPARE(product.contains("panels_per_call_gmacs"), panelled && product.value("m").toInt() >= 4);
        if (panelled) QVERIFY(product.value("kept_of_peak").toDouble() > 0 && product.value("kept_vs_one_row").toDouble() > 0);
    }
    const auto attention = json.value("attention").toArray();
    QCOMPARE(attention.size(), 3);
    for (const auto& a : attention)
        QVERIFY(a.toObject().value("ns_per_key_and_head").toDouble() > 0);
    QCOMPARE(run({"bench", "kernels", "--rounds", "0"}).code, 2);
}

// bench limits: the vpdpbusd peak (where the CPU has it) and the read bandwidth over each buffer asked for, as
// tests/bench/batch_translate.sh sets a run against them; a size out of range is a usage error.
void TestCli::benchLimitsMeasuresTheMachine() {
    const auto result = run({"bench", "limits", "--read", "4194304", "--read", "67108864", "--json"});
    QVERIFY2(result.code == 0, qPrintable(result.err));
    const auto json = QJsonDocument::fromJson(result.out.toUtf8()).object();
    QVERIFY(json.value("threads").toInt() >= 1);
    // The peak is there where the W8A8 products run on VNNI (as bench kernels reports them), 0 elsewhere.
    const auto kernels = QJsonDocument::fromJson(run({"bench", "kernels", "--rounds", "1", "--json"}).out.toUtf8()).object();
    QCOMPARE(json.value("vnni_peak_gmacs").toDouble() > 0, kernels.value("w8a8_kernel").toString() == "avx512-vnni");
    const auto read = json.value("read").toArray();
    QCOMPARE(read.size(), 2);
    QCOMPARE(read[0].toObject().value("bytes").toDouble(), 4194304.0);
    QCOMPARE(read[1].toObject().value("bytes").toDouble(), 67108864.0);
    for (const auto& r : read)
        QVERIFY(r.toObject().value("gbs").toDouble() > 0);
    const auto text = run({"bench", "limits", "--read", "1048576"});
    QCOMPARE(text.code, 0);
    QVERIFY2(text.out.contains("reading 1.0 MB:") && text.out.contains("GB/s"), qPrintable(text.out));
    for (const char* bad : {"100", "-5", "lots"}) {
        const auto refused = run({"bench", "limits", "--read", bad});
        QCOMPARE(refused.code, 2);
        QVERIFY2(refused.err.contains("--read"), qPrintable(refused.err));
    }
}

void TestCli::loadIsLoggedWithModelId() {
    QTemporaryDir data, cache;
    modelsDir_ = cache.path();
    extraEnv_ = {{"XDG_DATA_HOME", data.path()}, {"DRAGOMAN_LOG", "info"}};
    const auto result = run({"bench", "load", "--model", DRAGOMAN_TEST_FIXTURES "/marian-tiny"});
    extraEnv_.clear();
    modelsDir_.clear();
    QCOMPARE(result.code, 0);
    QFile log(data.path() + "/dragoman/logs/dragoman.log");
    QVERIFY2(log.open(QIODevice::ReadOnly), "no log file in the user's data folder");
    const QString text = QString::fromUtf8(log.readAll());
    QVERIFY2(text.contains(QRegularExpression(R"(\[model=\S*marian-tiny req=\d+\] loaded .* in [0-9.]+ s)")), qPrintable(text));
    QVERIFY(result.err.contains("loaded"));  // DRAGOMAN_LOG=info also shows it on stderr
}

void TestCli::generateMatchesReference_data() {
    QTest::addColumn<QString>("ids");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("expected");
    QFile file(DRAGOMAN_TEST_FIXTURES "/marian-tiny/expected.json");
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto cases = QJsonDocument::fromJson(file.readAll()).object().value("cases").toArray();
    auto join = [](const QJsonArray& ids) {
        QStringList parts;
        for (const auto& id : ids)
            parts << QString::number(id.toInt());
        return parts.join(',');
    };
    for (const auto& value : cases) {
        const auto c = value.toObject();
        const auto name = c.value("name").toString();
        const QList<QPair<QString, QStringList>> modes{{"greedy", {"--raw"}},
                                                       {"greedy_hf_processors", {}},
                                                       {"beam", {"--raw", "--beams", "3"}},
                                                       {"beam_hf_processors", {"--beams", "3"}}};
        for (const auto& [mode, options] : modes)
            QTest::newRow(qPrintable(name + "/" + mode))
                << join(c.value("source_ids").toArray()) << options << join(c.value(mode).toObject().value("generated_ids").toArray());
    }
}

void TestCli::generateMatchesReference() {
    QFETCH(QString, ids);
    QFETCH(QStringList, options);
    QFETCH(QString, expected);
    const auto result =
        run(QStringList{"generate", "--model", DRAGOMAN_TEST_FIXTURES "/marian-tiny", "--ids", ids, "--max-new-tokens", "12"} + options);
    QCOMPARE(result.code, 0);
    QCOMPARE(result.out, expected + "\n");
}

void TestCli::logitsWritesTensors() {
    QTemporaryDir dir;
    const QString out = dir.path() + "/logits.safetensors";
    const auto result = run({"logits", "--model", DRAGOMAN_TEST_FIXTURES "/marian-tiny", "--ids", "120,119,0", "--decoder-ids",
                             "331,120,96,15,15,68", "--out", out});
    QCOMPARE(result.code, 0);
    const auto listing = run({"inspect", out});
    QVERIFY2(listing.out.contains("logits F32 [6,332] "), qPrintable(listing.out));
    QVERIFY2(listing.out.contains("encoder_last_hidden_state F32 [3,32] "), qPrintable(listing.out));
}

void TestCli::translateKeepsLines() {
    QProcess process;
    process.start(qEnvironmentVariable("DRAGOMAN_CLI"),
                  {"translate", "--model", DRAGOMAN_TEST_FIXTURES "/marian-tiny", "--from", "en", "--to", "de", "--stream"});
    process.write("The man sees a small house today.\n\nMy brother lives in Berlin.\n");
    process.closeWriteChannel();
    QVERIFY(process.waitForFinished(60000));
    QCOMPARE(process.exitCode(), 0);
    const auto lines = QString::fromUtf8(process.readAllStandardOutput()).split('\n');
    QCOMPARE(lines.size(), 4);  // three input lines, each answered by one line
    QVERIFY(!lines[0].isEmpty());
    QVERIFY(lines[1].isEmpty());
    QCOMPARE(run({"translate", "--model", DRAGOMAN_TEST_FIXTURES "/marian-tiny", "--to", "xx", "--text", "a"}).code, 2);

    // A chat model may write a line break (the tiny HunYuan's random weights do for the second line): it is a space
    // in the output, which keeps one line for each line read, streamed or not.
    for (const QStringList extra : {QStringList{}, QStringList{"--stream"}, QStringList{"--batch", "1"}}) {
        QProcess chat;
        chat.start(qEnvironmentVariable("DRAGOMAN_CLI"),
                   QStringList{"translate", "--model", DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny", "--from", "en", "--to", "de"} + extra);
        chat.write("The cat number 16 sleeps.\nThe cat number 17 sleeps in the house.\nThe cat number 18 x\n");
        chat.closeWriteChannel();
        QVERIFY(chat.waitForFinished(60000));
        QCOMPARE(chat.exitCode(), 0);
        QCOMPARE(chat.readAllStandardOutput().count('\n'), 3);
    }
    const auto one = run({"translate", "--model", DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny", "--from", "en", "--to", "de", "--text",
                          "The cat number 17 sleeps in the house."});
    QCOMPARE(one.code, 0);
    QCOMPARE(one.out.count('\n'), 1);

    // Text already in the target language is its own translation (a model asked for German from German rewrote it).
    for (const QStringList stream : {QStringList{}, QStringList{"--stream"}}) {
        const auto same = run(QStringList{"translate", "--model", DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny", "--from", "de", "--to", "de",
                                          "--text", "Guten Morgen. Wie geht es dir?"} +
                              stream);
        QCOMPARE(same.code, 0);
        QCOMPARE(same.out, QStringLiteral("Guten Morgen. Wie geht es dir?\n"));
    }
}

// --from auto: each line translated from its own language (the output of naming it by hand); a text plainly in a
// language the model does not read is refused with exit 1 and the reason; a document's paragraphs each their own.
void TestCli::translateFromAuto() {
    const QString hunyuan = DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny";
    const QString german = QStringLiteral("Die Bibliothek öffnet am Montag wieder ihre Türen für alle Besucher.");
    const QString chinese = QStringLiteral("图书馆星期一将重新向所有访客开放，欢迎大家前来参观。");
    const auto byHand = [&](const QString& from, const QString& text) {
        return run({"translate", "--model", hunyuan, "--from", from, "--to", "en", "--text", text}).out;
    };
    QProcess process;
    process.start(qEnvironmentVariable("DRAGOMAN_CLI"), {"translate", "--model", hunyuan, "--from", "auto", "--to", "en"});
    process.write((german + "\n" + chinese + "\n").toUtf8());
    process.closeWriteChannel();
    QVERIFY(process.waitForFinished(60000));
    QCOMPARE(process.exitCode(), 0);
    QCOMPARE(QString::fromUtf8(process.readAllStandardOutput()), byHand("de", german) + byHand("zh", chinese));
    // HY-MT's prompt for a Chinese source is its Chinese one: detection changes what the model is asked.
    QVERIFY(byHand("zh", chinese) != byHand("en", chinese));

    const auto refused =
        run({"translate", "--model", DRAGOMAN_TEST_FIXTURES "/marian-tiny", "--from", "auto", "--to", "de", "--text", german});
    QCOMPARE(refused.code, 1);
    QVERIFY2(refused.err.contains("looks like German") && refused.err.contains("--from en"), qPrintable(refused.err));
    QCOMPARE(run({"translate", "--model", hunyuan, "--from", "xx", "--to", "en", "--text", "a"}).code, 2);

    QTemporaryDir dir;
    const auto input = dir.filePath("mixed.md");
    QFile file(input);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(("# " + german + "\n\n" + chinese + "\n").toUtf8());
    file.close();
    const auto translated = run({"translate-file", input, "--model", hunyuan, "--from", "auto", "--to", "en"});
    QCOMPARE(translated.code, 0);
    QFile output(translated.out.trimmed());
    QVERIFY(output.open(QIODevice::ReadOnly));
    const auto text = QString::fromUtf8(output.readAll());
    QVERIFY2(text.contains(byHand("zh", chinese).trimmed()), qPrintable(text));
}

void TestCli::translateBatchMatchesOneAtATime_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QStringList>("batch");
    for (const char* fixture : {"marian-tiny", "hunyuan-tiny"})
        for (const auto& batch : {QStringList{"--batch", "7"}, QStringList{"--batch", "16"}, QStringList{}})
            QTest::newRow(QStringLiteral("%1 %2").arg(fixture, batch.isEmpty() ? "default" : batch.join(' ')).toUtf8().constData())
                << QString(DRAGOMAN_TEST_FIXTURES "/") + fixture << (QString(fixture).startsWith("hunyuan") ? "zh" : "de") << batch;
}

// Lines decoded together (their steps shared) print the same text, in the same order, as one at a time.
void TestCli::translateBatchMatchesOneAtATime() {
    QFETCH(QString, model);
    QFETCH(QString, to);
    QFETCH(QStringList, batch);
    QByteArray input;
    const char* const sentences[] = {"The man sees a small house today.",
                                     "My brother lives in Berlin.",
                                     "Good morning.",
                                     "",
                                     "Where is the station, please?",
                                     "It rains.",
                                     "She reads a very long book in the garden every day."};
    for (int i = 0; i < 24; ++i)
        input += QByteArray(sentences[i % 7]) + (i % 5 == 0 ? " Thanks." : "") + "\n";
    auto translate = [&](const QStringList& options) {
        QProcess process;
        process.start(qEnvironmentVariable("DRAGOMAN_CLI"),
                      QStringList{"translate", "--model", model, "--from", "en", "--to", to} + options);
        process.write(input);
        process.closeWriteChannel();
        if (!process.waitForFinished(120000)) return QStringLiteral("timeout");
        return process.exitCode() == 0 ? QString::fromUtf8(process.readAllStandardOutput())
                                       : "exit " + QString::number(process.exitCode()) + ": " + process.readAllStandardError();
    };
    const auto alone = translate({"--batch", "1"});
    QCOMPARE(alone.count('\n'), 24);
    QCOMPARE(translate(batch), alone);
}

void TestCli::translateBatchStopsAtABadLine_data() {
    QTest::addColumn<QStringList>("batch");
    QTest::addColumn<int>("badLine");
    for (const char* batch : {"1", "4", "16"})
        for (int bad : {1, 5, 40})
            QTest::addRow("--batch %s, line %d", batch, bad) << QStringList{"--batch", batch} << bad;
}

// A line that cannot be translated (not UTF-8) ends the run with its error and exit code 1, after the lines before it
// are printed in order; none after it is printed, whatever ran beside it.
void TestCli::translateBatchStopsAtABadLine() {
    QFETCH(QStringList, batch);
    QFETCH(int, badLine);
    const QString model = DRAGOMAN_TEST_FIXTURES "/marian-tiny";
    QByteArray input;
    for (int i = 1; i <= 48; ++i)
        input += i == badLine ? QByteArray("Good \xff\xfe morning.\n") : "Line " + QByteArray::number(i) + " is here.\n";
    QProcess process;
    process.start(qEnvironmentVariable("DRAGOMAN_CLI"), QStringList{"translate", "--model", model, "--from", "en", "--to", "de"} + batch);
    process.write(input);
    process.closeWriteChannel();
    QVERIFY(process.waitForFinished(120000));
    QCOMPARE(process.exitCode(), 1);
    const auto err = process.readAllStandardError();
    QVERIFY2(err.startsWith("error: input: line " + QByteArray::number(badLine) + ": ") && err.contains("not valid UTF-8"),
             err.constData());  // which line, and why
    QProcess alone;
    alone.start(qEnvironmentVariable("DRAGOMAN_CLI"), QStringList{"translate", "--model", model, "--from", "en", "--to", "de"});
    alone.write(input.left(input.indexOf("Good \xff")));
    alone.closeWriteChannel();
    QVERIFY(alone.waitForFinished(120000));
    QCOMPARE(alone.exitCode(), 0);
    QCOMPARE(process.readAllStandardOutput(), alone.readAllStandardOutput());  // the lines before it, in order
}

void TestCli::hunyuanGenerateMatchesReference_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("ids");
    QTest::addColumn<QString>("expected");
    for (const char* fixture : {"hunyuan-tiny", "hunyuan-tiny-f32"}) {
        QFile file(QString(DRAGOMAN_TEST_FIXTURES "/") + fixture + "/expected.json");
        QVERIFY(file.open(QIODevice::ReadOnly));
        for (const auto& value : QJsonDocument::fromJson(file.readAll()).object().value("cases").toArray()) {
            const auto c = value.toObject();
            QStringList ids, expected;
            for (const auto& id : c.value("input_ids").toArray())
                ids << QString::number(id.toInt());
            for (const auto& id : c.value("greedy").toObject().value("new_ids").toArray())
                expected << QString::number(id.toInt());
            QTest::newRow(qPrintable(QString(fixture) + "/" + c.value("name").toString()))
                << fixture << ids.join(',') << expected.join(',');
        }
    }
}

// The reference greedy run does not stop at EOS, so --raw with exactly its 10 tokens (none is EOS here).
void TestCli::hunyuanGenerateMatchesReference() {
    QFETCH(QString, fixture);
    QFETCH(QString, ids);
    QFETCH(QString, expected);
    const auto result = run({"generate", "--model", DRAGOMAN_TEST_FIXTURES "/" + fixture, "--ids", ids, "--max-new-tokens", "10", "--raw"});
    QCOMPARE(result.code, 0);
    QCOMPARE(result.out, expected + "\n");
}

void TestCli::hunyuanTokenizeAndLogits() {
    const QString model = DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny";
    QCOMPARE(run({"tokenize", "--model", model, "--text", "Hello world!"}).out, QStringLiteral("668,108,593,269,282,344,33\n"));
    QCOMPARE(run({"detokenize", "--model", model, "--ids", "756,668,108,593"}).out, QStringLiteral("Hello\n"));
    QCOMPARE(run({"detokenize", "--model", model, "--ids", "756,668", "--keep-special"}).out,
             QStringLiteral("<｜hy_begin▁of▁sentence｜>He\n"));
    QTemporaryDir dir;
    const auto out = dir.path() + "/logits.safetensors";
    QCOMPARE(run({"logits", "--model", model, "--ids", "756,757,84", "--out", out}).code, 0);
    QVERIFY(run({"inspect", out}).out.contains("logits F32 [3,763] "));
    const auto beams = run({"generate", "--model", model, "--ids", "756,757,84", "--max-new-tokens", "4", "--beams", "2"});  // tst_hunyuan
    QCOMPARE(beams.code, 0);
    QVERIFY(!beams.out.trimmed().isEmpty());
}

void TestCli::hunyuanTranslateOptions() {
    const QString model = DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny";
    const auto greedy = run({"translate", "--model", model, "--from", "en", "--to", "zh", "--text", "Good morning."});
    QCOMPARE(greedy.code, 0);
    QCOMPARE(run({"translate", "--model", model, "--from", "en", "--to", "zh", "--text", "Good morning."}).out, greedy.out);
    const QStringList sample{"translate", "--model", model,           "--from",   "en",     "--to",
                             "de",        "--text",  "Good morning.", "--sample", "--seed", "5"};
    const auto first = run(sample);
    QCOMPARE(first.code, 0);
    QCOMPARE(run(sample).out, first.out);
    QTemporaryDir dir;
    QFile glossary(dir.path() + "/terms.tsv");
    QVERIFY(glossary.open(QIODevice::WriteOnly));
    glossary.write("# term\ttranslation\nmorning\tMorgen\n");
    glossary.close();
    QCOMPARE(
        run({"translate", "--model", model, "--from", "en", "--to", "de", "--text", "Good morning.", "--glossary", glossary.fileName()})
            .code,
        0);
    const auto missing = run({"translate", "--model", model, "--to", "de", "--text", "x", "--glossary", dir.path() + "/none.tsv"});
    QCOMPARE(missing.code, 1);
    QVERIFY(missing.err.startsWith("error: "));
    QCOMPARE(run({"translate", "--model", model, "--to", "de", "--text", "x", "--seed", "3"}).code, 2);  // --seed without --sample
    const auto marian = run({"translate", "--model", DRAGOMAN_TEST_FIXTURES "/marian-tiny", "--to", "de", "--text", "x", "--context", "y"});
    QCOMPARE(marian.code, 1);
    QVERIFY(marian.err.contains("prompts"));
}

// --adapter on generate, logits and translate gives the merged twin's answers; adapters import, list, and are refused
// with one error line where they do not fit; an adapter is not a model.
void TestCli::adaptersOnTheCommandLine() {
    QTemporaryDir store;
    modelsDir_ = store.path();
    const QString base = DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny-f32", lora = DRAGOMAN_TEST_FIXTURES "/lora/hunyuan-tiny-f32.all7";
    const QString merged = lora + ".merged";
    const QStringList generate{"generate", "--ids", "5,66,32,17,9", "--max-new-tokens", "12", "--raw"};
    const auto adapted = run(QStringList{"generate", "--model", base, "--adapter", lora} + generate.mid(1));
    QCOMPARE(adapted.code, 0);
    QCOMPARE(adapted.out, run(QStringList{"generate", "--model", merged} + generate.mid(1)).out);
    QVERIFY(adapted.out != run(QStringList{"generate", "--model", base} + generate.mid(1)).out);
    const QStringList translate{"translate", "--from", "en", "--to", "de", "--text", "It is raining."};
    QCOMPARE(run(QStringList{"translate", "--model", base, "--adapter", lora} + translate.mid(1)).out,
             run(QStringList{"translate", "--model", merged} + translate.mid(1)).out);
    const auto imported = run({"models", "import", lora, "--id", "all7"});
    QCOMPARE(imported.code, 0);
    QVERIFY(run({"models", "list"}).out.contains("LoRA adapter for hunyuan-tiny-f32"));
    QCOMPARE(run(QStringList{"generate", "--model", base, "--adapter", "all7"} + generate.mid(1)).out, adapted.out);
    const auto foreign =
        run(QStringList{"generate", "--model", base, "--adapter", DRAGOMAN_TEST_FIXTURES "/lora/marian-tiny.attn-ffn"} + generate.mid(1));
    QCOMPARE(foreign.code, 1);
    QVERIFY(foreign.err.startsWith("error: adapter: "));
    QCOMPARE(foreign.err.count('\n'), 1);
    // A damaged adapter (one weight NaN) is refused by name, not applied to give NaN logits.
    QTemporaryDir damagedDir;
    for (const auto& file : QDir(lora).entryInfoList(QDir::Files))
        QVERIFY(QFile::copy(file.filePath(), damagedDir.filePath(file.fileName())));
    QFile weights(damagedDir.filePath("adapter_model.safetensors"));
    QVERIFY(weights.open(QIODevice::ReadWrite));
    const auto head = weights.read(8);
    quint64 headerLength = 0;
    for (int i = 7; i >= 0; --i)
        headerLength = headerLength << 8 | static_cast<quint8>(head[i]);
    QVERIFY(weights.seek(static_cast<qint64>(8 + headerLength)));
    weights.write(QByteArray("\x00\x00\xc0\x7f", 4));  // a NaN as F32 (and as the second BF16 value)
    weights.close();
    const auto damaged = run(QStringList{"generate", "--model", base, "--adapter", damagedDir.path()} + generate.mid(1));
    QCOMPARE(damaged.code, 1);
    QVERIFY2(damaged.err.startsWith("error: adapter: ") && damaged.err.contains("not finite"), qPrintable(damaged.err));
    const auto notAModel = run({"translate", "--model", lora, "--to", "de", "--text", "x"});
    QCOMPARE(notAModel.code, 1);
    QVERIFY(notAModel.err.contains("is a LoRA adapter, not a model"));
    modelsDir_.clear();
}

// Poppler lives in libdragoman_pdf.so, opened at the first PDF (app/documents/pdf_shim.cpp): translating text loads
// neither (the dynamic loader's own account of what it maps), translating a PDF loads both.
void TestCli::popplerOnlyForPdf() {
    QTemporaryDir dir;
    const QString marian = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");
    extraEnv_ = {{"LD_DEBUG", "files"}};
    const auto text = run({"translate", "--model", marian, "--to", "de", "--text", "Good morning."});
    QCOMPARE(text.code, 0);
    QVERIFY2(text.err.contains("calling init:"), "LD_DEBUG gave no account of the libraries");
    QVERIFY2(!text.err.contains("libpoppler") && !text.err.contains("libdragoman_pdf"), "poppler was loaded to translate text");
    const auto input = dir.filePath("scan.pdf");
    QVERIFY(QFile::copy(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/documents/sample.pdf"), input));
    const auto pdf = run({"translate-file", input, "--model", marian, "--to", "de"});
    extraEnv_.clear();
    QCOMPARE(pdf.code, 0);
    QVERIFY2(pdf.err.contains("libdragoman_pdf.so") && pdf.err.contains("libpoppler-cpp"), "no poppler for a PDF");
    QVERIFY(QFile::exists(dir.filePath("scan.de.txt")));
}

// translate-file IN --to L [--out PATH]: the output path on stdout, IN untouched, never an existing file,
// exit 1 with one error line for a bad document (before any model loads), 2 for usage errors.
void TestCli::translateFileContract() {
    QTemporaryDir dir;
    const QString marian = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");
    const auto input = dir.filePath("notes.srt");
    QVERIFY(QFile::copy(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/documents/sample.srt"), input));
    const auto translated = run({"translate-file", input, "--model", marian, "--to", "de"});
    QCOMPARE(translated.code, 0);
    QCOMPARE(translated.out, dir.filePath("notes.de.srt") + "\n");
    QFile out(dir.filePath("notes.de.srt"));
    QVERIFY(out.open(QIODevice::ReadOnly));
    QVERIFY(out.readAll().startsWith("1\n00:00:01,000 --> 00:00:03,500\n"));
    const auto again = run({"translate-file", input, "--model", marian, "--to", "de", "--out", dir.filePath("notes.de.srt")});
    QCOMPARE(again.code, 1);
    QVERIFY(again.err.startsWith("error: io: "));
    QVERIFY(again.err.contains("never overwrites"));
    const auto unsupported = run({"translate-file", dir.filePath("x.exe"), "--model", "/nonexistent", "--to", "de"});
    QCOMPARE(unsupported.code, 1);
    QVERIFY2(unsupported.err.startsWith("error: input: ") && unsupported.err.contains("unsupported document type"),
             qPrintable(unsupported.err));
    QCOMPARE(run({"translate-file", input, "--model", marian}).code, 2);         // no --to
    QCOMPARE(run({"translate-file", "--model", marian, "--to", "de"}).code, 2);  // no IN
    // A cue without a timing line is kept as it is, with a warning that names its line; the job still succeeds.
    const auto broken = dir.filePath("broken.srt");
    QFile cues(broken);
    QVERIFY(cues.open(QIODevice::WriteOnly));
    cues.write("1\n00:00:01,000 --> 00:00:02,000\nGood morning.\n\n2\nNo timing here.\n");
    cues.close();
    const auto kept = run({"translate-file", broken, "--model", marian, "--to", "de"});
    QCOMPARE(kept.code, 0);
    QVERIFY2(kept.err.contains("warning: " + broken + ": line 5: a subtitle block without a timing line"), qPrintable(kept.err));
}

// A HY-MT model gets a Markdown sentence with emphasis and a link whole, with the formatted-text prompt: the
// tiny fixture's answer (greedy, so always the same) loses the tags, which the note reports, and the pieces go
// apart; the markup is in place either way. A glossary's prompt cannot carry tags, so then the pieces go at once.
void TestCli::formattedDocuments() {
    QTemporaryDir dir;
    const auto input = dir.filePath("a.md");
    QFile file(input);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("Click **here** to see the [weather](https://example.org).\n");
    file.close();
    QFile terms(dir.filePath("terms.tsv"));
    QVERIFY(terms.open(QIODevice::WriteOnly));
    terms.write("weather\t天气\n");
    terms.close();
    const QString hunyuan = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny");
    for (const bool glossary : {false, true}) {
        const auto out = dir.filePath(glossary ? "glossary.md" : "formatted.md");
        QStringList args{"translate-file", input, "--model", hunyuan, "--to", "zh", "--out", out};
        if (glossary) args << "--glossary" << dir.filePath("terms.tsv");
        const auto result = run(args);
        QVERIFY2(result.code == 0, qPrintable(result.err));
        QCOMPARE(result.err.contains("lost the inline formatting of 1 of 1 formatted segments"), !glossary);
        QFile translated(out);
        QVERIFY(translated.open(QIODevice::ReadOnly));
        const auto text = QString::fromUtf8(translated.readAll());
        QCOMPARE(text.count(QStringLiteral("**")), 2);
        QVERIFY2(text.contains(QStringLiteral("](https://example.org).\n")), qPrintable(text));
        QVERIFY(!text.contains(QStringLiteral("<s1>")));
    }
}

// A catalog entry flagged c-format whose translation lost its %s: gettext's own check names it, the general
// placeholder count reports it, and the entry stays fuzzy for a translator.
void TestCli::poFormatStringsAreChecked() {
    QTemporaryDir dir;
    QFile po(dir.filePath("app.po"));
    QVERIFY(po.open(QIODevice::WriteOnly));
    po.write(
        "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n#, c-format\nmsgid \"Open %s now\"\nmsgstr \"\"\n");
    po.close();
    const auto result =
        run({"translate-file", po.fileName(), "--model", QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny"), "--to", "de"});
    QCOMPARE(result.code, 0);
    QVERIFY2(result.err.contains("the translation of \"Open %s now\" breaks its format string: line 7: number of format specifications"),
             qPrintable(result.err));
    QVERIFY(result.err.contains("1 of 1 segments have other placeholders"));
    QFile out(dir.filePath("app.de.po"));
    QVERIFY(out.open(QIODevice::ReadOnly));
    QVERIFY(out.readAll().contains("#, fuzzy, c-format\nmsgid \"Open %s now\""));
}

void TestCli::promptCommand_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("out");  // exact stdout, or for errors a piece of stderr
    const QString bos = QStringLiteral("<｜hy_begin▁of▁sentence｜><｜hy_User｜>"), assistant = QStringLiteral("<｜hy_Assistant｜>\n");
    QTest::newRow("HY-MT1.5 default") << QStringList{"--from", "en", "--to", "de", "--text", "Hello."} << 0
                                      << bos + "Translate the following segment into German, without additional explanation.\n\nHello." +
                                             assistant;
    QTest::newRow("Hy-MT2 style") << QStringList{"--from",           "en",     "--to",    "de",    "--text", "Hello.",
                                                 "--prompt-profile", "hy-mt2", "--style", "formal"}
                                  << 0
                                  << bos +
                                         "Please translate the following text into German. Note that the translation style must strictly "
                                         "conform to [formal]:\n\nHello." +
                                         assistant;
    QTest::newRow("Hy-MT2 preferences, Chinese")
        << QStringList{"--from",           "en",     "--to",         "zh",   "--text",       "Hello.",
                       "--prompt-profile", "hy-mt2", "--preference", "简短", "--preference", "口语化"}
        << 0 << bos + "【待翻译文本】\nHello.\n\n【翻译任务】\n1、简短\n2、口语化\n3、将【待翻译文本】翻译为中文。" + assistant;
    QTest::newRow("Hy-MT2 delimiters") << QStringList{"--to", "fr", "--text", "A | B", "--prompt-profile", "hy-mt2", "--keep-delimiters"}
                                       << 0
                                       << bos +
                                              "Please accurately translate the following text into French.\nYou must retain the exact same "
                                              "number of delimiters in the translation. Strictly do not omit, escape, or translate these "
                                              "symbols, and pay close attention to their placement.\n\nA | B" +
                                              assistant;
    QTest::newRow("one prompt per line") << QStringList{"--from", "en", "--to", "de", "--text", "One.\nTwo.", "--prompt-profile", "hy-mt2"}
                                         << 0
                                         << bos +
                                                "Translate the following text into German. Note that you should only output the translated "
                                                "result without any additional explanation:\n\nOne." +
                                                assistant + bos +
                                                "Translate the following text into German. Note that you should only output the translated "
                                                "result without any additional explanation:\n\nTwo." +
                                                assistant;
    QTest::newRow("instructions need Hy-MT2's prompts")
        << QStringList{"--to", "de", "--text", "x", "--style", "formal"} << 1 << "--prompt-profile hy-mt2";
    QTest::newRow("two instructions at once") << QStringList{"--to",    "de",     "--text",           "x", "--prompt-profile", "hy-mt2",
                                                             "--style", "formal", "--keep-delimiters"}
                                              << 1 << "one instruction at a time";
    QTest::newRow("unknown profile") << QStringList{"--to", "de", "--text", "x", "--prompt-profile", "hy-mt3"} << 2 << "hy-mt1.5 or hy-mt2";
    QTest::newRow("empty style") << QStringList{"--to", "de", "--text", "x", "--style", " "} << 2 << "--style";
    QTest::newRow("no target") << QStringList{"--text", "x"} << 2 << "--to";
}

// dragoman-cli prompt prints exactly what the network receives.
void TestCli::promptCommand() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, out);
    const auto result = run(QStringList{"prompt", "--model", DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny"} + args);
    QCOMPARE(result.code, code);
    if (code == 0) {
        QCOMPARE(result.out, out);
    } else {
        QVERIFY2(result.err.contains(out), qPrintable(result.err));
        QCOMPARE(result.err.count('\n'), 1);  // one error line
    }
}

// A Hy-MT2 download in the hub cache is spoken to with Hy-MT2's prompts; translate and translate-file take the
// instructions; JSON and YAML documents keep their keys whatever the model answers.
void TestCli::instructionsOnTranslateAndDataFiles() {
    QTemporaryDir dir;
    const auto snapshot = dir.path() + "/hub/models--tencent--Hy-MT2-1.8B/snapshots/r1";
    QVERIFY(QDir().mkpath(snapshot));
    for (const auto& file : QDir(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny").entryInfoList(QDir::Files))
        QVERIFY(QFile::copy(file.filePath(), snapshot + "/" + file.fileName()));
    modelsDir_ = dir.path() + "/models";
    extraEnv_["HF_HUB_CACHE"] = dir.path() + "/hub";
    const auto prompt = run({"prompt", "--model", "tencent/Hy-MT2-1.8B", "--to", "de", "--text", "Hi.", "--style", "casual"});
    QCOMPARE(prompt.code, 0);
    QVERIFY2(prompt.out.contains("must strictly conform to [casual]:\n\nHi."), qPrintable(prompt.out + prompt.err));
    const QStringList styled{"translate", "--model", "tencent/Hy-MT2-1.8B", "--from",  "en",    "--to",
                             "de",        "--text",  "Good morning.",       "--style", "formal"};
    const auto first = run(styled);
    QCOMPARE(first.code, 0);
    QCOMPARE(run(styled).out, first.out);

    QFile json(dir.filePath("app.json"));
    QVERIFY(json.open(QIODevice::WriteOnly));
    json.write("{\"title\": \"Welcome\", \"count\": 2, \"items\": [\"Open the file\"]}\n");
    json.close();
    QFile yaml(dir.filePath("app.yaml"));
    QVERIFY(yaml.open(QIODevice::WriteOnly));
    yaml.write("# strings\ntitle: Welcome\ncount: 2\n");
    yaml.close();
    for (const auto& model : {QStringLiteral("tencent/Hy-MT2-1.8B"), QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny")}) {
        for (const auto& name : {QStringLiteral("app.json"), QStringLiteral("app.yaml")}) {
            const auto out = dir.filePath("out-" + QFileInfo(model).fileName() + "-" + name);
            const auto result = run({"translate-file", dir.filePath(name), "--model", model, "--to", "de", "--out", out});
            QCOMPARE(result.code, 0);
            QFile written(out);
            QVERIFY(written.open(QIODevice::ReadOnly));
            const auto bytes = written.readAll();
            if (name.endsWith(".json")) {
                QJsonParseError error;
                const auto doc = QJsonDocument::fromJson(bytes, &error);
                QVERIFY2(error.error == QJsonParseError::NoError, bytes.constData());
                QCOMPARE(doc.object().keys(), (QStringList{"count", "items", "title"}));
                QCOMPARE(doc.object()["count"].toInt(), 2);
            } else {
                QVERIFY2(bytes.startsWith("# strings\ntitle: \"") && bytes.endsWith("\"\ncount: 2\n"), bytes.constData());
            }
        }
    }
    extraEnv_.clear();
    modelsDir_.clear();
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
