// Hy-MT2's prompts: every template of its model card (README "Hy-MT2 Translation Task Instruction Examples")
// byte for byte, in Chinese and English; one instruction mode at a time; HY-MT1.5 refusing the modes it has
// no template for; the prompt profile chosen from the model's identity (hub-cache repo, import id,
// _name_or_path, folder name) or named by the request; and Model::prompts() giving the exact text the network
// receives, through the tiny HunYuan fixture opened as a Hy-MT2 download.
#include "api/model_of.h"
#include "runtime/hymt2_prompt.h"
#include "runtime/prompt_profile.h"
#include "store/model_store.h"
#include "test_files.h"
#include "util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

using namespace dragoman;

namespace {

PromptRequest request(std::string from, std::string to) {
    PromptRequest r{"It’s on the house.", std::move(from), std::move(to), {}, {}, false};
    return r;
}

// The fixture's files as a hub-cache download of `repo` ("tencent/Hy-MT2-1.8B"): returns the hub root.
std::filesystem::path hubCopy(const QTemporaryDir& dir, const std::string& repo) {
    auto name = repo;
    name.replace(name.find('/'), 1, "--");
    const auto root = std::filesystem::path(dir.path().toStdString()) / "hub";
    const auto snapshot = root / ("models--" + name) / "snapshots" / "r1";
    std::filesystem::create_directories(snapshot);
    std::filesystem::create_directories(root / ("models--" + name) / "refs");
    for (const auto& file : std::filesystem::directory_iterator(test::fixture("hunyuan-tiny")))
        if (file.is_regular_file()) std::filesystem::copy_file(file.path(), snapshot / file.path().filename());
    return root;
}

}  // namespace

class TestHymt2 : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void templates_data();
    void templates();
    void oneModeAtATime();
    void hymt15RefusesInstructions();
    void profileNames_data();
    void profileNames();
    void profileFromIdentity_data();
    void profileFromIdentity();
    void hubDownloadIsSpokenToAsHyMt2();
    void promptsAreWhatTheNetworkReceives();
    void languageTokenModelRefusesInstructions();
};

void TestHymt2::templates_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("expected");
    const QString s = QStringLiteral("It’s on the house.");
    QTest::newRow("default, English") << "default"
                                      << "en"
                                      << "de"
                                      << "Translate the following text into German. Note that you should only output the translated result "
                                         "without any additional explanation:\n\n" +
                                             s;
    QTest::newRow("default, Chinese target") << "default"
                                             << "en"
                                             << "zh"
                                             << "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n\n" + s;
    QTest::newRow("default, Chinese source") << "default"
                                             << "zh"
                                             << "fr"
                                             << "将以下文本翻译为法语，注意只需要输出翻译后的结果，不要额外解释：\n\n" + s;
    QTest::newRow("terminology, English")
        << "glossary"
        << "en"
        << "de"
        << "Reference the following translations:\nhouse translates to Haus\nmenu translates to Speisekarte\n\n"
           "Translate the following text into German. Note that you must ONLY output the translated result "
           "without any additional explanation:\n\n" +
               s;
    QTest::newRow("terminology, Chinese")
        << "glossary"
        << "en"
        << "zh"
        << "参考下面的翻译：\nhouse 翻译成 Haus\nmenu 翻译成 Speisekarte\n将以下文本翻译为中文，注意只需要输出翻译后的结果，"
           "不要额外解释：\n\n" +
               s;
    QTest::newRow("style, English") << "style"
                                    << "en"
                                    << "de"
                                    << "Please translate the following text into German. Note that the translation style must strictly "
                                       "conform to [formal]:\n\n" +
                                           s;
    QTest::newRow("style, Chinese") << "style"
                                    << "en"
                                    << "zh"
                                    << "请将以下文本翻译为中文。\n注意翻译的风格要严格符合【formal】\n\n" + s;
    QTest::newRow("preferences, English")
        << "preferences"
        << "en"
        << "de"
        << "[Source Text]\n" + s +
               "\n\n[Translation Tasks]\n1. Keep it short.\n2. Address the reader as Sie.\n3. Translate the "
               "[Source Text] into German.";
    QTest::newRow("preferences, Chinese")
        << "preferences"
        << "en"
        << "zh"
        << "【待翻译文本】\n" + s + "\n\n【翻译任务】\n1、Keep it short.\n2、Address the reader as Sie.\n3、将【待翻译文本】翻译为中文。";
    QTest::newRow("delimiters, English")
        << "delimiters"
        << "en"
        << "de"
        << "Please accurately translate the following text into German.\nYou must retain the exact same number of "
           "delimiters in the translation. Strictly do not omit, escape, or translate these symbols, and pay "
           "close attention to their placement.\n\n" +
               s;
    QTest::newRow("delimiters, Chinese")
        << "delimiters"
        << "en"
        << "zh"
        << "请将以下文本准确翻译为中文。\n你必须在译文中保留等量的分隔符，绝对不可遗漏、转义或翻译该符号，并注意分隔符的位置。\n\n" + s;
    QTest::newRow("structured, English")
        << "structured"
        << "en"
        << "de"
        << "### Task\nTranslate the user-facing text within the following JSON data into German.\n\n### Strict Rules\n1. Structure "
           "Preservation: You MUST preserve the original JSON data structure, nesting, hierarchy, and indentation exactly as they "
           "are.\n2. Selective Translation: Translate ONLY the visible, user-facing text content/values.\n3. Strict Non-Translation: "
           "NEVER translate or alter code tags, keys, properties, object names, or variable placeholders. Leave them exactly in their "
           "original English/code form.\n\n### Source Data\n" +
               s;
    QTest::newRow("structured, Chinese")
        << "structured"
        << "en"
        << "zh"
        << "# 任务目标\n将下方" + s +
               "中的JSON格式数据翻译为中文。\n\n# 严格约束\n1. 结构锁定：绝对保持原有的JSON数据结构、缩进和层级完全不变。\n2. "
               "选择性翻译：仅翻译面向用户展示的可见文本内容。\n3. 禁止修改：严禁翻译或更改任何代码标签、键名 (Key)、变量占位符（如 "
               "{{var}}、${var}、%s、%d 等）或代码属性。\n\n# 数据输入\n" +
               s;
    QTest::newRow("background information, English")
        << "context"
        << "en"
        << "de"
        << "[Background Information]\nA restaurant review.\n\nPlease translate the following text into German, taking the provided "
           "background information into consideration.\n\n[Source Text]\n" +
               s;
    QTest::newRow("background information, Chinese")
        << "context"
        << "en"
        << "zh"
        << "【背景信息】\nA restaurant review.\n\n请结合背景信息将以下文本翻译为中文。\n\n【待翻译文本】\n" + s;
    QTest::newRow("Cantonese target takes the Chinese template")
        << "default"
        << "en"
        << "yue"
        << "将以下文本翻译为粤语，注意只需要输出翻译后的结果，不要额外解释：\n\n" + s;
}

