#pragma once
// PyTorch's own file format (torch.save / torch.load in Python, libtorch's
// torch::pickle_save / pickle_load): a zip archive holding a pickle of the
// value and one record per storage. Brasa reads and writes tensors, lists
// and tuples of tensors, dicts of tensors (state_dicts), ints, floats, bools,
// strings and None.
//
// Reading runs a restricted unpickler: it executes nothing. It knows the
// opcodes of those values and calls only the functions that rebuild them
// (collections.OrderedDict, torch._utils._rebuild_tensor_v2 and
// _rebuild_parameter, the torch.*Storage types); any other global is refused
// with an error naming it.
#include <brasa/util/ivalue.h>

#include <string>
#include <string_view>
#include <vector>

namespace brasa {

// The .pt bytes of `value` (torch.load in Python reads them).
std::vector<char> pickle_save(const IValue& value);
// The value in .pt bytes.
IValue pickle_load(const std::vector<char>& data);

namespace serialize {
// `what` names the bytes in errors (a path).
IValue load_pt(std::string_view bytes, const std::string& what);
// Writes atomically.
void save_pt(const std::string& path, const IValue& value);
// Reads a whole file (an error naming the path when it cannot).
std::string read_whole_file(const std::string& path);
}  // namespace serialize

}  // namespace brasa
