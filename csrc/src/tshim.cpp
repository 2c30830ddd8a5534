// tshim.cpp: the libtorch shim behind csrc/include/tshim.h.
//
// Every entry point wraps its body in guard(), which turns any C++ exception
// into a status code and a malloc'd message. Nothing here owns policy: it
// only does what needs libtorch.
#include "tshim.h"

#include <ATen/Version.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/script.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <vector>

// The version of the libtorch headers built against, unless the build
// names one.
#ifndef TSHIM_TORCH_VERSION
#define TSHIM_TORCH_VERSION TORCH_VERSION
#endif

struct tshim_module {
  torch::jit::script::Module mod;
  torch::Device device{torch::kCPU};
  // Set once a trainer exists or a method ran with autograd
  // (tshim_module_method_trainable): the TorchScript executor may then have
  // built differentiable graphs that refuse inference-mode tensors, so
  // forward falls back to no-grad mode.
  bool trained = false;
  // Set by tshim_module_optimize: the module is frozen for inference only.
  bool frozen = false;
  // Set by tshim_module_optimize with TSHIM_OPT_CHANNELS_LAST: the 4-d
  // weights are channels-last and forward hands the input over in that
  // layout too, so oneDNN convolutions need no reordering.
  bool channels_last = false;
  // The arithmetic of forward passes (TSHIM_PREC_*, tshim_module_set_precision).
  int precision = TSHIM_PREC_FP32;
};

struct tshim_batch {
  torch::Device device{torch::kCPU};
  int64_t n = 0, size = 0;
  // [n, 3, size, size] float32 on device: the resized pages, values 0..255.
  torch::Tensor data;
  // CUDA only: the stream the uploads are copied on.
  std::optional<c10::Stream> copy_stream;
};

struct tshim_trainer {
  tshim_module *m;
  std::unique_ptr<torch::optim::AdamW> opt;
};

