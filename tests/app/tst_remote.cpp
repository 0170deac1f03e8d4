// translate and translate-file with --server: a real `dragoman-cli serve` on loopback computes what the local
// engine would (stdin lines, Markdown, HTML and SRT documents, byte for byte), and every fault ends in one
// clear error and no output file: nothing listening, a refused key, a server that answers garbage, one that
// drops the connection mid-answer, and options that do not go together.
#include "serve_process.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kMarian = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");
const QString kHunyuan = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny");

struct Run {
    int code = -1;
    QByteArray out, err;
};

// The CLI to its end, while this thread's event loop keeps running (the garbage servers below live on it).
Run cli(const QStringList& args, const QByteArray& input = {}) {
    QProcess process;
    QSignalSpy finished(&process, &QProcess::finished);
    process.start(qEnvironmentVariable("DRAGOMAN_CLI"), args);
    process.write(input);
    process.closeWriteChannel();
    if (!finished.wait(120000) && finished.isEmpty()) return {-1, {}, "timeout"};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2, process.readAllStandardOutput(),
            process.readAllStandardError()};
}

// A loopback server that answers GET /v1/models properly and every other request with `answer` (raw bytes,
// then the connection closes): what a broken or impostor server sends.
class GarbageServer : public QObject {
public:
    explicit GarbageServer(QByteArray answer) : answer_(std::move(answer)) {
        server_.listen(QHostAddress::LocalHost);
        connect(&server_, &QTcpServer::newConnection, this, [this] {
            while (auto* socket = server_.nextPendingConnection()) {
                connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
                    request_ += socket->readAll();
                    if (!request_.contains("\r\n\r\n")) return;
                    const bool models = request_.startsWith("GET /v1/models");
                    const QByteArray list = R"({"object":"list","data":[{"id":"impostor","object":"model"}]})";
                    socket->write(models ? "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                               QByteArray::number(list.size()) + "\r\nConnection: close\r\n\r\n" + list
                                         : answer_);
                    socket->flush();
                    socket->disconnectFromHost();
                    request_.clear();
                });
            }
        });
    }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(server_.serverPort()); }

private:
    QTcpServer server_;
    QByteArray answer_, request_;
};

QByteArray lines() {
    return "The man sees a small house today.\n\nMy brother lives in Berlin.\nGood morning.\nWhere is the station, please?\n";
}

// One "error:" line on stderr, naming `what`.
void expectOneError(const Run& run, const char* what) {
    QCOMPARE(run.code, 1);
    QList<QByteArray> errorLines;
    for (const auto& line : run.err.trimmed().split('\n'))
        if (line.contains("error:")) errorLines.push_back(line);
    QCOMPARE(errorLines.size(), qsizetype(1));
    QVERIFY2(errorLines.front().contains(what), run.err.constData());
}

}  // namespace

class TestRemote : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void linesEqualLocal_data();
    void linesEqualLocal();
    void documentsEqualLocal_data();
    void documentsEqualLocal();
    void serverModelChoosesTheModel();
    void instructionsThroughAServer_data();
    void instructionsThroughAServer();
    void nothingListening();
    void refusedKey();
    void garbage_data();
    void garbage();
    void optionsThatDoNotGoTogether_data();
    void optionsThatDoNotGoTogether();
};

void TestRemote::linesEqualLocal_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("to");
    QTest::newRow("marian (a translation model)") << kMarian << "de";
    QTest::newRow("hunyuan (a chat model)") << kHunyuan << "zh";
}

void TestRemote::linesEqualLocal() {
    QFETCH(QString, model);
    QFETCH(QString, to);
    Server server({"--model", model});
    QVERIFY(!server.url().isEmpty());
    const auto local = cli({"translate", "--model", model, "--from", "en", "--to", to, "--batch", "1"}, lines());
    QCOMPARE(local.code, 0);
    for (const auto& batch : {QStringLiteral("1"), QStringLiteral("4")}) {
        const auto remote = cli({"translate", "--server", server.url(), "--from", "en", "--to", to, "--batch", batch}, lines());
        QVERIFY2(remote.code == 0, remote.err.constData());
        QCOMPARE(remote.out, local.out);
    }
    if (model != kHunyuan) return;
    // Sampled with a seed: the server samples as the model's generation config says, as the local engine does (it
    // decoded greedily, the request naming no temperature).
    const QStringList sampled{"--from", "en", "--to", to, "--batch", "1", "--sample", "--seed", "3"};
    const auto localSample = cli(QStringList{"translate", "--model", model} + sampled, lines());
    QCOMPARE(localSample.code, 0);
    QVERIFY(localSample.out != local.out);
    const auto remoteSample = cli(QStringList{"translate", "--server", server.url()} + sampled, lines());
    QVERIFY2(remoteSample.code == 0, remoteSample.err.constData());
    QCOMPARE(remoteSample.out, localSample.out);
}

