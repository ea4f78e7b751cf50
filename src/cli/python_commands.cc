#include "cli/python_commands.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "cli/python_command_table.h"

extern char** environ;

namespace pypto::cli {
namespace {

constexpr char kPythonEnvironmentVariable[] = "PYPTO_PYTHON";
constexpr char kImportProbe[] = "import pypto";

std::filesystem::path ExecutableDirectory() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : self.parent_path();
}

// Where to look for the interpreter, in order: $PYPTO_PYTHON; next to the
// command as invoked (a venv's bin/pypto, also when it is a symlink into a
// build tree); next to the resolved binary (a pip-installed venv); the source
// tree's .venv when the binary is <tree>/build/<preset>/pypto (`make build`);
// python3 on PATH.
std::vector<std::string> InterpreterCandidates(const char* argv0) {
  if (const char* chosen = std::getenv(kPythonEnvironmentVariable); chosen != nullptr && *chosen != '\0') {
    return {chosen};
  }
  std::vector<std::filesystem::path> directories;
  if (argv0 != nullptr && std::strchr(argv0, '/') != nullptr)
    directories.push_back(std::filesystem::path(argv0).parent_path());
  const std::filesystem::path self = ExecutableDirectory();
  if (!self.empty()) {
    directories.push_back(self);
    directories.push_back(self.parent_path().parent_path() / ".venv" / "bin");
  }
  std::vector<std::string> candidates;
  for (const std::filesystem::path& directory : directories) {
    for (const char* name : {"python3", "python"}) {
      std::filesystem::path candidate = directory / name;
      if (::access(candidate.c_str(), X_OK) == 0) candidates.push_back(candidate.string());
    }
  }
  candidates.emplace_back("python3");  // on PATH
  return candidates;
}

// Runs `<python> -c "import pypto"` quietly; true when it exits 0.
bool CanImportPypto(const std::string& python) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args = {const_cast<char*>(python.c_str()), const_cast<char*>("-c"),
                             const_cast<char*>(kImportProbe), nullptr};
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, python.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

bool IsPythonCommand(const char* name) {
  if (name == nullptr) return false;
  for (const PythonCommand& command : kPythonCommands) {
    if (std::strcmp(command.name, name) == 0) return true;
  }
  return false;
}

void AddPythonCommands(CLI::App* app) {
  for (const PythonCommand& command : kPythonCommands) {
    CLI::App* sub = app->add_subcommand(command.name, command.description);
    sub->prefix_command();  // everything after the name passes through to Python untouched
    sub->set_help_flag();   // --help goes to the Python command too
  }
}

int RunPythonCommand(int argc, char** argv) {
  std::vector<std::string> tried;
  for (const std::string& python : InterpreterCandidates(argc > 0 ? argv[0] : nullptr)) {
    tried.push_back(python);
    if (!CanImportPypto(python)) continue;
    std::vector<char*> args = {const_cast<char*>(python.c_str()), const_cast<char*>("-m"),
                               const_cast<char*>("pypto")};
    for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    std::fflush(nullptr);
    ::execvp(python.c_str(), args.data());
    std::fprintf(stderr, "pypto: error: could not run %s: %s\n", python.c_str(), std::strerror(errno));
    return kExitIoError;
  }
  std::string list;
  for (const std::string& python : tried) list += (list.empty() ? "" : ", ") + python;
  std::fprintf(stderr,
               "pypto: error: `pypto %s` is implemented in the Python package, and no Python interpreter "
               "that can import pypto was found (tried: %s). Install the package (`pip install .` in the "
               "source tree) or set %s to a python that has it.\n",
               argv[1], list.c_str(), kPythonEnvironmentVariable);
  return kExitNotFound;
}

}  // namespace pypto::cli
