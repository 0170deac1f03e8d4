#pragma once
// The integrity record of one model folder: every file with its size, mtime and SHA-256, written once
// (at import or first sight). A normal load only compares size and mtime; `verify --full` re-hashes.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dragoman {

struct ManifestFile {
    std::string name;  // relative to the model folder
    std::uint64_t size = 0;
    std::int64_t mtimeNs = 0;
    std::string sha256;
    std::string hashSource;  // "computed" or "hub-blob" (the Hugging Face cache names blobs by their SHA-256)
};

struct Manifest {
    std::string id;
    std::filesystem::path dir;
    std::vector<ManifestFile> files;
    std::uint64_t totalBytes() const;
};

// (bytesDone, bytesTotal) -> keepGoing
using HashProgress = std::function<bool(std::uint64_t, std::uint64_t)>;

// The files a model folder consists of: every regular file (or link to one) at its top level.
std::vector<std::filesystem::path> modelFiles(const std::filesystem::path& dir);

// Hashes every file (skipping those whose Hugging Face blob name already is their SHA-256).
Manifest buildManifest(const std::string& id, const std::filesystem::path& dir, const HashProgress& progress = {});

// Throws Error("io") when the file cannot be opened, Error("manifest") when it is damaged (not the JSON written).
Manifest readManifest(const std::filesystem::path& path);
// What a damaged manifest still says about its model: the id and folder, written first, survive a truncation.
// Null when even those are gone.
std::optional<Manifest> salvageManifestHead(const std::filesystem::path& path);
// Atomic and durable (util/atomic_file.h): a crash leaves the old manifest or the new one, never a mix.
void writeManifest(const std::filesystem::path& path, const Manifest& manifest);

// Cheap check for the load path: stat only. Returns one message per file that is missing or changed.
std::vector<std::string> statMismatches(const Manifest& manifest);

// Re-hashes every file. Returns one message per file whose content no longer matches.
std::vector<std::string> hashMismatches(const Manifest& manifest, const HashProgress& progress = {});

// After hashMismatches() found every file's content unchanged: records the files' current size and mtime, so
// a file rewritten with the same bytes (a copy, a regenerated checkpoint) loads again.
void recordCurrentTimes(Manifest& manifest);

// SHA-256 named by a Hugging Face cache blob that `path` links to, or "" if it is not such a link.
std::string hubBlobSha256(const std::filesystem::path& path);

// A bundled model ships a SHA256SUMS file (sha256sum's format: "<hex>  <name>" per line) written when it
// was installed. Throws Error("integrity") naming every file whose hash differs or that the list names but
// the folder lacks; a folder without SHA256SUMS passes (nothing to compare with).
void checkShippedChecksums(const Manifest& manifest);

}  // namespace dragoman