namespace {

struct ArgError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
struct IoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

char *dup_message(const std::string &s) {
  char *p = static_cast<char *>(std::malloc(s.size() + 1));
  if (p) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

// c10::Error messages carry a long C++ backtrace after the first lines; keep
// the part a person can read.
std::string readable(const c10::Error &e) {
  std::string msg = e.what_without_backtrace();
  return msg;
}

template <typename F>
int guard(char **err, F &&body) {
  auto fail = [&](int code, const std::string &msg) {
    if (err) *err = dup_message(msg);
    return code;
  };
  try {
    body();
    return TSHIM_OK;
  } catch (const ArgError &e) {
    return fail(TSHIM_ERR_ARGUMENT, e.what());
  } catch (const IoError &e) {
    return fail(TSHIM_ERR_IO, e.what());
  } catch (const c10::OutOfMemoryError &e) {
    return fail(TSHIM_ERR_MEMORY, readable(e));
  } catch (const c10::Error &e) {
    return fail(TSHIM_ERR_TORCH, readable(e));
  } catch (const std::bad_alloc &e) {
    return fail(TSHIM_ERR_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return fail(TSHIM_ERR_TORCH, e.what());
  } catch (...) {
    return fail(TSHIM_ERR_UNKNOWN, "unknown C++ exception");
  }
}

void need(bool cond, const std::string &msg) {
  if (!cond) throw ArgError(msg);
}

torch::Device parse_device(const char *s) {
  need(s != nullptr, "device is NULL");
  std::string d(s);
  if (d == "cpu") return torch::Device(torch::kCPU);
  if (d.rfind("cuda", 0) == 0) {
    int idx = 0;
    if (d.size() > 4) {
      need(d[4] == ':' && d.size() > 5, "bad device \"" + d + "\": want cpu or cuda:N");
      try {
        size_t pos = 0;
        idx = std::stoi(d.substr(5), &pos);
        need(pos == d.size() - 5 && idx >= 0, "bad device \"" + d + "\": want cpu or cuda:N");
      } catch (const std::logic_error &) {
        throw ArgError("bad device \"" + d + "\": want cpu or cuda:N");
      }
    }
    need(torch::cuda::is_available(), "device \"" + d + "\" requested but CUDA is not available");
    need(idx < static_cast<int>(torch::cuda::device_count()),
         "device \"" + d + "\" requested but only " + std::to_string(torch::cuda::device_count()) +
             " CUDA device(s) exist");
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(idx));
  }
  throw ArgError("bad device \"" + d + "\": want cpu or cuda:N");
}

// A float32 tensor over the caller's buffer of ndim (1 to 8) dimensions, the
// first being the batch.
torch::Tensor any_tensor(const float *input, const int64_t *shape, int ndim) {
  need(input != nullptr && shape != nullptr, "input or shape is NULL");
  need(ndim >= 1 && ndim <= 8, "input must have 1 to 8 dimensions, got " + std::to_string(ndim));
  std::vector<int64_t> dims(shape, shape + ndim);
  for (auto d : dims) need(d > 0, "input shape has a non-positive dimension");
  // from_blob does not copy; callers copy (.to(..., copy=true)) so libtorch
  // never refers to caller memory after the call (the buffer is Go memory).
  return torch::from_blob(const_cast<float *>(input), dims, torch::kFloat32);
}

torch::Tensor input_tensor(const float *input, const int64_t *shape, int ndim) {
  need(ndim == 4, "input must be a 4-d NCHW batch, got " + std::to_string(ndim) + " dimensions");
  return any_tensor(input, shape, ndim);
}

// The module's method called name, or an argument error naming it.
torch::jit::Method method_of(const torch::jit::script::Module &mod, const char *name) {
  need(name != nullptr, "method name is NULL");
  auto found = mod.find_method(name);
  need(found.has_value(), std::string("the module has no method \"") + name + "\"");
  return *found;
}

void copy_out(const torch::Tensor &t, float **out, int64_t *rows, int64_t *cols) {
  auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  need(c.dim() == 2, "model output is not 2-d [batch, classes] but has " + std::to_string(c.dim()) +
                         " dimensions");
  size_t n = static_cast<size_t>(c.numel());
  float *buf = static_cast<float *>(std::malloc(n * sizeof(float) + 1));
  if (!buf) throw std::bad_alloc();
  std::memcpy(buf, c.data_ptr<float>(), n * sizeof(float));
  *out = buf;
  *rows = c.size(0);
  *cols = c.size(1);
}

// Extracts a logits tensor from the common TorchScript output shapes: a
// tensor, a tuple/list whose first element is one, or a dict with "logits".
torch::Tensor logits_of(const c10::IValue &v) {
  if (v.isTensor()) return v.toTensor();
  if (v.isTuple()) {
    auto el = v.toTupleRef().elements();
    need(!el.empty(), "model returned an empty tuple");
    return logits_of(el[0]);
  }
  if (v.isList()) {
    auto l = v.toList();
    need(l.size() > 0, "model returned an empty list");
    return logits_of(l.get(0));
  }
  if (v.isGenericDict()) {
    auto d = v.toGenericDict();
    for (const auto &kv : d) {
      if (kv.key().isString() && kv.key().toStringRef() == "logits") return logits_of(kv.value());
    }
    throw ArgError("model returned a dict without \"logits\"");
  }
  throw ArgError(std::string("model returned an unsupported value of type ") + v.tagKind());
}

// cudaMemGetInfo through the CUDA runtime, looked up at run time so the shim
// builds without CUDA headers and runs on machines without a GPU.
using cuda_fn_int = int (*)(int);
using cuda_fn_mem = int (*)(size_t *, size_t *);
void *cudart() {
  static void *h = [] {
    const char *names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"};
    for (const char *n : names) {
      if (void *p = dlopen(n, RTLD_NOW | RTLD_GLOBAL)) return p;
    }
    return static_cast<void *>(nullptr);
  }();
  return h;
}

// libtorch's OpenMP backend keeps the thread count per calling OS thread,
// and Go calls arrive on many OS threads: remember the requested count and
// apply it on each thread before it does work. A call may ask for its own
// count (threads > 0), which then holds for its thread until changed; the
// Go side keeps each OS thread at one count, so the change is made once.
std::atomic<int> wanted_threads{0};
thread_local int applied_threads = 0;
// Whether CUDA forward passes each take a pooled stream (run_tensor).
std::atomic<bool> stream_pool{true};
// Whether the graph executor optimises (tshim_set_graph_optimize): libtorch
// keeps the switch per thread, so run_tensor applies it on its thread.
std::atomic<bool> graph_optimize{true};
void sync_threads(int threads = 0) {
  int n = threads > 0 ? threads : wanted_threads.load(std::memory_order_relaxed);
  if (n > 0 && n != applied_threads) {
    // libtorch sets a thread's count from the process-wide one the first
    // time the thread asks for it (lazily, inside its kernels); ask first so
    // that this lazy set cannot later undo the count set here.
    (void)at::get_num_threads();
    torch::set_num_threads(n);
    applied_threads = n;
  }
}

// The tensor type of a module's parameters and inputs at a precision.
at::ScalarType dtype_of(int precision) {
  switch (precision) {
    case TSHIM_PREC_BF16:
      return at::kBFloat16;
    case TSHIM_PREC_FP16:
      return at::kHalf;
    default:
      return at::kFloat;
  }
}

// Sets libtorch's process-wide TF32 switches (cuBLAS matmuls, cuDNN
// convolutions) for a forward pass of m on CUDA: on unless m is strict fp32.
std::atomic<int> tf32_state{-1};
void apply_precision(const tshim_module *m) {
  if (!m->device.is_cuda()) return;
  int want = m->precision == TSHIM_PREC_FP32 ? 0 : 1;
  if (tf32_state.exchange(want) == want) return;
  at::globalContext().setAllowTF32CuBLAS(want != 0);
  at::globalContext().setAllowTF32CuDNN(want != 0);
}

// The autograd mode of an inference call on m: inference mode, or no-grad
// mode for a module that gradients ran through (see tshim_module::trained).
struct NoGrad {
  std::optional<c10::InferenceMode> inference;
  std::optional<torch::NoGradGuard> no_grad;
  explicit NoGrad(const tshim_module *m) {
    if (m->trained) {
      no_grad.emplace();
    } else {
      inference.emplace();
    }
  }
};

// Runs method name of m on x (float32, any device; copied when copy, so
// that libtorch keeps no reference to caller memory) in the module's
// current mode, layout and precision, and writes its float32 logits (or
// their softmax, computed in float32 on the CPU) to out. The caller holds
// a NoGrad for m.
//
// On CUDA each call runs on a stream of its own from libtorch's pool,
// after the work already queued on the calling thread's current stream
// (where a batch's pages were uploaded): forward passes called at once
// from several threads (the lanes of a run, the models of a group) then
// overlap on the device instead of queueing on one stream. The copy of the
// result to the host waits for that stream only. With stream_pool off
// (tshim_set_cuda_stream_pool) the call runs on the current stream itself.
void run_tensor(tshim_module *m, const char *name, torch::Tensor x, bool copy, int softmax, float **out,
                int64_t *rows, int64_t *cols) {
  auto method = method_of(m->mod, name);
  int64_t batch = x.size(0);
  c10::OptionalDeviceGuard on_device;
  c10::OptionalStreamGuard on_stream;
  if (m->device.is_cuda()) on_device.reset_device(m->device);
  if (m->device.is_cuda() && stream_pool.load()) {
    c10::impl::VirtualGuardImpl impl(m->device.type());
    auto caller = impl.getStream(m->device);
    auto own = impl.getStreamFromGlobalPool(m->device, /*isHighPriority=*/false);
    c10::Event queued(m->device.type());
    queued.record(caller);
    queued.block(own);
    if (x.is_cuda()) x.record_stream(own);
    on_stream.reset_stream(own);
  }
  auto fmt = m->channels_last && x.dim() == 4 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
  x = x.to(m->device, dtype_of(m->precision), /*non_blocking=*/false, copy, fmt);
  apply_precision(m);
  torch::jit::GraphOptimizerEnabledGuard optimize(graph_optimize.load());
  auto y = logits_of(method({x}));
  need(y.dim() == 2 && y.size(0) == batch,
       std::string(name) + " output has shape " + c10::str(y.sizes()) + ", expected [" + std::to_string(batch) +
           ", n]");
  y = y.detach().to(torch::kCPU, torch::kFloat32);
  if (softmax) y = torch::softmax(y, 1);
  copy_out(y, out, rows, cols);
}

// Runs method name of m on input (4-d NCHW when nchw) without gradients in
// the module's current mode: the body of tshim_module_forward and
// tshim_module_run_method.
void run_no_grad(tshim_module *m, const char *name, const float *input, const int64_t *shape, int ndim, bool nchw,
                 int softmax, int threads, float **out, int64_t *rows, int64_t *cols) {
  need(m != nullptr, "module is NULL");
  need(out && rows && cols, "output pointers are NULL");
  need(threads >= 0, "thread count must not be negative");
  method_of(m->mod, name);
  auto x = nchw ? input_tensor(input, shape, ndim) : any_tensor(input, shape, ndim);
  sync_threads(threads);
  NoGrad mode(m);
  run_tensor(m, name, x, /*copy=*/true, softmax, out, rows, cols);
}

// One optimisation step through method name (the body of
// tshim_trainer_step and tshim_trainer_step_method).
void train_step(tshim_trainer *t, const char *name, const torch::Tensor &input, const int64_t *labels, float *loss,
                float **logits, int64_t *rows, int64_t *cols) {
  need(t != nullptr && labels != nullptr && loss != nullptr, "trainer, labels or loss is NULL");
  need(logits && rows && cols, "output pointers are NULL");
  auto method = method_of(t->m->mod, name);
  sync_threads();
  auto dev = t->m->device;
  int64_t batch = input.size(0);
  auto x = input.to(dev, false, true);
  auto y = torch::from_blob(const_cast<int64_t *>(labels), {batch}, torch::kInt64).to(dev, false, true);
  t->m->mod.train(true);
  t->opt->zero_grad();
  auto out = logits_of(method({x}));
  need(out.dim() == 2 && out.size(0) == batch,
       "model output has shape " + c10::str(out.sizes()) + ", expected [batch, classes]");
  auto mx = y.max().item<int64_t>();
  auto mn = y.min().item<int64_t>();
  need(mn >= 0 && mx < out.size(1), "label out of range: labels must lie in [0, " + std::to_string(out.size(1)) + ")");
  auto l = torch::nn::functional::cross_entropy(out, y);
  l.backward();
  t->opt->step();
  *loss = l.item<float>();
  copy_out(out, logits, rows, cols);
}

std::once_flag init_once;
std::string init_error;

}  // namespace

extern "C" {
#pragma GCC visibility push(default)

void tshim_free(void *p) { std::free(p); }

const char *tshim_torch_version(void) { return TSHIM_TORCH_VERSION; }

int tshim_loaded_torch_version(char **out, char **err) {
  return guard(err, [&] {
    need(out != nullptr, "out is NULL");
    const std::string key = "TORCH_VERSION=";
    auto cfg = at::show_config();
    auto at = cfg.find(key);
    need(at != std::string::npos, "the loaded libtorch's build configuration names no TORCH_VERSION");
    at += key.size();
    auto end = cfg.find_first_of(", \n", at);
    *out = dup_message(cfg.substr(at, end == std::string::npos ? std::string::npos : end - at));
  });
}

int tshim_init(char **err) {
  std::call_once(init_once, [] {
    // Load libtorch_cuda only where a driver exists: it registers the CUDA
    // hooks of libtorch_cpu. Without a driver the load would only cost time.
    struct stat st;
    if (std::getenv("TSHIM_DISABLE_CUDA") != nullptr) return;
    if (stat("/proc/driver/nvidia/version", &st) != 0) return;
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&torch::cuda::is_available), &info) == 0 || !info.dli_fname) return;
    std::string dir(info.dli_fname);
    dir = dir.substr(0, dir.find_last_of('/') + 1);
    if (!dlopen((dir + "libtorch_cuda.so").c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char *e = dlerror();
      init_error = std::string("NVIDIA driver present but libtorch_cuda.so could not be loaded: ") +
                   (e ? e : "unknown error");
    }
  });
  // A failed CUDA load is reported on every call but is not fatal: CPU
  // work still runs, and the caller decides whether to warn or refuse.
  if (!init_error.empty()) {
    if (err) *err = dup_message(init_error);
    return TSHIM_WARN_CUDA;
  }
  return TSHIM_OK;
}

