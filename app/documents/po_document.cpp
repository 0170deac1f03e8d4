#include "documents/po_document.h"

#include "documents/document_files.h"
#include "dragoman.h"

#include <QFile>
#include <QScopeGuard>

#include <gettext-po.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <regex>

namespace dragoman::documents {
namespace {

// libgettextpo reports problems through callbacks and expects a fatal one never to return: the callback
// records the first problem and, when fatal, jumps back to the call it started from (only C frames and this
// callback lie between, so nothing of ours is skipped).
struct Problems {
    std::string first;
    int count = 0;
    std::jmp_buf* fatal = nullptr;
};
thread_local Problems* problems = nullptr;

void xerror(int severity, po_message_t, const char*, std::size_t lineno, std::size_t, int, const char* text) {
    if (severity == PO_SEVERITY_WARNING || !problems) return;
    if (problems->count++ == 0) {
        problems->first = lineno != static_cast<std::size_t>(-1) ? "line " + std::to_string(lineno) + ": " : "";
        problems->first += text ? text : "malformed";
        while (!problems->first.empty() && problems->first.back() == '\n')
            problems->first.pop_back();
    }
    if (severity == PO_SEVERITY_FATAL_ERROR) std::longjmp(*problems->fatal, 1);
}

void xerror2(int severity, po_message_t m1, const char* f1, std::size_t l1, std::size_t c1, int ml1, const char* t1, po_message_t,
             const char*, std::size_t, std::size_t, int, const char*) {
    xerror(severity, m1, f1, l1, c1, ml1, t1);
}

const po_xerror_handler kHandler{xerror, xerror2};

using PoFile = std::unique_ptr<std::remove_pointer_t<po_file_t>, decltype(&po_file_free)>;

// Calls `call` (po_file_read or po_file_write) with the handler in force; the problems it reported, if any.
template <typename Call>
Problems guarded(Call call) {
    Problems found;
    std::jmp_buf fatal;
    found.fatal = &fatal;
    problems = &found;
    if (setjmp(fatal) == 0) call();
    problems = nullptr;
    return found;
}

PoFile readPo(const QString& path) {
    const auto name = QFile::encodeName(path);
    po_file_t file = nullptr;
    const auto found = guarded([&] { file = po_file_read(name.constData(), &kHandler); });
    PoFile owned(file, &po_file_free);
    if (found.count > 0 || !owned)
        throw Error("input", path.toStdString() + " is not a valid PO file: " + (found.first.empty() ? "unreadable" : found.first));
    return owned;
}

// The default domain's header entry ("" when there is none). libgettextpo returns a copy the caller frees,
// although its type says const.
std::string headerOf(po_file_t file) {
    const std::unique_ptr<char, decltype(&std::free)> header(const_cast<char*>(po_file_domain_header(file, nullptr)), &std::free);
    return header ? header.get() : "";
}

std::string field(const std::string& header, const char* name) {
    if (header.empty()) return {};
    char* value = po_header_field(header.c_str(), name);
    std::string text = value ? value : "";
    std::free(value);
    return text;
}

std::string withField(const std::string& header, const char* name, const std::string& value) {
    char* updated = po_header_set_field(header.c_str(), name, value.c_str());
    std::string text = updated ? updated : header;
    std::free(updated);
    return text;
}

// The header's charset: UTF-8 and a template's placeholder "CHARSET" are read; anything else is refused.
void checkCharset(const QString& path, po_file_t file) {
    const auto type = field(headerOf(file), "Content-Type");
    static const std::regex charset(R"(charset=([A-Za-z0-9_.:-]+))", std::regex::icase);
    std::smatch match;
    if (!std::regex_search(type, match, charset)) return;
    auto name = match[1].str();
    for (auto& c : name)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name == "UTF-8" || name == "UTF8" || name == "CHARSET" || name == "ASCII" || name == "US-ASCII") return;
    throw Error("input", path.toStdString() + " is in " + match[1].str() +
                             "; Dragoman reads UTF-8 catalogs (convert it first: msgconv --to-code=UTF-8 " + path.toStdString() + ")");
}

int pluralCount(const std::string& pluralForms) {
    static const std::regex count(R"(nplurals\s*=\s*([0-9]+))");
    std::smatch match;
    if (!std::regex_search(pluralForms, match, count)) return 0;
    return std::clamp(std::atoi(match[1].str().c_str()), 1, 100);  // the most any language has is 6
}

// The gettext name of a language code: Chinese scripts take their regions, the rest stay.
std::string gettextLanguage(const std::string& code) {
    if (code == "zh") return "zh_CN";
    if (code == "zh-Hant") return "zh_TW";
    return code;
}

// Every message of every domain, in file order, header and obsolete entries left out.
template <typename Visit>
void forEachMessage(po_file_t file, Visit visit) {
    for (const char* const* domain = po_file_domains(file); domain && *domain; ++domain) {
        // Freed however the visit ends (a refused catalog throws from it).
        const std::unique_ptr<std::remove_pointer_t<po_message_iterator_t>, decltype(&po_message_iterator_free)> it(
            po_message_iterator(file, *domain), &po_message_iterator_free);
        for (po_message_t m = po_next_message(it.get()); m; m = po_next_message(it.get()))
            if (*po_message_msgid(m) != '\0' && !po_message_is_obsolete(m)) visit(m);
    }
}

// The catalog as po_file_write() writes it. It writes into memory here: it does not report a write that a full
// disk refused (the file was left cut short, or empty, with no error), and writeAtomically() checks every one.
std::string written(po_file_t file, const QString& output) {
    const int fd = ::memfd_create("dragoman-po", MFD_CLOEXEC);
    if (fd < 0) throw Error("io", "cannot write " + output.toStdString() + ": " + std::strerror(errno));
    const auto closing = qScopeGuard([fd] { ::close(fd); });
    const auto name = "/proc/self/fd/" + std::to_string(fd);
    const auto found = guarded([&] { po_file_write(file, name.c_str(), &kHandler); });
    if (found.count > 0)
        throw Error("io", "cannot write " + output.toStdString() + ": " + (found.first.empty() ? "write failed" : found.first));
    std::string bytes;
    char buffer[1 << 16];
    for (off_t at = 0;;) {
        const auto got = ::pread(fd, buffer, sizeof buffer, at);
        if (got < 0) throw Error("io", "cannot write " + output.toStdString() + ": " + std::strerror(errno));
        if (got == 0) break;
        bytes.append(buffer, static_cast<std::size_t>(got));
        at += got;
    }
    // Read back whole: po_file_write() reports no write refused to it either (a file size limit), and the catalog
    // it wrote must hold every message the translated one does.
    std::size_t messages = 0, copied = 0;
    forEachMessage(file, [&](po_message_t) { ++messages; });
    try {
        forEachMessage(readPo(QString::fromStdString(name)).get(), [&](po_message_t) { ++copied; });
    } catch (const Error&) {
        copied = 0;
    }
    if (copied != messages) throw Error("io", "cannot write " + output.toStdString() + ": the catalog came out cut short");
    return bytes;
}

bool hasTranslation(po_message_t m) {
    if (!po_message_msgid_plural(m)) return *po_message_msgstr(m) != '\0';
    for (int i = 0; const char* s = po_message_msgstr_plural(m, i); ++i)
        if (*s != '\0') return true;
    return false;
}

// A translated plural entry with more or fewer forms than the header's Plural-Forms: msgfmt refuses such a catalog,
// and which form would be which is anybody's guess.
void checkPluralCounts(const QString& path, po_file_t file) {
    const auto declared = field(headerOf(file), "Plural-Forms");
    if (declared.find("INTEGER") != std::string::npos) return;  // a template's placeholder
    const int forms = pluralCount(declared);
    if (forms == 0) return;
    forEachMessage(file, [&](po_message_t m) {
        if (!po_message_msgid_plural(m) || !hasTranslation(m) || po_message_is_fuzzy(m)) return;  // msgfmt skips fuzzy ones too
        int count = 0;
        while (po_message_msgstr_plural(m, count))
            ++count;
        if (count == forms) return;
        throw Error("input", path.toStdString() + ": the header's Plural-Forms says nplurals=" + std::to_string(forms) +
                                 " but the entry \"" + po_message_msgid(m) + "\" has " + std::to_string(count) +
                                 " plural forms; fix the catalog first (msgfmt --check names every such entry)");
    });
}

class PoDocument : public ReadDocument {
public:
    PoDocument(QString path, ReadOptions options) : path_(std::move(path)), options_(std::move(options)) {
        const auto file = readPo(path_);
        checkCharset(path_, file.get());
        checkPluralCounts(path_, file.get());
        forEachMessage(file.get(), [&](po_message_t m) {
            if (!wanted(m)) return;
            segments_.emplace_back(po_message_msgid(m));
            if (const char* plural = po_message_msgid_plural(m)) segments_.emplace_back(plural);
        });
    }

