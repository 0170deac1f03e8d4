// dragoman-cli serve as a real process on loopback, driven over HTTP with Qt Network: OpenAI's chat
// completions (whole and streamed) and models list, LibreTranslate's /translate and /languages, answers equal
// to the CLI's, concurrent streams that keep their own tokens, every error status, a client that leaves
// mid-stream, a full queue, and SIGTERM ending the requests in flight before exit 0.
#include "serve_process.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <csignal>
#include <memory>

namespace {

const QString kMarian = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/marian-tiny");
const QString kHunyuan = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/hunyuan-tiny");
const QString kAdapter = QStringLiteral(DRAGOMAN_TEST_FIXTURES "/lora/marian-tiny.attn-ffn");

QString longText() {
    QString text;
    for (int i = 0; i < 60; ++i)
        text += QStringLiteral("My brother lives in Berlin and reads a newspaper every morning. ");
    return text;
}

struct Reply {
    int status = 0;
    QByteArray body;
    QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
};

Reply send(QNetworkAccessManager& net, const QString& method, const QString& url, const QByteArray& body = {},
           const QByteArray& contentType = "application/json", const QByteArray& key = {}) {
    QNetworkRequest request{QUrl(url)};
    if (!body.isNull()) request.setHeader(QNetworkRequest::ContentTypeHeader, contentType);
    if (!key.isEmpty()) request.setRawHeader("Authorization", "Bearer " + key);
    auto* reply = net.sendCustomRequest(request, method.toUtf8(), body);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(120000, &loop, &QEventLoop::quit);
    loop.exec();
    Reply r{reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), reply->readAll()};
    reply->deleteLater();
    return r;
}

QByteArray chatBody(const QString& model, const QString& text, bool stream, const QJsonObject& extra = {}) {
    QJsonObject body = extra;
    body["model"] = model;
    body["messages"] = QJsonArray{QJsonObject{{"role", "user"}, {"content", text}}};
    body["stream"] = stream;
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QString contentOf(const Reply& reply) {
    return reply.json()["choices"].toArray().at(0).toObject()["message"].toObject()["content"].toString();
}

// The deltas of an SSE answer joined, and whether it ended with [DONE]; usage, when a chunk carried it.
struct Streamed {
    QString text;
    bool done = false;
    QJsonObject usage;
    QString finishReason;
};
Streamed parseEvents(const QByteArray& body) {
    Streamed s;
    for (const auto& event : body.split('\n')) {
        if (!event.startsWith("data: ")) continue;
        const auto data = event.mid(6);
        if (data == "[DONE]") {
            s.done = true;
            continue;
        }
        const auto chunk = QJsonDocument::fromJson(data).object();
        if (chunk.contains("usage")) s.usage = chunk["usage"].toObject();
        for (const auto& choice : chunk["choices"].toArray()) {
            s.text += choice.toObject()["delta"].toObject()["content"].toString();
            if (!choice.toObject()["finish_reason"].isNull()) s.finishReason = choice.toObject()["finish_reason"].toString();
        }
    }
    return s;
}

QString cliTranslate(const QString& model, const QString& from, const QString& to, const QString& text) {
    QProcess process;
    process.start(qEnvironmentVariable("DRAGOMAN_CLI"), {"translate", "--model", model, "--from", from, "--to", to, "--text", text});
    process.waitForFinished(60000);
    return QString::fromUtf8(process.readAllStandardOutput()).chopped(1);  // its line break
}

}  // namespace

class TestServe : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void modelsListsBaseAndAdapters();
    void chatAnswersEqualTheCli_data();
    void chatAnswersEqualTheCli();
    void streamedDeltasAddUp();
    void adapterIsChosenByModelName();
    void concurrentStreamsKeepTheirTokens();
    void stopStringsEndTheAnswer();
    void libreTranslate();
    void libreSourceAutoAndDetect();
    void multilingualModelTakesItsTargets();
    void errors_data();
    void errors();
    void apiKeyIsRequired();
    void fullQueueAnswers503();
    void clientLeavingMidStreamDisturbsNothing();
    void clientLeavingWithoutStreamFreesItsPlace_data();
    void clientLeavingWithoutStreamFreesItsPlace();
    void sigtermFinishesRequestsInFlight();
    void sigtermCancelsWhatOutlastsTheGrace();
    void sigtermDoesNotWaitForASlowClientsHeaders();
    void portInUseIsRefused();
    void chunkedBodyOverTheLimit();
    void maxTokensCapsTranslations();
    void libreHtmlKeepsInlineMarkup();

private:
    std::unique_ptr<Server> marian_, hunyuan_;
    QNetworkAccessManager net_;
};

void TestServe::initTestCase() {
    marian_ = std::make_unique<Server>(QStringList{"--model", kMarian, "--adapter", "tuned=" + kAdapter});
    QVERIFY2(!marian_->url().isEmpty(), marian_->process().readAllStandardError().constData());
    QVERIFY(marian_->url().startsWith("http://127.0.0.1:"));
    hunyuan_ = std::make_unique<Server>(QStringList{"--model", kHunyuan});
    QVERIFY2(!hunyuan_->url().isEmpty(), hunyuan_->process().readAllStandardError().constData());
}

