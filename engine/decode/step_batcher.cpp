#include "decode/step_batcher.h"

#include "kernels/thread_pool.h"
#include "kernels/thread_roles.h"
#include "util/error.h"
#include "util/log.h"

#include <algorithm>

namespace dragoman {
namespace {

// The least a late member is waited for: threads on a busy machine take about this long to be scheduled.
constexpr auto kLeastPatience = std::chrono::milliseconds(2);
// Prompts run as one at most: bounds the rows of one encoder pass (32 sentences of a document, say).
constexpr std::size_t kMostPromptsTogether = 32;

}  // namespace

StepBatcher::StepBatcher(Runner runner, std::int64_t maxRows, PromptRunner prompts, ThreadScope scope)
    : runner_(std::move(runner)),
      maxRows_(std::max<std::int64_t>(1, maxRows)),
      promptRunner_(std::move(prompts)),
      scope_(std::move(scope)) {}

StepBatcher::~StepBatcher() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    work_.notify_one();
    if (thread_.joinable()) thread_.join();
    if (counts_.steps > 0)
        log::logger().debug(
            "batched steps: {} ({:.1f} rows each on average, {} at most) in {:.3f} s, driven searches' turns after them {:.3f} s; "
            "{} prompt runs in {:.3f} s; {:.3f} s waiting on members",
            counts_.steps, static_cast<double>(counts_.rows) / static_cast<double>(counts_.steps), counts_.widest, counts_.stepSeconds,
            counts_.continueSeconds, counts_.promptRuns, counts_.promptSeconds, counts_.idleSeconds);
}

void StepBatcher::startThread() {
    // Started by whichever request comes first, whose thread may yield to the kernels' (kernels/thread_roles.h).
    if (!thread_.joinable())
        thread_ = std::thread([this] {
            runAsKernelThread();
            scope_ ? scope_([this] { serve(); }) : serve();
        });
}

bool StepBatcher::placeFree() const {
    return members_ < maxRows_ && joining_ == 0 && admitting_.empty();
}

void StepBatcher::join(std::unique_lock<std::mutex>& lock, Phase& phase) {
    phase = Phase::stepping;
    if (placeFree()) {
        ++members_;
        counts_.mostMembers = std::max(counts_.mostMembers, members_);
        return;
    }
    ++joining_;
    place_.wait(lock, [&] { return handedOver_ > 0; });
    --handedOver_;
}

void StepBatcher::leave(const Phase& phase) {
    std::lock_guard lock(mutex_);
    if (phase != Phase::stepping) return;  // never had a place, or gave it up when its drive ended
    givePlace();
    // The others may have been waiting for this member alone.
    work_.notify_one();
}

void StepBatcher::givePlace() {
    if (!admitting_.empty()) {
        auto* next = admitting_.front();
        admitting_.pop_front();
        *next->phase = Phase::stepping;
        enqueue(*next);
    } else if (joining_ > 0) {
        // The place goes to a waiting request at once (it counts as a member before its thread wakes), so the
        // prompts held back for it are not let through by a place that only looks free.
        --joining_;
        ++handedOver_;
        place_.notify_one();
    } else {
        --members_;
    }
}

StepBatcher::Counts StepBatcher::counts() const {
    std::lock_guard lock(mutex_);
    auto counts = counts_;
    counts.waitingPrompts = static_cast<std::int64_t>(prompts_.size());
    return counts;
}

StepBatcher::Clock::time_point StepBatcher::deadline() const {
    const auto patience = std::max<Clock::duration>(kLeastPatience, lastStep_ / 4);
    return std::max(waitingSince_, lastEnd_) + patience;
}

bool StepBatcher::ready(Clock::time_point now) const {
    if (waiting_.empty()) return false;
    return static_cast<std::int64_t>(waiting_.size()) >= members_ || waitingRows_ >= maxRows_ || now >= deadline();
}

bool StepBatcher::promptsDue() const {
    if (prompts_.empty()) return false;
    const auto queued = joining_ + static_cast<std::int64_t>(admitting_.size());
    if (stopping_ || members_ < maxRows_ || queued < 2) return true;
    // Every place is taken and encoded requests wait for the next ones: together() prompts gather meanwhile
    // (a between() prompt, a causal model's, never waits).
    std::size_t together = 0;
    for (const auto* p : prompts_) {
        if (p->work) return true;
        ++together;
    }
    return together >= kMostPromptsTogether;
}

