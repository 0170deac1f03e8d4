#pragma once
// Continuous batching for requests that decode on their own threads (the server's, `translate --batch`'s,
// a document's segments). Each request keeps its own search loop; its session hands every decoding step to
// the model's batcher, which runs the steps of all requests waiting at that moment as one batched step (the
// weights are read once for all of them) and gives each request back its own rows of logits.
//
// A request is a member from the end of its prompt until its session ends: it joins the running batch at the
// next step and leaves it when it stops, so a short request never waits for a long one. A step runs as soon
// as every member has asked for one (or the waiting rows fill `maxRows`); a member that is late (its thread
// busy writing to a slow client) is waited for a quarter of a step's time at most, then the others go on.
// Results do not depend on who shares a step: the models' batched steps give each state the numbers it gets
// alone.
//
// A request whose search only computes between steps (no reader to wait for) hands the batcher its search loop's
// body instead (Member::drive): the batcher runs it on its own thread right after each step and queues the
// request's next step at once, so the request's thread sleeps until its translation is done. Stepping from the
// request's thread costs two thread switches per token, which on two cores were a tenth of a batched run.
//
// Every step and every prompt runs on the batcher's own thread, one at a time (on a few cores two at once only
// slow each other); prompts given to together() that wait at the same moment run as one (an encoder pass over
// several requests' sources). The requests' threads only wait: however many threads a server's pool has, the model's
// work touches one thread's stack and per-thread buffers, so memory stays what one thread needs.
//
// At most `maxRows` requests are members at once (more would never step together anyway); a request whose prompt
// is done waits for a place. That lets a caller with many sources in hand (`translate --batch`) run more requests
// than places: while every place is taken and at least two encoded requests wait for one, together() prompts
// wait too, so the sources of requests that start while the batch decodes go through the encoder as one pass
// when the waiting requests run low, instead of one or two at a time between steps (the bundled model: ~15 sources
// per pass, 1.3x less time per source, and 15.6 rows per step instead of 13.8, the places no longer left empty
// while a source is encoded).
#include "decode/decoding_session.h"
#include "decode/logits.h"
#include "text/tokenizer.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace dragoman {

class StepBatcher {
public:
    // Runs one step for several states (opaque to the batcher): tokens[i] (B_i ids, one per hypothesis) feed
    // states[i]. Returns logits [sum B_i, V], the states' rows one after another.
    using Runner = std::function<Logits(const std::vector<void*>& states, const std::vector<std::vector<TokenId>>& tokens)>;

    // Runs several requests' prompts as one (each opaque to the batcher: what together() was given), writing each
    // one's result into it. Throws for the lot; the batcher then runs each alone to find whose it was.
    using PromptRunner = std::function<void(const std::vector<void*>& prompts)>;

    // Runs the batcher's thread (all its steps and prompts) inside what the model's code needs there: libtorch's
    // InferenceMode for the libtorch models (decode/batched_steps.h's inferenceMode()). Empty: nothing.
    using ThreadScope = std::function<void(const std::function<void()>& serve)>;

    explicit StepBatcher(Runner runner, std::int64_t maxRows = 16, PromptRunner prompts = {}, ThreadScope scope = {});
    ~StepBatcher();
    StepBatcher(const StepBatcher&) = delete;
    StepBatcher& operator=(const StepBatcher&) = delete;

    // Where a member is, as the batcher sees it (read and written under its lock): without a place yet, stepping,
    // or resting. Steps wait for every stepping member (one handed a place while its thread sleeps in step() too:
    // a step without it left the places of a batch half empty on two busy cores, its thread waiting for a core),
    // never for a resting one: its drive() ended, and it is about to leave rather than ask for another step.
    enum class Phase { outside, stepping, resting };

    // Membership of one request, from after its prompt to its end. Its place (one of maxRows) is taken at its first
    // step: step() waits for one; drive() queues for one and is let in by the batcher's thread the moment one frees,
    // its own thread sleeping on (a place handed to a sleeping thread kept the others waiting while it woke).
    class Member {
    public:
        explicit Member(StepBatcher& batcher) : batcher_(batcher) {}
        ~Member() { batcher_.leave(phase_); }
        Member(const Member&) = delete;
        Member& operator=(const Member&) = delete;
        // One step for `state` (B ids): its logits [B, V]. Throws what the step throws for it.
        Logits step(void* state, const std::vector<TokenId>& tokens) { return batcher_.step(state, tokens, phase_); }
        // Steps for `state` from `tokens` on for as long as `continuation` asks, the continuation running on the
        // batcher's thread right after each batched step (it must only compute): the request's thread wakes once,
        // at the end, where step() wakes it at every step. Rethrows what a step or the continuation throws.
        void drive(void* state, std::vector<TokenId> tokens, const StepContinuation& continuation) {
            batcher_.drive(state, std::move(tokens), continuation, phase_);
        }

    private:
        StepBatcher& batcher_;
        Phase phase_ = Phase::outside;
    };

    // Runs `work` (a request's prompt) on the batcher's thread between batched steps, and rethrows what it
    // throws. Steps that are ready go first, so a queue of prompts does not stall the others.
    void between(const std::function<void()>& work);
    // Runs `prompt` through the PromptRunner between steps, together with every other prompt given to together()
    // that is waiting at that moment (requests that end at about the same time start together; see above for when
    // they are held back), and rethrows what it throws for this prompt. A batcher built without a PromptRunner
    // refuses (Error "internal").
    void together(void* prompt);

