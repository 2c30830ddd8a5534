/*
 * tshim.h: a thin C interface over libtorch (TorchScript) for archivekit.
 *
 * Conventions
 *  - Every function that can fail returns an int status (TSHIM_OK = 0) and
 *    fills out-params only on success.
 *  - On failure, if err is not NULL, *err receives a malloc'd, NUL-terminated
 *    message that the caller frees with tshim_free(). No C++ exception ever
 *    crosses this boundary.
 *  - One opaque handle type per object, each with its own free function.
 *    Free functions accept NULL.
 *  - Buffers passed in (input tensors, pixels, labels) are only read during
 *    the call and never retained. Buffers returned (float **out) are malloc'd
 *    by the shim; the caller copies and releases them with tshim_free().
 */
#ifndef TSHIM_H
#define TSHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  TSHIM_OK = 0,
  TSHIM_ERR_ARGUMENT = 1, /* a bad argument: NULL handle, bad shape, bad device string */
  TSHIM_ERR_IO = 2,       /* a file could not be read or written */
  TSHIM_ERR_TORCH = 3,    /* libtorch raised (c10::Error, torch::jit::ErrorReport, ...) */
  TSHIM_ERR_MEMORY = 4,   /* allocation failed (host or device) */
  TSHIM_ERR_UNKNOWN = 5,  /* any other exception */
  TSHIM_WARN_CUDA = 6     /* tshim_init only: the shim works on the CPU, but an NVIDIA
                             driver is present and CUDA could not be enabled; *err says why */
};

/* tshim_module_set_precision: the arithmetic of a module's forward passes. */
enum {
  TSHIM_PREC_FP32 = 0, /* float32, strict: TF32 off for matmuls and convolutions */
  TSHIM_PREC_TF32 = 1, /* float32 tensors; on CUDA matmuls and convolutions in TF32 (on the CPU: fp32) */
  TSHIM_PREC_BF16 = 2, /* weights and inputs bfloat16 */
  TSHIM_PREC_FP16 = 3  /* weights and inputs float16 (CUDA only) */
};

/* tshim_module_optimize: a flag added to level 1 or 2 (see there). */
enum { TSHIM_OPT_CHANNELS_LAST = 4 };

typedef struct tshim_module tshim_module;
typedef struct tshim_trainer tshim_trainer;
typedef struct tshim_batch tshim_batch;

/* Releases memory returned by the shim (error messages, output buffers). */
void tshim_free(void *p);

/* Initialises the shim once per process. When an NVIDIA driver is present and
 * libtorch_cuda sits beside libtorch_cpu, it is loaded so that CUDA devices
 * become usable. Safe to call more than once. Returns TSHIM_OK, or
 * TSHIM_WARN_CUDA with *err set (caller frees) when the driver is present but
 * libtorch_cuda could not be loaded: CPU work still runs. */
int tshim_init(char **err);

/* The libtorch version the shim was built against, e.g. "2.7.1" (the
 * headers' TORCH_VERSION unless the build named one). Static string. */
const char *tshim_torch_version(void);
/* The version of the libtorch library loaded in this process, as its build
 * configuration (at::show_config) records it, e.g. "2.11.0"; *out is
 * malloc'd (caller frees). */
int tshim_loaded_torch_version(char **out, char **err);

/* ---- device facts ---- */
int tshim_cuda_available(int *out);
int tshim_cuda_device_count(int *out);
/* Free and total memory of CUDA device `device`, in bytes. */
int tshim_cuda_mem_info(int device, uint64_t *free_bytes, uint64_t *total_bytes, char **err);
/* Intra-op thread count of libtorch (process-wide: the count of every call
 * that does not ask for its own). */
int tshim_set_num_threads(int n, char **err);
int tshim_get_num_threads(int *out);
/* How forward passes on CUDA share the device (process-wide): 1 (the
 * default), each call on a stream of its own from libtorch's pool, so that
 * calls from several threads overlap; 0, every call on the calling
 * thread's current stream (one stream: calls queue one after another). No
 * effect on the CPU. */
int tshim_set_cuda_stream_pool(int pooled);
int tshim_get_cuda_stream_pool(int *out);
/* Whether TorchScript's graph executor optimises the graphs it runs
 * in inference forward passes (process-wide; applied on the thread of each
 * call; training keeps libtorch's default): 1 (the
 * default, libtorch's own), profiling runs first, then fused and
 * specialised graphs, compiled on the first calls of each input shape; 0,
 * every graph as scripted, with no profiling and no compilation. */
int tshim_set_graph_optimize(int on);
int tshim_get_graph_optimize(int *out);
/* Seeds libtorch's CPU (and CUDA) generators. */
int tshim_manual_seed(uint64_t seed);

