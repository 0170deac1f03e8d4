// HY-MT1.5 on the engine side: the official prompt templates byte for byte (Chinese and English, terminology,
// context, formatted), the prompt names of every language including the minority ones and dialects, the chat
// format read off the model's tokens, and translation through the tiny HunYuan fixture: greedy output the same
// ten times, streamed deltas adding up, seeded sampling reproducible, a 500+ token paragraph, bad input.
#include "api/model_of.h"
#include "runtime/hymt_prompt.h"
#include "test_files.h"
#include "text/bpe_tokenizer.h"
#include "text/languages.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

using namespace dragoman;

class TestHymt : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void templates_data();
    void templates();
    void languageNames_data();
    void languageNames();
    void chatFormatFromTokens();
    void glossaryTemplateListsEveryTerm();
    void greedyIsDeterministicTenTimes();
    void streamedDeltasAddUp();
    void seededSamplingRepeats();
    void longParagraphWorks();
    void badRequestsAreRefused_data();
    void badRequestsAreRefused();

private:
    QTemporaryDir cache_;
    std::shared_ptr<RunnableModel> model_;
    std::shared_ptr<const Model> translator_;
};

void TestHymt::initTestCase() {
    const ModelStore store(StoreRoots{cache_.path().toStdString(), "/nonexistent", {}});
    model_ = openModel(store, test::fixture("hunyuan-tiny").string());
    translator_ = modelOf(model_);
}

void TestHymt::templates_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("expected");
    QTest::newRow("en->zh uses the Chinese template")
        << "en"
        << "zh"
        << "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n\nIt’s on the house.";
    QTest::newRow("zh->en uses the Chinese template")
        << "zh"
        << "en"
        << "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\nIt’s on the house.";
    QTest::newRow("en->de uses the English template")
        << "en"
        << "de"
        << "Translate the following segment into German, without additional explanation.\n\nIt’s on the house.";
    QTest::newRow("unknown source, target fr")
        << ""
        << "fr"
        << "Translate the following segment into French, without additional explanation.\n\nIt’s on the house.";
}

void TestHymt::templates() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, expected);
    const auto message = hymtUserMessage({"It’s on the house.", from.toStdString(), to.toStdString(), {}, {}, false});
    QCOMPARE(QString::fromStdString(message), expected);
}

void TestHymt::languageNames_data() {
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("english");
    QTest::addColumn<QString>("chinese");
    // The seed's release check: minority languages and dialects get the official prompt names.
    QTest::newRow("bo") << "bo"
                        << "Tibetan"
                        << "藏语";
    QTest::newRow("ug") << "ug"
                        << "Uyghur"
                        << "维吾尔语";
    QTest::newRow("kk") << "kk"
                        << "Kazakh"
                        << "哈萨克语";
    QTest::newRow("mn") << "mn"
                        << "Mongolian"
                        << "蒙古语";
    QTest::newRow("yue") << "yue"
                         << "Cantonese"
                         << "粤语";
    QTest::newRow("zh-Hant") << "zh-Hant"
                             << "Traditional Chinese"
                             << "繁体中文";
}

void TestHymt::languageNames() {
    QFETCH(QString, code);
    QFETCH(QString, english);
    QFETCH(QString, chinese);
    QCOMPARE(static_cast<int>(allLanguages().size()), 38);
    const auto toEnglishSide = hymtUserMessage({"x", "en", code.toStdString(), {}, {}, false});
    const auto fromChinese = hymtUserMessage({"x", "zh", code.toStdString(), {}, {}, false});
    if (code == "yue" || code == "zh-Hant") {
        QVERIFY2(QString::fromStdString(toEnglishSide).contains(chinese), toEnglishSide.c_str());  // a Chinese variety: Chinese prompt
    } else {
        QVERIFY2(QString::fromStdString(toEnglishSide).contains("into " + english + ","), toEnglishSide.c_str());
    }
    QVERIFY2(QString::fromStdString(fromChinese).contains("翻译为" + chinese + "，"), fromChinese.c_str());
}

void TestHymt::chatFormatFromTokens() {
    const auto& bpe = dynamic_cast<const BpeTokenizer&>(*model_->tokenizer);
    const auto format = detectChatFormat([&](const std::string& t) { return bpe.idOf(t).has_value(); });
    QCOMPARE(QString::fromStdString(format.render("U")), QStringLiteral("<｜hy_begin▁of▁sentence｜><｜hy_User｜>U<｜hy_Assistant｜>"));
    const auto ids = bpe.encodePlain(format.render("U"));
    QCOMPARE(ids.front(), bpe.idOf("<｜hy_begin▁of▁sentence｜>").value_or(-1));  // each marker one token
    QCOMPARE(ids.back(), bpe.idOf("<｜hy_Assistant｜>").value_or(-1));
    // The older 7B tokens are recognised too; a tokenizer with neither is refused by name.
    const auto old = detectChatFormat([](const std::string& t) { return t == "<|startoftext|>" || t == "<|extra_0|>"; });
    QCOMPARE(QString::fromStdString(old.render("U")), QStringLiteral("<|startoftext|>U<|extra_0|>"));
    QVERIFY_THROWS_EXCEPTION(Error, detectChatFormat([](const std::string&) { return false; }));
}

