#include "package_files.h"

#include <QFile>

#include <zip.h>

namespace dragoman::test {

QByteArray fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeBytes(const QString& path, const QByteArray& data) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

QByteArray zipEntry(const QString& path, const char* name) {
    int error = 0;
    zip_t* z = zip_open(QFile::encodeName(path).constData(), ZIP_RDONLY, &error);
    if (!z) return {};
    QByteArray out;
    zip_stat_t st;
    if (zip_stat(z, name, 0, &st) == 0)
        if (zip_file_t* f = zip_fopen(z, name, 0)) {
            out.resize(static_cast<qsizetype>(st.size));
            zip_fread(f, out.data(), st.size);
            zip_fclose(f);
        }
    zip_discard(z);
    return out;
}

QStringList zipEntryNames(const QString& path) {
    int error = 0;
    zip_t* z = zip_open(QFile::encodeName(path).constData(), ZIP_RDONLY, &error);
    if (!z) return {};
    QStringList names;
    for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i)
        names << QString::fromUtf8(zip_get_name(z, static_cast<zip_uint64_t>(i), 0));
    zip_discard(z);
    return names;
}

bool zipEntryStored(const QString& path, const char* name) {
    int error = 0;
    zip_t* z = zip_open(QFile::encodeName(path).constData(), ZIP_RDONLY, &error);
    if (!z) return false;
    zip_stat_t st;
    const bool stored = zip_stat(z, name, 0, &st) == 0 && (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
    zip_discard(z);
    return stored;
}

bool replaceZipEntry(const QString& path, const char* name, const QByteArray& data) {
    int error = 0;
    zip_t* z = zip_open(QFile::encodeName(path).constData(), 0, &error);
    if (!z) return false;
    const auto index = zip_name_locate(z, name, 0);
    bool ok = index >= 0;
    if (ok && data.isEmpty())
        ok = zip_delete(z, static_cast<zip_uint64_t>(index)) == 0;
    else if (ok) {
        zip_source_t* source = zip_source_buffer(z, data.constData(), static_cast<zip_uint64_t>(data.size()), 0);
        ok = source && zip_file_replace(z, static_cast<zip_uint64_t>(index), source, 0) == 0;
    }
    return zip_close(z) == 0 && ok;
}

}  // namespace dragoman::test