int tshim_cuda_available(int *out) {
  return guard(nullptr, [&] { *out = torch::cuda::is_available() ? 1 : 0; });
}

int tshim_cuda_device_count(int *out) {
  return guard(nullptr, [&] { *out = static_cast<int>(torch::cuda::device_count()); });
}

int tshim_cuda_mem_info(int device, uint64_t *free_bytes, uint64_t *total_bytes, char **err) {
  return guard(err, [&] {
    need(torch::cuda::is_available(), "CUDA is not available" +
                                          (init_error.empty() ? std::string() : " (" + init_error + ")"));
    need(device >= 0 && device < static_cast<int>(torch::cuda::device_count()),
         "no CUDA device " + std::to_string(device));
    void *h = cudart();
    need(h != nullptr, "the CUDA runtime library (libcudart) cannot be loaded");
    auto set_dev = reinterpret_cast<cuda_fn_int>(dlsym(h, "cudaSetDevice"));
    auto mem = reinterpret_cast<cuda_fn_mem>(dlsym(h, "cudaMemGetInfo"));
    need(set_dev && mem, "libcudart lacks cudaSetDevice/cudaMemGetInfo");
    need(set_dev(device) == 0, "cudaSetDevice failed");
    size_t f = 0, t = 0;
    need(mem(&f, &t) == 0, "cudaMemGetInfo failed");
    *free_bytes = f;
    *total_bytes = t;
  });
}

