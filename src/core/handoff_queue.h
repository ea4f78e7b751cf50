// A bounded hand-off of batches from one producer thread to one consumer,
// for readers that parse ahead of the code using their rows (the CSV and
// SQLite read-ahead). The producer fills batches, reusing the ones the
// consumer has finished with, and waits while `capacity` are ready; the
// consumer takes them in order. Stop() makes a waiting producer give up, for a
// consumer that leaves early (an error, a cancel).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace pypto {

template <typename Batch>
class HandoffQueue {
 public:
  explicit HandoffQueue(size_t capacity) : capacity_(capacity) {}

  // Producer: a batch to fill (one given back when there is one, as it was left).
  std::unique_ptr<Batch> TakeSpare() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (spare_.empty()) return std::make_unique<Batch>();
    std::unique_ptr<Batch> batch = std::move(spare_.back());
    spare_.pop_back();
    return batch;
  }

  // Producer: hands a filled batch over, waiting for room; false once stopped.
  bool Push(std::unique_ptr<Batch> batch) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      room_.wait(lock, [&] { return stopped_ || ready_batches_.size() < capacity_; });
      if (stopped_) return false;
      ready_batches_.push_back(std::move(batch));
    }
    ready_.notify_one();
    return true;
  }

  // Consumer: the next batch in order, waiting for it; `done` (may be null)
  // goes back for reuse.
  std::unique_ptr<Batch> Pop(std::unique_ptr<Batch> done) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done) spare_.push_back(std::move(done));
    ready_.wait(lock, [&] { return !ready_batches_.empty(); });
    std::unique_ptr<Batch> batch = std::move(ready_batches_.front());
    ready_batches_.pop_front();
    lock.unlock();
    room_.notify_one();
    return batch;
  }

  // Consumer: no more batches wanted.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopped_ = true;
    }
    room_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<std::unique_ptr<Batch>> ready_batches_;
  std::vector<std::unique_ptr<Batch>> spare_;
  bool stopped_ = false;
};

}  // namespace pypto
