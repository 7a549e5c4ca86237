/*
 * gdap_cuda.h: gdap communicators over NCCL.
 *
 * NCCL and CUDA handles cross the ABI as void* (an ncclComm_t and a cudaStream_t are pointers), so
 * this header needs neither nccl.h nor the CUDA headers.
 */
#ifndef GDAP_CUDA_H
#define GDAP_CUDA_H

#include <gdap/gdap.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Wraps an NCCL communicator (an ncclComm_t) and the CUDA stream (a cudaStream_t, NULL for the
 * legacy default stream) its data movement is queued on. Not collective. Device arrays only, on
 * the communicator's device. Data moves with grouped ncclSend/ncclRecv, packed by copy kernels
 * (runs that are contiguous go unpacked); the small agreement step of collective calls runs on a
 * stream of gdap's own and waits for itself only. Both handles are borrowed: they must outlive
 * the gdap communicator. GDAP_ERR_UNSUPPORTED when gdap was built without NCCL.
 * On success `*out` is a new communicator the caller destroys with gdap_comm_destroy.
 */
GDAP_API gdap_status gdap_comm_from_nccl(gdap_comm** out, void* nccl_comm, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GDAP_CUDA_H */
