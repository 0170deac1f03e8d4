// Every text-based document format translate-file reads (plain text, Markdown, HTML, subtitles, PO, XLIFF,
// JSON, YAML), chosen by the first byte: the rest is read as that file, taken apart into segments, and written
// back twice, unchanged and with every ASCII letter upper-cased. Malformed files are Error("input"); a write
// either completes or throws Error, and a completed one is a file.
#include "documents/document_format.h"
#include "fuzz_support.h"
#include "util/error.h"

#include <QString>

#include <algorithm>
#include <cctype>
#include <iterator>

namespace {

constexpr const char* kSuffixes[] = {"txt", "md", "html", "xhtml", "srt", "vtt", "po", "xlf", "json", "yaml"};

void writeBack(const dragoman::documents::ReadDocument& document, const std::vector<std::string>& translations,
               const std::filesystem::path& output) {
    std::filesystem::remove(output);
    try {
        document.write(QString::fromStdString(output.string()), translations);
        FUZZ_CHECK(std::filesystem::is_regular_file(output));
    } catch (const dragoman::Error&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    if (size == 0) return 0;
    const std::string suffix = kSuffixes[data[0] % std::size(kSuffixes)];
    const auto input = fuzz::writeScratch("input." + suffix, fuzz::text(data + 1, size - 1));
    const auto* format = documents::formatOf(QString::fromStdString(input.string()));
    FUZZ_CHECK(format != nullptr);
    try {
        const auto document = format->read(QString::fromStdString(input.string()), {"de", false});
        const auto segments = document->segments();
        const auto output = fuzz::scratch() / ("output." + suffix);
        writeBack(*document, segments, output);
        auto shouted = segments;
        for (auto& segment : shouted)
            std::transform(segment.begin(), segment.end(), segment.begin(),
                           [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; });
        writeBack(*document, shouted, output);
    } catch (const Error&) {
    }
    return 0;
}