void StepBatcher::serve() {
    std::unique_lock lock(mutex_);
    // Due prompts get a turn after every step: driven members queue their next step before the batcher's thread
    // looks again, so steps that go first whenever ready would run until the batch emptied.
    bool promptTurn = false;
    for (;;) {
        if (promptTurn && promptsDue()) {
            runPrompts(lock);
            promptTurn = false;
        } else if (ready(Clock::now())) {
            runBatch(lock);
            promptTurn = true;
        } else if (promptsDue()) {
            runPrompts(lock);
        } else if (stopping_) {
            return;
        } else {
            // Waiting with members in: the time their threads take between one step and their next (idleSeconds).
            const auto since = Clock::now();
            const bool members = members_ > 0;
            if (waiting_.empty())
                work_.wait(lock);
            else
                work_.wait_until(lock, deadline());
            if (members) counts_.idleSeconds += std::chrono::duration<double>(Clock::now() - since).count();
        }
    }
}

void StepBatcher::between(const std::function<void()>& work) {
    Prompt prompt{&work, nullptr, {}, false, {}};
    queue(prompt);
}

void StepBatcher::together(void* input) {
    if (!promptRunner_) throw Error("internal", "this batcher runs no prompts together");
    Prompt prompt{nullptr, input, {}, false, {}};
    queue(prompt);
}

void StepBatcher::queue(Prompt& prompt) {
    std::unique_lock lock(mutex_);
    startThread();
    prompts_.push_back(&prompt);
    work_.notify_one();
    prompt.woken.wait(lock, [&] { return prompt.done; });
    if (prompt.error) std::rethrow_exception(prompt.error);
}

Logits StepBatcher::step(void* state, const std::vector<TokenId>& tokens, Phase& phase) {
    Pending pending{state, &tokens, {}, {}, false, {}, &phase, nullptr, {}};
    std::unique_lock lock(mutex_);
    startThread();
    if (phase == Phase::outside) join(lock, phase);
    enqueue(pending);
    await(pending, lock);
    return pending.logits;
}

void StepBatcher::drive(void* state, std::vector<TokenId> tokens, const StepContinuation& continuation, Phase& phase) {
    Pending pending{state, nullptr, {}, {}, false, {}, &phase, &continuation, std::move(tokens)};
    pending.tokens = &pending.driven;
    std::unique_lock lock(mutex_);
    startThread();
    if (phase != Phase::outside) {
        enqueue(pending);
    } else if (placeFree()) {
        join(lock, phase);
        enqueue(pending);
    } else {
        admitting_.push_back(&pending);  // givePlace() lets it in
    }
    await(pending, lock);
}

void StepBatcher::enqueue(Pending& pending) {
    if (*pending.phase == Phase::resting) ++members_;  // it takes a place again (beyond maxRows, if need be)
    *pending.phase = Phase::stepping;
    if (waiting_.empty()) waitingSince_ = Clock::now();
    waiting_.push_back(&pending);
    waitingRows_ += static_cast<std::int64_t>(pending.tokens->size());
    work_.notify_one();
}

void StepBatcher::await(Pending& pending, std::unique_lock<std::mutex>& lock) {
    pending.woken.wait(lock, [&] { return pending.done; });
    if (pending.error) std::rethrow_exception(pending.error);
}

void StepBatcher::runPrompts(std::unique_lock<std::mutex>& lock) {
    // The first waiting prompt: a between() closure alone, or with every together() prompt waiting.
    std::vector<Prompt*> batch;
    if (prompts_.front()->work) {
        batch.push_back(prompts_.front());
        prompts_.pop_front();
    } else {
        for (auto it = prompts_.begin(); it != prompts_.end() && batch.size() < kMostPromptsTogether;) {
            if ((*it)->input) {
                batch.push_back(*it);
                it = prompts_.erase(it);
            } else {
                ++it;
            }
        }
    }
    lock.unlock();
    const auto start = Clock::now();
    if (batch.front()->work) {
        try {
            (*batch.front()->work)();
        } catch (...) {
            batch.front()->error = std::current_exception();
        }
    } else {
        runTogether(batch);
    }
    const auto end = Clock::now();
    lock.lock();
    counts_.promptSeconds += std::chrono::duration<double>(end - start).count();
    ++counts_.promptRuns;
    counts_.widestPromptRun = std::max(counts_.widestPromptRun, static_cast<std::int64_t>(batch.size()));
    lastEnd_ = end;
    for (auto* p : batch) {
        p->done = true;
        p->woken.notify_one();
    }
}

