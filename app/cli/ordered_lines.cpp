#include "cli/ordered_lines.h"

#include "dragoman.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace dragoman::cli {
namespace {

struct Result {
    std::string output;
    std::exception_ptr error;
};

}  // namespace

void translateLinesInOrder(std::istream& in, int workers, const std::function<std::string(const std::string&, std::uint64_t)>& work,
                           const std::function<void(const std::string&)>& print) {
    std::mutex mutex;
    // Workers wait for lines; the reader waits for room to read into or the next line's output. Each is woken only
    // when there is something for it: every line's start and end woke every waiting thread, several hundred thread
    // switches a batch on cores the model's steps need.
    std::condition_variable lineQueued, readerNeeded;
    std::deque<std::pair<std::uint64_t, std::string>> queue;
    std::map<std::uint64_t, Result> finished;
    bool closed = false, failed = false;
    int inFlight = 0;
    std::uint64_t printed = 0;
    const auto readAhead = static_cast<std::size_t>(std::max(1, workers)) * 2;
    const auto lowWater = readAhead / 2;  // the reader tops the queue up from here, many lines at a wake

    std::vector<std::thread> threads;
    for (int w = 0; w < std::max(1, workers); ++w)
        threads.emplace_back([&] {
            const YieldToKernelThreads yielding;  // the lines' steps run on the model's threads
            std::unique_lock lock(mutex);
            for (;;) {
                lineQueued.wait(lock, [&] { return !queue.empty() || closed || failed; });
                if (failed || queue.empty()) return;
                auto [number, line] = std::move(queue.front());
                queue.pop_front();
                ++inFlight;
                if (queue.size() == lowWater) readerNeeded.notify_one();
                lock.unlock();
                Result result;
                try {
                    result.output = work(line, number);
                } catch (...) {
                    result.error = std::current_exception();
                }
                lock.lock();
                --inFlight;
                if (result.error) {
                    failed = true;
                    lineQueued.notify_all();
                }
                finished.emplace(number, std::move(result));
                // The reader prints in order: this output is news to it when it is the next one, or the last.
                if (number == printed + 1 || failed || inFlight == 0) readerNeeded.notify_one();
            }
        });

    std::exception_ptr error;
    // Prints what is ready, in order; the lock is held for the bookkeeping only.
    auto printReady = [&](std::unique_lock<std::mutex>& lock) {
        for (auto it = finished.find(printed + 1); it != finished.end() && !error; it = finished.find(printed + 1)) {
            auto result = std::move(it->second);
            finished.erase(it);
            ++printed;
            if (result.error) {
                error = result.error;
                return;
            }
            lock.unlock();
            try {
                print(result.output);
            } catch (...) {  // the output is gone (a full disk, a closed pipe): the lines in flight end, none start
                lock.lock();
                error = std::current_exception();
                failed = true;
                lineQueued.notify_all();
                return;
            }
            lock.lock();
        }
    };
    const YieldToKernelThreads yielding;  // reading and printing wait for a free core too
    std::uint64_t read = 0;
    std::unique_lock lock(mutex);
    for (std::string line; !failed;) {
        readerNeeded.wait(lock, [&] { return queue.size() <= lowWater || finished.count(printed + 1) > 0 || failed; });
        printReady(lock);
        if (failed) break;
        bool more = true;
        while (more && queue.size() < readAhead && !failed) {
            lock.unlock();
            more = static_cast<bool>(std::getline(in, line));
            lock.lock();
            if (!more) break;
            queue.emplace_back(++read, std::move(line));
            lineQueued.notify_one();
        }
        if (!more) break;
    }
    closed = true;
    lineQueued.notify_all();
    // The rest: every line read, or after a failure, the lines before it (those in flight end first).
    for (;;) {
        readerNeeded.wait(lock, [&] { return finished.count(printed + 1) > 0 || ((queue.empty() || failed) && inFlight == 0); });
        printReady(lock);
        if (error || ((queue.empty() || failed) && inFlight == 0 && finished.count(printed + 1) == 0)) break;
    }
    if (!error)  // a failed line after a gap (lines not started): report it
        for (auto& [number, result] : finished)
            if (result.error) {
                error = result.error;
                break;
            }
    lock.unlock();
    for (auto& t : threads)
        t.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace dragoman::cli
