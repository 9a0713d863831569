// ipilab/common/output.h — every file and stream ipilab writes goes through this layer.
//
// Contract:
//   * A file output is written to a temporary file beside its target ("." NAME ".XXXXXX" in the
//     same folder, so the final rename(2) is atomic) and renamed over the target only when every
//     byte, the fsync(2) and the close(2) succeeded. On any failure the temporary file is removed
//     and an InputError names the output and the reason (strerror: "No space left on device").
//     A target that is a character device or a pipe (/dev/null, /dev/stdout, a FIFO) is written
//     straight through, never replaced.
//   * Every temporary file and folder is registered while it exists and removed on SIGINT/SIGTERM
//     (install_cleanup(): the handler unlinks them, then dies of the signal as before) and at exit,
//     so an interrupted command leaves complete outputs or none, never debris.
//   * Standard output is checked (install_checked_stdout()): a failed write, flush or close of
//     stdout is reported as "cannot write standard output: <reason>" (exit 2).
//   * Output paths are checked before any work (check_outputs()): the folder exists and is
//     writable, the path is not a folder, no two outputs share a file, no output is an input.
//   * gnuplot is run by one runner with one error policy (run_gnuplot()): it writes into the
//     temporary file of an AtomicFile, its exit status is checked, and the image's validity (PNG
//     IEND chunk, SVG end tag, PDF %%EOF) is checked before the rename.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ipilab {

namespace output {

// ---------------------------------------------------------------------------------------------
// Cleanup of temporary paths.

/// Installs the SIGINT/SIGTERM handlers and the exit hook that remove registered temporary paths.
/// Idempotent. A handler installed later (a command that stops gracefully on SIGINT) takes over;
/// restore the previous one with sigaction when done.
void install_cleanup();

/// A path removed when this object dies, on SIGINT/SIGTERM and at exit, unless released.
class TrackedPath {
 public:
  TrackedPath() = default;
  /// `folder`: removed with rmdir(2) after the files (its files must be tracked too).
  explicit TrackedPath(const std::filesystem::path& path, bool folder = false);
  ~TrackedPath();
  TrackedPath(TrackedPath&& o) noexcept;
  TrackedPath& operator=(TrackedPath&& o) noexcept;
  TrackedPath(const TrackedPath&) = delete;
  TrackedPath& operator=(const TrackedPath&) = delete;
  /// Stops tracking without removing (the path was renamed into place).
  void release() noexcept;
  /// Removes the path now and stops tracking.
  void remove() noexcept;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int slot_ = -1;
  bool folder_ = false;
};

/// How many temporary paths are registered now (tests).
std::size_t tracked_count();

// ---------------------------------------------------------------------------------------------
// Files.

/// One output file, all or nothing (see the file comment).
class AtomicFile {
 public:
  /// `option` names the output in errors ("--json"); empty: the path is the place. Throws
  /// InputError when the folder is missing or not writable or the path is a folder.
  explicit AtomicFile(std::filesystem::path target, std::string option = {});
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Buffered, checked writes: the first failure is kept and thrown by write() or commit().
  void write(std::string_view bytes);
  /// A stream over write(); its failures are thrown by commit().
  std::ostream& stream();
  /// The file to hand to another program (gnuplot's `set output`); the target itself when written
  /// straight through.
  const std::filesystem::path& temp_path() const { return temp_.path().empty() ? target_ : temp_.path(); }
  const std::filesystem::path& target() const { return target_; }
  /// Whether the target is a device or a pipe written straight through.
  bool straight_through() const { return temp_.path().empty(); }
  /// Flushes, fsyncs and closes (every write error surfaces here); throws InputError on failure
  /// (the temporary file is then removed). For an image gnuplot wrote, after check_image().
  void prepare();
  /// prepare() if not done, then renames over the target. Throws InputError on any failure (the
  /// temporary file is then removed).
  void commit();

 private:
  class Buf;
  [[noreturn]] void fail(const std::string& what, int err);
  void flush_buffer();
  std::filesystem::path target_;
  std::string option_;
  TrackedPath temp_;
  int fd_ = -1;
  int error_ = 0;
  std::string pending_;
  std::unique_ptr<Buf> buf_;
  std::unique_ptr<std::ostream> os_;
  bool prepared_ = false;
  bool committed_ = false;
};

/// Writes `content` to `path` through an AtomicFile and commits it.
void write_file(const std::filesystem::path& path, std::string_view content, const std::string& option = {});

/// Several outputs of one command committed together at the end: each is written to its temporary
/// file first; commit_all() renames them all only after every one was written completely.
class OutputSet {
 public:
  AtomicFile& add(const std::filesystem::path& target, const std::string& option);
  /// add() + write() in one step.
  void write(const std::filesystem::path& target, const std::string& option, std::string_view content);
  /// Writes out and closes every file (all write errors surface here), renaming none.
  void prepare_all();
  void commit_all();
  bool empty() const { return files_.empty(); }

