#include "text/sentencepiece.h"

#include "util/error.h"
#include "util/overrides.h"
#include "util/paths.h"

#include <dlfcn.h>

#include <mutex>

namespace dragoman {
namespace {

// The shim and libsentencepiece must resolve their own (protobuf) symbols, never libtorch's: DEEPBIND does that.
// The sanitizers' runtimes refuse DEEPBIND, so their builds (installer/sanitizers.sh) give the shim a link
// namespace of its own instead (it is built without sanitizers: their runtime lives in the executable).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DRAGOMAN_SANITIZER_RUNTIME 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DRAGOMAN_SANITIZER_RUNTIME 1
#endif
#endif

void* openShim(const std::filesystem::path& path) {
#ifdef DRAGOMAN_SANITIZER_RUNTIME
    return ::dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
#else
    return ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
#endif
}

struct ShimApi {
    void* (*load)(const char*, char*, std::size_t) = nullptr;
    void (*free)(void*) = nullptr;
    long (*encode)(void*, const char*, std::size_t, char**, std::size_t*) = nullptr;
    long (*decodePieces)(void*, const char*, std::size_t, char**, std::size_t*) = nullptr;
    void (*release)(char*) = nullptr;
};

#ifndef DRAGOMAN_SPM_SHIM_BUILD_PATH
#define DRAGOMAN_SPM_SHIM_BUILD_PATH ""
#endif

// The environment's override first, then where our libraries are looked for.
std::vector<std::filesystem::path> shimCandidates() {
    std::vector<std::filesystem::path> candidates;
    if (const auto& shim = environmentOverrides().sentencepieceShim; !shim.empty()) candidates.emplace_back(shim);
    for (auto& candidate : paths::ownLibraryCandidates("libdragoman_spm.so", DRAGOMAN_SPM_SHIM_BUILD_PATH))
        candidates.push_back(std::move(candidate));
    return candidates;
}

// Opened once per process, never closed (sentencepiece keeps static state).
const ShimApi& shim() {
    static ShimApi api;
    static std::string failure;
    static std::once_flag once;
    std::call_once(once, [] {
        std::string why;
        const auto found = paths::openFirstLibrary(
            shimCandidates(),
            {"dragoman_spm_load", "dragoman_spm_free", "dragoman_spm_encode", "dragoman_spm_decode_pieces", "dragoman_spm_release"}, why,
            openShim);
        if (found.empty()) {
            failure = "cannot load libdragoman_spm.so (sentencepiece support)" + why;
            return;
        }
        api.load = reinterpret_cast<decltype(api.load)>(found[0]);
        api.free = reinterpret_cast<decltype(api.free)>(found[1]);
        api.encode = reinterpret_cast<decltype(api.encode)>(found[2]);
        api.decodePieces = reinterpret_cast<decltype(api.decodePieces)>(found[3]);
        api.release = reinterpret_cast<decltype(api.release)>(found[4]);
    });
    if (!api.load) throw Error("tokenizer", failure);
    return api;
}

std::vector<std::string> unpack(const char* buffer, std::size_t count) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < count; ++i) {
        parts.emplace_back(buffer);
        buffer += parts.back().size() + 1;
    }
    return parts;
}

}  // namespace

SentencePiece::SentencePiece(const std::filesystem::path& model) : path_(model) {
    char error[512] = {0};
    handle_ = shim().load(model.c_str(), error, sizeof error);
    if (!handle_) throw Error("tokenizer", model.string() + ": cannot load sentencepiece model: " + error);
}

SentencePiece::~SentencePiece() {
    if (handle_) shim().free(handle_);
}

std::vector<std::string> SentencePiece::encodePieces(std::string_view text) const {
    char* buffer = nullptr;
    std::size_t length = 0;
    const long count = shim().encode(handle_, text.data(), text.size(), &buffer, &length);
    if (count < 0) throw Error("tokenizer", path_.string() + ": sentencepiece failed to encode the text");
    auto pieces = unpack(buffer, static_cast<std::size_t>(count));
    shim().release(buffer);
    return pieces;
}

std::string SentencePiece::decodePieces(const std::vector<std::string>& pieces) const {
    std::string joined;
    for (const auto& p : pieces) {
        joined += p;
        joined += '\0';
    }
    char* buffer = nullptr;
    std::size_t length = 0;
    if (shim().decodePieces(handle_, joined.data(), pieces.size(), &buffer, &length) < 0)
        throw Error("tokenizer", path_.string() + ": sentencepiece failed to decode");
    std::string text(buffer, length);
    shim().release(buffer);
    return text;
}

}  // namespace dragoman
