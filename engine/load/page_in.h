#pragma once
// Brings mapped weights into memory in file order, ahead of the first translation, with byte progress.
#include "io/mapped_file.h"
#include "util/progress.h"

#include <memory>
#include <vector>

namespace dragoman {

// Reports bytes read as `phase` of `meter`. Returns false when the meter says stop.
bool pageIn(const std::vector<std::shared_ptr<const MappedFile>>& files, ProgressMeter& meter, std::size_t phase);

// Whether page-in reads cold files by faulting them into the mapping in 2 MiB folios (transparent huge
// pages "always" or "madvise"); otherwise it reads them with sequential read() first.
bool pageInReadsHugeFolios();

// Drops the files' pages from the page cache (for cold-start measurements); returns false if not possible.
bool evictFromPageCache(const std::filesystem::path& path);

}  // namespace dragoman
