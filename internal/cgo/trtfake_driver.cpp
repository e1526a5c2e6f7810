// trtfake_driver.cpp: the stand-in CUDA driver (trtfake/driver.cpp) of the stand-in TensorRT
// installed in the binary, compiled once for both majors.

#include "trtfake/driver.cpp"
