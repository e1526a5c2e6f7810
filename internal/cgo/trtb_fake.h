/*
 * trtb_fake.h: the stand-in TensorRT compiled into every binary (trtfake/, trtfake10.cpp,
 * trtfake11.cpp): a TensorRT of major 10 or 11 with no GPU, which the TensorRT shim builds over
 * as over a real one once it is installed in place of the loaded libraries.
 *
 * Threading and state: as trtb_library_install. The stand-in and its CUDA driver stay
 * installed for the life of the process, and no other TensorRT can be loaded in it then.
 */
#ifndef TRTB_FAKE_H
#define TRTB_FAKE_H

#include <stdint.h>

#include "trtb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* trtb_fake_install installs the stand-in TensorRT of major (10 or 11), with its ONNX parser,
 * its plugins and a CUDA driver of 8 "TensorRT stand-in GPU"s, as this process's libraries
 * (trtb_loader.h), for the TensorRT backend to build with. settings is the stand-in's settings
 * text ("key=value;key=value", trtfake/settings.hpp; NULL or "" for the defaults).
 * TRTB_ERR_INVALID_ARGUMENT for a major it does not play or bad settings (the message names the
 * setting); TRTB_ERR_STATE when TensorRT libraries are installed already. Once per process. */
int32_t trtb_fake_install(int32_t major, const char *settings, trtb_status *status);


#ifdef __cplusplus
}
#endif

#endif /* TRTB_FAKE_H */
