// The only code linked against Debian's libsentencepiece. It is built as its own shared library and
// opened with RTLD_LOCAL | RTLD_DEEPBIND (see sentencepiece.cpp): libsentencepiece bundles protobuf 3.14
// and exports it, which collides with the system protobuf 3.21 that libtorch loads.
// A plain C interface, so nothing C++ crosses the boundary.
#include <sentencepiece_processor.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Joins strings with '\0' into one malloc'd buffer the caller frees with dragoman_spm_release.
char* pack(const std::vector<std::string>& parts, std::size_t* length) {
    std::size_t total = 0;
    for (const auto& p : parts)
        total += p.size() + 1;
    char* out = static_cast<char*>(std::malloc(total ? total : 1));
    if (!out) return nullptr;
    std::size_t at = 0;
    for (const auto& p : parts) {
        std::memcpy(out + at, p.data(), p.size());
        at += p.size();
        out[at++] = '\0';
    }
    *length = total;
    return out;
}

void copyError(const std::string& message, char* error, std::size_t errorLength) {
    if (!error || errorLength == 0) return;
    std::strncpy(error, message.c_str(), errorLength - 1);
    error[errorLength - 1] = '\0';
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* dragoman_spm_load(const char* path, char* error, std::size_t errorLength) {
    try {
        auto* processor = new sentencepiece::SentencePieceProcessor();
        const auto status = processor->Load(path);
        if (!status.ok()) {
            copyError(status.ToString(), error, errorLength);
            delete processor;
            return nullptr;
        }
        return processor;
    } catch (const std::exception& e) {
        copyError(e.what(), error, errorLength);
        return nullptr;
    }
}

__attribute__((visibility("default"))) void dragoman_spm_free(void* handle) {
    delete static_cast<sentencepiece::SentencePieceProcessor*>(handle);
}

// Pieces of `text`, '\0'-separated. Returns the number of pieces, or -1.
__attribute__((visibility("default"))) long dragoman_spm_encode(void* handle, const char* text, std::size_t textLength, char** out,
                                                                std::size_t* outLength) {
    try {
        std::vector<std::string> pieces;
        if (!static_cast<sentencepiece::SentencePieceProcessor*>(handle)->Encode(std::string(text, textLength), &pieces).ok()) return -1;
        *out = pack(pieces, outLength);
        return *out ? static_cast<long>(pieces.size()) : -1;
    } catch (...) {
        return -1;
    }
}

// Text of `count` '\0'-separated pieces. Returns 0, or -1.
__attribute__((visibility("default"))) long dragoman_spm_decode_pieces(void* handle, const char* pieces, std::size_t count, char** out,
                                                                       std::size_t* outLength) {
    try {
        std::vector<std::string> list;
        const char* at = pieces;
        for (std::size_t i = 0; i < count; ++i) {
            list.emplace_back(at);
            at += list.back().size() + 1;
        }
        std::string text;
        if (!static_cast<sentencepiece::SentencePieceProcessor*>(handle)->Decode(list, &text).ok()) return -1;
        *out = pack({text}, outLength);
        if (*out) *outLength = text.size();
        return *out ? 0 : -1;
    } catch (...) {
        return -1;
    }
}

__attribute__((visibility("default"))) void dragoman_spm_release(char* buffer) {
    std::free(buffer);
}

}  // extern "C"