/* ---- modules ---- */
/* Loads a TorchScript file onto device "cpu" or "cuda:N". */
int tshim_module_load(const char *path, const char *device, tshim_module **out, char **err);
/* Loads a TorchScript file from the len bytes at data (the bytes of a file
 * tshim_module_load accepts) onto device "cpu" or "cuda:N". The bytes are
 * only read during the call. Bytes that are not a whole TorchScript file
 * (empty, truncated, another format) give TSHIM_ERR_ARGUMENT. */
int tshim_module_load_buffer(const void *data, size_t len, const char *device, tshim_module **out,
                             char **err);
void tshim_module_free(tshim_module *m);
/* Prepares a loaded module for inference only: level 1 freezes it
 * (torch::jit::freeze: parameters and attributes become constants, so the
 * graph executor can fold them); level 2 also runs
 * torch::jit::optimize_for_inference (conv/batch-norm folding, oneDNN
 * layouts where libtorch finds them worth it). Adding
 * TSHIM_OPT_CHANNELS_LAST first converts every 4-d parameter and buffer to
 * the channels-last layout, and forward then passes its input in that
 * layout (the results are the same; CNN convolutions run faster). The
 * module can no longer be trained, averaged or saved afterwards (those
 * calls fail). */
int tshim_module_optimize(tshim_module *m, int level, char **err);
/* Sets the precision of the module's forward passes (TSHIM_PREC_*): bf16
 * and fp16 convert every floating-point parameter and buffer (integer ones
 * stay) and cast each input to that type; logits are always returned as
 * float32, and the softmax (when asked for) is computed in float32 on the
 * CPU. TF32 is a property of the CUDA process, not of a module: each
 * forward pass on CUDA sets libtorch's TF32 switches for matmuls (cuBLAS)
 * and convolutions (cuDNN) to its module's precision (on when tf32, bf16
 * or fp16; off when fp32), so concurrent forward passes of modules with
 * different precisions race; one run uses one precision. On the CPU, tf32
 * is fp32 and fp16 is refused (TSHIM_ERR_ARGUMENT). Set it before
 * tshim_module_optimize; a frozen or trained module is refused. */
int tshim_module_set_precision(tshim_module *m, int precision, char **err);
/* Switches train (1) or eval (0) mode, recursively. */
int tshim_module_set_train(tshim_module *m, int train, char **err);
/* Total bytes of parameters plus buffers. */
int tshim_module_param_bytes(tshim_module *m, int64_t *out, char **err);

/* Parameter elements in all, and those that require gradients (the ones
 * training changes; a base exported with a frozen backbone has only its
 * head's). */
int tshim_module_param_counts(tshim_module *m, int64_t *trainable, int64_t *total, char **err);
/* Forward a float32 NCHW batch (shape[0..3]) in inference mode.
 * softmax != 0 applies softmax over dimension 1. threads > 0 runs the call
 * with that many intra-op threads (the count then stays with the calling OS
 * thread until another is asked for); 0 uses the process-wide count.
 * *out receives rows*cols floats (rows = batch size), malloc'd. */
int tshim_module_forward(tshim_module *m, const float *input, const int64_t *shape, int ndim,
                         int softmax, int threads, float **out, int64_t *rows, int64_t *cols,
                         char **err);
/* Whether the module has a method called name (TorchScript methods: forward
 * and those a scripted module exports with @torch.jit.export). *out is 1 or 0.
 * A frozen module (tshim_module_optimize) keeps forward alone. */
int tshim_module_has_method(tshim_module *m, const char *name, int *out, char **err);
/* Runs method name on a float32 tensor of ndim (1 to 8) dimensions, in the
 * module's current mode (tshim_module_set_train) without gradients, like
 * tshim_module_forward (which is this for "forward" on an NCHW batch, plus
 * the channels-last input of an optimised module). The method must return a
 * 2-d [batch, n] tensor (or a tuple/list/dict holding one, as forward may)
 * with batch = shape[0]. softmax and threads as for tshim_module_forward. */
int tshim_module_run_method(tshim_module *m, const char *name, const float *input, const int64_t *shape,
                            int ndim, int softmax, int threads, float **out, int64_t *rows, int64_t *cols,
                            char **err);
/* Runs method name once on the input (as tshim_module_run_method: ndim 1
 * to 8, the module's current mode) with autograd recording and sets *out to
 * the number of elements of the parameters requiring gradients (those
 * training changes) that its output depends on: 0 when training cannot
 * change what the method computes from this input; the trainable count of
 * tshim_module_param_counts when every trainable parameter takes part.
 * Gradients are computed apart (torch::autograd::grad): no parameter's
 * .grad changes. The output itself is dropped. */
int tshim_module_method_trainable(tshim_module *m, const char *name, const float *input, const int64_t *shape,
                                  int ndim, int64_t *out, char **err);