int tshim_set_num_threads(int n, char **err) {
  return guard(err, [&] {
    need(n > 0, "thread count must be positive");
    wanted_threads.store(n);
    sync_threads();
  });
}

int tshim_set_cuda_stream_pool(int pooled) {
  stream_pool.store(pooled != 0);
  return TSHIM_OK;
}

int tshim_get_cuda_stream_pool(int *out) {
  *out = stream_pool.load() ? 1 : 0;
  return TSHIM_OK;
}

int tshim_set_graph_optimize(int on) {
  graph_optimize.store(on != 0);
  return TSHIM_OK;
}

int tshim_get_graph_optimize(int *out) {
  *out = graph_optimize.load() ? 1 : 0;
  return TSHIM_OK;
}

int tshim_get_num_threads(int *out) {
  return guard(nullptr, [&] {
    sync_threads();
    *out = torch::get_num_threads();
  });
}

int tshim_manual_seed(uint64_t seed) {
  return guard(nullptr, [&] { torch::manual_seed(seed); });
}

int tshim_module_load(const char *path, const char *device, tshim_module **out, char **err) {
  return guard(err, [&] {
    need(path != nullptr && out != nullptr, "path or out is NULL");
    struct stat st;
    if (stat(path, &st) != 0) throw IoError(std::string("cannot read model file ") + path + ": " + std::strerror(errno));
    need(S_ISREG(st.st_mode), std::string(path) + " is not a regular file");
    auto dev = parse_device(device);
    auto m = std::make_unique<tshim_module>();
    try {
      m->mod = torch::jit::load(path, dev);
    } catch (const c10::Error &e) {
      throw ArgError(std::string(path) + " is not a loadable TorchScript file: " + e.what_without_backtrace());
    }
    m->mod.eval();
    m->device = dev;
    *out = m.release();
  });
}

namespace {

// A read-only stream buffer over bytes the caller keeps alive: what
// torch::jit::load(std::istream&) needs (reads and seeks), without copying
// them.
class ByteBuf : public std::streambuf {
 public:
  ByteBuf(const char *data, size_t len) {
    char *p = const_cast<char *>(data);  // only ever read: no put area
    setg(p, p, p + len);
  }

 protected:
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode which) override {
    if (!(which & std::ios_base::in)) return pos_type(off_type(-1));
    off_type base = dir == std::ios_base::beg ? 0 : dir == std::ios_base::cur ? gptr() - eback() : egptr() - eback();
    off_type to = base + off;
    if (to < 0 || to > egptr() - eback()) return pos_type(off_type(-1));
    setg(eback(), eback() + to, egptr());
    return pos_type(to);
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }
};

}  // namespace

int tshim_module_load_buffer(const void *data, size_t len, const char *device, tshim_module **out,
                             char **err) {
  return guard(err, [&] {
    need(out != nullptr, "out is NULL");
    need(data != nullptr || len == 0, "data is NULL");
    need(len > 0, "no bytes to load (an empty model file)");
    auto dev = parse_device(device);
    ByteBuf buf(static_cast<const char *>(data), len);
    std::istream in(&buf);
    auto m = std::make_unique<tshim_module>();
    try {
      m->mod = torch::jit::load(in, dev);
    } catch (const c10::Error &e) {
      throw ArgError("the " + std::to_string(len) + " bytes are not a loadable TorchScript file: " +
                     e.what_without_backtrace());
    }
    m->mod.eval();
    m->device = dev;
    *out = m.release();
  });
}

void tshim_module_free(tshim_module *m) { delete m; }

int tshim_module_optimize(tshim_module *m, int level, char **err) {
  return guard(err, [&] {
    need(m != nullptr, "module is NULL");
    int freeze = level & 3;
    need(freeze == 1 || freeze == 2, "optimisation level " + std::to_string(level) +
                                         " is not 1 or 2, optionally with TSHIM_OPT_CHANNELS_LAST");
    need((level & ~(3 | TSHIM_OPT_CHANNELS_LAST)) == 0, "unknown optimisation flags in " + std::to_string(level));
    need(!m->trained, "a module being trained cannot be frozen");
    need(!m->frozen, "module is already frozen");
    m->mod.eval();
    bool cl = (level & TSHIM_OPT_CHANNELS_LAST) != 0;
    try {
      torch::NoGradGuard no_grad;
      auto &mod = m->mod;  // the layout change keeps every value
      if (cl) {
        // As Python's Module.to(memory_format=torch.channels_last): every 4-d
        // parameter and buffer; freezing then keeps the layout.
        for (const auto &p : mod.parameters(/*recurse=*/true)) {
          if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
        }
        for (const auto &b : mod.buffers(/*recurse=*/true)) {
          if (b.dim() == 4) b.set_data(b.contiguous(at::MemoryFormat::ChannelsLast));
        }
      }
      auto frozen = torch::jit::freeze(mod);
      if (freeze == 2) frozen = torch::jit::optimize_for_inference(frozen);
      m->mod = frozen;
    } catch (const c10::Error &e) {
      throw ArgError(std::string("cannot freeze the module: ") + e.what_without_backtrace());
    }
    m->frozen = true;
    m->channels_last = cl;
  });
}

