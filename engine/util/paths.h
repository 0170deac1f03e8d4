#pragma once
// Per-user folders, following the XDG base directory spec (engine code has no Qt to ask).
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace dragoman::paths {

// $XDG_DATA_HOME/dragoman, else ~/.local/share/dragoman.
std::filesystem::path userDataDir();

// Our own model cache: $DRAGOMAN_MODELS, else userDataDir()/models.
std::filesystem::path modelCacheDir();

// Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
std::filesystem::path huggingFaceHubDir();

}  // namespace dragoman::paths

namespace dragoman::paths {
// The read-only data folder of an installed Dragoman (<prefix>/share/dragoman), found in the nearest folder above
// the program that has one.
std::filesystem::path installedDataDir();
}  // namespace dragoman::paths

namespace dragoman::paths {
// Where a library of ours that is opened when first needed (dlopen) may be, in the order to try: beside the program
// (an installed tree keeps the programs and libraries together in lib/dragoman), in lib/dragoman above it, then
// `buildPath` (where this build put it; empty: none).
std::vector<std::filesystem::path> ownLibraryCandidates(std::string_view file, std::string_view buildPath = {});
// Opens the first of those candidates that exists, loads (local symbols) and has every one of `symbols`: their
// addresses in that order, or an empty list and `failure` saying why (each candidate's reason, or ": not installed"
// where none exists). A process opens each such library once and never closes it.
std::vector<void*> openOwnLibrary(std::string_view file, std::string_view buildPath, std::initializer_list<const char*> symbols,
                                  std::string& failure);
// The same over any list of candidates, each opened by `open` (null: dlopen with local symbols, loaded now); a caller
// that needs other flags (a link namespace of its own, deep binding) passes its own.
using LibraryOpener = void* (*)(const std::filesystem::path&);
std::vector<void*> openFirstLibrary(const std::vector<std::filesystem::path>& candidates, std::initializer_list<const char*> symbols,
                                    std::string& failure, LibraryOpener open = nullptr);
}  // namespace dragoman::paths
