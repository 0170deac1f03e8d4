#pragma once
// The one way to stop a load or a translation: a copyable handle to a shared flag. The requester keeps a
// copy and calls cancel(); the engine checks cancelled() between steps and stops cleanly.
#include <atomic>
#include <memory>

namespace dragoman {

class CancelToken {
public:
    CancelToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
    void cancel() const noexcept { flag_->store(true, std::memory_order_relaxed); }
    bool cancelled() const noexcept { return flag_->load(std::memory_order_relaxed); }

private:
    std::shared_ptr<std::atomic<bool>> flag_;
};

}  // namespace dragoman
