//===- Driver.cpp - Writing printed files, the --show-map view
//-------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/SourceInfo.h"
#include "gnnc/Target/Target.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <map>

#include <sys/ioctl.h>
#include <unistd.h>

using namespace mlir;
using namespace gnnc::target;

KernelTarget::~KernelTarget() = default;

LogicalResult gnnc::target::writeFilesAtomically(
    llvm::StringRef dir,
    const std::vector<std::pair<std::string, std::string>> &files,
    std::string &error) {
  namespace fs = llvm::sys::fs;
  bool created = false;
  if (!fs::is_directory(dir)) {
    if (fs::exists(dir)) {
      error = dir.str() + ": not a directory";
      return failure();
    }
    if (std::error_code ec = fs::create_directories(dir)) {
      error = "cannot create directory '" + dir.str() + "': " + ec.message();
      return failure();
    }
    created = true;
  }
  std::vector<fs::TempFile> temps;
  std::vector<std::string> kept;
  auto undo = [&]() {
    for (fs::TempFile &t : temps)
      llvm::consumeError(t.discard());
    for (const std::string &path : kept)
      fs::remove(path);
    if (created)
      fs::remove(dir);
  };
  for (const auto &[name, contents] : files) {
    llvm::SmallString<256> model(dir);
    llvm::sys::path::append(model, name + "-%%%%%%.tmp");
    llvm::Expected<fs::TempFile> temp = fs::TempFile::create(model);
    if (!temp) {
      error = "cannot write '" + name + "' in '" + dir.str() +
              "': " + llvm::toString(temp.takeError());
      undo();
      return failure();
    }
    temps.push_back(std::move(*temp));
    llvm::raw_fd_ostream os(temps.back().FD, /*shouldClose=*/false);
    os << contents;
    os.flush();
    if (os.has_error()) {
      error = "cannot write '" + name + "' in '" + dir.str() +
              "': " + os.error().message();
      os.clear_error();
      undo();
      return failure();
    }
  }
  // Everything is written: move the files into place.
  for (size_t i = 0; i < files.size(); ++i) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, files[i].first);
    if (llvm::Error e = temps[i].keep(path)) {
      error = "cannot create '" + std::string(path) +
              "': " + llvm::toString(std::move(e));
      temps.erase(temps.begin(), temps.begin() + i + 1);
      undo();
      return failure();
    }
    kept.push_back(std::string(path));
  }
  return success();
}

LogicalResult gnnc::target::writeFileAtomically(llvm::StringRef path,
                                                llvm::StringRef contents,
                                                std::string &error) {
  namespace fs = llvm::sys::fs;
  if (fs::is_directory(path)) {
    error = "is a directory";
    return failure();
  }
  llvm::Expected<fs::TempFile> temp =
      fs::TempFile::create(path + "-%%%%%%.tmp");
  if (!temp) {
    error = llvm::toString(temp.takeError());
    return failure();
  }
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    os << contents;
    os.flush();
    if (os.has_error()) {
      error = os.error().message();
      os.clear_error();
      llvm::consumeError(temp->discard());
      return failure();
    }
  }
  if (llvm::Error e = temp->keep(path)) {
    error = llvm::toString(std::move(e));
    llvm::consumeError(temp->discard());
    return failure();
  }
  return success();
}

unsigned gnnc::target::defaultTerminalWidth() {
  if (const char *columns = std::getenv("COLUMNS")) {
    char *end = nullptr;
    long value = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && value > 0 && value < 100000)
      return static_cast<unsigned>(value);
  }
  if (::isatty(STDOUT_FILENO)) {
    struct winsize size{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
      return size.ws_col;
  }
  return 160;
}

int gnnc::target::runCppDriver(ModuleOp module, const DriverOptions &options,
                               llvm::raw_ostream &os, llvm::raw_ostream &errs) {
  std::unique_ptr<KernelTarget> target = createCppTarget();
  return runTargetDriver(*target, module, options, os, errs);
}

int gnnc::target::runTargetDriver(KernelTarget &target, ModuleOp module,
                                  const DriverOptions &options,
                                  llvm::raw_ostream &os,
                                  llvm::raw_ostream &errs) {
  std::vector<GeneratedFile> files;
  if (failed(target.printModule(module, options.target, files)))
    return 1;
  LineMap map = buildLineMap(files);
  if (options.showMap) {
    SourceFiles sources(options.target.sourceMgr);
    std::map<std::string, std::string> generated;
    for (const GeneratedFile &f : files)
      generated[f.name] = f.contents;
    map.printSideBySide(sources, generated, options.width, os);
    return 0;
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const GeneratedFile &f : files)
    out.emplace_back(f.name, f.contents);
  std::string json;
  llvm::raw_string_ostream js(json);
  map.printJSON(js);
  js << "\n";
  js.flush();
  out.emplace_back(options.target.stem + ".gnnmap.json", json);
  std::string error;
  if (failed(writeFilesAtomically(options.outputDir, out, error))) {
    llvm::WithColor::error(errs, options.toolName) << error << "\n";
    return 1;
  }
  return 0;
}