void TestHymt2::templates() {
    QFETCH(QString, mode);
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, expected);
    auto r = request(from.toStdString(), to.toStdString());
    if (mode == "glossary") r.glossary = {{"house", "Haus"}, {"menu", "Speisekarte"}};
    if (mode == "style") r.style = "formal";
    if (mode == "preferences") r.preferences = {"Keep it short.", "Address the reader as Sie."};
    if (mode == "delimiters") r.keepDelimiters = true;
    if (mode == "structured") r.structuredFormat = "JSON";
    if (mode == "context") r.context = "A restaurant review.";
    QCOMPARE(QString::fromStdString(hymt2UserMessage(r)), expected);
    QCOMPARE(QString::fromStdString(userMessage(PromptProfile::HyMt2, r)), expected);
}

void TestHymt2::oneModeAtATime() {
    auto r = request("en", "de");
    r.style = "formal";
    r.glossary = {{"house", "Haus"}};
    try {
        hymt2UserMessage(r);
        QFAIL("two modes were accepted");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("input"));
        QVERIFY2(QString::fromStdString(e.detail()).contains("a glossary and a style"), e.what());
    }
    r.glossary.clear();
    r.keepDelimiters = true;
    QVERIFY_THROWS_EXCEPTION(Error, hymt2UserMessage(r));
    // Formatted text keeps HY-MT1.5's template under both profiles.
    auto formatted = request("en", "zh");
    formatted.source = "<s1>Bold</s1> text";
    formatted.formatted = true;
    QCOMPARE(hymt2UserMessage(formatted), hymtUserMessage(formatted));
    auto unknown = request("en", "xx");
    QVERIFY_THROWS_EXCEPTION(Error, hymt2UserMessage(unknown));
}

void TestHymt2::hymt15RefusesInstructions() {
    for (int mode = 0; mode < 4; ++mode) {
        auto r = request("en", "de");
        if (mode == 0) r.style = "formal";
        if (mode == 1) r.preferences = {"Keep it short."};
        if (mode == 2) r.keepDelimiters = true;
        if (mode == 3) r.structuredFormat = "YAML";
        QVERIFY_THROWS_EXCEPTION(Error, hymtUserMessage(r));
        QVERIFY_THROWS_EXCEPTION(Error, userMessage(PromptProfile::HyMt15, r));
    }
    // HY-MT1.5's own default is untouched.
    QCOMPARE(QString::fromStdString(userMessage(PromptProfile::HyMt15, request("en", "de"))),
             QStringLiteral("Translate the following segment into German, without additional explanation.\n\nIt’s on the house."));
}

