// Marks functions that the CUDA backend compiles for the device and every backend runs on the
// host, so that per-element arithmetic has one definition.
#pragma once

#if defined(__CUDACC__)
#define TR_HOST_DEVICE __host__ __device__
#else
#define TR_HOST_DEVICE
#endif
