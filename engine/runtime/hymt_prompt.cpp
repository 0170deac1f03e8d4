#include "runtime/hymt_prompt.h"

#include "text/languages.h"
#include "util/error.h"

namespace dragoman {

std::string formattedUserMessage(const PromptRequest& r) {
    const auto target = findLanguage(r.to);
    if (!target) throw Error("input", "HY-MT has no prompt name for language '" + r.to + "'");
    // The README's template hard-codes 中文 as the target; other targets use their Chinese name in its place.
    return "将以下<source></source>之间的文本翻译为" + target->chinese +
           "，注意只需要输出翻译后的结果，不要额外解释，原文中的<sn></"
           "sn>标签表示标签内文本包含格式信息，需要在译文中相应的位置尽量保留该标签。"
           "输出格式为：<target>str</target>\n\n<source>" +
           r.source + "</source>";
}

std::string hymtUserMessage(const PromptRequest& r) {
    const auto target = findLanguage(r.to);
    if (!target) throw Error("input", "HY-MT has no prompt name for language '" + r.to + "'");
    const bool chinese = isChinese(r.from) || isChinese(r.to);
    if (r.formatted) return formattedUserMessage(r);
    if (!r.style.empty() || !r.preferences.empty() || r.keepDelimiters || !r.structuredFormat.empty())
        throw Error("input", "styles, preferences, kept delimiters and structured data are Hy-MT2's prompts; HY-MT1.5's card has none");
    if (!r.glossary.empty() && !r.context.empty())
        throw Error("input", "HY-MT1.5's card has one prompt for a glossary and one for context, not both together: give one of them");
    if (!r.glossary.empty()) {
        std::string terms;
        for (const auto& [source, translated] : r.glossary)
            terms += source + " 翻译成 " + translated + "\n";
        return "参考下面的翻译：\n" + terms + "\n将以下文本翻译为" + target->chinese + "，注意只需要输出翻译后的结果，不要额外解释：\n" +
               r.source;
    }
    if (!r.context.empty())
        return r.context + "\n参考上面的信息，把下面的文本翻译成" + target->chinese + "，注意不需要翻译上文，也不要额外解释：\n" + r.source;
    if (chinese) return "将以下文本翻译为" + target->chinese + "，注意只需要输出翻译后的结果，不要额外解释：\n\n" + r.source;
    return "Translate the following segment into " + target->english + ", without additional explanation.\n\n" + r.source;
}

std::string stripTargetTags(const std::string& output) {
    const auto open = output.find("<target>");
    if (open == std::string::npos) return output;
    const auto start = open + 8;
    const auto close = output.find("</target>", start);
    return output.substr(start, close == std::string::npos ? std::string::npos : close - start);
}

}  // namespace dragoman
