#include <CLI/CLI.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  CLI::App app{"pypto: performance tuning orchestrator for LLM inference"};
  CLI11_PARSE(app, argc, argv);
  return 0;
}