    std::vector<std::string> segments() const override { return segments_; }

    // The catalog is read again and filled in the same order: libgettextpo keeps no copy we could write twice.
    void write(const QString& output, const std::vector<std::string>& translations) const override {
        const auto file = readPo(path_);
        auto header = headerOf(file.get());
        auto pluralForms = field(header, "Plural-Forms");
        // A header's rule is kept where it is the target language's own (a catalog being completed); a catalog of
        // another language (filled in as a new one) gets the target's rule with its new Language.
        const auto language = field(header, "Language");
        const auto base = [](const std::string& code) { return code.substr(0, code.find_first_of("-_@.")); };
        const bool otherLanguage = !language.empty() && base(language) != base(options_.targetLanguage);
        if (otherLanguage || pluralCount(pluralForms) == 0 || pluralForms.find("INTEGER") != std::string::npos) {
            pluralForms = pluralFormsFor(options_.targetLanguage);
            header = withField(header, "Plural-Forms", pluralForms);
        }
        const int forms = pluralCount(pluralForms);
        header = withField(header, "Language", gettextLanguage(options_.targetLanguage));
        header = withField(header, "Content-Type", "text/plain; charset=UTF-8");
        header = withField(header, "X-Generator", "Dragoman " DRAGOMAN_VERSION);
        std::size_t next = 0;
        for (const char* const* domain = po_file_domains(file.get()); domain && *domain; ++domain) {
            po_message_iterator_t it = po_message_iterator(file.get(), *domain);
            for (po_message_t m = po_next_message(it); m; m = po_next_message(it)) {
                if (*po_message_msgid(m) == '\0') {
                    po_message_set_msgstr(m, header.c_str());
                    continue;
                }
                if (po_message_is_obsolete(m) || !wanted(m)) continue;
                const auto& singular = translations.at(next++);
                if (po_message_msgid_plural(m)) {
                    const auto& plural = translations.at(next++);
                    // One form (Chinese, Japanese, ...): the plural sentence reads right for every count.
                    for (int i = 0; i < forms; ++i)
                        po_message_set_msgstr_plural(m, i, (i == 0 && forms > 1 ? singular : plural).c_str());
                    int existing = forms;  // a template's forms beyond the language's go, from the last
                    while (po_message_msgstr_plural(m, existing))
                        ++existing;
                    for (int i = existing - 1; i >= forms; --i)
                        po_message_set_msgstr_plural(m, i, nullptr);
                } else {
                    po_message_set_msgstr(m, singular.c_str());
                }
                po_message_set_fuzzy(m, 1);  // machine output, for a translator to review
                // gettext's own check of the flagged format strings (c-format, python-format, ...), as msgfmt
                // --check runs it: what it finds is logged with the entry; the entry stays fuzzy.
                const auto found = guarded([&] { po_message_check_format(m, &kHandler); });
                if (found.count > 0)
                    logMessage(LogLevel::Warning, path_.toStdString() + ": the translation of \"" + po_message_msgid(m) +
                                                      "\" breaks its format string: " + found.first);
            }
            po_message_iterator_free(it);
        }
        writeAtomically(output, written(file.get(), output));
    }

private:
    bool wanted(po_message_t m) const { return options_.retranslate || !hasTranslation(m); }

