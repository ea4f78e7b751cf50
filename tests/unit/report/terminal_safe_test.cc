// Profile strings printed on a terminal (text report) cannot carry control
// sequences: docs/reliability.md, "Reports".
#include <gtest/gtest.h>

#include "report/text_table.h"

namespace pypto::report {
namespace {

TEST(TerminalSafe, EscapesC0ControlsAndDel) {
  EXPECT_EQ(TerminalSafe("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(TerminalSafe("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(TerminalSafe(std::string_view("x\0y\x7f", 4)), "x\\x00y\\x7f");
}

TEST(TerminalSafe, EscapesC1SeparatorsAndBidiOverrides) {
  EXPECT_EQ(TerminalSafe("\xc2\x9b" "2J"), "\\u009b2J");             // C1 CSI
  EXPECT_EQ(TerminalSafe("a\xe2\x80\xa8" "b"), "a\\u2028b");         // LINE SEPARATOR
  EXPECT_EQ(TerminalSafe("\xe2\x80\xae" "cba"), "\\u202ecba");       // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(TerminalSafe("\xe2\x81\xa6" "x"), "\\u2066x");           // LEFT-TO-RIGHT ISOLATE
}

TEST(TerminalSafe, KeepsPrintableUnicodeAndReplacesInvalidUtf8) {
  EXPECT_EQ(TerminalSafe("aten::mm µs 中文 \xf0\x9f\x94\xa5 <script>|\"'"), "aten::mm µs 中文 \xf0\x9f\x94\xa5 <script>|\"'");
  EXPECT_EQ(TerminalSafe("x\xffy"), "x\xef\xbf\xbdy");
  EXPECT_EQ(TerminalSafe("\xe2\x82"), "\xef\xbf\xbd");  // truncated sequence: one U+FFFD
  EXPECT_EQ(TerminalSafe("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // encoded surrogate
}

TEST(TerminalSafe, TableCellsCannotForgeLines) {
  TextTable table({{"NAME"}, {"COUNT", Align::kRight}});
  table.AddRow({"evil\n  fake_row  999", "1"});
  const std::string text = table.Render();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_NE(text.find("evil\\n  fake_row"), std::string::npos) << text;
}

}  // namespace
}  // namespace pypto::report