int tshim_module_set_precision(tshim_module *m, int precision, char **err) {
  return guard(err, [&] {
    need(m != nullptr, "module is NULL");
    need(precision >= TSHIM_PREC_FP32 && precision <= TSHIM_PREC_FP16,
         "unknown precision " + std::to_string(precision));
    need(!m->frozen, "the precision of a frozen (optimised) module cannot change: set it before optimising");
    need(!m->trained, "the precision of a module being trained cannot change");
    need(m->device.is_cuda() || precision != TSHIM_PREC_FP16,
         "fp16 runs on CUDA only: on the CPU use fp32 or bf16");
    auto dt = dtype_of(precision);
    torch::NoGradGuard no_grad;
    for (const auto &p : m->mod.parameters(/*recurse=*/true)) {
      if (p.is_floating_point() && p.scalar_type() != dt) p.set_data(p.to(dt));
    }
    for (const auto &b : m->mod.buffers(/*recurse=*/true)) {
      if (b.is_floating_point() && b.scalar_type() != dt) b.set_data(b.to(dt));
    }
    m->precision = precision;
  });
}

int tshim_module_set_train(tshim_module *m, int train, char **err) {
  return guard(err, [&] {
    need(m != nullptr, "module is NULL");
    need(!m->frozen || train == 0, "a frozen (inference-only) module cannot be trained");
    m->mod.train(train != 0);
  });
}

int tshim_module_param_bytes(tshim_module *m, int64_t *out, char **err) {
  return guard(err, [&] {
    need(m != nullptr, "module is NULL");
    int64_t n = 0;
    for (const auto &p : m->mod.parameters()) n += p.numel() * p.element_size();
    for (const auto &b : m->mod.buffers()) n += b.numel() * b.element_size();
    *out = n;
  });
}

int tshim_module_param_counts(tshim_module *m, int64_t *trainable, int64_t *total, char **err) {
  return guard(err, [&] {
    need(m != nullptr, "module is NULL");
    need(trainable && total, "output pointers are NULL");
    int64_t t = 0, n = 0;
    for (const auto &p : m->mod.parameters()) {
      n += p.numel();
      if (p.requires_grad()) t += p.numel();
    }
    *trainable = t;
    *total = n;
  });
}

int tshim_module_forward(tshim_module *m, const float *input, const int64_t *shape, int ndim, int softmax,
                         int threads, float **out, int64_t *rows, int64_t *cols, char **err) {
  return guard(err, [&] { run_no_grad(m, "forward", input, shape, ndim, true, softmax, threads, out, rows, cols); });
}

int tshim_module_has_method(tshim_module *m, const char *name, int *out, char **err) {
  return guard(err, [&] {
    need(m != nullptr && name != nullptr && out != nullptr, "module, name or out is NULL");
    *out = m->mod.find_method(name).has_value() ? 1 : 0;
  });
}

int tshim_module_run_method(tshim_module *m, const char *name, const float *input, const int64_t *shape, int ndim,
                            int softmax, int threads, float **out, int64_t *rows, int64_t *cols, char **err) {
  return guard(err, [&] { run_no_grad(m, name, input, shape, ndim, false, softmax, threads, out, rows, cols); });
}

int tshim_module_method_trainable(tshim_module *m, const char *name, const float *input, const int64_t *shape,
                                  int ndim, int64_t *out, char **err) {
  return guard(err, [&] {
    need(m != nullptr && out != nullptr, "module or out is NULL");
    need(!m->frozen, "a frozen (inference-only) module has no trainable parameters");
    auto method = method_of(m->mod, name);
    auto x = any_tensor(input, shape, ndim).to(m->device, torch::kFloat32, false, /*copy=*/true);
    sync_threads();
    torch::AutoGradMode grad(true);
    m->trained = true;  // from now on the executor may hold differentiable graphs
    auto y = logits_of(method({x}));
    std::vector<torch::Tensor> params;
    for (const auto &p : m->mod.parameters()) {
      if (p.requires_grad()) params.push_back(p);
    }
    int64_t n = 0;
    if (y.requires_grad() && !params.empty()) {
      auto grads = torch::autograd::grad({y}, params, {torch::ones_like(y)}, /*retain_graph=*/false,
                                         /*create_graph=*/false, /*allow_unused=*/true);
      for (size_t i = 0; i < grads.size(); i++) {
        if (grads[i].defined()) n += params[i].numel();
      }
    }
    *out = n;
  });
}

int tshim_module_save(tshim_module *m, const char *path, char **err) {
  return guard(err, [&] {
    need(m != nullptr && path != nullptr, "module or path is NULL");
    need(!m->frozen, "a frozen (inference-only) module is not saved");
    try {
      m->mod.save(path);
    } catch (const c10::Error &e) {
      throw IoError(std::string("cannot save model to ") + path + ": " + e.what_without_backtrace());
    }
  });
}