void TestHymt::glossaryTemplateListsEveryTerm() {
    const auto message = hymtUserMessage({"The model runs offline.", "en", "zh", {{"model", "模型"}, {"offline", "离线"}}, {}, false});
    QCOMPARE(QString::fromStdString(message),
             QStringLiteral("参考下面的翻译：\nmodel 翻译成 模型\noffline 翻译成 离线\n\n将以下文本翻译为中文，注意只需要输出翻译后的结果，"
                            "不要额外解释：\nThe model runs offline."));
    const auto contextual = hymtUserMessage({"He agreed.", "en", "de", {}, "We asked Tom.", false});
    QCOMPARE(QString::fromStdString(contextual),
             QStringLiteral("We asked Tom.\n参考上面的信息，把下面的文本翻译成德语，注意不需要翻译上文，也不要额外解释：\nHe agreed."));
    const auto formatted = hymtUserMessage({"<s1>Bold</s1> text", "en", "zh", {}, {}, true});
    QVERIFY(QString::fromStdString(formatted).endsWith("<source><s1>Bold</s1> text</source>"));
    QCOMPARE(QString::fromStdString(stripTargetTags("<target>粗体</target>")), QStringLiteral("粗体"));
}

void TestHymt::greedyIsDeterministicTenTimes() {
    const auto first = translator_->translate({"The weather is nice today.", "en", "de", 1, 1, {}});
    QVERIFY(!first.empty());
    for (int i = 0; i < 10; ++i)
        QCOMPARE(translator_->translate({"The weather is nice today.", "en", "de", 1, 2, {}}), first);
}

void TestHymt::streamedDeltasAddUp() {
    std::string streamed;
    int deltas = 0;
    TranslationRequest request{"你好，世界！\n\nThe weather is nice today.", "zh", "en", 1, 3, [&](std::string_view d) {
                                   streamed += d;
                                   ++deltas;
                                   return true;
                               }};
    TranslationStats stats;
    const auto output = translator_->translate(request, &stats);
    QCOMPARE(QString::fromStdString(streamed), QString::fromStdString(output));
    QVERIFY(deltas > 3);
    QCOMPARE(QString::fromStdString(output).count('\n'), 2);  // paragraphs stay aligned
    QVERIFY(stats.firstTokenSeconds >= 0 && stats.generatedTokens > 0);
}

void TestHymt::seededSamplingRepeats() {
    TranslationRequest request{"The weather is nice today.", "en", "fr", 1, 4, {}};
    request.sample = true;
    request.seed = 7;
    const auto a = translator_->translate(request), b = translator_->translate(request);
    QCOMPARE(a, b);
    bool differs = false;
    for (std::uint64_t seed = 8; seed < 12 && !differs; ++seed) {
        request.seed = seed;
        differs = translator_->translate(request) != a;
    }
    QVERIFY2(differs, "sampling ignores the seed");
}

void TestHymt::longParagraphWorks() {
    std::string paragraph;
    for (int i = 0; i < 30; ++i)
        paragraph += "My brother lives in Berlin and reads a newspaper every morning before work. ";
    TranslationStats stats;
    const auto output = translator_->translate({paragraph, "en", "de", 1, 5, {}}, &stats);
    QVERIFY2(stats.sourceTokens > 500, std::to_string(stats.sourceTokens).c_str());
    QVERIFY(!output.empty());
    QVERIFY(output.find('\n') == std::string::npos);
}

void TestHymt::badRequestsAreRefused_data() {
    QTest::addColumn<QString>("to");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("category");
    QTest::newRow("unknown target") << "xx" << QByteArray("Hello") << "input";
    QTest::newRow("invalid UTF-8") << "de" << QByteArray("ok \xC3\x28") << "input";
    QTest::newRow("a glossary and context together") << "de" << QByteArray("with both") << "input";
    QTest::newRow("beam search") << "de" << QByteArray("with beams") << "unsupported";
}

void TestHymt::badRequestsAreRefused() {
    QFETCH(QString, to);
    QFETCH(QByteArray, text);
    QFETCH(QString, category);
    TranslationRequest request{text.toStdString(), "en", to.toStdString(), 1, 6, {}};
    if (text == "with both") {  // HY-MT1.5's card has a template for each, not for both: one would be dropped
        request.glossary = {{"house", "Haus"}};
        request.context = "A story.";
    }
    if (text == "with beams") request.beams = 2;  // greedy or sampled: beams are refused, not decoded greedily
    try {
        translator_->translate(request);
        QFAIL("accepted a bad request");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), category);
    }
}

QTEST_GUILESS_MAIN(TestHymt)
#include "tst_hymt.moc"
