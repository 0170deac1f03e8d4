#pragma once
// Files and ZIP packages as the document tests read and damage them.
#include <QByteArray>
#include <QString>
#include <QStringList>

namespace dragoman::test {

QByteArray fileBytes(const QString& path);
bool writeBytes(const QString& path, const QByteArray& data);
// One entry of a ZIP package (empty when missing).
QByteArray zipEntry(const QString& path, const char* name);
// Every entry's name, in the package's order.
QStringList zipEntryNames(const QString& path);
// Whether the entry is stored without compression.
bool zipEntryStored(const QString& path, const char* name);
// Replaces (or, with an empty `data`, deletes) one entry of a ZIP package in place.
bool replaceZipEntry(const QString& path, const char* name, const QByteArray& data);

}  // namespace dragoman::test