int tshim_module_clone(tshim_module *m, tshim_module **out, char **err) {
  return guard(err, [&] {
    need(m != nullptr && out != nullptr, "module or out is NULL");
    need(!m->frozen, "a frozen (inference-only) module is not cloned");
    auto res = std::make_unique<tshim_module>();
    {
      // Without autograd the copied tensors are leaves of no graph; each
      // parameter then requires gradients exactly where m's does.
      torch::NoGradGuard no_grad;
      res->mod = m->mod.deepcopy();
    }
    auto src = m->mod.parameters(/*recurse=*/true);
    auto dst = res->mod.parameters(/*recurse=*/true);
    auto s = src.begin();
    for (auto d = dst.begin(); d != dst.end(); ++d, ++s) {
      need(s != src.end(), "the copy has more parameters than the module");
      (*d).set_requires_grad((*s).requires_grad());
    }
    res->device = m->device;
    res->precision = m->precision;
    *out = res.release();
  });
}

int tshim_average(tshim_module *const *mods, int n, tshim_module **out, char **err) {
  return guard(err, [&] {
    need(mods != nullptr && n > 0 && out != nullptr, "no modules to average");
    for (int i = 0; i < n; i++) {
      need(mods[i] != nullptr, "module " + std::to_string(i) + " is NULL");
      need(!mods[i]->frozen, "module " + std::to_string(i) + " is frozen (inference-only)");
    }
    torch::NoGradGuard no_grad;
    auto res = std::make_unique<tshim_module>();
    res->mod = mods[0]->mod.deepcopy();
    res->device = mods[0]->device;

    auto collect = [](const torch::jit::script::Module &m, bool params) {
      std::vector<std::pair<std::string, torch::Tensor>> v;
      if (params) {
        for (const auto &p : m.named_parameters(/*recurse=*/true)) v.emplace_back(p.name, p.value);
      } else {
        for (const auto &b : m.named_buffers(/*recurse=*/true)) v.emplace_back(b.name, b.value);
      }
      return v;
    };
    for (bool params : {true, false}) {
      auto target = collect(res->mod, params);
      std::vector<std::vector<std::pair<std::string, torch::Tensor>>> all;
      for (int i = 0; i < n; i++) all.push_back(collect(mods[i]->mod, params));
      const char *kind = params ? "parameters" : "buffers";
      for (int i = 1; i < n; i++) {
        need(all[i].size() == all[0].size(),
             std::string("module ") + std::to_string(i) + " has " + std::to_string(all[i].size()) + " " + kind +
                 ", module 0 has " + std::to_string(all[0].size()) + ": the architectures differ");
      }
      for (size_t k = 0; k < target.size(); k++) {
        const auto &name = all[0][k].first;
        auto ref = all[0][k].second;
        for (int i = 1; i < n; i++) {
          need(all[i][k].first == name, std::string(kind) + " differ: module 0 has \"" + name + "\", module " +
                                            std::to_string(i) + " has \"" + all[i][k].first + "\"");
          need(all[i][k].second.sizes() == ref.sizes(),
               "\"" + name + "\" has shape " + c10::str(all[i][k].second.sizes()) + " in module " +
                   std::to_string(i) + " but " + c10::str(ref.sizes()) + " in module 0");
        }
        if (!ref.is_floating_point()) continue;  // e.g. num_batches_tracked: keep module 0's
        auto acc = torch::zeros(ref.sizes(), ref.options().dtype(torch::kFloat64));
        for (int i = 0; i < n; i++) acc += all[i][k].second.to(acc.device(), torch::kFloat64);
        target[k].second.copy_((acc / static_cast<double>(n)).to(ref.dtype()));
      }
    }
    *out = res.release();
  });
}

// mapped_floats is a float tensor whose memory is mapped from the system
// for it alone and unmapped when the tensor goes. A page's resized rows
// (12 MB for a 4096-row page at 240) would otherwise come from glibc's
// heap, which keeps such a block in the calling thread's arena after its
// free: preprocessing runs on several threads, so each kept its own.
static torch::Tensor mapped_floats(const std::vector<int64_t> &sizes) {
  size_t bytes = sizeof(float);
  for (auto s : sizes) bytes *= static_cast<size_t>(s);
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return torch::from_blob(p, sizes, [bytes](void *q) { munmap(q, bytes); }, torch::kFloat32);
}