void TestHymt2::profileNames_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("profile");  // "" for none
    QTest::newRow("hub id") << "tencent/Hy-MT2-1.8B"
                            << "hy-mt2";
    QTest::newRow("7B FP8") << "tencent/Hy-MT2-7B-FP8"
                            << "hy-mt2";
    QTest::newRow("lower case, underscores") << "hy_mt2_1.8b"
                                             << "hy-mt2";
    QTest::newRow("GGUF conversion") << "HYMT2-7B-GGUF"
                                     << "hy-mt2";
    QTest::newRow("a GGUF file name") << "Hy-MT2-1.8B.Q4_K_M.gguf"
                                      << "hy-mt2";
    QTest::newRow("Hunyuan-MT2") << "Hunyuan-MT2-7B"
                                 << "hy-mt2";
    QTest::newRow("HY-MT1.5") << "tencent/HY-MT1.5-1.8B"
                              << "hy-mt1.5";
    QTest::newRow("Hunyuan-MT") << "tencent/Hunyuan-MT-7B"
                                << "hy-mt1.5";
    QTest::newRow("a later version is not Hy-MT2") << "Hy-MT2.5-1.8B"
                                                   << "";
    QTest::newRow("a name saying nothing") << "my-translator"
                                           << "";
}

void TestHymt2::profileNames() {
    QFETCH(QString, name);
    QFETCH(QString, profile);
    const auto found = profileNamedBy(name.toStdString());
    QCOMPARE(found ? QString::fromUtf8(promptProfileName(*found).data()) : QString(), profile);
    QCOMPARE(QString::fromStdString(promptProfileForName(name.toStdString())), profile.isEmpty() ? QStringLiteral("hy-mt1.5") : profile);
}

void TestHymt2::profileFromIdentity_data() {
    QTest::addColumn<QString>("dir");
    QTest::addColumn<QString>("id");
    QTest::addColumn<int>("source");
    QTest::addColumn<QString>("nameOrPath");
    QTest::addColumn<QString>("profile");
    QTest::addColumn<QString>("identity");
    const int hub = static_cast<int>(ModelSource::HubCache), imported = static_cast<int>(ModelSource::Imported),
              path = static_cast<int>(ModelSource::Path);
    QTest::newRow("hub cache entry") << "/h/models--tencent--Hy-MT2-1.8B/snapshots/abc"
                                     << "tencent/Hy-MT2-1.8B" << hub << ""
                                     << "hy-mt2"
                                     << "tencent/Hy-MT2-1.8B";
    QTest::newRow("a path inside a hub cache") << "/h/models--tencent--Hy-MT2-7B/snapshots/abc"
                                               << "abc" << path << ""
                                               << "hy-mt2"
                                               << "tencent/Hy-MT2-7B";
    QTest::newRow("the repo beats _name_or_path") << "/h/models--tencent--HY-MT1.5-1.8B/snapshots/abc"
                                                  << "tencent/HY-MT1.5-1.8B" << hub << "Hy-MT2-1.8B"
                                                  << "hy-mt1.5"
                                                  << "tencent/HY-MT1.5-1.8B";
    QTest::newRow("import id") << "/data/models/mt"
                               << "Hy-MT2-7B" << imported << ""
                               << "hy-mt2"
                               << "Hy-MT2-7B";
    QTest::newRow("_name_or_path") << "/data/models/translator"
                                   << "translator" << path << "tencent/Hy-MT2-1.8B"
                                   << "hy-mt2"
                                   << "tencent/Hy-MT2-1.8B";
    QTest::newRow("folder name") << "/data/Hy-MT2-1.8B"
                                 << "Hy-MT2-1.8B" << path << ""
                                 << "hy-mt2"
                                 << "Hy-MT2-1.8B";
    QTest::newRow("nothing named: HY-MT1.5") << "/data/translator"
                                             << "translator" << path << "/tmp/out"
                                             << "hy-mt1.5"
                                             << "";
}

void TestHymt2::profileFromIdentity() {
    QFETCH(QString, dir);
    QFETCH(QString, id);
    QFETCH(int, source);
    QFETCH(QString, nameOrPath);
    QFETCH(QString, profile);
    QFETCH(QString, identity);
    ModelEntry entry;
    entry.dir = dir.toStdString();
    entry.id = id.toStdString();
    entry.source = static_cast<ModelSource>(source);
    nlohmann::json config = {{"model_type", "hunyuan_v1_dense"}};
    if (!nameOrPath.isEmpty()) config["_name_or_path"] = nameOrPath.toStdString();
    const auto detected = detectPromptProfile(entry, config);
    QCOMPARE(QString::fromUtf8(promptProfileName(detected.profile).data()), profile);
    QCOMPARE(QString::fromStdString(detected.identity), identity);
}

