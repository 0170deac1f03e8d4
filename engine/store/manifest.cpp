#include "store/manifest.h"

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/regular_file.h"
#include "util/sha256.h"
#include "util/text.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <fstream>
#include <regex>

namespace dragoman {
namespace {

struct FileStat {
    std::uint64_t size = 0;
    std::int64_t mtimeNs = 0;
};

std::optional<FileStat> statFile(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return FileStat{static_cast<std::uint64_t>(st.st_size),
                    static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

bool isLowerHex(const std::string& s, std::size_t length) {
    return s.size() == length && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Hashes files one after another, reporting progress over all of them.
class HashRun {
public:
    HashRun(std::uint64_t total, const HashProgress& progress) : total_(total), progress_(progress) {}
    std::string hash(const std::filesystem::path& path) {
        const std::uint64_t base = done_;
        auto digest = sha256File(path, [&](std::uint64_t bytes) {
            done_ = base + bytes;
            return !progress_ || progress_(done_, total_);
        });
        return digest;
    }

private:
    std::uint64_t total_;
    std::uint64_t done_ = 0;
    const HashProgress& progress_;
};

}  // namespace

std::uint64_t Manifest::totalBytes() const {
    std::uint64_t total = 0;
    for (const auto& f : files)
        total += f.size;
    return total;
}

std::string hubBlobSha256(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_symlink(path, ec)) return {};
    const auto target = std::filesystem::canonical(path, ec);
    if (ec || target.parent_path().filename() != "blobs") return {};
    const auto name = target.filename().string();
    return isLowerHex(name, 64) ? name : std::string();
}

std::vector<std::filesystem::path> modelFiles(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        const auto name = entry.path().filename().string();
        if (name.empty() || name[0] == '.') continue;
        if (std::filesystem::is_regular_file(entry.path(), ec)) files.push_back(entry.path());
    }
    if (ec) throw Error("io", dir.string() + ": cannot list folder: " + ec.message());
    std::sort(files.begin(), files.end());
    return files;
}

Manifest buildManifest(const std::string& id, const std::filesystem::path& dir, const HashProgress& progress) {
    Manifest manifest{id, std::filesystem::absolute(dir), {}};
    std::uint64_t toHash = 0;
    for (const auto& path : modelFiles(dir)) {
        auto st = statFile(path);
        if (!st) throw Error("io", path.string() + ": cannot stat");
        ManifestFile file{path.filename().string(), st->size, st->mtimeNs, hubBlobSha256(path), "hub-blob"};
        if (file.sha256.empty()) {
            file.hashSource = "computed";
            toHash += st->size;
        }
        manifest.files.push_back(std::move(file));
    }
    HashRun run(toHash, progress);
    for (auto& file : manifest.files)
        if (file.sha256.empty()) file.sha256 = run.hash(dir / file.name);
    return manifest;
}

Manifest readManifest(const std::filesystem::path& path) {
    requireRegularFile(path);
    std::ifstream in(path);
    if (!in) throw Error("io", path.string() + ": cannot open manifest");
    try {
        const auto json = nlohmann::json::parse(in);
        Manifest manifest{json.at("id").get<std::string>(), json.at("dir").get<std::string>(), {}};
        for (const auto& f : json.at("files"))
            manifest.files.push_back({f.at("name"), f.at("size"), f.at("mtime_ns"), f.at("sha256"), f.value("hash_source", "computed")});
        return manifest;
    } catch (const nlohmann::json::exception& e) {
        throw Error("manifest", path.string() + ": unreadable manifest: " + e.what());
    }
}

std::optional<Manifest> salvageManifestHead(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    // A JSON string value of a top-level field, escapes included; decoded by the JSON parser itself.
    auto field = [&](const std::string& name) -> std::string {
        static const std::regex pattern(R"re("(id|dir)"\s*:\s*("(?:[^"\\]|\\.)*"))re");
        for (std::sregex_iterator it(head.begin(), head.end(), pattern), end; it != end; ++it) {
            if ((*it)[1] != name) continue;
            const auto value = nlohmann::json::parse((*it)[2].str(), nullptr, false);
            if (value.is_string()) return value.get<std::string>();
        }
        return {};
    };
    Manifest manifest{field("id"), field("dir"), {}};
    if (manifest.dir.empty() || !manifest.dir.is_absolute()) return std::nullopt;
    if (manifest.id.empty()) {
        // Manifests of earlier versions put the id last: the file's name is the id with '/' (and any other
        // character a file name should not hold) written as '~'; '/' is by far the likeliest.
        manifest.id = path.stem().string();
        std::replace(manifest.id.begin(), manifest.id.end(), '~', '/');
    }
    return manifest;
}

void writeManifest(const std::filesystem::path& path, const Manifest& manifest) {
    // In this order: a manifest cut short keeps what names its model (salvageManifestHead).
    nlohmann::ordered_json json{{"id", manifest.id}, {"dir", manifest.dir.string()}, {"files", nlohmann::ordered_json::array()}};
    for (const auto& f : manifest.files)
        json["files"].push_back(
            {{"name", f.name}, {"size", f.size}, {"mtime_ns", f.mtimeNs}, {"sha256", f.sha256}, {"hash_source", f.hashSource}});
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) throw Error("io", "cannot write " + path.string() + ": " + ec.message());
    writeFileAtomically(path, json.dump(1) + "\n");
}

std::vector<std::string> statMismatches(const Manifest& manifest) {
    std::vector<std::string> problems;
    for (const auto& f : manifest.files) {
        const auto path = manifest.dir / f.name;
        auto st = statFile(path);
        if (!st) {
            problems.push_back(f.name + " is missing");
        } else if (st->size != f.size) {
            problems.push_back(f.name + " changed size since it was hashed (" + std::to_string(f.size) + " -> " + std::to_string(st->size) +
                               " bytes)" + (st->size < f.size ? ": truncated" : ""));
        } else if (st->mtimeNs != f.mtimeNs) {
            problems.push_back(f.name + " was modified since it was hashed");
        }
    }
    return problems;
}

std::vector<std::string> hashMismatches(const Manifest& manifest, const HashProgress& progress) {
    std::vector<std::string> problems;
    HashRun run(manifest.totalBytes(), progress);
    for (const auto& f : manifest.files) {
        const auto path = manifest.dir / f.name;
        if (!statFile(path)) {
            problems.push_back(f.name + " is missing");
            continue;
        }
        const auto digest = run.hash(path);
        if (digest != f.sha256) problems.push_back(f.name + ": SHA-256 " + digest + " differs from the recorded " + f.sha256);
    }
    return problems;
}

void recordCurrentTimes(Manifest& manifest) {
    for (auto& f : manifest.files)
        if (const auto st = statFile(manifest.dir / f.name)) {
            f.size = st->size;
            f.mtimeNs = st->mtimeNs;
        }
}

void checkShippedChecksums(const Manifest& manifest) {
    const auto listPath = manifest.dir / "SHA256SUMS";
    requireRegularFile(listPath);
    std::ifstream in(listPath);
    if (!in) return;
    std::vector<std::string> problems;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto space = line.find(' ');
        if (space != 64 || line.size() < 67) throw Error("integrity", listPath.string() + ": malformed line '" + line + "'");
        const auto digest = line.substr(0, 64);
        const auto name = line.substr(line[65] == '*' || line[65] == ' ' ? 66 : 65);
        const auto file = std::find_if(manifest.files.begin(), manifest.files.end(), [&](const ManifestFile& f) { return f.name == name; });
        if (file == manifest.files.end())
            problems.push_back(name + " is missing");
        else if (file->sha256 != digest)
            problems.push_back(name + ": SHA-256 " + file->sha256 + " differs from the shipped " + digest);
    }
    if (problems.empty()) return;
    throw Error("integrity", manifest.id + " (bundled): " + joinProblems(problems) + ". The installation is damaged: reinstall Dragoman");
}

}  // namespace dragoman