    QString path_;
    ReadOptions options_;
    std::vector<std::string> segments_;
};

class PoFormat : public DocumentFormat {
public:
    QString name() const override { return QStringLiteral("gettext PO"); }
    QStringList suffixes() const override { return {QStringLiteral("po"), QStringLiteral("pot")}; }
    QString outputSuffix(const QString&) const override { return QStringLiteral("po"); }  // a filled-in template is a catalog
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions& options) const override {
        readUtf8File(path);  // binary or non-UTF-8 bytes are refused before libgettextpo sees them
        return std::make_unique<PoDocument>(path, options);
    }
};

}  // namespace

std::unique_ptr<DocumentFormat> poFormat() {
    return std::make_unique<PoFormat>();
}

std::string pluralFormsFor(const std::string& language) {
    const auto base = language.substr(0, language.find_first_of("-_"));
    static const std::vector<std::pair<std::vector<std::string>, std::string>> rules{
        {{"zh", "ja", "ko", "vi", "th", "id", "ms", "my", "km", "bo", "yue", "tl"}, "nplurals=1; plural=0;"},
        {{"fr", "pt", "hi", "gu", "bn", "fa", "mr", "ta", "te", "ur"}, "nplurals=2; plural=(n > 1);"},
        {{"ru", "uk"}, "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"},
        {{"pl"}, "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"},
        {{"cs"}, "nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;"},
        {{"ar"}, "nplurals=6; plural=n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5;"},
        {{"he"}, "nplurals=2; plural=(n != 1);"},
    };
    for (const auto& [languages, rule] : rules)
        if (std::find(languages.begin(), languages.end(), base) != languages.end()) return rule;
    return "nplurals=2; plural=(n != 1);";
}

}  // namespace dragoman::documents
