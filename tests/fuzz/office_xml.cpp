// The main XML part of a Word, OpenDocument (text, presentation) or PowerPoint package, chosen by the first
// byte: the rest replaces that part in the fixture package, which is then read, taken apart and written back
// translated. Malformed XML is Error("input"); the rest of the package is never what breaks.
#include "documents/document_format.h"
#include "fuzz_support.h"
#include "util/error.h"

#include <QString>

#include <zip.h>

#include <cctype>
#include <iterator>

namespace {

struct Package {
    const char* suffix;
    const char* part;
};
constexpr Package kPackages[] = {
    {"docx", "word/document.xml"}, {"odt", "content.xml"}, {"odp", "content.xml"}, {"pptx", "ppt/slides/slide1.xml"}};

// The fixture package with `part` replaced by `xml`, written to the scratch folder.
std::filesystem::path packageWith(const Package& package, std::string_view xml) {
    const auto path = dragoman::fuzz::scratch() / (std::string("input.") + package.suffix);
    std::filesystem::copy_file(dragoman::fuzz::fixture(std::string("documents/sample.") + package.suffix), path,
                               std::filesystem::copy_options::overwrite_existing);
    int error = 0;
    zip_t* zip = zip_open(path.c_str(), 0, &error);
    FUZZ_CHECK(zip != nullptr);
    const auto index = zip_name_locate(zip, package.part, 0);
    FUZZ_CHECK(index >= 0);
    // libzip reads the buffer at zip_close: it must outlive the source.
    zip_source_t* source = zip_source_buffer(zip, xml.data(), xml.size(), 0);
    FUZZ_CHECK(source != nullptr && zip_file_replace(zip, static_cast<zip_uint64_t>(index), source, 0) == 0);
    FUZZ_CHECK(zip_close(zip) == 0);
    return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    if (size == 0) return 0;
    const auto& package = kPackages[data[0] % std::size(kPackages)];
    const std::string xml(reinterpret_cast<const char*>(data + 1), size - 1);
    const auto input = packageWith(package, xml);
    const auto* format = documents::formatOf(QString::fromStdString(input.string()));
    FUZZ_CHECK(format != nullptr);
    try {
        const auto document = format->read(QString::fromStdString(input.string()), {"de", false});
        const auto output = fuzz::scratch() / (std::string("output.") + package.suffix);
        std::filesystem::remove(output);
        document->write(QString::fromStdString(output.string()), document->segments());
        FUZZ_CHECK(std::filesystem::is_regular_file(output));
    } catch (const Error&) {
    }
    return 0;
}
