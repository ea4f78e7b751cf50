// Kineto name rules (times: tests/unit/csv/number_text_test.cc).
#include <gtest/gtest.h>

#include "importers/kineto/kineto_importer.h"

namespace pypto::kineto {
namespace {

TEST(KinetoNames, CommunicationPrefixes) {
  EXPECT_TRUE(IsCommunicationKernelName("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
  EXPECT_TRUE(IsCommunicationKernelName("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"));
  EXPECT_TRUE(IsCommunicationKernelName("void rcclKernel_Generic"));
  EXPECT_FALSE(IsCommunicationKernelName("void at::native::vectorized_elementwise_kernel"));
}

}  // namespace
}  // namespace pypto::kineto