void TestServe::modelsListsBaseAndAdapters() {
    const auto reply = send(net_, "GET", marian_->url() + "/v1/models");
    QCOMPARE(reply.status, 200);
    QStringList ids;
    for (const auto& model : reply.json()["data"].toArray())
        ids << model.toObject()["id"].toString();
    QCOMPARE(ids.size(), 2);
    QVERIFY(ids.contains("tuned"));
    QVERIFY(ids.at(0).contains("marian-tiny"));
}

void TestServe::chatAnswersEqualTheCli_data() {
    QTest::addColumn<bool>("hunyuan");
    QTest::addColumn<QString>("text");
    QTest::newRow("marian") << false << "The man sees a small house today.";
    QTest::newRow("marian, two lines") << false << "My brother lives in Berlin.\nThe cat sleeps.";
    QTest::newRow("hunyuan chat") << true << "It is raining.";
}

// Marian translates the last user message between source_lang and target_lang; HY-MT answers the model card's
// prompt sent as a chat message exactly as `translate` does when it writes that prompt itself.
void TestServe::chatAnswersEqualTheCli() {
    QFETCH(bool, hunyuan);
    QFETCH(QString, text);
    auto* server = hunyuan ? hunyuan_.get() : marian_.get();
    const auto models = send(net_, "GET", server->url() + "/v1/models").json()["data"].toArray();
    const auto id = models.at(0).toObject()["id"].toString();
    const auto message = hunyuan ? "Translate the following segment into German, without additional explanation.\n\n" + text : text;
    // The tiny HY fixture never says EOS: without max_tokens it would fill its 4096-token context, minutes under TSan.
    const QJsonObject extra =
        hunyuan ? QJsonObject{{"temperature", 0}, {"max_tokens", 200}} : QJsonObject{{"source_lang", "en"}, {"target_lang", "de"}};
    const auto reply = send(net_, "POST", server->url() + "/v1/chat/completions", chatBody(id, message, false, extra));
    QCOMPARE(reply.status, 200);
    const auto cli = cliTranslate(hunyuan ? kHunyuan : kMarian, "en", "de", text);
    if (hunyuan)  // `translate` caps a translation at twice its prompt's length; a chat answer may go on
        QVERIFY2(contentOf(reply).startsWith(cli), qPrintable(contentOf(reply) + " / " + cli));
    else
        QCOMPARE(contentOf(reply), cli);
    const auto usage = reply.json()["usage"].toObject();
    QVERIFY(usage["prompt_tokens"].toInt() > 0);
    QCOMPARE(usage["total_tokens"].toInt(), usage["prompt_tokens"].toInt() + usage["completion_tokens"].toInt());
    QCOMPARE(reply.json()["object"].toString(), QStringLiteral("chat.completion"));
    if (hunyuan) {
        QCOMPARE(usage["completion_tokens"].toInt(), 200);
        QCOMPARE(reply.json()["choices"].toArray().at(0).toObject()["finish_reason"].toString(), QStringLiteral("length"));
    }
}

void TestServe::streamedDeltasAddUp() {
    const QJsonObject extra{{"source_lang", "en"}, {"target_lang", "de"}, {"stream_options", QJsonObject{{"include_usage", true}}}};
    const auto whole = send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", longText(), false, extra));
    const auto streamed = send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", longText(), true, extra));
    QCOMPARE(streamed.status, 200);
    const auto events = parseEvents(streamed.body);
    QVERIFY(events.done);
    QCOMPARE(events.text, contentOf(whole));
    // The tiny model runs its sentences to its cap: both say "length".
    QCOMPARE(events.finishReason, whole.json()["choices"].toArray().at(0).toObject()["finish_reason"].toString());
    QCOMPARE(events.usage["completion_tokens"].toInt(), whole.json()["usage"].toObject()["completion_tokens"].toInt());
    // include_usage null is unset, as OpenAI reads it: the stream ends without a usage chunk.
    auto unset = extra;
    unset["stream_options"] = QJsonObject{{"include_usage", QJsonValue::Null}};
    const auto plain = send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", "The cat sleeps.", true, unset));
    QCOMPARE(plain.status, 200);
    const auto plainEvents = parseEvents(plain.body);
    QVERIFY(plainEvents.done);
    QVERIFY(!plainEvents.text.isEmpty());
    QVERIFY(plainEvents.usage.isEmpty());
}

void TestServe::adapterIsChosenByModelName() {
    const QJsonObject extra{{"source_lang", "en"}, {"target_lang", "de"}};
    const QString text = QStringLiteral("The man sees a small house today.");
    const auto base =
        send(net_, "POST", marian_->url() + "/v1/chat/completions",
             chatBody(send(net_, "GET", marian_->url() + "/v1/models").json()["data"].toArray().at(0).toObject()["id"].toString(), text,
                      false, extra));
    const auto tuned = send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", text, false, extra));
    QCOMPARE(contentOf(tuned), cliTranslate(kAdapter + ".merged", "en", "de", text));  // PEFT's merged twin
    QVERIFY(contentOf(tuned) != contentOf(base));
}

