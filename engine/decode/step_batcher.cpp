#include "decode/step_batcher.h"

#include <torch/torch.h>

#include <algorithm>

namespace dragoman {
namespace {

// The least a late member is waited for: threads on a busy machine take about this long to be scheduled.
constexpr auto kLeastPatience = std::chrono::milliseconds(2);

}  // namespace

StepBatcher::StepBatcher(Runner runner, std::int64_t maxRows) : runner_(std::move(runner)), maxRows_(std::max<std::int64_t>(1, maxRows)) {}

void StepBatcher::join() {
    std::lock_guard lock(mutex_);
    ++members_;
}

void StepBatcher::leave() {
    std::lock_guard lock(mutex_);
    --members_;
    // The others may have been waiting for this member alone.
    changed_.notify_all();
}

StepBatcher::Counts StepBatcher::counts() const {
    std::lock_guard lock(mutex_);
    return counts_;
}

StepBatcher::Clock::time_point StepBatcher::deadline() const {
    const auto patience = std::max<Clock::duration>(kLeastPatience, lastStep_ / 4);
    return std::max(waitingSince_, lastEnd_) + patience;
}

bool StepBatcher::ready(Clock::time_point now) const {
    if (waiting_.empty()) return false;
    return static_cast<std::int64_t>(waiting_.size()) >= members_ || waitingRows_ >= maxRows_ || now >= deadline();
}

void StepBatcher::between(const std::function<void()>& work) {
    std::unique_lock lock(mutex_);
    for (;;) {
        const auto now = Clock::now();
        if (!running_ && !ready(now)) break;
        if (running_)
            changed_.wait(lock);
        else
            changed_.wait_for(lock, std::chrono::microseconds(100));  // a waiting member is about to run them
    }
    running_ = true;
    lock.unlock();
    std::exception_ptr error;
    try {
        work();
    } catch (...) {
        error = std::current_exception();
    }
    lock.lock();
    running_ = false;
    lastEnd_ = Clock::now();
    changed_.notify_all();
    lock.unlock();
    if (error) std::rethrow_exception(error);
}

torch::Tensor StepBatcher::step(void* state, const torch::Tensor& tokens) {
    Pending pending{state, tokens, {}, {}, false};
    std::unique_lock lock(mutex_);
    if (waiting_.empty()) waitingSince_ = Clock::now();
    waiting_.push_back(&pending);
    waitingRows_ += tokens.size(0);
    while (!pending.done) {
        if (!running_ && ready(Clock::now())) {
            runBatch(lock);  // whoever notices first runs it, possibly for others only
            continue;
        }
        if (running_)
            changed_.wait(lock);
        else
            changed_.wait_until(lock, deadline());
    }
    if (pending.error) std::rethrow_exception(pending.error);
    return pending.logits;
}

void startMember(StepBatcher* batcher, const std::function<void()>& prompt, std::optional<StepBatcher::Member>& member) {
    if (!batcher) return prompt();
    batcher->between(prompt);
    member.emplace(*batcher);
}

void StepBatcher::runBatch(std::unique_lock<std::mutex>& lock) {
    std::vector<Pending*> batch;
    std::int64_t rows = 0;
    while (!waiting_.empty() && (batch.empty() || rows + waiting_.front()->tokens.size(0) <= maxRows_)) {
        rows += waiting_.front()->tokens.size(0);
        batch.push_back(waiting_.front());
        waiting_.pop_front();
    }
    waitingRows_ -= rows;
    if (!waiting_.empty()) waitingSince_ = Clock::now();
    running_ = true;
    lock.unlock();

    const auto start = Clock::now();
    std::vector<void*> states;
    std::vector<torch::Tensor> tokens;
    for (const auto* p : batch) {
        states.push_back(p->state);
        tokens.push_back(p->tokens);
    }
    try {
        const auto logits = runner_(states, tokens);
        std::int64_t offset = 0;
        for (auto* p : batch) {
            p->logits = logits.narrow(0, offset, p->tokens.size(0));
            offset += p->tokens.size(0);
        }
    } catch (...) {
        // A step refused for one state (its cache full, say) must not fail the others: each runs alone.
        if (batch.size() == 1) batch.front()->error = std::current_exception();
        for (auto* p : batch) {
            if (p->error) continue;
            try {
                p->logits = runner_({p->state}, {p->tokens});
            } catch (...) {
                p->error = std::current_exception();
            }
        }
    }
    const auto end = Clock::now();

    lock.lock();
    for (auto* p : batch)
        p->done = true;
    running_ = false;
    lastEnd_ = end;
    lastStep_ = end - start;
    ++counts_.steps;
    counts_.rows += rows;
    counts_.widest = std::max(counts_.widest, rows);
    changed_.notify_all();
}

}  // namespace dragoman