    struct Counts {
        std::int64_t steps = 0, rows = 0, widest = 0;  // batched steps run, rows stepped, most rows in one step
        std::int64_t promptRuns = 0;                   // prompts run (those run together count once)
        std::int64_t widestPromptRun = 0;              // most prompts run together
        std::int64_t mostMembers = 0;                  // most requests decoding at once
        double stepSeconds = 0, promptSeconds = 0;     // time on the batcher's thread in each
        double continueSeconds = 0;                    // time in driven requests' continuations, after the steps
        double idleSeconds = 0;                        // time it waited for members' next steps
        std::int64_t waitingPrompts = 0;               // prompts queued now, not yet taken by the batcher's thread
    };
    Counts counts() const;

private:
    // Each waiting request has its own condition variable, notified (under the lock, so the request cannot return
    // and take it off its stack meanwhile) when its step or prompt is done: one shared one woke every waiting thread
    // at every step, 16 or more of them on two cores, each to find it was not its turn.
    struct Pending {
        void* state;
        const std::vector<TokenId>* tokens;
        Logits logits;
        std::exception_ptr error;
        bool done = false;
        std::condition_variable woken;
        Phase* phase = nullptr;                          // the member's (Member::phase_)
        const StepContinuation* continuation = nullptr;  // drive()'s: the request stays in the batch until it says stop
        std::vector<TokenId> driven;                     // drive()'s tokens (`tokens` points here)
    };
    struct Prompt {
        const std::function<void()>* work;  // between()'s, or null
        void* input;                        // together()'s, or null
        std::exception_ptr error;
        bool done = false;
        std::condition_variable woken;
    };
    using Clock = std::chrono::steady_clock;

    // Takes a place (waits for one) for a member outside. Lock held.
    void join(std::unique_lock<std::mutex>& lock, Phase& phase);
    // Whether a request may take a place at once: one is free and no other request waits for one. Lock held.
    bool placeFree() const;
    void leave(const Phase& phase);
    // A place given up: to a queued drive() (into the next step), else to a request waiting in step(), else free.
    // Lock held.
    void givePlace();
    Logits step(void* state, const std::vector<TokenId>& tokens, Phase& phase);
    void drive(void* state, std::vector<TokenId> tokens, const StepContinuation& continuation, Phase& phase);
    // Queues a member's step (lock held); await() then waits until it is done (for drive(): until its continuation
    // stops) and rethrows its error.
    void enqueue(Pending& pending);
    void await(Pending& pending, std::unique_lock<std::mutex>& lock);
    // Runs the continuations of a step's driven requests (unlocked); for each request of `batch`, whether it goes on
    // (to be queued again).
    static std::vector<char> continueDriven(const std::vector<Pending*>& batch);
    // Starts the batcher's thread on first use (a model that never translates needs none). Lock held.
    void startThread();
    // The batcher's thread: runs ready steps, then prompts, until the batcher goes.
    void serve();
    // Whether the waiting steps should run now (called with the lock held).
    bool ready(Clock::time_point now) const;
    // Whether the waiting prompts should run now (called with the lock held).
    bool promptsDue() const;
    Clock::time_point deadline() const;
    // Takes waiting steps (up to maxRows rows), runs them without the lock, hands out the results.
    void runBatch(std::unique_lock<std::mutex>& lock);
    // Queues a prompt and waits until the batcher's thread has run it; rethrows its error.
    void queue(Prompt& prompt);
    // Runs the first waiting prompt, with every waiting together() prompt (up to kMostPromptsTogether) if it is one.
    void runPrompts(std::unique_lock<std::mutex>& lock);
    // together() prompts as one PromptRunner call (unlocked); each alone if that throws.
    void runTogether(const std::vector<Prompt*>& batch);

    Runner runner_;
    std::int64_t maxRows_;
    PromptRunner promptRunner_;
    ThreadScope scope_;
    mutable std::mutex mutex_;
    std::condition_variable work_;   // the batcher's thread waits on it
    std::condition_variable place_;  // requests waiting to become members wait on it
    std::int64_t members_ = 0;       // members holding a place (a resting one gave its place up)
    std::int64_t joining_ = 0;       // requests waiting for a place
    std::int64_t handedOver_ = 0;    // places given to waiting requests whose threads have not woken yet
    std::deque<Pending*> waiting_;
    std::deque<Pending*> admitting_;  // drive()s of requests without a place, let in as places free
    std::deque<Prompt*> prompts_;
    std::int64_t waitingRows_ = 0;
    bool stopping_ = false;
    Clock::time_point waitingSince_, lastEnd_;
    Clock::duration lastStep_{};
    Counts counts_;
    std::thread thread_;  // last: started after everything it reads
};

// How a session starts: its `prompt` runs between the batcher's steps, then the session joins as `member`.
// Without a batcher (null) the prompt just runs and `member` stays empty.
void startMember(StepBatcher* batcher, const std::function<void()>& prompt, std::optional<StepBatcher::Member>& member);

}  // namespace dragoman
