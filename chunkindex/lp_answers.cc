#include "chunkindex/lp_answers.h"

namespace graphfs::chunkindex {

LpAnswer::LpAnswer(uint64_t t, Result<LpGrant> r) : ticket(t), result(std::move(r)) {}
LpAnswer::LpAnswer(LpAnswer&& other) noexcept = default;
LpAnswer& LpAnswer::operator=(LpAnswer&& other) noexcept = default;
LpAnswer::~LpAnswer() = default;

uint64_t LpAnswers::NewTicket() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_ticket_++;
}

void LpAnswers::Push(LpAnswer answer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(answer));
  }
  cv_.notify_one();
}

void LpAnswers::Push(std::vector<LpAnswer>& answers) {
  if (answers.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (LpAnswer& a : answers) queue_.push_back(std::move(a));
  }
  answers.clear();
  cv_.notify_all();
}

std::optional<LpAnswer> LpAnswers::Wait() { return WaitFor(std::chrono::steady_clock::duration::max()); }

std::optional<LpAnswer> LpAnswers::WaitFor(std::chrono::steady_clock::duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = [&] { return closed_ || !queue_.empty(); };
  if (timeout == std::chrono::steady_clock::duration::max()) cv_.wait(lock, ready);
  else cv_.wait_for(lock, timeout, ready);
  if (queue_.empty()) return std::nullopt;
  LpAnswer a = std::move(queue_.front());
  queue_.pop_front();
  return a;
}

void LpAnswers::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

size_t LpAnswers::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace graphfs::chunkindex
