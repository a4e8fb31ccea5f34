#include <gtest/gtest.h>

#include "fixpoint/npy.h"

namespace fixpoint {
namespace {

TEST(Npy, RoundTripsEveryDtype) {
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::Int8, DType::Int16, DType::Int32,
                   DType::Int64, DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64, DType::Bool}) {
    Tensor t(dt, {2, 3});
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dt == DType::Bool ? i % 2 : static_cast<double>(i + 1));
    Tensor back = parse_npy(serialize_npy(t), "mem");
    EXPECT_TRUE(bit_equal(t, back)) << dtype_name(dt);
  }
}

TEST(Npy, ScalarAndOneDimShapes) {
  Tensor s = Tensor::scalar_f32(2.5f);
  EXPECT_TRUE(bit_equal(s, parse_npy(serialize_npy(s), "mem")));
  Tensor v = Tensor::from_f32({1, 2, 3}, {3});
  std::string bytes = serialize_npy(v);
  EXPECT_NE(bytes.find("'shape': (3,)"), std::string::npos);
  EXPECT_EQ((bytes.find('\n') + 1) % 64, 0u);  // header padded to 64 bytes like numpy
}

TEST(Npy, ReadsNumpyWrittenBytes) {
  // np.save of np.array([[1, 2]], dtype='<i2')
  std::string h = "{'descr': '<i2', 'fortran_order': False, 'shape': (1, 2), }";
  h.append(128 - 10 - h.size() - 1, ' ');
  h += '\n';
  std::string b = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(h.size()) + '\0' + h;
  b += std::string("\x01\x00\x02\x00", 4);
  Tensor t = parse_npy(b, "mem");
  EXPECT_EQ(t.dtype(), DType::Int16);
  EXPECT_EQ(t.shape(), (Shape{1, 2}));
  EXPECT_EQ(t.data<int16_t>()[1], 2);
}

TEST(Npy, RejectsBadFilesWithTheFileName) {
  Tensor t = Tensor::from_f32({1, 2, 3, 4}, {4});
  std::string good = serialize_npy(t);
  auto msg = [](const std::string& bytes) {
    try {
      parse_npy(bytes, "'in.npy'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg(good.substr(0, good.size() - 1)).find("truncated"), std::string::npos);
  EXPECT_NE(msg("garbage").find("in.npy"), std::string::npos);
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_NE(msg(fortran).find("Fortran"), std::string::npos);
  std::string obj = good;
  obj.replace(obj.find("<f4"), 3, "|O8");
  EXPECT_NE(msg(obj).find("dtype"), std::string::npos);
}

}  // namespace
}  // namespace fixpoint
