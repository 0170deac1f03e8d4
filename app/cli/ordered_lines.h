#pragma once
// Lines of a stream translated by several workers at once and printed in their input order: each worker
// takes the next line as soon as it is free (a long line never holds the others back), and a line's output
// is printed once it and every line before it are done. Lines are read while earlier ones translate, so a
// pipe that trickles in is answered as it goes; a few lines per worker are read ahead, no more.
#include <cstdint>
#include <functional>
#include <istream>
#include <string>

namespace dragoman::cli {

// `work(line, number)` (numbers count from 1) runs on `workers` threads; `print(output)` on the caller's.
// An exception from work() stops reading, lets the lines in flight end, and is rethrown here once every
// line before it has been printed. An exception from print() (the output gone) does the same at once.
void translateLinesInOrder(std::istream& in, int workers, const std::function<std::string(const std::string&, std::uint64_t)>& work,
                           const std::function<void(const std::string&)>& print);

}  // namespace dragoman::cli
