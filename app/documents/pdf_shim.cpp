// Poppler in a library of its own, opened by documents/pdf_document.cpp at the first PDF: a process that reads no PDF
// never loads poppler and the two dozen libraries it brings (~3 ms and ~400 page faults of every start).
//
// dragoman_pdf_text(path, log, context, text, length, error, errorLength): 0 and the text of every page poppler opens
// (each as its length in bytes, 8 bytes little-endian, then its UTF-8) in *text, *length bytes, to be freed with
// dragoman_pdf_free; 1: not a readable PDF; 2: password-protected; 3: something else failed, said in `error`.
// Poppler's own complaints go to `log`.
#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

namespace {

using LogFunction = void (*)(const char* message, void* context);

// Poppler's debug function is one for the process; each thread reading a PDF names its own log target.
struct LogTarget {
    LogFunction log = nullptr;
    void* context = nullptr;
};
thread_local LogTarget target;

void forward(const std::string& message, void*) {
    if (target.log) target.log(message.c_str(), target.context);
}

// The message, cut to fit (snprintf writes nothing where errorLength is 0).
void tell(const std::string& message, char* error, std::size_t errorLength) {
    if (error) std::snprintf(error, errorLength, "%s", message.c_str());
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int dragoman_pdf_text(const char* path, LogFunction log, void* context, char** text,
                                                             std::size_t* length, char* error, std::size_t errorLength) {
    *text = nullptr;
    *length = 0;
    try {
        static const bool quiet = [] {
            poppler::set_debug_error_function(forward, nullptr);
            return true;
        }();
        (void)quiet;
        // The thread's log target, named for this call only, whichever way it ends.
        struct Named {
            Named(LogFunction log, void* context) { target = {log, context}; }
            ~Named() { target = {}; }
        } named(log, context);
        std::unique_ptr<poppler::document> doc(poppler::document::load_from_file(path));
        if (!doc) return 1;
        if (doc->is_locked()) return 2;
        std::string pages;
        for (int p = 0; p < doc->pages(); ++p) {
            std::unique_ptr<poppler::page> page(doc->create_page(p));
            if (!page) continue;
            const auto bytes = page->text().to_utf8();
            auto size = static_cast<std::uint64_t>(bytes.size());
            for (int i = 0; i < 8; ++i, size >>= 8)
                pages += static_cast<char>(size & 0xFF);
            pages.append(bytes.data(), bytes.size());
        }
        auto* copy = static_cast<char*>(std::malloc(pages.size() + 1));
        if (!copy) {
            tell("out of memory for the text of " + std::string(path), error, errorLength);
            return 3;
        }
        std::memcpy(copy, pages.data(), pages.size() + 1);
        *text = copy;
        *length = pages.size();
        return 0;
    } catch (const std::exception& e) {
        tell(e.what(), error, errorLength);
        return 3;
    }
}

__attribute__((visibility("default"))) void dragoman_pdf_free(char* text) {
    std::free(text);
}

}  // extern "C"