void TestHymt2::hubDownloadIsSpokenToAsHyMt2() {
    QTemporaryDir dir;
    const auto hub = hubCopy(dir, "tencent/Hy-MT2-1.8B");
    const ModelStore store(StoreRoots{(std::filesystem::path(dir.path().toStdString()) / "cache"), hub, {}});
    const auto model = modelOf(openModel(store, "tencent/Hy-MT2-1.8B"));
    QCOMPARE(QString::fromStdString(model->description().promptProfile), QStringLiteral("hy-mt2"));
    QVERIFY(model->description().instructions);
    TranslationRequest r{"Hello.", "en", "de", 1, 1, {}};
    r.style = "formal";
    const auto prompts = model->prompts(r);
    QCOMPARE(prompts.size(), std::size_t{1});
    QCOMPARE(QString::fromStdString(prompts[0]),
             QStringLiteral("<｜hy_begin▁of▁sentence｜><｜hy_User｜>Please translate the following text into German. Note that the "
                            "translation style must strictly conform to [formal]:\n\nHello.<｜hy_Assistant｜>"));
    // The request may name the other profile; instructions then have no template.
    r.promptProfile = "hy-mt1.5";
    QVERIFY_THROWS_EXCEPTION(Error, model->prompts(r));
    QVERIFY_THROWS_EXCEPTION(Error, model->translate(r));
    r.style.clear();
    QVERIFY(QString::fromStdString(model->prompts(r).at(0)).contains("Translate the following segment into German"));
    // Translating with an instruction runs (random weights: any text), and is the same twice.
    TranslationRequest styled{"Hello.", "en", "de", 1, 2, {}};
    styled.style = "casual";
    QCOMPARE(model->translate(styled), model->translate(styled));
}

void TestHymt2::promptsAreWhatTheNetworkReceives() {
    QTemporaryDir cache;
    const ModelStore store(StoreRoots{cache.path().toStdString(), "/nonexistent", {}});
    const auto model = modelOf(openModel(store, test::fixture("hunyuan-tiny").string()));
    QCOMPARE(QString::fromStdString(model->description().promptProfile), QStringLiteral("hy-mt1.5"));
    QVERIFY(!model->description().instructions);
    // One prompt per non-empty line; blank lines are not sent.
    TranslationRequest lines{"First line.\n\nSecond line.", "en", "de", 1, 1, {}};
    const auto prompts = model->prompts(lines);
    QCOMPARE(prompts.size(), std::size_t{2});
    QVERIFY(QString::fromStdString(prompts[1]).contains("\n\nSecond line.<｜hy_Assistant｜>"));
    // Structured data goes whole, its line breaks inside one prompt.
    TranslationRequest data{"{\n  \"a\": \"Hello\"\n}", "en", "de", 1, 2, {}};
    data.structuredFormat = "JSON";
    data.promptProfile = "hy-mt2";
    const auto whole = model->prompts(data);
    QCOMPARE(whole.size(), std::size_t{1});
    QVERIFY(QString::fromStdString(whole[0]).contains("### Source Data\n{\n  \"a\": \"Hello\"\n}<｜hy_Assistant｜>"));
    // Without the override, the fixture's HY-MT1.5 prompts refuse the instruction and say how to override.
    data.promptProfile.clear();
    try {
        model->prompts(data);
        QFAIL("structured data was accepted by HY-MT1.5's prompts");
    } catch (const Error& e) {
        QVERIFY2(QString::fromStdString(e.detail()).contains("--prompt-profile hy-mt2"), e.what());
    }
    TranslationRequest bad{"x", "en", "de", 1, 3, {}};
    bad.promptProfile = "hy-mt3";
    QVERIFY_THROWS_EXCEPTION(Error, model->prompts(bad));
}

void TestHymt2::languageTokenModelRefusesInstructions() {
    QTemporaryDir cache;
    const ModelStore store(StoreRoots{cache.path().toStdString(), "/nonexistent", {}});
    const auto model = modelOf(openModel(store, test::fixture("marian-tiny").string()));
    QVERIFY(model->description().promptProfile.empty());
    TranslationRequest r{"Hello. How are you?", "en", "de", 1, 1, {}};
    QVERIFY(!model->prompts(r).empty());
    r.style = "formal";
    QVERIFY_THROWS_EXCEPTION(Error, model->prompts(r));
    QVERIFY_THROWS_EXCEPTION(Error, model->translate(r));
}

QTEST_GUILESS_MAIN(TestHymt2)
#include "tst_hymt2.moc"
