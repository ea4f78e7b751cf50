// core/handoff_queue.h, tested beside the readers that use it (this binary
// also runs under TSan in CI).
#include "core/handoff_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>
#include <vector>

namespace pypto {
namespace {

struct Numbers {
  std::vector<int> values;
};

// 1000 batches through a queue of 2: the consumer gets them in order, and
// the producer reuses the batches given back instead of making 1000.
TEST(HandoffQueue, BatchesArriveInOrderAndAreReused) {
  HandoffQueue<Numbers> queue(2);
  std::set<const Numbers*> distinct;
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) {
      std::unique_ptr<Numbers> batch = queue.TakeSpare();
      distinct.insert(batch.get());  // only the producer touches `distinct`
      batch->values.assign({i, i + 1});
      ASSERT_TRUE(queue.Push(std::move(batch)));
    }
  });
  std::unique_ptr<Numbers> current;
  for (int i = 0; i < 1000; ++i) {
    current = queue.Pop(std::move(current));
    ASSERT_EQ(current->values, (std::vector<int>{i, i + 1}));
  }
  producer.join();
  // At most: 2 ready + 1 with the consumer + 1 being filled.
  EXPECT_LE(distinct.size(), 4u);
}

// A consumer that leaves early: Stop() releases a producer waiting for room.
TEST(HandoffQueue, StopReleasesAWaitingProducer) {
  HandoffQueue<Numbers> queue(1);
  bool last_push = true;
  std::thread producer([&] {
    ASSERT_TRUE(queue.Push(queue.TakeSpare()));
    last_push = queue.Push(queue.TakeSpare());  // waits: the queue holds one already
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  queue.Stop();
  producer.join();
  EXPECT_FALSE(last_push);
}

}  // namespace
}  // namespace pypto