namespace {

// An 8-bit HWC image (c = 1 or 3, on any device) resized to out_h x out_w
// by antialiased bilinear interpolation, rounded and clamped to 8 bits (as
// torchvision does for uint8 images): a 1 x 3 x out_h x out_w float tensor
// of values 0..255 on the image's device (a grey image gives three equal
// channels).
torch::Tensor resized_u8(const torch::Tensor &img, int64_t out_h, int64_t out_w) {
  int64_t h = img.size(0), w = img.size(1), c = img.size(2);
  namespace F = torch::nn::functional;
  auto resize = [](const torch::Tensor &t, int64_t oh, int64_t ow) {
    return F::interpolate(t, F::InterpolateFuncOptions()
                                 .size(std::vector<int64_t>{oh, ow})
                                 .mode(torch::kBilinear)
                                 .align_corners(false)
                                 .antialias(true));
  };
  // The antialiased resize is separable, and libtorch makes it so: the
  // rows are resized across first, then the columns down, each pass
  // skipped when its size does not change. Doing the first pass on bands
  // of rows (each row on its own: the same weights, the same sums) and
  // the second on the narrow result gives the same values bit for bit
  // as one call on the whole page, without its float copy: a
  // 13000×13000 page would take 2 GB as floats, a band of 2^18 pixels
  // takes 3 MB. On the CPU the rows resized across are mapped for this
  // call (mapped_floats) when they take 8 MiB or more.
  torch::Tensor x;
  if (out_w != w) {
    std::vector<int64_t> sizes{1, 3, h, out_w};
    x = img.is_cpu() && 3 * h * out_w * sizeof(float) >= (size_t{8} << 20)
            ? mapped_floats(sizes)
            : torch::empty(sizes, img.options().dtype(torch::kFloat32));
    // On a GPU, bands of up to 2^22 pixels (48 MB as floats): a page of
    // UploadPage's at most 1.33 MP is one band, a few kernels, not one
    // set of them per 2^18 pixels.
    int64_t band = std::max<int64_t>(1, (int64_t{1} << (img.is_cpu() ? 18 : 22)) / w);
    for (int64_t r = 0; r < h; r += band) {
      int64_t n = std::min(band, h - r);
      auto part = img.narrow(0, r, n).permute({2, 0, 1}).unsqueeze(0).to(torch::kFloat32);
      if (c == 1) part = part.expand({1, 3, n, w});
      x.narrow(2, r, n).copy_(resize(part, n, out_w));
    }
  } else {
    x = img.permute({2, 0, 1}).unsqueeze(0).to(torch::kFloat32);  // 1 x C x H x W, copies
    if (c == 1) x = x.expand({1, 3, h, w});
  }
  if (out_h != h || out_w != w) {
    if (out_h != h) x = resize(x, out_h, out_w);
    // torchvision resizes uint8 images in float and rounds back to uint8.
    x = x.round_().clamp_(0, 255);
  }
  return x;
}

// x (values 0..255) scaled to [0,1] and normalised with mean3/std3, on x's
// device, with tshim_preprocess's float32 arithmetic.
torch::Tensor normalised(const torch::Tensor &x, const float *mean3, const float *std3) {
  need(mean3 && std3, "mean or std is NULL");
  for (int i = 0; i < 3; i++) need(std3[i] != 0.0f, "std must not be zero");
  // On CUDA the three values go up from pinned memory without waiting: a
  // copy from pageable memory would wait for every kernel queued on the
  // stream (the resizes of the batches in flight) before the host could
  // queue this batch's forward pass. Same values, same arithmetic.
  auto on_device = [&](const float *v) {
    auto t = torch::from_blob(const_cast<float *>(v), {1, 3, 1, 1}, torch::kFloat32);
    return x.is_cuda() ? t.pin_memory().to(x.device(), /*non_blocking=*/true) : t.to(x.device());
  };
  auto mean = on_device(mean3);
  auto sd = on_device(std3);
  return (x.div(255.0f) - mean) / sd;
}

void check_image(const uint8_t *hwc, int64_t h, int64_t w, int64_t c) {
  need(hwc != nullptr, "NULL image");
  need(h > 0 && w > 0, "image sizes must be positive");
  need(c == 1 || c == 3, "image must have 1 or 3 channels, got " + std::to_string(c));
}

}  // namespace

int tshim_preprocess(const uint8_t *hwc, int64_t h, int64_t w, int64_t c, int64_t out_h, int64_t out_w,
                     const float *mean3, const float *std3, float *out, char **err) {
  return guard(err, [&] {
    check_image(hwc, h, w, c);
    need(mean3 && std3 && out, "NULL buffer");
    need(out_h > 0 && out_w > 0, "output sizes must be positive");
    for (int i = 0; i < 3; i++) need(std3[i] != 0.0f, "std must not be zero");
    // One intra-op thread: pages are preprocessed by several callers at
    // once, beside the forward passes, which take the cores' threads.
    sync_threads(1);
    c10::InferenceMode mode;
    auto img = torch::from_blob(const_cast<uint8_t *>(hwc), {h, w, c}, torch::kUInt8);
    auto x = normalised(resized_u8(img, out_h, out_w), mean3, std3);
    auto res = torch::from_blob(out, {1, 3, out_h, out_w}, torch::kFloat32);
    res.copy_(x);
  });
}

int tshim_batch_new(const char *device, int64_t n, int64_t size, tshim_batch **out, char **err) {
  return guard(err, [&] {
    need(out != nullptr, "out is NULL");
    need(n > 0 && size > 0, "batch pages and size must be positive");
    auto dev = parse_device(device);
    auto b = std::make_unique<tshim_batch>();
    b->device = dev;
    b->n = n;
    b->size = size;
    b->data = torch::zeros({n, 3, size, size}, torch::TensorOptions(torch::kFloat32).device(dev));
    if (dev.is_cuda()) {
      c10::impl::VirtualGuardImpl impl(dev.type());
      b->copy_stream = impl.getStreamFromGlobalPool(dev, /*isHighPriority=*/false);
    }
    *out = b.release();
  });
}

void tshim_batch_free(tshim_batch *b) { delete b; }

namespace {

// upload_page puts the 8-bit page hwc (h x w x c) on device: on CUDA through
// pinned staging memory, asynchronously on copy_stream, the compute stream
// waiting for the copy; on the CPU the caller's pixels as they are (only
// read during the call).
torch::Tensor upload_page(const torch::Device &device, const std::optional<c10::Stream> &copy_stream, const uint8_t *hwc,
                          int64_t h, int64_t w, int64_t c) {
  auto host = torch::from_blob(const_cast<uint8_t *>(hwc), {h, w, c}, torch::kUInt8);
  if (!device.is_cuda()) return host;
  c10::impl::VirtualGuardImpl impl(device.type());
  auto compute = impl.getStream(device);
  // Pinned staging (libtorch's caching host allocator keeps the block
  // until the asynchronous copy that reads it is done), the copy on the
  // batch's copy stream, and the compute stream waits for it.
  auto pinned = torch::empty({h, w, c}, torch::TensorOptions(torch::kUInt8).pinned_memory(true));
  pinned.copy_(host);
  torch::Tensor img;
  {
    c10::StreamGuard on_copy(*copy_stream);
    img = pinned.to(device, /*non_blocking=*/true);
  }
  c10::Event copied(device.type());
  copied.record(*copy_stream);
  copied.block(compute);
  img.record_stream(compute);  // allocated on the copy stream, used on the compute stream
  return img;
}

}  // namespace

