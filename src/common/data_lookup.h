// ipilab/common/data_lookup.h — where ipilab finds the data it ships (scenarios/, profiles/,
// profiles/hosts/, data/traces/), and a record of where it looked, for `ipilab list`.
//
// The places, in order; the first that holds a scenarios/ or profiles/ folder is used:
//   1. beside the binary: <folder of the executable>/../share/ipilab (the GNU install layout; the
//      executable is read from /proc/self/exe, so a symlink to it does not move it);
//   2. $IPILAB_DATA (then $IPILAB_DATA_DIR, its older name): a copied binary, or your own data;
//   3. the source tree the binary was built from, named by the file ipilab-source-tree beside a
//      build's binary (a build that was not installed; nothing is compiled in).
// When none holds data, data_dir() is the first place that was named (so that messages name it)
// and `ipilab list` shows why each was passed over.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ipilab {

/// What the lookup starts from. Empty fields are places that do not apply (no executable path, an
/// unset variable, a binary built without a source tree).
struct DataLookupInputs {
  std::filesystem::path exe;            ///< the running executable
  std::string bin_to_data = "../share/ipilab";  ///< data folder relative to the executable's folder
  std::string env_data;                 ///< $IPILAB_DATA
  std::string env_data_dir;             ///< $IPILAB_DATA_DIR
  std::filesystem::path source_tree;    ///< from <exe folder>/ipilab-source-tree
};

/// One place looked at.
struct DataPlace {
  std::string where;                    ///< "beside the binary", "$IPILAB_DATA", ..., "source tree"
  std::filesystem::path path;           ///< empty when the place does not apply
  bool has_data = false;                ///< holds scenarios/ or profiles/
  std::string status;                   ///< "used", "not set", "no such folder", "no scenarios/ or profiles/ in it",
                                        ///< "has data, not used: an earlier place comes first"
};

struct DataLookup {
  std::vector<DataPlace> places;        ///< every place, in lookup order
  int used = -1;                        ///< index into places, -1 when none holds data
  std::filesystem::path dir;            ///< what data_dir() returns
};

/// The lookup over `in` (reads only the file system).
DataLookup locate_data(const DataLookupInputs& in);

/// This process's inputs: /proc/self/exe, the environment, the compiled-in source tree.
DataLookupInputs process_data_inputs();

/// locate_data(process_data_inputs()); data_dir() (common/file.h) is its `dir`.
DataLookup locate_data();

}  // namespace ipilab
