#pragma once
// A sentencepiece model, through the isolated shim library (see spm_shim.cpp for why).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace dragoman {

class SentencePiece {
public:
    // Throws Error("tokenizer") naming the file when it cannot be loaded.
    explicit SentencePiece(const std::filesystem::path& model);
    ~SentencePiece();
    SentencePiece(const SentencePiece&) = delete;
    SentencePiece& operator=(const SentencePiece&) = delete;

    std::vector<std::string> encodePieces(std::string_view text) const;
    std::string decodePieces(const std::vector<std::string>& pieces) const;

private:
    void* handle_ = nullptr;
    std::filesystem::path path_;
};

}  // namespace dragoman
