// Element types and shapes as every layer names them in its checks and errors: one comparison
// of dtypes, one text for a dtype and for a shape, and one element size.
#pragma once

#include <gdap/gdap.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gdap {

// True when code, bits and lanes agree.
bool same_dtype(gdap_dtype a, gdap_dtype b);

// NumPy's name of a dtype ("float64", "int32", "bfloat16", "complex128", "bool"; "float32x4" for
// 4 lanes), or its raw codes "(code 9, 64 bits, 1 lanes)" where it has none.
std::string dtype_text(gdap_dtype d);

// Bytes per element of a dtype gdap can hold: a code of gdap.h's enum at one of its DLPack widths
// (bool is 8 bits), >= 1 lane.
// Throws GDAP_ERR_UNSUPPORTED naming the dtype otherwise.
int64_t element_size(gdap_dtype dtype);

// "3 x 4" ("0-d" for no dimension).
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace gdap
