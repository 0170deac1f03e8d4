#include "documents/office_package.h"

#include "documents/document_files.h"
#include "dragoman.h"

#include <QFile>

#include <zip.h>

namespace dragoman::documents {
namespace {

// "a Word document", "an OpenDocument text".
std::string withArticle(const std::string& kind) {
    return (kind.find_first_of("AEIOU") == 0 ? "an " : "a ") + kind;
}

// A part beyond this, or translatable parts beyond the total, are not a real document: a ZIP bomb's declared sizes
// are refused before anything is inflated (the parts' XML trees stay in memory until the copy is written).
constexpr zip_uint64_t kMaxPartBytes = 128ull * 1024 * 1024;
constexpr zip_uint64_t kMaxTextBytes = 192ull * 1024 * 1024;

struct ZipCloser {
    void operator()(zip_t* z) const { zip_discard(z); }
};
using Zip = std::unique_ptr<zip_t, ZipCloser>;

Zip openZip(const QString& path, const std::string& kind) {
    int error = 0;
    zip_t* z = zip_open(QFile::encodeName(path).constData(), ZIP_RDONLY, &error);
    if (!z) {
        zip_error_t e;
        zip_error_init_with_code(&e, error);
        const std::string why = zip_error_strerror(&e);
        zip_error_fini(&e);
        throw Error("input", path.toStdString() + " is not " + withArticle(kind) + " (not a readable ZIP package: " + why + ")");
    }
    return Zip(z);
}

std::string readEntry(zip_t* z, zip_int64_t index, const std::string& name, const std::string& kind) {
    zip_stat_t st;
    if (zip_stat_index(z, static_cast<zip_uint64_t>(index), 0, &st) != 0 || st.size > kMaxPartBytes)
        throw Error("input", "the " + kind + " part " + name + " is unreadable or too large");
    std::string data(st.size, '\0');
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(index), 0);
    if (!f) throw Error("input", "the " + kind + " part " + name + " cannot be read: " + zip_strerror(z));
    const auto got = zip_fread(f, data.data(), st.size);
    zip_fclose(f);
    if (got < 0 || static_cast<zip_uint64_t>(got) != st.size) throw Error("input", "the " + kind + " part " + name + " is damaged");
    return data;
}

// Writes `path`'s package to `out` (which must not exist) with the given parts replaced.
void writePackage(const QString& path, const QString& out, const std::map<std::string, std::string>& replacedParts) {
    // libzip rewrites an archive in place: copy the package, replace the parts in the copy, close it. The copy
    // fails rather than replace an existing file.
    if (!QFile::copy(path, out)) throw Error("io", "cannot write " + out.toStdString());
    int error = 0;
    zip_t* z = zip_open(QFile::encodeName(out).constData(), 0, &error);
    if (!z) throw Error("io", "cannot reopen " + out.toStdString() + " as a ZIP package");
    for (const auto& [name, data] : replacedParts) {
        const auto index = zip_name_locate(z, name.c_str(), 0);
        zip_source_t* source = zip_source_buffer(z, data.data(), data.size(), 0);
        if (index < 0 || !source || zip_file_replace(z, static_cast<zip_uint64_t>(index), source, 0) != 0) {
            if (source) zip_source_free(source);
            zip_discard(z);
            throw Error("io", "cannot replace " + name + " in " + out.toStdString());
        }
    }
    if (zip_close(z) != 0) {
        const std::string why = zip_strerror(z);
        zip_discard(z);
        throw Error("io", "cannot write " + out.toStdString() + ": " + why);
    }
}

// Entry name -> its text taken apart.
using Parts = std::map<std::string, SegmentedDocument>;

class PackageDocument : public ReadDocument {
public:
    PackageDocument(QString path, Parts parts) : path_(std::move(path)), parts_(std::move(parts)) {}
    std::vector<std::string> segments() const override {
        std::vector<std::string> all;
        for (const auto& [name, part] : parts_)
            all.insert(all.end(), part.segments.begin(), part.segments.end());
        return all;
    }
    std::vector<bool> taggedSegments() const override {
        std::vector<bool> all;
        for (const auto& [name, part] : parts_) {
            auto own = part.tagged;
            own.resize(part.segments.size(), false);
            all.insert(all.end(), own.begin(), own.end());
        }
        return all;
    }
    void write(const QString& output, const std::vector<std::string>& translations) const override {
        std::map<std::string, std::string> replaced;
        auto next = translations.begin();
        for (const auto& [name, part] : parts_) {
            if (part.segments.empty()) continue;
            const std::vector<std::string> own(next, next + static_cast<std::ptrdiff_t>(part.segments.size()));
            next += static_cast<std::ptrdiff_t>(part.segments.size());
            replaced.emplace(name, part.rebuild(own));
        }
        writeBesideThenRename(output, [&](const QString& temporary) { writePackage(path_, temporary, replaced); });
    }

private:
    QString path_;
    Parts parts_;
};

}  // namespace

std::unique_ptr<ReadDocument> readOfficePackage(const QString& path, const OfficeKind& kind) {
    auto zip = openZip(path, kind.name);
    const auto entryNamed = [&](const std::string& name) -> std::string {
        const auto index = zip_name_locate(zip.get(), name.c_str(), 0);
        return index < 0 ? std::string() : readEntry(zip.get(), index, name, kind.name);
    };
    for (const auto& name : kind.required)
        if (zip_name_locate(zip.get(), name.c_str(), 0) < 0)
            throw Error("input", path.toStdString() + " is not " + withArticle(kind.name) + " (no " + name + " in the package)");
    if (kind.identify)
        if (const auto wrong = kind.identify(entryNamed); !wrong.empty())
            throw Error("input", path.toStdString() + " is not " + withArticle(kind.name) + " (" + wrong + ")");
    Parts parts;
    const auto count = zip_get_num_entries(zip.get(), 0);
    std::vector<zip_int64_t> wanted;
    zip_uint64_t total = 0;
    for (zip_int64_t i = 0; i < count; ++i) {
        const char* entry = zip_get_name(zip.get(), static_cast<zip_uint64_t>(i), 0);
        zip_stat_t st;
        if (!entry || !kind.translatable(entry) || zip_stat_index(zip.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0) continue;
        total += st.size;
        if (total > kMaxTextBytes)
            throw Error("input", path.toStdString() + ": its text parts unpack to more than " + std::to_string(kMaxTextBytes >> 20) +
                                     " MiB; no real " + kind.name + " is that large (a ZIP bomb?)");
        wanted.push_back(i);
    }
    for (const auto i : wanted) {
        const std::string entry = zip_get_name(zip.get(), static_cast<zip_uint64_t>(i), 0);
        parts.emplace(entry, kind.segment(readEntry(zip.get(), i, entry, kind.name), entry));
    }
    return std::make_unique<PackageDocument>(path, std::move(parts));
}

}  // namespace dragoman::documents