 private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
};

// ---------------------------------------------------------------------------------------------
// Checks before any work.

struct OutputRequest {
  std::string option;         ///< "--json"
  std::string path;           ///< as given; empty = not requested
  bool allow_stdout = false;  ///< "-" means standard output
};
struct InputFile {
  std::string option;  ///< "scenario", "--profile"
  std::string path;    ///< as resolved; empty = none
};

/// Checks every requested output: the folder exists and is writable, the path is not a folder,
/// "-" only where allowed, no two outputs name one file (also through links) and no output is one
/// of `inputs`. InputError(option, reason naming the path) for the first problem.
void check_outputs(const std::vector<OutputRequest>& outputs, const std::vector<InputFile>& inputs = {});

// ---------------------------------------------------------------------------------------------
// Standard output.

/// Routes std::cout and C's stdout through one checked writer on file descriptor 1 that keeps the
/// first write error. Call once, first thing in main().
void install_checked_stdout();
/// Flushes standard output; "" when every write succeeded, else "cannot write standard output:
/// <reason>".
std::string finish_stdout();

// ---------------------------------------------------------------------------------------------
// Temporary folder.

/// A private folder in $TMPDIR (default /tmp), removed with its files when it dies.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "ipilab");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return dir_.path(); }
  /// The path of `name` inside, tracked for removal (call before creating the file).
  std::filesystem::path file(const std::string& name);
  /// file(name) written with `content`.
  std::filesystem::path write(const std::string& name, std::string_view content);

 private:
  TrackedPath dir_;
  std::vector<TrackedPath> files_;
};

// ---------------------------------------------------------------------------------------------
// Images drawn by gnuplot.

enum class ImageFormat { Png, Svg, Pdf };

/// The format an image path's extension names (any case), among `allowed`; InputError(option,
/// "'FILE' must end in .png or .svg ...") otherwise.
ImageFormat image_format_of(const std::filesystem::path& path, std::string_view option,
                            std::vector<ImageFormat> allowed = {ImageFormat::Png, ImageFormat::Svg});
/// The extension of `f` (".png").
const char* extension(ImageFormat f);

/// Whether a gnuplot executable is on PATH.
bool gnuplot_available();
/// UnavailableError naming `what` ("--plot") when gnuplot is not on PATH.
void require_gnuplot(std::string_view what = "--plot");

/// Runs gnuplot on `script` (written into `dir`), stdout discarded, stderr kept. gnuplot missing:
/// UnavailableError; gnuplot failing: std::runtime_error with its message (a script ipilab wrote
/// that gnuplot refuses is ipilab's bug).
void run_gnuplot(TempDir& dir, std::string_view script);

/// Checks that `path` holds a complete image of format `f` (PNG: signature and final IEND chunk;
/// SVG: ends with </svg>; PDF: %%EOF near the end); InputError(place, reason) otherwise (a full
/// disk makes gnuplot leave a truncated image and still exit 0: the reason then says the device
/// is full).
void check_image(const std::filesystem::path& path, ImageFormat f, const std::string& place);

/// Renders one image: `script_for(image_path)` returns the script that draws into image_path;
/// gnuplot draws into `out`'s temporary file, the image is checked. The caller commits `out`.
template <typename ScriptFn>
void render(AtomicFile& out, ImageFormat f, TempDir& dir, const std::string& option, ScriptFn&& script_for) {
  run_gnuplot(dir, script_for(out.temp_path().string()));
  if (!out.straight_through()) check_image(out.temp_path(), f, option + " '" + out.target().string() + "'");
}

// ---------------------------------------------------------------------------------------------
// gnuplot quoting and the palette.

/// `s` as one CSV field (RFC 4180: quoted when it holds a comma, a quote or a line break).
std::string csv_field(std::string_view s);

/// A gnuplot single-quoted string ('' stands for one quote; no escapes; a newline becomes a space).
std::string gp_quote(std::string_view s);
/// The inside of a gnuplot double-quoted string (backslash before " and \; newline -> space).
std::string gp_double_quoted_body(std::string_view s);

/// The series palette: distinct colours (the matplotlib "tab10" hues, then black and light blue);
/// with a dash type and a point type per series so identical series drawn on top of each other
/// stay distinguishable.
inline constexpr std::array<const char*, 12> kPalette = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                         "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                                         "#7f7f7f", "#bcbd22", "#000000", "#aec7e8"};
inline const char* series_colour(std::size_t i) { return kPalette[i % kPalette.size()]; }
/// gnuplot dash types 1..5 (solid, dashed, dotted, dash-dot, dash-dot-dot).
inline int series_dash(std::size_t i) { return static_cast<int>(i % 5) + 1; }
/// gnuplot point types with distinct shapes (circle, square, triangles, diamond, ...).
inline int series_point(std::size_t i) {
  constexpr int kPoints[] = {7, 5, 9, 11, 13, 15, 6, 4, 8, 10};
  return kPoints[i % std::size(kPoints)];
}

}  // namespace output

/// Writes `content` to `path` atomically (output::write_file; kept under this name for callers).
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace ipilab
