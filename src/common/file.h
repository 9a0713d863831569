// ipilab/common/file.h — reading inputs with clear errors, writing outputs all-or-nothing, and
// finding the data shipped with ipilab (profiles/, scenarios/, data/).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace ipilab {

/// Reads a whole file. Throws InputError(path, reason) if it is missing, unreadable or a directory.
std::string read_text_file(const std::filesystem::path& path);

/// Writes `content` to `path` atomically: a temporary file in the same folder, fsync'd, then renamed
/// over `path`. On any failure nothing is left at `path` (an older file there stays as it was).
/// A `path` that is a character device or a pipe (/dev/null, /dev/stdout, a FIFO) is written
/// straight through instead, never replaced; a folder or any other special file is an InputError.
/// Throws InputError(path, reason) when the folder does not exist or is not writable.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// The folder holding ipilab's shipped data (profiles/, scenarios/, data/): <exe>/../share/ipilab
/// when installed, else $IPILAB_DATA (or $IPILAB_DATA_DIR), else the source tree the binary was
/// built from. The order and the record of where it looked: common/data_lookup.h.
std::filesystem::path data_dir();

}  // namespace ipilab
