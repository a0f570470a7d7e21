"""The measurement driver against triton.testing.do_bench on the same kernels.

For each kernel (FastKernels' CUDA rms_norm baseline, the example CUDA rms_norm
candidate, the cuBLASLt GEMM of the linear baseline) and size, times the very same
launch two ways in one process, alternating A B A B over `--repeats` rounds:
  driver:   fk_bench_driver() in libfk_bench_shim.so (kernels/measure.h: CUDA events
            around each call, L2 flushed before each call, median of N samples);
  do_bench: triton.testing.do_bench(fn, return_mode="median") on torch tensors (its
            own events and 256 MB cache clear before each call);
  replica:  do_bench's sequence in C++ (fk_bench_replica: clear, event, call, event,
            queued without waiting between calls) on the driver's stream and flush;
  waiting:  the same sequence with a wait after every call, as the driver waits
            (fk_bench_replica_waiting).
Prints one row per kernel with both medians, their ratio, and each side's noise over
the repeats. Usage: python3 bench/gpu/do_bench.py SHIM.so [CANDIDATE.so]"""
import ctypes
import functools
import statistics
import sys

import torch
import triton.testing

shim = ctypes.CDLL(sys.argv[1])
candidate = sys.argv[2].encode() if len(sys.argv) > 2 else None
I64, P, D = ctypes.c_int64, ctypes.c_void_p, ctypes.c_double
shim.fk_bench_rms_norm.argtypes = [P, P, P, ctypes.c_int, I64, I64, D, P]
shim.fk_bench_linear.argtypes = [P, P, P, ctypes.c_int, I64, I64, I64, P]
shim.fk_bench_rms_norm_candidate.argtypes = [ctypes.c_char_p, ctypes.c_char_p, P, P, P, ctypes.c_int, I64, I64, D, P]
shim.fk_bench_driver.argtypes = [ctypes.c_char_p, ctypes.c_int, I64, I64, I64, ctypes.c_int, ctypes.c_int,
                                 ctypes.POINTER(D)]
shim.fk_bench_replica.argtypes = shim.fk_bench_driver.argtypes
shim.fk_bench_replica_waiting.argtypes = shim.fk_bench_driver.argtypes
ELEM = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}
REPEATS = 5


def driver(what, elem, a, b, c, warmup, iterations, replica=None):
    out = (D * 4)()
    fn = {None: shim.fk_bench_driver, "queued": shim.fk_bench_replica, "waiting": shim.fk_bench_replica_waiting}[replica]
    rc = fn(what, elem, a, b, c, warmup, iterations, out)
    if rc != 0:
        raise SystemExit(f"fk_bench_driver({what!r}) failed")
    return out[0]


def case(name, what, dtype, a, b, c, make_fn):
    fn = make_fn()
    fn()
    torch.cuda.synchronize()
    # The same number of warm-up and timed calls on both sides: do_bench(warmup=25,
    # rep=100) runs 25 ms and 100 ms worth of calls at its estimated time per call.
    estimate = driver(what, ELEM[dtype], a, b, c, 5, 20)
    iterations = max(20, min(5000, int(0.1 / estimate)))
    warmup = max(1, int(0.025 / estimate))
    # do_bench again with everything on a torch side stream (non-blocking, like the
    # backend's) instead of the legacy default stream: does the stream explain the
    # small-call gap (bench/RESULTS.md)?
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        fn_side = make_fn()
        fn_side()
    torch.cuda.synchronize()
    ours, theirs, theirs_side, replica, waiting = [], [], [], [], []
    for _ in range(REPEATS):  # A B A B
        ours.append(driver(what, ELEM[dtype], a, b, c, warmup, iterations))
        replica.append(driver(what, ELEM[dtype], a, b, c, warmup, iterations, replica="queued"))
        waiting.append(driver(what, ELEM[dtype], a, b, c, warmup, iterations, replica="waiting"))
        theirs.append(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e-3)
        with torch.cuda.stream(side):
            theirs_side.append(triton.testing.do_bench(fn_side, warmup=25, rep=100, return_mode="median") * 1e-3)
    mo, mt, ms = statistics.median(ours), statistics.median(theirs), statistics.median(theirs_side)
    mr, mw = statistics.median(replica), statistics.median(waiting)
    noise = lambda v: (max(v) - min(v)) / statistics.median(v)
    print(f"{name:<34} {str(dtype).split('.')[-1]:<9} driver {mo * 1e6:9.2f} us  do_bench {mt * 1e6:9.2f} us  "
          f"ratio {mo / mt:6.3f}  do_bench(side stream) {ms * 1e6:9.2f} us  ratio {mo / ms:6.3f}  "
          f"do_bench's sequence in C++ {mr * 1e6:9.2f} us  ratio {mo / mr:6.3f}  "
          f"same, waiting per call {mw * 1e6:9.2f} us  ratio {mo / mw:6.3f}  "
          f"spread(driver) {noise(ours):.3f}  spread(do_bench) {noise(theirs):.3f}")
    return mo / mt