/* Saves the module as TorchScript to path (written directly; callers rename). */
int tshim_module_save(tshim_module *m, const char *path, char **err);
/* A deep copy of m in memory: its own parameters (requiring gradients where
 * m's do, with no gradient), buffers and training mode, on m's device; m is
 * not changed. A frozen (inference-only) module is refused. *out is freed with
 * tshim_module_free. */
int tshim_module_clone(tshim_module *m, tshim_module **out, char **err);
/* Element-wise mean of parameters and floating-point buffers of n modules
 * with identical names and shapes. Integer buffers are taken from the first.
 * *out is a new module (a deep copy of mods[0] holding the mean). */
int tshim_average(tshim_module *const *mods, int n, tshim_module **out, char **err);

/* ---- preprocessing ---- */
/* Resizes an 8-bit HWC image (c = 1 or 3, row stride w*c) to out_h x out_w by
 * bilinear interpolation with antialiasing, rounds and clamps to 8 bits (as
 * torchvision does for uint8 images), scales to [0,1] and normalises per
 * channel with mean/std. A grey image is replicated to 3 channels.
 * out must hold 3*out_h*out_w floats (CHW). Runs on one intra-op thread
 * (callers preprocess several pages at once). */
int tshim_preprocess(const uint8_t *hwc, int64_t h, int64_t w, int64_t c, int64_t out_h,
                     int64_t out_w, const float *mean3, const float *std3, float *out,
                     char **err);

/* ---- device-side preprocessing ----
 * A batch is n pages resized to size x size on a device: the 8-bit page is
 * uploaded as it is (on CUDA through pinned host memory, asynchronously on
 * a copy stream of its own that the compute stream then waits for),
 * resized there with tshim_preprocess's arithmetic (antialiased bilinear,
 * rounded and clamped to 8 bits) and kept as float values 0..255, so that
 * every model of that size normalises the same resized pages with its own
 * mean and std (tshim_module_forward_batch). On the CPU the same code runs
 * on CPU tensors. Calls on different pages of one batch may run at once;
 * the batch must not be freed while any runs. */
int tshim_batch_new(const char *device, int64_t n, int64_t size, tshim_batch **out, char **err);
void tshim_batch_free(tshim_batch *b);
/* Uploads page i (0 <= i < n; 8-bit HWC, c = 1 or 3, row stride w*c) and
 * resizes it into the batch. The pixels are only read during the call. */
int tshim_batch_set(tshim_batch *b, int64_t i, const uint8_t *hwc, int64_t h, int64_t w, int64_t c, char **err);
/* Uploads page i (as tshim_batch_set) once and resizes it on the device into
 * page i of each of the nb batches (all on one device; e.g. one per input
 * size): the host sends the decoded page, not one resized page per size. */
int tshim_batch_set_all(tshim_batch **bs, int64_t nb, int64_t i, const uint8_t *hwc, int64_t h, int64_t w, int64_t c,
                        char **err);
/* Page i of the batch normalised with mean3/std3, as tshim_preprocess
 * gives it: 3*size*size floats (CHW) into out. */
int tshim_batch_read(tshim_batch *b, int64_t i, const float *mean3, const float *std3, float *out, char **err);
/* Forwards the first n pages of b (on the module's device, of any size the
 * module takes) normalised with mean3/std3 on the device, as
 * tshim_module_forward does a float batch. */
int tshim_module_forward_batch(tshim_module *m, tshim_batch *b, int64_t n, const float *mean3, const float *std3,
                               int softmax, int threads, float **out, int64_t *rows, int64_t *cols, char **err);

/* ---- training ---- */
/* AdamW over all parameters of m (which must outlive the trainer). */
int tshim_trainer_new(tshim_module *m, double lr, double weight_decay, double beta1, double beta2,
                      double eps, tshim_trainer **out, char **err);
void tshim_trainer_free(tshim_trainer *t);
int tshim_trainer_set_lr(tshim_trainer *t, double lr, char **err);
int tshim_trainer_zero_grad(tshim_trainer *t, char **err);
/* One optimisation step: zero gradients, forward in train mode, softmax
 * cross-entropy against int64 labels, backward, AdamW step.
 * Writes the mean loss and the logits (rows*cols, malloc'd). */
int tshim_trainer_step(tshim_trainer *t, const float *input, const int64_t *shape, int ndim,
                       const int64_t *labels, float *loss, float **logits, int64_t *rows,
                       int64_t *cols, char **err);
/* tshim_trainer_step through method name instead of forward, on a float32
 * input of ndim (1 to 8) dimensions whose first is the batch: e.g. the head
 * of a base with a frozen backbone on its cached features. */
int tshim_trainer_step_method(tshim_trainer *t, const char *name, const float *input, const int64_t *shape,
                              int ndim, const int64_t *labels, float *loss, float **logits, int64_t *rows,
                              int64_t *cols, char **err);

#ifdef __cplusplus
}
#endif
#endif /* TSHIM_H */