void StepBatcher::runTogether(const std::vector<Prompt*>& batch) {
    std::vector<void*> inputs;
    for (const auto* p : batch)
        inputs.push_back(p->input);
    try {
        promptRunner_(inputs);
    } catch (...) {
        // One bad prompt (too long a source, say) must not fail the others: each runs alone.
        if (batch.size() == 1) batch.front()->error = std::current_exception();
        for (auto* p : batch) {
            if (p->error) continue;
            try {
                promptRunner_({p->input});
            } catch (...) {
                p->error = std::current_exception();
            }
        }
    }
}

void startMember(StepBatcher* batcher, const std::function<void()>& prompt, std::optional<StepBatcher::Member>& member) {
    if (!batcher) return prompt();
    batcher->between(prompt);
    member.emplace(*batcher);
}

void StepBatcher::runBatch(std::unique_lock<std::mutex>& lock) {
    std::vector<Pending*> batch;
    std::int64_t rows = 0;
    const auto rowsOf = [](const Pending* p) { return static_cast<std::int64_t>(p->tokens->size()); };
    while (!waiting_.empty() && (batch.empty() || rows + rowsOf(waiting_.front()) <= maxRows_)) {
        rows += rowsOf(waiting_.front());
        batch.push_back(waiting_.front());
        waiting_.pop_front();
    }
    waitingRows_ -= rows;
    if (!waiting_.empty()) waitingSince_ = Clock::now();
    lock.unlock();

    const auto start = Clock::now();
    std::vector<void*> states;
    std::vector<std::vector<TokenId>> tokens;
    for (const auto* p : batch) {
        states.push_back(p->state);
        tokens.push_back(*p->tokens);
    }
    try {
        const auto logits = runner_(states, tokens);
        if (logits.rows() != rows)
            throw Error("internal", "a batched step returned " + std::to_string(logits.rows()) + " rows for " + std::to_string(rows));
        std::int64_t offset = 0;
        for (auto* p : batch) {
            p->logits = logits.slice(offset, rowsOf(p));
            offset += rowsOf(p);
        }
    } catch (...) {
        // A step refused for one state (its cache full, say) must not fail the others: each runs alone.
        if (batch.size() == 1) batch.front()->error = std::current_exception();
        for (auto* p : batch) {
            if (p->error) continue;
            try {
                p->logits = runner_({p->state}, {*p->tokens});
            } catch (...) {
                p->error = std::current_exception();
            }
        }
    }
    const auto end = Clock::now();
    const auto goingOn = continueDriven(batch);  // per request of the batch: whether its drive goes on
    const auto continued = Clock::now();

    lock.lock();
    lastEnd_ = end;
    lastStep_ = end - start;
    ++counts_.steps;
    counts_.stepSeconds += std::chrono::duration<double>(end - start).count();
    counts_.continueSeconds += std::chrono::duration<double>(continued - end).count();
    counts_.rows += rows;
    counts_.widest = std::max(counts_.widest, rows);
    for (std::size_t i = 0; i < batch.size(); ++i)
        if (goingOn[i]) enqueue(*batch[i]);
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (goingOn[i]) continue;
        auto* p = batch[i];
        if (p->continuation) {
            // Its drive is over: the next steps need not wait for this member, and its place goes to a waiting
            // request now rather than when its thread gets to leave (a step of fewer rows meanwhile).
            *p->phase = Phase::resting;
            givePlace();
        }
        p->done = true;
        p->woken.notify_one();
    }
}

std::vector<char> StepBatcher::continueDriven(const std::vector<Pending*>& batch) {
    std::vector<char> more(batch.size(), 0);
    // Each request's own state only: the requests' turns run on every kernel thread, one request at a time each.
    ThreadPool::shared().parallelFor(static_cast<std::int64_t>(batch.size()), 1, [&](std::int64_t begin, std::int64_t end) {
        for (auto i = begin; i < end; ++i) {
            auto* p = batch[static_cast<std::size_t>(i)];
            if (!p->continuation || p->error) continue;
            try {
                more[static_cast<std::size_t>(i)] = (*p->continuation)(p->logits, p->driven);
            } catch (...) {
                p->error = std::current_exception();
            }
            p->logits = {};  // the step's rows go as soon as every request has read its own
        }
    });
    return more;
}

}  // namespace dragoman
