#pragma once
// Rows of independent sequences (a batched decoding step's requests, an encoder pass's sources) shared out as one part
// per kernel thread, each part run through the whole model on its thread: no hand-off or wait per operation, where
// sharing each operation's columns out costs a few dozen of them per step. Every thread then reads all the weights,
// which pays only where they stay in the last-level cache.
#include <cstdint>
#include <functional>
#include <vector>

namespace dragoman::kernels {

// The last-level cache's size in bytes as the system describes it for CPU 0 (sysfs, else sysconf; a VM may report
// the whole socket's), 0 where unknown.
std::int64_t lastLevelCacheBytes();

// Bounds of `parts` runs of consecutive sequences (sequence i has rows[i] rows) with about equal rows: part p is
// sequences [bounds[p], bounds[p + 1]). Empty where some part would get fewer than `least` rows.
std::vector<std::int64_t> splitRows(const std::int64_t* rows, std::int64_t count, std::int64_t parts, std::int64_t least);

// Whether callers share rows out in parts at all (on unless switched off): tests and `bench` compare both ways in one
// process. Not for use while kernels run on other threads.
bool rowPartsEnabled();
void setRowParts(bool enabled);

// fn(part) for every part in [0, parts) on the kernel pool's threads, the kernels it calls running on its thread alone.
// An exception from a part is rethrown once every part has ended.
void runParts(std::int64_t parts, const std::function<void(std::int64_t)>& fn);

}  // namespace dragoman::kernels