// Several streams at once: each gets its own answer, whole, as when it ran alone.
void TestServe::concurrentStreamsKeepTheirTokens() {
    const QStringList texts{longText(), QStringLiteral("The cat sleeps."), QStringLiteral("My brother lives in Berlin. ") + longText()};
    const QJsonObject extra{{"source_lang", "en"}, {"target_lang", "de"}};
    QStringList alone;
    for (const auto& text : texts)
        alone << contentOf(send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", text, false, extra)));
    std::vector<QNetworkReply*> replies;
    for (const auto& text : texts) {
        QNetworkRequest request{QUrl(marian_->url() + "/v1/chat/completions")};
        request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
        replies.push_back(net_.post(request, chatBody("tuned", text, true, extra)));
    }
    for (std::size_t i = 0; i < replies.size(); ++i) {
        QTRY_VERIFY_WITH_TIMEOUT(replies[i]->isFinished(), 120000);
        const auto events = parseEvents(replies[i]->readAll());
        QVERIFY(events.done);
        QCOMPARE(events.text, alone[static_cast<int>(i)]);
        replies[i]->deleteLater();
    }
}

void TestServe::stopStringsEndTheAnswer() {
    const QJsonObject plain{{"source_lang", "en"}, {"target_lang", "de"}};
    const QString text = QStringLiteral("My brother lives in Berlin and reads a newspaper every morning.");
    const auto full = contentOf(send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", text, false, plain)));
    QVERIFY(full.size() > 6);
    const auto stop = full.mid(full.size() / 2, 3);
    auto extra = plain;
    extra["stop"] = QJsonArray{stop};
    const auto expected = full.left(full.indexOf(stop));
    QCOMPARE(contentOf(send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", text, false, extra))), expected);
    QCOMPARE(parseEvents(send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", text, true, extra)).body).text,
             expected);
}

// LibreTranslate's source "auto": each text's own language, reported per text, the answer the CLI gives for
// that source; a text the model cannot read fails the call before any work; POST /detect names the language.
void TestServe::libreSourceAutoAndDetect() {
    const QString german = QStringLiteral("Die Bibliothek öffnet am Montag wieder ihre Türen für alle Besucher.");
    const QString chinese = QStringLiteral("图书馆星期一将重新向所有访客开放，欢迎大家前来参观。");
    auto reply = send(net_, "POST", hunyuan_->url() + "/translate",
                      QJsonDocument(QJsonObject{{"q", QJsonArray{german, chinese}}, {"source", "auto"}, {"target", "en"}}).toJson());
    QCOMPARE(reply.status, 200);
    QCOMPARE(reply.json()["translatedText"].toArray(),
             (QJsonArray{cliTranslate(kHunyuan, "de", "en", german), cliTranslate(kHunyuan, "zh", "en", chinese)}));
    const auto detected = reply.json()["detectedLanguage"].toArray();
    QCOMPARE(detected.size(), 2);
    QCOMPARE(detected.at(0).toObject()["language"].toString(), QStringLiteral("de"));
    QCOMPARE(detected.at(1).toObject()["language"].toString(), QStringLiteral("zh"));
    QCOMPARE(detected.at(0).toObject()["confidence"].toDouble(), 90.0);
    reply = send(net_, "POST", hunyuan_->url() + "/translate",
                 QJsonDocument(QJsonObject{{"q", german}, {"source", "auto"}, {"target", "en"}}).toJson());
    QCOMPARE(reply.json()["detectedLanguage"].toObject()["language"].toString(), QStringLiteral("de"));  // one text: one object
    reply = send(net_, "POST", marian_->url() + "/translate",
                 QJsonDocument(QJsonObject{{"q", QJsonArray{"The cat sleeps.", german}}, {"source", "auto"}, {"target", "de"}}).toJson());
    QCOMPARE(reply.status, 400);
    QVERIFY2(reply.json()["error"].toObject()["message"].toString().contains("text 2: the text looks like German"), reply.body.constData());

    reply = send(net_, "POST", marian_->url() + "/detect", QJsonDocument(QJsonObject{{"q", german}}).toJson());
    QCOMPARE(reply.status, 200);
    auto candidates = QJsonDocument::fromJson(reply.body).array();
    QCOMPARE(candidates.size(), 1);
    QCOMPARE(candidates.at(0).toObject()["language"].toString(), QStringLiteral("de"));
    reply = send(net_, "POST", marian_->url() + "/detect", "q=" + QUrl::toPercentEncoding(chinese), "application/x-www-form-urlencoded");
    QCOMPARE(QJsonDocument::fromJson(reply.body).array().at(0).toObject()["language"].toString(), QStringLiteral("zh"));
    reply = send(net_, "POST", marian_->url() + "/detect", QJsonDocument(QJsonObject{{"q", "12:30"}}).toJson());
    QCOMPARE(reply.status, 200);
    QCOMPARE(QJsonDocument::fromJson(reply.body).array().size(), 0);
    QCOMPARE(send(net_, "POST", marian_->url() + "/detect", QByteArray(R"({"text": "Hallo"})")).status, 400);
    QCOMPARE(send(net_, "POST", marian_->url() + "/detect", QByteArray("{broken")).status, 400);
}

void TestServe::libreTranslate() {
    const QString text = QStringLiteral("The man sees a small house today.");
    const auto expected = cliTranslate(kMarian, "en", "de", text);
    auto reply = send(net_, "POST", marian_->url() + "/translate",
                      QJsonDocument(QJsonObject{{"q", text}, {"source", "en"}, {"target", "de"}}).toJson());
    QCOMPARE(reply.status, 200);
    QCOMPARE(reply.json()["translatedText"].toString(), expected);
    reply = send(net_, "POST", marian_->url() + "/translate",
                 QJsonDocument(QJsonObject{{"q", QJsonArray{text, text}}, {"source", "auto"}, {"target", "de"}}).toJson());
    QCOMPARE(reply.json()["translatedText"].toArray(), (QJsonArray{expected, expected}));
    QCOMPARE(reply.json()["detectedLanguage"].toArray().at(0).toObject()["language"].toString(), QStringLiteral("en"));
    reply = send(net_, "POST", marian_->url() + "/translate", "q=The+cat+sleeps.&source=en&target=de", "application/x-www-form-urlencoded");
    QCOMPARE(reply.json()["translatedText"].toString(), cliTranslate(kMarian, "en", "de", "The cat sleeps."));
    reply = send(net_, "POST", marian_->url() + "/translate",
                 QJsonDocument(QJsonObject{{"q", "<p>" + text + "</p>"}, {"source", "en"}, {"target", "de"}, {"format", "html"}}).toJson());
    QVERIFY(reply.json()["translatedText"].toString().startsWith("<p>"));
    QVERIFY(reply.json()["translatedText"].toString().endsWith("</p>"));
    const auto languages = QJsonDocument::fromJson(send(net_, "GET", marian_->url() + "/languages").body).array();
    QCOMPARE(languages.size(), 1);
    QCOMPARE(languages.at(0).toObject()["code"].toString(), QStringLiteral("en"));
    QCOMPARE(languages.at(0).toObject()["targets"].toArray(), QJsonArray{"de"});
    QVERIFY(QJsonDocument::fromJson(send(net_, "GET", hunyuan_->url() + "/languages").body).array().size() > 30);
}

// The bundled model translates en<->de and en<->zh: the target decides, as in `translate`.
void TestServe::multilingualModelTakesItsTargets() {
    const QString bundled = QStringLiteral(DRAGOMAN_SOURCE_DIR "/resources/models/dragoman-en-de-zh");
    if (!QFile::exists(bundled + "/model.safetensors")) QSKIP("the bundled model is not installed");
    Server server({"--model", bundled});
    QVERIFY(!server.url().isEmpty());
    const auto id = send(net_, "GET", server.url() + "/v1/models").json()["data"].toArray().at(0).toObject()["id"].toString();
    const QString text = QStringLiteral("The weather is nice today.");
    for (const QString to : {"de", "zh"}) {
        const auto reply = send(net_, "POST", server.url() + "/v1/chat/completions",
                                chatBody(id, text, false, {{"source_lang", "en"}, {"target_lang", to}}));
        QCOMPARE(reply.status, 200);
        QCOMPARE(contentOf(reply), cliTranslate(bundled, "en", to, text));
    }
    const auto languages = QJsonDocument::fromJson(send(net_, "GET", server.url() + "/languages").body).array();
    QVERIFY(!languages.isEmpty());
    bool englishToGerman = false;
    for (const auto& language : languages)
        if (language.toObject()["code"] == "en") englishToGerman = language.toObject()["targets"].toArray().contains("de");
    QVERIFY(englishToGerman);
    // It reads the languages it writes, and only those: French is no source of it, as a request or in the list.
    QStringList sources;
    for (const auto& language : languages)
        sources << language.toObject()["code"].toString();
    sources.sort();
    QCOMPARE(sources, (QStringList{"de", "en", "zh"}));
    QCOMPARE(send(net_, "POST", server.url() + "/v1/chat/completions", chatBody(id, text, false, {{"target_lang", "fr"}})).status, 400);
    const auto fromFrench = send(net_, "POST", server.url() + "/v1/chat/completions",
                                 chatBody(id, "Bonjour le monde.", false, {{"source_lang", "fr"}, {"target_lang", "de"}}));
    QCOMPARE(fromFrench.status, 400);
    QVERIFY2(fromFrench.json()["error"].toObject()["message"].toString().contains("cannot translate from 'fr'"),
             fromFrench.body.constData());
}

void TestServe::errors_data() {
    QTest::addColumn<QString>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::newRow("bad JSON") << "POST"
                              << "/v1/chat/completions" << QByteArray("{\"model\": ") << 400;
    QTest::newRow("not an object") << "POST"
                                   << "/v1/chat/completions" << QByteArray("[1, 2]") << 400;
    QTest::newRow("no messages") << "POST"
                                 << "/v1/chat/completions" << QByteArray(R"({"model": "tuned"})") << 400;
    QTest::newRow("content of the wrong type") << "POST"
                                               << "/v1/chat/completions"
                                               << QByteArray(R"({"model": "tuned", "messages": [{"role": "user", "content": 5}]})") << 400;
    QTest::newRow("a content part whose type is a number")
        << "POST"
        << "/v1/chat/completions"
        << QByteArray(R"({"model": "tuned", "messages": [{"role": "user", "content": [{"type": 5, "text": "Hi."}]}]})") << 400;
    QTest::newRow("invalid UTF-8") << "POST"
                                   << "/v1/chat/completions"
                                   << QByteArray("{\"model\": \"tuned\", \"messages\": [{\"role\": \"user\", \"content\": \"\xff\xfe\"}]}")
                                   << 400;
    QTest::newRow("temperature out of range") << "POST"
                                              << "/v1/chat/completions"
                                              << chatBody("tuned", "Hi.", false, {{"temperature", 7}, {"target_lang", "de"}}) << 400;
    QTest::newRow("stream_options of the wrong type")
        << "POST"
        << "/v1/chat/completions"
        << chatBody("tuned", "Hi.", false, {{"target_lang", "de"}, {"stream_options", QJsonObject{{"include_usage", "yes"}}}}) << 400;
    QTest::newRow("unknown model") << "POST"
                                   << "/v1/chat/completions" << chatBody("gpt-4", "Hi.", false) << 404;
    QTest::newRow("language the model lacks") << "POST"
                                              << "/v1/chat/completions" << chatBody("tuned", "Hi.", false, {{"target_lang", "fr"}}) << 400;
    QTest::newRow("a style for a model without prompts, streamed")
        << "POST"
        << "/v1/chat/completions" << chatBody("tuned", "Hi.", true, {{"target_lang", "de"}, {"style", "formal"}}) << 400;
    QTest::newRow("an unknown prompt profile") << "POST"
                                               << "/v1/chat/completions"
                                               << chatBody("tuned", "Hi.", true, {{"target_lang", "de"}, {"prompt_profile", "hy-mt9"}})
                                               << 400;
    QTest::newRow("a glossary of the wrong shape")
        << "POST"
        << "/v1/chat/completions" << chatBody("tuned", "Hi.", false, {{"target_lang", "de"}, {"glossary", "house=Haus"}}) << 400;
    // One answer as text per request: what asks for more is refused by name, not answered as if unasked.
    QTest::newRow("n = 3") << "POST"
                           << "/v1/chat/completions" << chatBody("tuned", "Hi.", false, {{"target_lang", "de"}, {"n", 3}}) << 400;
    QTest::newRow("logprobs") << "POST"
                              << "/v1/chat/completions" << chatBody("tuned", "Hi.", false, {{"target_lang", "de"}, {"logprobs", true}})
                              << 400;
    QTest::newRow("a JSON response format") << "POST"
                                            << "/v1/chat/completions"
                                            << chatBody("tuned", "Hi.", false,
                                                        {{"target_lang", "de"}, {"response_format", QJsonObject{{"type", "json_object"}}}})
                                            << 400;
    QTest::newRow("a translation without a user message")
        << "POST"
        << "/v1/chat/completions"
        << QByteArray(R"({"model": "tuned", "target_lang": "de", "messages": [{"role": "system", "content": "I have a dog."}]})") << 400;
    QTest::newRow("a translation with an unknown role")
        << "POST"
        << "/v1/chat/completions"
        << QByteArray(R"({"model": "tuned", "target_lang": "de", "messages": [{"role": "bogus", "content": "I have a dog."}]})") << 400;
    QTest::newRow("unknown route") << "GET"
                                   << "/v1/embeddings" << QByteArray() << 404;
    QTest::newRow("libretranslate without target") << "POST"
                                                   << "/translate" << QByteArray(R"({"q": "Hi."})") << 400;
    QTest::newRow("body over the limit") << "POST"
                                         << "/v1/chat/completions" << QByteArray(5 << 20, 'x') << 413;
}

void TestServe::errors() {
    QFETCH(QString, method);
    QFETCH(QString, path);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    const auto reply = send(net_, method, marian_->url() + path, body.isEmpty() ? QByteArray() : body);
    QCOMPARE(reply.status, status);
    const auto error = reply.json()["error"].toObject();
    QVERIFY2(!error["message"].toString().isEmpty(), reply.body.constData());
    QVERIFY(!error["type"].toString().isEmpty());
    QVERIFY(error.contains("code"));
    // One log line for the request, errors included: method, path and status.
    QByteArray log;
    const auto line = QStringLiteral("%1 %2 status=%3").arg(method, path).arg(status).toUtf8();
    QTRY_VERIFY2_WITH_TIMEOUT((log += marian_->process().readAllStandardError()).contains(line),
                              (line + " not in: " + log.right(400)).constData(), 10000);
    QCOMPARE(send(net_, "GET", marian_->url() + "/v1/models").status, 200);  // and the server lives on
}

void TestServe::apiKeyIsRequired() {
    QTemporaryDir dir;
    QFile keyFile(dir.filePath("key"));
    QVERIFY(keyFile.open(QIODevice::WriteOnly));
    keyFile.write("s3cret\n");
    keyFile.close();
    Server server({"--model", kMarian, "--api-key-file", keyFile.fileName()});
    QVERIFY(!server.url().isEmpty());
    QCOMPARE(send(net_, "GET", server.url() + "/v1/models").status, 401);
    QCOMPARE(send(net_, "GET", server.url() + "/v1/models", {}, {}, "wrong").status, 401);
    QCOMPARE(send(net_, "GET", server.url() + "/v1/models", {}, {}, "s3cret").status, 200);
    const auto body = QJsonDocument(QJsonObject{{"q", "The cat."}, {"source", "en"}, {"target", "de"}}).toJson();
    QCOMPARE(send(net_, "POST", server.url() + "/translate", body).status, 401);
    const auto keyed = QJsonDocument(QJsonObject{{"q", "The cat."}, {"source", "en"}, {"target", "de"}, {"api_key", "s3cret"}}).toJson();
    QCOMPARE(send(net_, "POST", server.url() + "/translate", keyed).status, 200);
}

// One request computing, none allowed to wait: a second is turned away at once with 503, and served later.
void TestServe::fullQueueAnswers503() {
    Server server({"--model", kMarian, "--max-batch", "1", "--max-queue", "0"});
    QVERIFY(!server.url().isEmpty());
    const QJsonObject extra{{"source_lang", "en"}, {"target_lang", "de"}};
    QNetworkRequest request{QUrl(server.url() + "/v1/chat/completions")};
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    const auto id = send(net_, "GET", server.url() + "/v1/models").json()["data"].toArray().at(0).toObject()["id"].toString();
    auto* first = net_.post(request, chatBody(id, longText() + longText() + longText(), true, extra));
    QTRY_VERIFY_WITH_TIMEOUT(first->bytesAvailable() > 0, 30000);  // it computes
    const auto turnedAway = send(net_, "POST", server.url() + "/v1/chat/completions", chatBody(id, "The cat.", false, extra));
    QCOMPARE(turnedAway.status, 503);
    QCOMPARE(turnedAway.json()["error"].toObject()["code"].toString(), QStringLiteral("queue_full"));
    QTRY_VERIFY_WITH_TIMEOUT(first->isFinished(), 120000);
    first->deleteLater();
    QCOMPARE(send(net_, "POST", server.url() + "/v1/chat/completions", chatBody(id, "The cat.", false, extra)).status, 200);
}

void TestServe::clientLeavingMidStreamDisturbsNothing() {
    const QJsonObject extra{{"source_lang", "en"}, {"target_lang", "de"}};
    const auto expected =
        contentOf(send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", "The cat sleeps.", false, extra)));
    QNetworkRequest request{QUrl(marian_->url() + "/v1/chat/completions")};
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    QString veryLong;  // seconds of generation, so the server is still writing when the client leaves
    for (int i = 0; i < 12; ++i)
        veryLong += longText();
    auto* leaving = net_.post(request, chatBody("tuned", veryLong, true, extra));
    QTRY_VERIFY_WITH_TIMEOUT(leaving->bytesAvailable() > 0, 30000);
    leaving->abort();
    leaving->deleteLater();
    const auto after = send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", "The cat sleeps.", true, extra));
    QCOMPARE(parseEvents(after.body).text, expected);
    QByteArray log;
    QTRY_VERIFY2_WITH_TIMEOUT((log += marian_->process().readAllStandardError()).contains("client gone"), log.constData(), 30000);
}

void TestServe::clientLeavingWithoutStreamFreesItsPlace_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("chat completions") << QStringLiteral("/v1/chat/completions");
    QTest::newRow("libretranslate") << QStringLiteral("/translate");
}

// A client that leaves a request it does not stream (no write fails before the answer, which comes at the end): its
// sequence leaves the batch at once, and the server's one place to compute is free for the next request (the work
// asked for is about 20 s of translating here).
void TestServe::clientLeavingWithoutStreamFreesItsPlace() {
    QFETCH(QString, path);
    Server server({"--model", kMarian, "--max-batch", "1"});
    QVERIFY(!server.url().isEmpty());
    const QJsonObject extra{{"source_lang", "en"}, {"target_lang", "de"}};
    const auto id = send(net_, "GET", server.url() + "/v1/models").json()["data"].toArray().at(0).toObject()["id"].toString();
    QString veryLong;
    for (int i = 0; i < 400; ++i)  // 24,000 sentences: about 20 s of work here
        veryLong += longText();
    const auto body = path == "/translate" ? QJsonDocument(QJsonObject{{"q", veryLong}, {"source", "en"}, {"target", "de"}}).toJson()
                                           : chatBody(id, veryLong, false, extra);
    QNetworkRequest request{QUrl(server.url() + path)};
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    auto* leaving = net_.post(request, body);
    QTest::qWait(1500);  // it computes
    QVERIFY(!leaving->isFinished());
    leaving->abort();
    leaving->deleteLater();
    QByteArray log;
    QTRY_VERIFY2_WITH_TIMEOUT((log += server.process().readAllStandardError()).contains("client gone"), log.constData(), 20000);
    QVERIFY2(!log.contains(" ok"), log.constData());  // not answered to the end
    // Left when the client did (1.5 s in), not at the end (about 20 s here, longer under the sanitizers).
    const auto seconds = QRegularExpression(QStringLiteral("total_s=([0-9.]+) client gone")).match(QString::fromUtf8(log));
    QVERIFY2(seconds.hasMatch() && seconds.captured(1).toDouble() < 8, log.constData());
    const auto next = send(net_, "POST", server.url() + "/v1/chat/completions", chatBody(id, "The cat sleeps.", false, extra));
    QCOMPARE(next.status, 200);
    QVERIFY(!contentOf(next).isEmpty());
}

void TestServe::sigtermFinishesRequestsInFlight() {
    Server server({"--model", kMarian});
    QVERIFY(!server.url().isEmpty());
    const QJsonObject extra{{"source_lang", "en"}, {"target_lang", "de"}};
    QNetworkRequest request{QUrl(server.url() + "/v1/chat/completions")};
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    const auto id = send(net_, "GET", server.url() + "/v1/models").json()["data"].toArray().at(0).toObject()["id"].toString();
    auto* inFlight = net_.post(request, chatBody(id, longText(), true, extra));
    QTRY_VERIFY_WITH_TIMEOUT(inFlight->bytesAvailable() > 0, 30000);
    ::kill(static_cast<pid_t>(server.process().processId()), SIGTERM);
    QTRY_VERIFY_WITH_TIMEOUT(inFlight->isFinished(), 120000);
    QVERIFY(parseEvents(inFlight->readAll()).done);  // answered to the end
    inFlight->deleteLater();
    // waitForFinished() answers false for a process that has already exited (the event loop above may have seen it).
    QVERIFY(server.process().state() == QProcess::NotRunning || server.process().waitForFinished(30000));
    QCOMPARE(server.process().exitStatus(), QProcess::NormalExit);
    QCOMPARE(server.process().exitCode(), 0);
}

// A request still running when the grace period after SIGTERM is over is cancelled: answered 503, and the server
// exits 0 at once instead of translating for minutes.
void TestServe::sigtermCancelsWhatOutlastsTheGrace() {
    Server server({"--model", kMarian, "--stop-grace", "1"});
    QVERIFY(!server.url().isEmpty());
    QString veryLong;
    for (int i = 0; i < 400; ++i)  // 24,000 sentences: about 20 s of work here
        veryLong += longText();
    QNetworkRequest request{QUrl(server.url() + "/translate")};
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    auto* inFlight = net_.post(request, QJsonDocument(QJsonObject{{"q", veryLong}, {"source", "en"}, {"target", "de"}}).toJson());
    QTest::qWait(1500);  // it computes
    QElapsedTimer timer;
    timer.start();
    ::kill(static_cast<pid_t>(server.process().processId()), SIGTERM);
    QTRY_VERIFY_WITH_TIMEOUT(inFlight->isFinished(), 30000);
    QCOMPARE(inFlight->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 503);
    QCOMPARE(QJsonDocument::fromJson(inFlight->readAll()).object()["error"].toObject()["code"].toString(), QStringLiteral("shutting_down"));
    inFlight->deleteLater();
    QVERIFY(server.process().state() == QProcess::NotRunning || server.process().waitForFinished(30000));
    QVERIFY2(timer.elapsed() < 15000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(server.process().exitStatus(), QProcess::NormalExit);
    QCOMPARE(server.process().exitCode(), 0);
}

// A client sending its request's headers a byte at a time holds a connection thread of the HTTP library, which
// reads them to the end: after SIGTERM the server still ends (that request never started), and exits 0.
void TestServe::sigtermDoesNotWaitForASlowClientsHeaders() {
    Server server({"--model", kMarian, "--stop-grace", "1"});
    QVERIFY(!server.url().isEmpty());
    QTcpSocket slow;
    slow.connectToHost("127.0.0.1", static_cast<quint16>(QUrl(server.url()).port()));
    QVERIFY(slow.waitForConnected(10000));
    slow.write("GET /v1/models HTTP/1.1\r\nHo");
    QVERIFY(slow.waitForBytesWritten(10000));
    QTimer drip;  // one more header byte each second, for as long as the test runs
    QObject::connect(&drip, &QTimer::timeout, &slow, [&slow] { slow.write("x"); });
    drip.start(1000);
    QTest::qWait(1500);
    QElapsedTimer timer;
    timer.start();
    ::kill(static_cast<pid_t>(server.process().processId()), SIGTERM);
    QTRY_VERIFY_WITH_TIMEOUT(server.process().state() == QProcess::NotRunning, 20000);
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(server.process().exitStatus(), QProcess::NormalExit);
    QCOMPARE(server.process().exitCode(), 0);
}

// A second server on a port already listened on fails (httplib's SO_REUSEPORT let both listen and share clients).
void TestServe::portInUseIsRefused() {
    const auto port = QUrl(marian_->url()).port();
    QVERIFY(port > 0);
    QProcess second;
    second.start(qEnvironmentVariable("DRAGOMAN_CLI"), {"serve", "--model", kHunyuan, "--port", QString::number(port)});
    QVERIFY(second.waitForFinished(30000));
    QCOMPARE(second.exitCode(), 1);
    QVERIFY(second.readAllStandardError().startsWith("error: "));
    QCOMPARE(send(net_, "GET", marian_->url() + "/v1/models").json()["data"].toArray().size(), 2);  // the first one's
}

// A chunked body carries no Content-Length: it is counted as it arrives and refused past the limit (it was read
// whole into memory), and the server lives on.
void TestServe::chunkedBodyOverTheLimit() {
    const QUrl url(marian_->url());
    QTcpSocket socket;
    socket.connectToHost(url.host(), static_cast<quint16>(url.port()));
    QVERIFY(socket.waitForConnected(10000));
    socket.write("POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    const QByteArray chunk(1 << 20, ' ');
    QByteArray answer;
    for (int i = 0; i < 6 && socket.state() == QAbstractSocket::ConnectedState && answer.isEmpty(); ++i) {
        socket.write(QByteArray::number(chunk.size(), 16) + "\r\n" + chunk + "\r\n");
        socket.waitForBytesWritten(10000);
        if (socket.waitForReadyRead(200)) answer += socket.readAll();
    }
    if (socket.state() == QAbstractSocket::ConnectedState) socket.write("0\r\n\r\n");
    while (!answer.contains("\r\n\r\n{") && socket.waitForReadyRead(10000))
        answer += socket.readAll();
    answer += socket.readAll();
    QVERIFY2(answer.startsWith("HTTP/1.1 413"), answer.left(200).constData());
    QVERIFY(answer.contains("request_too_large"));
    QCOMPARE(send(net_, "GET", marian_->url() + "/v1/models").status, 200);
}

// max_tokens caps a translation too (all its sentences together): the first tokens of the whole answer, whole or
// streamed, finish_reason "length".
void TestServe::maxTokensCapsTranslations() {
    const QJsonObject extra{{"source_lang", "en"}, {"target_lang", "de"}};
    const QString text = QStringLiteral("The man sees a small house today. My brother reads a newspaper.");
    const auto whole = send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", text, false, extra));
    const auto all = whole.json()["usage"].toObject()["completion_tokens"].toInt();
    QVERIFY(all > 3);
    auto capped = extra;
    capped["max_tokens"] = 3;
    const auto reply = send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", text, false, capped));
    QCOMPARE(reply.status, 200);
    QCOMPARE(reply.json()["usage"].toObject()["completion_tokens"].toInt(), 3);
    QCOMPARE(reply.json()["choices"].toArray().at(0).toObject()["finish_reason"].toString(), QStringLiteral("length"));
    const auto start = contentOf(reply);
    QVERIFY(!start.isEmpty());
    QVERIFY2(contentOf(whole).startsWith(start.trimmed()), qPrintable(start + " | " + contentOf(whole)));
    capped["stream_options"] = QJsonObject{{"include_usage", true}};
    const auto streamed =
        parseEvents(send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", text, true, capped)).body);
    QCOMPARE(streamed.text, start);
    QCOMPARE(streamed.usage["completion_tokens"].toInt(), 3);
    QCOMPARE(streamed.finishReason, QStringLiteral("length"));
    // The cap counts tokens across sentences: one past the first sentence's tokens stops in the second.
    capped.remove("stream_options");
    capped["max_tokens"] = all - 1;
    const auto almost = send(net_, "POST", marian_->url() + "/v1/chat/completions", chatBody("tuned", text, false, capped));
    QCOMPARE(almost.json()["usage"].toObject()["completion_tokens"].toInt(), all - 1);
    QCOMPARE(almost.json()["choices"].toArray().at(0).toObject()["finish_reason"].toString(), QStringLiteral("length"));
    // The tiny model runs every sentence to its own cap (64 positions; forced_eos_token_id ends it there): "length".
    QCOMPARE(whole.json()["choices"].toArray().at(0).toObject()["finish_reason"].toString(), QStringLiteral("length"));
    // Exactly the tokens an answer takes, on a model that ends its sentences itself (the bundled one): it ended on the
    // last token allowed, "stop" (as OpenAI and vLLM say), whole and streamed.
    Server bundled({"--model", QStringLiteral(DRAGOMAN_SOURCE_DIR "/resources/models/dragoman-en-de-zh")});
    QVERIFY(!bundled.url().isEmpty());
    const auto id = send(net_, "GET", bundled.url() + "/v1/models").json()["data"].toArray().at(0).toObject()["id"].toString();
    const auto natural = send(net_, "POST", bundled.url() + "/v1/chat/completions", chatBody(id, text, false, extra));
    QCOMPARE(natural.json()["choices"].toArray().at(0).toObject()["finish_reason"].toString(), QStringLiteral("stop"));
    auto exactCap = extra;
    exactCap["max_tokens"] = natural.json()["usage"].toObject()["completion_tokens"].toInt();
    const auto exact = send(net_, "POST", bundled.url() + "/v1/chat/completions", chatBody(id, text, false, exactCap));
    QCOMPARE(contentOf(exact), contentOf(natural));
    QCOMPARE(exact.json()["choices"].toArray().at(0).toObject()["finish_reason"].toString(), QStringLiteral("stop"));
    const auto exactStream =
        parseEvents(send(net_, "POST", bundled.url() + "/v1/chat/completions", chatBody(id, text, true, exactCap)).body);
    QCOMPARE(exactStream.finishReason, QStringLiteral("stop"));
    exactCap["max_tokens"] = exactCap["max_tokens"].toInt() - 1;
    const auto short_ = send(net_, "POST", bundled.url() + "/v1/chat/completions", chatBody(id, text, false, exactCap));
    QCOMPARE(short_.json()["choices"].toArray().at(0).toObject()["finish_reason"].toString(), QStringLiteral("length"));
}

// LibreTranslate's format "html": inline markup (bold words, a link) comes back as markup around the translated
// words, as translate-file keeps it, never as escaped placeholders.
void TestServe::libreHtmlKeepsInlineMarkup() {
    const QString html = QStringLiteral("<p>The man sees <b>a small house</b> and <a href=\"house.html\">a cat</a> today.</p>");
    const auto reply = send(net_, "POST", marian_->url() + "/translate",
                            QJsonDocument(QJsonObject{{"q", html}, {"source", "en"}, {"target", "de"}, {"format", "html"}}).toJson());
    QCOMPARE(reply.status, 200);
    const auto out = reply.json()["translatedText"].toString();
    QVERIFY2(out.startsWith("<p>") && out.endsWith("</p>"), qPrintable(out));
    QVERIFY2(out.contains("<b>") && out.contains("</b>") && out.contains("<a href=\"house.html\">") && out.contains("</a>"),
             qPrintable(out));
    QVERIFY2(!out.contains("&lt;") && !out.contains("<s1>") && !out.contains("s2"), qPrintable(out));
}

QTEST_MAIN(TestServe)
#include "tst_serve.moc"