def rms_norm_fn(tokens, hidden, dtype, lib=None):
    def make():
        x = torch.empty(tokens, hidden, device="cuda", dtype=dtype).uniform_(-2, 2)
        w = torch.empty(hidden, device="cuda", dtype=dtype).uniform_(0.5, 1.5)
        out = torch.empty_like(x)
        make.keep = (x, w, out)  # alive while fn is timed
        s = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        # functools.partial of prepared ctypes arguments: the least host time per call.
        if lib is None:
            return functools.partial(shim.fk_bench_rms_norm, out.data_ptr(), x.data_ptr(), w.data_ptr(), ELEM[dtype],
                                     tokens, hidden, 1e-6, s)
        return functools.partial(shim.fk_bench_rms_norm_candidate, lib, b"fk_candidate_rms_norm", out.data_ptr(),
                                 x.data_ptr(), w.data_ptr(), ELEM[dtype], tokens, hidden, 1e-6, s)
    return make


def linear_fn(m, n, k, dtype):
    def make():
        x = torch.empty(m, k, device="cuda", dtype=dtype).uniform_(-2, 2)
        w = torch.empty(n, k, device="cuda", dtype=dtype).uniform_(-2, 2)
        out = torch.empty(m, n, device="cuda", dtype=dtype)
        make.keep = (x, w, out)
        s = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        return functools.partial(shim.fk_bench_linear, out.data_ptr(), x.data_ptr(), w.data_ptr(), ELEM[dtype], m, n, k,
                                 s)
    return make


print(f"# {torch.cuda.get_device_name()}  torch {torch.__version__}  triton {triton.__version__}  repeats {REPEATS}")
ratios = []
for tokens, hidden in [(4096, 4096), (32, 4096)]:  # llama-3.1-8b prefill-4096 and decode-b32 hidden states
    ratios.append(case(f"rms_norm baseline {tokens}x{hidden}", b"rms_norm", torch.bfloat16, tokens, hidden, 0,
                       rms_norm_fn(tokens, hidden, torch.bfloat16)))
    if candidate:
        ratios.append(case(f"rms_norm candidate {tokens}x{hidden}", b"candidate:" + candidate + b":fk_candidate_rms_norm",
                           torch.bfloat16, tokens, hidden, 0, rms_norm_fn(tokens, hidden, torch.bfloat16, candidate)))
for m, n, k in [(4096, 4096, 4096), (8192, 14336, 4096)]:  # square; llama-3.1-8b gate/up-proj at 8192 tokens
    ratios.append(case(f"linear cuBLASLt {m}x{n}x{k}", b"linear", torch.bfloat16, m, n, k, linear_fn(m, n, k,
                                                                                                   torch.bfloat16)))
worst = max(abs(r - 1) for r in ratios)
print(f"worst |driver/do_bench - 1| = {100 * worst:.1f}%")
