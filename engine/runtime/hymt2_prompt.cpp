#include "runtime/hymt2_prompt.h"

#include "text/languages.h"
#include "util/error.h"

namespace dragoman {
namespace {

// The card's templates, its Markdown (bold, italics, code spans, the spaces around them) taken off and its <br>
// written as line breaks. Each pair is {Chinese, English}.
std::string terminology(bool zh, const PromptRequest& r, const std::string& target) {
    std::string text = zh ? "参考下面的翻译：\n" : "Reference the following translations:\n";
    for (const auto& [source, translated] : r.glossary)
        text += source + (zh ? " 翻译成 " : " translates to ") + translated + "\n";
    if (zh) return text + "将以下文本翻译为" + target + "，注意只需要输出翻译后的结果，不要额外解释：\n\n" + r.source;
    return text + "\nTranslate the following text into " + target +
           ". Note that you must ONLY output the translated result without any additional explanation:\n\n" + r.source;
}

std::string preferences(bool zh, const PromptRequest& r, const std::string& target) {
    std::string text =
        zh ? "【待翻译文本】\n" + r.source + "\n\n【翻译任务】\n" : "[Source Text]\n" + r.source + "\n\n[Translation Tasks]\n";
    std::size_t n = 0;
    for (const auto& preference : r.preferences)
        text += std::to_string(++n) + (zh ? "、" : ". ") + preference + "\n";
    const auto last = std::to_string(++n);
    return text + (zh ? last + "、将【待翻译文本】翻译为" + target + "。" : last + ". Translate the [Source Text] into " + target + ".");
}

std::string structured(bool zh, const PromptRequest& r, const std::string& target) {
    const auto& format = r.structuredFormat;
    // The Chinese card names {source_text} in its task line as well as under 数据输入; kept as written.
    if (zh)
        return "# 任务目标\n将下方" + r.source + "中的" + format + "格式数据翻译为" + target +
               "。\n\n# 严格约束\n1. 结构锁定：绝对保持原有的" + format +
               "数据结构、缩进和层级完全不变。\n2. 选择性翻译：仅翻译面向用户展示的可见文本内容。\n3. "
               "禁止修改：严禁翻译或更改任何代码标签、键名 (Key)、变量占位符（如 {{var}}、${var}、%s、%d 等）或代码属性。\n\n# 数据输入\n" +
               r.source;
    return "### Task\nTranslate the user-facing text within the following " + format + " data into " + target +
           ".\n\n### Strict Rules\n1. Structure Preservation: You MUST preserve the original " + format +
           " data structure, nesting, hierarchy, and indentation exactly as they are.\n2. Selective Translation: Translate ONLY the "
           "visible, user-facing text content/values.\n3. Strict Non-Translation: NEVER translate or alter code tags, keys, "
           "properties, object names, or variable placeholders. Leave them exactly in their original English/code form.\n\n### "
           "Source Data\n" +
           r.source;
}

}  // namespace

std::string hymt2UserMessage(const PromptRequest& r) {
    const auto language = findLanguage(r.to);
    if (!language) throw Error("input", "Hy-MT2 has no prompt name for language '" + r.to + "'");
    if (r.formatted) return formattedUserMessage(r);
    std::vector<std::string> modes;
    if (!r.glossary.empty()) modes.emplace_back("a glossary");
    if (!r.context.empty()) modes.emplace_back("context");
    if (!r.style.empty()) modes.emplace_back("a style");
    if (!r.preferences.empty()) modes.emplace_back("preferences");
    if (r.keepDelimiters) modes.emplace_back("kept delimiters");
    if (!r.structuredFormat.empty()) modes.emplace_back("structured data");
    if (modes.size() > 1) {
        std::string named;
        for (std::size_t m = 0; m < modes.size(); ++m)
            named += (m == 0 ? "" : m + 1 == modes.size() ? " and " : ", ") + modes[m];
        throw Error("input", "Hy-MT2's prompts take one instruction at a time, not " + named +
                                 " together (preferences can say more than one thing)");
    }
    const bool zh = isChinese(r.from) || isChinese(r.to);
    const auto& target = zh ? language->chinese : language->english;
    if (!r.glossary.empty()) return terminology(zh, r, target);
    if (!r.context.empty()) {
        if (zh) return "【背景信息】\n" + r.context + "\n\n请结合背景信息将以下文本翻译为" + target + "。\n\n【待翻译文本】\n" + r.source;
        return "[Background Information]\n" + r.context + "\n\nPlease translate the following text into " + target +
               ", taking the provided background information into consideration.\n\n[Source Text]\n" + r.source;
    }
    if (!r.style.empty()) {
        if (zh) return "请将以下文本翻译为" + target + "。\n注意翻译的风格要严格符合【" + r.style + "】\n\n" + r.source;
        return "Please translate the following text into " + target + ". Note that the translation style must strictly conform to [" +
               r.style + "]:\n\n" + r.source;
    }
    if (!r.preferences.empty()) return preferences(zh, r, target);
    if (r.keepDelimiters) {
        if (zh)
            return "请将以下文本准确翻译为" + target +
                   "。\n你必须在译文中保留等量的分隔符，绝对不可遗漏、转义或翻译该符号，并注意分隔符的位置。\n\n" + r.source;
        return "Please accurately translate the following text into " + target +
               ".\nYou must retain the exact same number of delimiters in the translation. Strictly do not omit, escape, or translate "
               "these symbols, and pay close attention to their placement.\n\n" +
               r.source;
    }
    if (!r.structuredFormat.empty()) return structured(zh, r, target);
    if (zh) return "将以下文本翻译为" + target + "，注意只需要输出翻译后的结果，不要额外解释：\n\n" + r.source;
    return "Translate the following text into " + target +
           ". Note that you should only output the translated result without any additional explanation:\n\n" + r.source;
}

}  // namespace dragoman
