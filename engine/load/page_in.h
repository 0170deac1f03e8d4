#pragma once
// Brings mapped weights into memory in file order, ahead of the first translation, with byte progress.
#include "io/mapped_file.h"

#include <functional>
#include <memory>
#include <vector>

namespace dragoman {

// (bytesDone, bytesTotal) -> keepGoing. Returns false when cancelled.
using PageInProgress = std::function<bool(std::uint64_t, std::uint64_t)>;

bool pageIn(const std::vector<std::shared_ptr<const MappedFile>>& files, const PageInProgress& progress);

// Whether page-in reads cold files by faulting them into the mapping in 2 MiB folios (transparent huge
// pages "always" or "madvise"); otherwise it reads them with sequential read() first.
bool pageInReadsHugeFolios();

// Drops the files' pages from the page cache (for cold-start measurements); returns false if not possible.
bool evictFromPageCache(const std::filesystem::path& path);

}  // namespace dragoman
