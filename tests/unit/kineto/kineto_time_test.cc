// Exact µs -> ns parsing of Chrome-trace times (reference kineto-format.md §10.2-3).
#include <gtest/gtest.h>

#include "importers/kineto/kineto_importer.h"

namespace pypto::kineto {
namespace {

int64_t Ns(std::string_view text) {
  int64_t ns = -12345;
  EXPECT_EQ(ParseMicrosToNs(text, &ns), TimeParse::kOk) << text;
  return ns;
}

TEST(KinetoTime, Integer) {
  EXPECT_EQ(Ns("0"), 0);
  EXPECT_EQ(Ns("1623142623460111"), 1623142623460111000);  // epoch µs of torch 1.9
}

TEST(KinetoTime, FloatKeepsNanosecondsExactly) {
  // 1.7e15 µs has a double ulp of 0.25 µs; the text is exact.
  EXPECT_EQ(Ns("1694039968955744.123"), 1694039968955744123);
  EXPECT_EQ(Ns("4909914216204.635"), 4909914216204635);
  EXPECT_EQ(Ns("2.5"), 2500);
  EXPECT_EQ(Ns("13.7"), 13700);
  EXPECT_EQ(Ns("1.23456"), 1234);  // digits beyond ns are truncated
}

TEST(KinetoTime, StringTokenAndBlanks) { EXPECT_EQ(Ns(" 8.5 "), 8500); }

TEST(KinetoTime, Exponent) {
  EXPECT_EQ(Ns("1.5e3"), 1500000);
  EXPECT_EQ(Ns("1E-3"), 1);
  EXPECT_EQ(Ns("2.5e+2"), 250000);
}

TEST(KinetoTime, Negative) {
  EXPECT_EQ(Ns("-5"), -5000);
  EXPECT_EQ(Ns("-0.001"), -1);
}

TEST(KinetoTime, HugeOverflows) {
  int64_t ns;
  EXPECT_EQ(ParseMicrosToNs("9223372036854775", &ns), TimeParse::kOk);  // fits: 9.22e18 ns
  EXPECT_EQ(ns, 9223372036854775000);
  EXPECT_EQ(ParseMicrosToNs("9223372036854776", &ns), TimeParse::kOverflow);
  EXPECT_EQ(ParseMicrosToNs("99999999999999999999", &ns), TimeParse::kOverflow);
  EXPECT_EQ(ParseMicrosToNs("1e300", &ns), TimeParse::kOverflow);
}

TEST(KinetoTime, Invalid) {
  int64_t ns;
  EXPECT_EQ(ParseMicrosToNs("", &ns), TimeParse::kInvalid);
  EXPECT_EQ(ParseMicrosToNs("N/A", &ns), TimeParse::kInvalid);
  EXPECT_EQ(ParseMicrosToNs("12abc", &ns), TimeParse::kInvalid);
  EXPECT_EQ(ParseMicrosToNs("1e", &ns), TimeParse::kInvalid);
}

TEST(KinetoNames, CommunicationPrefixes) {
  EXPECT_TRUE(IsCommunicationKernelName("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
  EXPECT_TRUE(IsCommunicationKernelName("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"));
  EXPECT_TRUE(IsCommunicationKernelName("void rcclKernel_Generic"));
  EXPECT_FALSE(IsCommunicationKernelName("void at::native::vectorized_elementwise_kernel"));
}

}  // namespace
}  // namespace pypto::kineto
