#include <brasa/tensor/scalar_type.h>

namespace brasa {

size_t elementSize(ScalarType t) {
  switch (t) {
    case kByte:
    case kChar:
    case kBool:
      return 1;
    case kShort:
    case kHalf:
    case kBFloat16:
      return 2;
    case kInt:
    case kFloat:
      return 4;
    case kLong:
    case kDouble:
    case kComplexFloat:
      return 8;
    case kComplexDouble:
      return 16;
    default:
      BRASA_ERROR("elementSize: undefined dtype");
  }
}

const char* toString(ScalarType t) {
  static const char* names[] = {"Byte",         "Char",          "Short",    "Int",  "Long",
                                "Half",         "Float",         "Double",   "Bool", "BFloat16",
                                "ComplexFloat", "ComplexDouble", "Undefined"};
  return names[static_cast<int>(t)];
}

const char* python_name(ScalarType t) {
  static const char* names[] = {
      "torch.uint8",     "torch.int8",       "torch.int16",   "torch.int32", "torch.int64",
      "torch.float16",   "torch.float32",    "torch.float64", "torch.bool",  "torch.bfloat16",
      "torch.complex64", "torch.complex128", "undefined"};
  return names[static_cast<int>(t)];
}

ScalarType toComplexType(ScalarType t) {
  if (isComplexType(t)) return t;
  if (t == kDouble) return kComplexDouble;
  if (isFloatingType(t) || isIntegralType(t, true)) return kComplexFloat;
  BRASA_ERROR("toComplexType: no complex type for dtype ", toString(t));
}

ScalarType promoteTypes(ScalarType a, ScalarType b) {
  BRASA_CHECK(a != ScalarType::Undefined && b != ScalarType::Undefined,
              "promote_types: undefined dtype");
  if (a == b) return a;
  // A complex type with parts wide enough for both (complex64 with float64
  // is complex128, as in PyTorch).
  if (isComplexType(a) || isComplexType(b))
    return toComplexType(promoteTypes(toRealValueType(a), toRealValueType(b)));
  if (a == kBool) return b;
  if (b == kBool) return a;
  bool fa = isFloatingType(a), fb = isFloatingType(b);
  if (fa && fb) {
    if ((a == kHalf && b == kBFloat16) || (a == kBFloat16 && b == kHalf)) return kFloat;
    return elementSize(a) >= elementSize(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  // Both integral. uint8 with int8 needs int16 to hold both ranges.
  if ((a == kByte && b == kChar) || (a == kChar && b == kByte)) return kShort;
  return elementSize(a) >= elementSize(b) ? a : b;
}

}  // namespace brasa