void TestRemote::documentsEqualLocal_data() {
    QTest::addColumn<QString>("document");
    for (const char* name : {"sample.md", "sample.html", "sample.srt"})
        QTest::newRow(name) << QString(name);
}

void TestRemote::documentsEqualLocal() {
    QFETCH(QString, document);
    Server server({"--model", kMarian});
    QTemporaryDir dir;
    const auto input = dir.filePath(document);
    QVERIFY(QFile::copy(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/documents/") + document, input));
    const auto localOut = dir.filePath("local-" + document), remoteOut = dir.filePath("remote-" + document);
    const auto local = cli({"translate-file", input, "--model", kMarian, "--from", "en", "--to", "de", "--out", localOut});
    QVERIFY2(local.code == 0, local.err.constData());
    const auto remote =
        cli({"translate-file", input, "--server", server.url(), "--from", "en", "--to", "de", "--concurrency", "4", "--out", remoteOut});
    QVERIFY2(remote.code == 0, remote.err.constData());
    QFile a(localOut), b(remoteOut);
    QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
    QCOMPARE(b.readAll(), a.readAll());
}

void TestRemote::instructionsThroughAServer_data() {
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("input");  // a file name under the temporary folder, or "" for stdin lines
    QTest::newRow("style") << QStringList{"--style", "formal"} << "";
    QTest::newRow("preferences") << QStringList{"--preference", "Keep it short.", "--preference", "Use Sie."} << "";
    QTest::newRow("kept delimiters") << QStringList{"--keep-delimiters"} << "";
    QTest::newRow("glossary") << QStringList{"--glossary", "@terms"} << "";
    QTest::newRow("context") << QStringList{"--context", "A letter to a friend."} << "";
    QTest::newRow("HY-MT1.5's prompts by hand") << QStringList{"--prompt-profile", "hy-mt1.5"} << "";
    QTest::newRow("a JSON document") << QStringList{} << "app.json";
    QTest::newRow("a YAML document with a style") << QStringList{"--style", "casual"} << "app.yaml";
}

// A Hy-MT2 model served by Dragoman: the instructions travel with each request and the answers are the local
// engine's, byte for byte, for lines and data documents.
void TestRemote::instructionsThroughAServer() {
    QFETCH(QStringList, options);
    QFETCH(QString, input);
    QTemporaryDir dir;
    const auto model = dir.filePath("Hy-MT2-tiny");
    QVERIFY(QDir().mkpath(model));
    for (const auto& file : QDir(kHunyuan).entryInfoList(QDir::Files))
        QVERIFY(QFile::copy(file.filePath(), model + "/" + file.fileName()));
    QFile terms(dir.filePath("terms.tsv"));
    QVERIFY(terms.open(QIODevice::WriteOnly));
    terms.write("house\tHaus\n");
    terms.close();
    options.replaceInStrings(QStringLiteral("@terms"), terms.fileName());
    Server server({"--model", model});
    QVERIFY(!server.url().isEmpty());
    if (input.isEmpty()) {
        const auto local = cli(QStringList{"translate", "--model", model, "--from", "en", "--to", "de"} + options, lines());
        QVERIFY2(local.code == 0, local.err.constData());
        const auto remote = cli(QStringList{"translate", "--server", server.url(), "--from", "en", "--to", "de"} + options, lines());
        QVERIFY2(remote.code == 0, remote.err.constData());
        QCOMPARE(remote.out, local.out);
        return;
    }
    QFile data(dir.filePath(input));
    QVERIFY(data.open(QIODevice::WriteOnly));
    data.write(input.endsWith(".json") ? "{\"title\": \"Welcome\", \"n\": 1, \"items\": [\"Open the file\"]}\n"
                                       : "# strings\ntitle: Welcome\nitems:\n  - Open the file\n");
    data.close();
    const auto localOut = dir.filePath("local-" + input), remoteOut = dir.filePath("remote-" + input);
    const auto local = cli(QStringList{"translate-file", data.fileName(), "--model", model, "--to", "de", "--out", localOut} + options);
    QVERIFY2(local.code == 0, local.err.constData());
    const auto remote =
        cli(QStringList{"translate-file", data.fileName(), "--server", server.url(), "--to", "de", "--out", remoteOut} + options);
    QVERIFY2(remote.code == 0, remote.err.constData());
    QFile a(localOut), b(remoteOut);
    QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
    QCOMPARE(b.readAll(), a.readAll());
}

void TestRemote::serverModelChoosesTheModel() {
    Server server({"--model", kMarian, "--adapter", "legal=" DRAGOMAN_TEST_FIXTURES "/lora/marian-tiny.attn-ffn"});
    const auto base = cli({"translate", "--server", server.url(), "--to", "de", "--text", "My brother lives in Berlin."});
    const auto adapted =
        cli({"translate", "--server", server.url(), "--server-model", "legal", "--to", "de", "--text", "My brother lives in Berlin."});
    const auto local = cli({"translate", "--model", kMarian, "--adapter", DRAGOMAN_TEST_FIXTURES "/lora/marian-tiny.attn-ffn", "--to", "de",
                            "--text", "My brother lives in Berlin."});
    QCOMPARE(adapted.code, 0);
    QCOMPARE(adapted.out, local.out);
    QVERIFY(base.out != adapted.out);
    expectOneError(cli({"translate", "--server", server.url(), "--server-model", "nope", "--to", "de", "--text", "a"}), "no model 'nope'");
}

void TestRemote::nothingListening() {
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost));
    const auto url = QStringLiteral("http://127.0.0.1:%1").arg(probe.serverPort());
    probe.close();  // a port nobody listens on
    expectOneError(cli({"translate", "--server", url, "--to", "de", "--text", "Hello."}), "cannot reach");
    QTemporaryDir dir;
    QVERIFY(QFile::copy(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/documents/sample.md"), dir.filePath("in.md")));
    expectOneError(cli({"translate-file", dir.filePath("in.md"), "--server", url, "--to", "de", "--out", dir.filePath("out.md")}),
                   "cannot reach");
    QVERIFY(!QFile::exists(dir.filePath("out.md")));
}

void TestRemote::refusedKey() {
    QTemporaryDir dir;
    QFile key(dir.filePath("key")), wrong(dir.filePath("wrong"));
    QVERIFY(key.open(QIODevice::WriteOnly) && wrong.open(QIODevice::WriteOnly));
    key.write("s3cret\n");
    wrong.write("guess\n");
    key.close();
    wrong.close();
    Server server({"--model", kMarian, "--api-key-file", key.fileName()});
    expectOneError(cli({"translate", "--server", server.url(), "--api-key-file", wrong.fileName(), "--to", "de", "--text", "Hello."}),
                   "refused the API key");
    const auto right = cli({"translate", "--server", server.url(), "--api-key-file", key.fileName(), "--to", "de", "--text", "Hello."});
    QVERIFY2(right.code == 0, right.err.constData());
}

void TestRemote::garbage_data() {
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<QString>("error");
    QTest::newRow("not HTTP") << QByteArray("hello there\r\n") << "remote";
    QTest::newRow("malformed event") << QByteArray("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {not json\n\n")
                                     << "malformed event";
    QTest::newRow("dropped mid-answer") << QByteArray(
                                               "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: "
                                               R"({"choices":[{"index":0,"delta":{"content":"Hal"}}]})"
                                               "\n\n")
                                        << "ended before it was complete";
    QTest::newRow("overloaded") << QByteArray("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n") << "HTTP 503";
    QTest::newRow("error status") << QByteArray(
                                         "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 41\r\n\r\n"
                                         R"({"error":{"message":"the GPU caught fire"}})")
                                  << "the GPU caught fire";
}

// Each fault is one clear error, for a line and for a document, and a document leaves no output behind.
void TestRemote::garbage() {
    QFETCH(QByteArray, answer);
    QFETCH(QString, error);
    GarbageServer server(answer);
    expectOneError(cli({"translate", "--server", server.url(), "--to", "de", "--text", "Hello."}), error.toUtf8().constData());
    QTemporaryDir dir;
    QVERIFY(QFile::copy(QStringLiteral(DRAGOMAN_TEST_FIXTURES "/documents/sample.md"), dir.filePath("in.md")));
    expectOneError(cli({"translate-file", dir.filePath("in.md"), "--server", server.url(), "--to", "de", "--out", dir.filePath("out.md")}),
                   error.toUtf8().constData());
    QVERIFY(!QFile::exists(dir.filePath("out.md")));
}

void TestRemote::optionsThatDoNotGoTogether_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("--server and --model") << QStringList{"translate", "--server", "http://127.0.0.1:9", "--model", kMarian, "--to", "de"};
    QTest::newRow("--server-model alone") << QStringList{"translate", "--server-model", "x", "--to", "de"};
    QTest::newRow("not a URL") << QStringList{"translate", "--server", "ftp://example", "--to", "de", "--text", "a"};
}

void TestRemote::optionsThatDoNotGoTogether() {
    QFETCH(QStringList, args);
    const auto run = cli(args);
    QVERIFY2(run.code == 2 || run.code == 1, run.err.constData());
    QVERIFY(run.err.contains("error"));
}

QTEST_GUILESS_MAIN(TestRemote)
#include "tst_remote.moc"