int tshim_batch_set(tshim_batch *b, int64_t i, const uint8_t *hwc, int64_t h, int64_t w, int64_t c, char **err) {
  return tshim_batch_set_all(&b, 1, i, hwc, h, w, c, err);
}

int tshim_batch_set_all(tshim_batch **bs, int64_t nb, int64_t i, const uint8_t *hwc, int64_t h, int64_t w, int64_t c,
                        char **err) {
  return guard(err, [&] {
    need(bs != nullptr && nb > 0, "no batches");
    for (int64_t k = 0; k < nb; k++) {
      need(bs[k] != nullptr, "batch is NULL");
      need(i >= 0 && i < bs[k]->n, "page " + std::to_string(i) + " of a batch of " + std::to_string(bs[k]->n));
      need(bs[k]->device == bs[0]->device, "batches on " + bs[0]->device.str() + " and " + bs[k]->device.str());
    }
    check_image(hwc, h, w, c);
    sync_threads(1);
    c10::InferenceMode mode;
    c10::OptionalDeviceGuard on;
    if (bs[0]->device.is_cuda()) on.reset_device(bs[0]->device);
    // One upload, one resize per batch (per input size), each on the device.
    auto img = upload_page(bs[0]->device, bs[0]->copy_stream, hwc, h, w, c);
    for (int64_t k = 0; k < nb; k++) {
      bs[k]->data.select(0, i).copy_(resized_u8(img, bs[k]->size, bs[k]->size).select(0, 0));
    }
  });
}

int tshim_batch_read(tshim_batch *b, int64_t i, const float *mean3, const float *std3, float *out, char **err) {
  return guard(err, [&] {
    need(b != nullptr && out != nullptr, "batch or out is NULL");
    need(i >= 0 && i < b->n, "page " + std::to_string(i) + " of a batch of " + std::to_string(b->n));
    c10::InferenceMode mode;
    auto x = normalised(b->data.narrow(0, i, 1), mean3, std3).to(torch::kCPU).contiguous();
    std::memcpy(out, x.data_ptr<float>(), x.numel() * sizeof(float));
  });
}

int tshim_module_forward_batch(tshim_module *m, tshim_batch *b, int64_t n, const float *mean3, const float *std3,
                               int softmax, int threads, float **out, int64_t *rows, int64_t *cols, char **err) {
  return guard(err, [&] {
    need(m != nullptr && b != nullptr, "module or batch is NULL");
    need(out && rows && cols, "output pointers are NULL");
    need(threads >= 0, "thread count must not be negative");
    need(n > 0 && n <= b->n, std::to_string(n) + " pages of a batch of " + std::to_string(b->n));
    need(b->device == m->device, "the batch is on " + b->device.str() + ", the module on " + m->device.str());
    sync_threads(threads);
    NoGrad mode(m);
    c10::OptionalDeviceGuard on;
    if (b->device.is_cuda()) on.reset_device(b->device);
    auto x = normalised(b->data.narrow(0, 0, n), mean3, std3);
    run_tensor(m, "forward", x, /*copy=*/false, softmax, out, rows, cols);
  });
}

int tshim_trainer_new(tshim_module *m, double lr, double weight_decay, double beta1, double beta2, double eps,
                      tshim_trainer **out, char **err) {
  return guard(err, [&] {
    need(m != nullptr && out != nullptr, "module or out is NULL");
    need(!m->frozen, "a frozen (inference-only) module cannot be trained");
    need(m->precision == TSHIM_PREC_FP32 || m->precision == TSHIM_PREC_TF32,
         "a module converted to bf16 or fp16 cannot be trained");
    need(lr >= 0, "learning rate must not be negative");
    std::vector<torch::Tensor> params;
    for (const auto &p : m->mod.parameters()) {
      if (p.requires_grad()) params.push_back(p);
    }
    need(!params.empty(), "the module has no trainable parameters (was it traced or frozen?)");
    auto opts = torch::optim::AdamWOptions(lr).weight_decay(weight_decay).betas({beta1, beta2}).eps(eps);
    auto t = std::make_unique<tshim_trainer>();
    t->m = m;
    t->opt = std::make_unique<torch::optim::AdamW>(params, opts);
    m->trained = true;
    *out = t.release();
  });
}

void tshim_trainer_free(tshim_trainer *t) { delete t; }

int tshim_trainer_set_lr(tshim_trainer *t, double lr, char **err) {
  return guard(err, [&] {
    need(t != nullptr, "trainer is NULL");
    need(lr >= 0, "learning rate must not be negative");
    for (auto &g : t->opt->param_groups()) static_cast<torch::optim::AdamWOptions &>(g.options()).lr(lr);
  });
}

int tshim_trainer_zero_grad(tshim_trainer *t, char **err) {
  return guard(err, [&] {
    need(t != nullptr, "trainer is NULL");
    t->opt->zero_grad();
  });
}

int tshim_trainer_step(tshim_trainer *t, const float *input, const int64_t *shape, int ndim, const int64_t *labels,
                       float *loss, float **logits, int64_t *rows, int64_t *cols, char **err) {
  return guard(err, [&] {
    train_step(t, "forward", input_tensor(input, shape, ndim), labels, loss, logits, rows, cols);
  });
}

int tshim_trainer_step_method(tshim_trainer *t, const char *name, const float *input, const int64_t *shape, int ndim,
                              const int64_t *labels, float *loss, float **logits, int64_t *rows, int64_t *cols,
                              char **err) {
  return guard(err, [&] { train_step(t, name, any_tensor(input, shape, ndim), labels, loss, logits, rows, cols); });
}

#pragma GCC visibility pop
}  // extern "C"
