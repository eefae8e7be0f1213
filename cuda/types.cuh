// Curve and field types of the CUDA backend: BLS12-381 from sppark (device) and blst (host).
// Include order matters: jacobian_t before xyzz_t (for the xyzz -> jacobian conversion), and
// the typedefs before msm/pippenger.cuh, which instantiates its kernels for them.
#ifndef CUZK_CUDA_TYPES_CUH
#define CUZK_CUDA_TYPES_CUH

#include <cuda.h>
#include <cstdint>
#include <cstring>

#include <ff/bls12-381.hpp>
#include <ff/bls12-381-fp2.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;    // results: the memory layout of blst_p1
typedef xyzz_t<fp_t> bucket_t;       // accumulators
typedef bucket_t::affine_t affine_t; // bases: the memory layout of blst_p1_affine
typedef fr_t scalar_t;

typedef jacobian_t<fp2_t> point2_t;    // G2 results: blst_p2
typedef xyzz_t<fp2_t> bucket2_t;
typedef bucket2_t::affine_t affine2_t; // G2 bases: blst_p2_affine

#include <msm/pippenger.cuh>
#include <ntt/ntt.cuh>

using affine_h = affine_t::mem_t;
using bucket_h = bucket_t::mem_t;
using affine2_h = affine2_t::mem_t;
using bucket2_h = bucket2_t::mem_t;

static_assert(sizeof(fr_t) == 32, "fr_t is 32 bytes (blst_fr)");
static_assert(sizeof(affine_t) == 96, "affine_t is blst_p1_affine");
static_assert(sizeof(point_t) == 144, "point_t is blst_p1");
static_assert(sizeof(bucket_t) == 192, "bucket_t is xyzz");
#ifndef __CUDA_ARCH__ // on the device an Fp2 element is spread over two threads
static_assert(sizeof(affine2_t) == 192, "affine2_t is blst_p2_affine");
static_assert(sizeof(point2_t) == 288, "point2_t is blst_p2");
static_assert(sizeof(bucket2_t) == 384, "bucket2_t is xyzz over Fp2");
#endif
static_assert(sizeof(affine2_h) == 192, "device memory layout of a G2 base");

#endif
