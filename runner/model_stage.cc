#include "runner/model_stage.h"

#include "core/error.h"
#include "core/rng.h"
#include "core/spec/family.h"
#include "kernels/backends.h"
#include "runner/heartbeat.h"
#include "runner/model/checkpoint_weights.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <tuple>

namespace fk::runner {
namespace {

constexpr double kTraceBudgetBytes = 512.0 * (1 << 20);

// Sums events of one step into op records and the compute/communication split.
class StepSink final : public EventSink {
 public:
  void begin(const std::string& run, int64_t iteration, const std::string& step, int64_t rank) {
    run_ = run;
    iteration_ = iteration;
    step_ = step;
    rank_ = rank;
    compute_ = comm_ = 0;
    ops_.clear();
  }
  void on_event(const OpEvent& e) override {
    (e.kind == EventKind::kComm ? comm_ : compute_) += e.seconds;
    auto key = std::make_tuple(e.layer, e.op, e.role);
    auto it = ops_.find(key);
    if (it == ops_.end())
      it = ops_.emplace(key, OpTiming{run_, iteration_, step_, rank_, e.layer, e.op, e.role,
                                      e.kind == EventKind::kComm, 0, 0, 0})
               .first;
    ++it->second.calls;
    it->second.seconds += e.seconds;
    it->second.bytes += e.bytes;
  }
  void end(double total, ModelStageOutput& out) {
    out.steps.push_back({run_, iteration_, step_, rank_, total, compute_, comm_});
    for (auto& [k, v] : ops_) out.ops.push_back(v);
  }

 private:
  std::string run_, step_;
  int64_t iteration_ = 0, rank_ = 0;
  double compute_ = 0, comm_ = 0;
  std::map<std::tuple<int64_t, std::string, std::string>, OpTiming> ops_;
};

double sq_sum(const float* a, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * a[i];
  return s;
}

double sq_diff(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    s += d * d;
  }
  return s;
}

std::vector<double> log_softmax(const float* x, int64_t n) {
  double mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = std::max(mx, static_cast<double>(x[i]));
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - mx);
  const double lse = mx + std::log(sum);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = x[i] - lse;
  return out;
}

int64_t argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

double kl(const float* ref, const float* run, int64_t n) {
  const auto p = log_softmax(ref, n), q = log_softmax(run, n);
  double s = 0;
  for (size_t i = 0; i < p.size(); ++i) s += std::exp(p[i]) * (p[i] - q[i]);
  return std::isfinite(s) ? std::max(0.0, s) : s;  // NaN logits must not read as agreement
}

class ModelStage {
 public:
  explicit ModelStage(const ModelStageConfig& c)
      : c_(c),
        a_(c.arch),
        w_(spec::family_workload(c.arch, c.workload)),
        pl_(c.placement),
        family_(model_family_of(c.arch)),
        output_(family_.output(c.arch)) {
    if (c.backend == nullptr) own_backend_ = kernels::backend_create(DeviceKind::kCpu, 0);
    backend_ = c.backend != nullptr ? c.backend : own_backend_.get();
    const int64_t local_layers = pl_.layer_count(a_);
    const double prefill_bytes = static_cast<double>(pl_.batch_size(w_) * w_.seq_len * a_.hidden_size) * 4.0 * 2.0 *
                                 static_cast<double>(local_layers);
    trace_all_rows_ = prefill_bytes <= kTraceBudgetBytes;
    steps_ = family_.steps(a_, w_);
    // The stage feeds the prompt to the first step and one greedy token to each later one.
    bool plan_ok = !steps_.empty() && steps_.front().q_start == 0 && steps_.front().q_len == w_.seq_len;
    for (size_t s = 1; plan_ok && s < steps_.size(); ++s) plan_ok = steps_[s].q_len == 1;
    if (!plan_ok)
      fail(ErrorKind::kInternal,
           "model family '{}': a step plan opens with the prompt (q_start 0, q_len {}) and takes one token a "
           "step after it",
           a_.model_family, w_.seq_len);
    if (output_.kind == OutputKind::kFeatures && steps_.size() > 1)
      fail(ErrorKind::kInternal, "model family '{}': a model without logits has no token to feed step '{}'",
           a_.model_family, steps_[1].name);
  }

  // The shape pass (model_stage_instances): one pass over every step with placeholder
  // weights, no op run, recording what the baseline run would record.
  std::vector<InstanceRecord> instances() {
    const std::unique_ptr<Weights> weights = family_.placeholder_weights(a_, pl_, w_.dtype_for(a_));
    const auto host = kernels::backend_create(DeviceKind::kCpu, 0);
    Runtime rt(ImplSet::baseline(backend_->kind()), *host);
    rt.set_shapes_only(true);
    InstanceRecorder recorder;
    rt.set_recorder(&recorder);
    const std::unique_ptr<Model> model = family_.build({a_, w_, pl_, c_.comms, *weights, rt});
    const Tensor prompt = model_stage_prompt(a_, w_, pl_, c_.seed);
    for (size_t s = 0; s < steps_.size(); ++s) {
      recorder.set_measured(measured_step(s));
      model->step(s == 0 ? prompt : Tensor::zeros(DType::kI64, {pl_.batch_size(w_), 1}), steps_[s].q_len,
                 steps_[s].q_start);
    }
    return recorder.instances();
  }

  ModelStageOutput run() {
    out_.traced_rows_per_sequence = trace_all_rows_ ? w_.seq_len : 1;
    const DType dtype = w_.dtype_for(a_);
    // The architecture's checkpoint when it names one (each rank reads its shard),
    // else the seed's random weights.
    std::unique_ptr<WeightSource> source;
    if (a_.checkpoint.empty()) {
      source = std::make_unique<RandomWeights>(c_.seed);
    } else {
      source = std::make_unique<CheckpointWeights>(a_.checkpoint, a_, family_.checkpoint_names(a_));
    }
    out_.reference = reference();
    const bool streamed = out_.reference == spec::ReferenceWeights::kStreamed;
    if (backend_->kind() != DeviceKind::kCpu) {
      // A job the device cannot hold fails here, in a second, not minutes later when a
      // run's weights no longer fit.
      const spec::Layout layout{pl_.tp, pl_.pp, pl_.dp};
      const std::string why =
          model_stage_memory_refusal(spec::memory_estimate(a_, w_, layout, backend_->kind(), out_.reference).total(),
                                     backend_->facts().memory_bytes, backend_->name(), out_.reference);
      if (!why.empty()) fail(ErrorKind::kUnsupported, "{} x {} in {}: {}", a_.name, w_.name, layout.name(), why);
    }
    // On the CPU the fp32 master is kept and rounded once; a device holds one
    // precision at a time, each made in place for its run, and so does the CPU when the
    // reference streams its weights (no whole fp32 copy is ever held then).
    std::shared_ptr<const Weights> master, lowp;
    if (backend_->kind() == DeviceKind::kCpu && !streamed) {
      master = family_.master_weights(a_, pl_, *source);
      lowp = dtype == DType::kF32 ? master : std::shared_ptr<const Weights>(master->rounded(dtype));
    }
    auto weights = [&](DType d) -> std::shared_ptr<const Weights> {
      if (master) return d == DType::kF32 ? master : lowp;
      if (streamed && d == DType::kF32) return family_.streamed_weights(a_, pl_, *source, d, *backend_);
      return family_.load_weights(a_, pl_, *source, d, *backend_);
    };
    const ImplSet base = ImplSet::baseline(backend_->kind());
    prompt_ = model_stage_prompt(a_, w_, pl_, c_.seed);
    // Each run's peak memory counts from just before its weights are made to its end.
    auto run = [&](const std::string& name, DType d, const ImplSet& impls, bool is_fp32) {
      const Device device = backend_->device();
      reset_memory_peaks(device);
      run_one(name, timed_weights(name, d, weights), impls, is_fp32);
      if (const auto use = memory_use(device))
        out_.memory.push_back({name, c_.rank, backend_->name(), use->peak_in_use, use->peak_reserved});
    };
    run("fp32", DType::kF32, base, true);
    run("baseline", dtype, c_.baseline ? *c_.baseline : base, false);
    if (c_.selected) {
      run("selected", dtype, *c_.selected, false);
    } else if (c_.select) {
      if (auto chosen = c_.select(out_.instances)) run("selected", dtype, *chosen, false);
    }
    if (pl_.last_stage() && !fp32_logits_.empty() && output_.kind == OutputKind::kLogits) {
      const int64_t b = pl_.batch_size(w_), v = output_.width;
      out_.fp32_logits = Tensor::empty(DType::kF32, {static_cast<int64_t>(steps_.size()), b, v});
      for (size_t s = 0; s < steps_.size(); ++s)
        std::memcpy(out_.fp32_logits.data_as<float>() + static_cast<int64_t>(s) * b * v, fp32_logits_[s].data(),
                    fp32_logits_[s].nbytes());
    }
    return std::move(out_);
  }

 private:
  void note(const std::string& message) const {
    if (c_.rank == 0) progress_note("model stage: " + message);
  }

  // How the fp32 run holds its weights (ModelStageConfig::reference).
  spec::ReferenceWeights reference() const {
    const spec::ReferenceWeights asked = c_.reference;
    const bool can = family_.streamed_weights != nullptr;
    const bool fp32_workload = w_.dtype_for(a_) == DType::kF32;
    if (asked == spec::ReferenceWeights::kStreamed) {
      if (!can)
        fail(ErrorKind::kUnsupported,
             "model_stage.reference: streamed: the '{}' model family cannot stream its weights (use resident)",
             a_.model_family);
      if (fp32_workload)
        fail(ErrorKind::kInvalidArgument,
             "model_stage.reference: streamed: workload '{}' runs {} in fp32, so its baseline run holds the same "
             "fp32 weights; streaming the reference saves nothing (use resident or a bf16/fp16 workload)",
             w_.name, a_.name);
      note("the fp32 run makes each layer's weights when it reaches it (model_stage.reference: streamed)");
      return asked;
    }
    if (asked == spec::ReferenceWeights::kResident || !can || fp32_workload) return spec::ReferenceWeights::kResident;
    const spec::Layout layout{pl_.tp, pl_.pp, pl_.dp};
    const int64_t need = spec::memory_estimate(a_, w_, layout, backend_->kind()).total();
    const int64_t have = backend_->facts().memory_bytes;
    if (!reference_needs_streaming(need, have)) return spec::ReferenceWeights::kResident;
    note(fmt::format(
        "the fp32 run would hold {} on a device of {}: it makes each layer's weights when it reaches "
        "it (model_stage.reference: auto; streamed needs {})",
        spec::bytes_human(need), spec::bytes_human(have),
        spec::bytes_human(
            spec::memory_estimate(a_, w_, layout, backend_->kind(), spec::ReferenceWeights::kStreamed).total())));
    return spec::ReferenceWeights::kStreamed;
  }

  template <typename Make>
  std::shared_ptr<const Weights> timed_weights(const std::string& run, DType dtype, Make& make) const {
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const Weights> w = make(dtype);
    note(fmt::format("{} run: {} weights ({} parameters) ready on {} in {:.1f} s", run, dtype_name(dtype),
                     w->parameter_count(), backend_->name(),
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
    return w;
  }

  // The step whose calls the kernel stage times: the prefill of a prefill workload (or
  // of a model without decode steps), else the first decode step.
  bool measured_step(size_t s) const {
    const bool prefill = w_.phase == spec::Phase::kPrefill || steps_.size() == 1;
    return prefill ? s == 0 : s == 1;
  }

  LayerError& layer_error(const std::string& run, const std::string& step, int64_t layer) {
    auto key = std::make_tuple(run, step, layer);
    auto it = errors_.find(key);
    if (it == errors_.end()) it = errors_.emplace(key, LayerError{run, step, layer, 0, 0, 0, 0, 0}).first;
    return it->second;
  }

  void compare_stream(const std::string& run, const std::string& step, int64_t layer, int64_t seq_begin,
                      const Tensor& t) {
    auto key = std::make_tuple(step, layer, seq_begin);
    LayerError& e = layer_error(run, step, layer);
    const Tensor& f = fp32_streams_.at(key);
    e.err_vs_fp32 += sq_diff(t.data_as<float>(), f.data_as<float>(), t.numel());
    e.ref_fp32 += sq_sum(f.data_as<float>(), f.numel());
    e.rows += t.size(0);
    if (run == "selected") {
      const Tensor& b = base_streams_.at(key);
      e.err_vs_baseline += sq_diff(t.data_as<float>(), b.data_as<float>(), t.numel());
      e.ref_baseline += sq_sum(b.data_as<float>(), b.numel());
    }
  }

  // The run's weights live on the backend while it lasts (a device holds one precision at a time).
  void run_one(const std::string& run, const std::shared_ptr<const Weights>& weights, const ImplSet& impls,
               bool is_fp32) {
    Runtime rt(impls, *backend_);
    StepSink sink;
    rt.set_sink(&sink);
    InstanceRecorder recorder;
    const std::unique_ptr<Model> model = family_.build({a_, w_, pl_, c_.comms, *weights, rt});
    model->set_trace_last_rows(!trace_all_rows_);
    // The fp32 run is the reference, not a contender: one iteration.
    const int64_t iterations = is_fp32 ? 1 : std::max<int64_t>(1, c_.iterations);
    // Decode steps of later iterations replay graphs (ModelStageConfig::graphs), one per
    // step, destroyed before the model.
    const bool replayable = !is_fp32 && iterations > 1 && steps_.size() > 1 && backend_->kind() != DeviceKind::kCpu;
    const std::string eager = replayable ? eager_reason(*model) : "";
    bool use_graphs = replayable && eager.empty();
    if (!eager.empty()) note(fmt::format("{} run: decode steps stay eager: {}", run, eager));
    std::vector<std::unique_ptr<kernels::Graph>> graphs(steps_.size());
    for (int64_t it = 0; it < iterations; ++it) {
      model->reset();
      std::string current_step;
      if (it == 0) {
        model->set_layer_hook([&](int64_t layer, int64_t seq_begin, const Tensor& stream) {
          if (layer < 0 || layer >= a_.num_hidden_layers) return;  // embeddings, final norm: not traced
          const Tensor& t = stream;
          auto key = std::make_tuple(current_step, layer, seq_begin);
          if (is_fp32) {
            fp32_streams_[key] = t;
          } else {
            compare_stream(run, current_step, layer, seq_begin, t);
            if (run == "baseline") base_streams_[key] = t;
          }
        });
      } else {
        model->set_layer_hook(nullptr);
      }
      for (size_t s = 0; s < steps_.size(); ++s) {
        const ModelStep& sp = steps_[s];
        current_step = sp.name;
        // Every step of the baseline run's first iteration is recorded (candidates are
        // checked at every shape the model calls); the measured step is marked.
        const bool record = it == 0 && !is_fp32 && run == "baseline" && c_.record_instances;
        recorder.set_measured(measured_step(s));
        rt.set_recorder(record ? &recorder : nullptr);
        Tensor tokens = s == 0 ? prompt_ : decode_tokens(s - 1);
        if (use_graphs && it >= 1 && s >= 1) {
          if (graph_step(rt, *model, graphs[s], sp, tokens, run, it)) continue;
          use_graphs = false;  // the capture failed: this step and the rest run eagerly
        }
        sink.begin(run, it, sp.name, c_.rank);
        const auto t0 = std::chrono::steady_clock::now();
        Tensor result;
        if (it == 0 || !model->splits_step()) {
          result = model->step(tokens, sp.q_len, sp.q_start);
        } else {  // later iterations leave the outputs on the device (a server samples there)
          model->prepare(tokens, sp.q_len, sp.q_start);
          model->forward();
          rt.flush();
        }
        sink.end(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), out_);
        if (it == 0) {
          after_step(run, s, result, is_fp32);
          if (s == 0 || s + 1 == steps_.size())
            note(fmt::format("{} run: {} done in {:.3f} s", run, sp.name, out_.steps.back().total_s));
        }
        if (is_fp32 && it == 0 && s + 1 < steps_.size()) pass_tokens(s, result);
      }
      if (!recorder.instances().empty()) out_.instances = recorder.instances();
    }
    if (run != "fp32") {
      for (auto& [k, e] : errors_)
        if (std::get<0>(k) == run) out_.layers.push_back(e);
    }
  }

  // Why the decode steps of a run that has some after iteration 0, on a backend with
  // graphs, stay eager ("": they replay graphs).
  std::string eager_reason(const Model& model) const {
    auto several = [](const collectives::Communicator* c) { return c != nullptr && c->size() > 1; };
    if (!c_.graphs) return "graphs are off (model_stage.graphs: false)";
    if (c_.selected || c_.select)
      return "candidates take part in this job; they run in sandboxed workers, outside any graph, so every run is "
             "timed eagerly alike";
    if (several(c_.comms.tp) || several(c_.comms.pp))
      return "the model spans several ranks, whose captures would have to agree (not built yet)";
    if (!model.splits_step()) return fmt::format("model family '{}' does not split its step", a_.model_family);
    return "";
  }

  // One decode step of a later iteration as a graph: prepare() stages its inputs, the
  // step's forward() is captured on first use and replayed; the step's time is the
  // staging plus the replay until the stream is done, its compute time the replay's
  // device time.
  // False (nothing recorded) when the capture failed: the caller runs the step eagerly.
  bool graph_step(Runtime& rt, Model& model, std::unique_ptr<kernels::Graph>& graph, const ModelStep& sp,
                  const Tensor& tokens, const std::string& run, int64_t it) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    model.prepare(tokens, sp.q_len, sp.q_start);
    const double staged = std::chrono::duration<double>(clock::now() - t0).count();
    if (!graph) {
      rt.set_timed(false);
      try {
        graph = backend_->capture([&] { model.forward(); });
      } catch (const Error& e) {
        rt.set_timed(true);
        if (e.kind() != ErrorKind::kUnsupported) throw;
        note(fmt::format("{} run: {} stays eager, and so do the steps after it: {}", run, sp.name, e.what()));
        return false;
      }
      rt.set_timed(true);
      if (!graph) return false;
      if (&sp == &steps_[1]) note(fmt::format("{} run: decode steps captured as graphs, one a step", run));
    }
    if (!graph_timer_) graph_timer_ = backend_->timer();
    const auto t1 = clock::now();
    graph_timer_->start();
    graph->replay();
    graph_timer_->stop();
    rt.flush();  // waits; the outputs stay on the device, as in an eager later iteration
    const double total = staged + std::chrono::duration<double>(clock::now() - t1).count();
    out_.steps.push_back({run, it, sp.name, c_.rank, total, graph_timer_->seconds(), 0, true});
    return true;
  }

  // Tokens fed at decode step j: the fp32 run's greedy choice after step j.
  Tensor decode_tokens(size_t j) const {
    if (!pl_.first_stage()) return Tensor::zeros(DType::kI64, {pl_.batch_size(w_), 1});
    return forced_.at(j);
  }

  // fp32 run: the last stage picks the next tokens and hands them to the first stage.
  void pass_tokens(size_t s, const Tensor& logits) {
    const int64_t b = pl_.batch_size(w_);
    Tensor next = Tensor::empty(DType::kI64, {b, 1});
    if (pl_.last_stage()) {
      for (int64_t i = 0; i < b; ++i)
        next.data_as<int64_t>()[i] = argmax(logits.data_as<float>() + i * output_.width, output_.width);
      greedy_.push_back(next);
    }
    if (pl_.pp > 1) {  // through the pipeline group, in the backend's memory
      Runtime rt(ImplSet::baseline(backend_->kind()), *backend_);
      const Tensor buf = pl_.last_stage() ? rt.upload(next) : rt.empty(DType::kI64, {b, 1});
      if (pl_.last_stage()) rt.send(c_.comms.pp, buf, 0, static_cast<int>(100000 + s), "pp.tokens");
      if (pl_.first_stage()) {
        rt.recv(c_.comms.pp, buf, static_cast<int>(pl_.pp - 1), static_cast<int>(100000 + s), "pp.tokens");
        next = backend_->to_host(buf);
      }
      rt.flush();
    }
    if (pl_.first_stage()) forced_.push_back(next);
  }

  void after_step(const std::string& run, size_t s, const Tensor& result, bool is_fp32) {
    if (!pl_.last_stage() || !result.defined()) return;
    const std::string& step = steps_[s].name;
    if (output_.kind == OutputKind::kFeatures) {  // e.g. an encoder's final hidden states
      const int64_t layer = a_.num_hidden_layers;
      auto key = std::make_tuple(step, layer, int64_t{0});
      if (is_fp32) {
        fp32_streams_[key] = result.contiguous_copy();
      } else {
        compare_stream(run, step, layer, 0, result);
        if (run == "baseline") base_streams_[key] = result.contiguous_copy();
      }
      return;
    }
    const int64_t b = pl_.batch_size(w_), v = output_.width;
    if (is_fp32) {
      fp32_logits_.push_back(result.contiguous_copy());
      return;
    }
    if (run == "baseline") base_logits_.push_back(result.contiguous_copy());
    LogitStats st{run, step, b, 0, 0, 0, 0};
    const float* f = fp32_logits_.at(s).data_as<float>();
    const float* bl = base_logits_.at(s).data_as<float>();
    for (int64_t i = 0; i < b; ++i) {
      const float* x = result.data_as<float>() + i * v;
      const int64_t top = argmax(x, v);
      st.top1_match_fp32 += top == argmax(f + i * v, v);
      st.top1_match_baseline += top == argmax(bl + i * v, v);
      st.kl_sum_fp32 += kl(f + i * v, x, v);
      st.kl_sum_baseline += kl(bl + i * v, x, v);
    }
    out_.logits.push_back(st);
  }

  const ModelStageConfig& c_;
  std::unique_ptr<kernels::Backend> own_backend_;
  kernels::Backend* backend_ = nullptr;
  const spec::Architecture& a_;
  const spec::Workload w_;  // as the architecture's family runs it (spec::family_workload)
  Placement pl_;
  bool trace_all_rows_ = true;
  std::unique_ptr<kernels::Timer> graph_timer_;
  const ModelFamily& family_;
  const ModelOutput output_;
  std::vector<ModelStep> steps_;
  Tensor prompt_;
  std::vector<Tensor> forced_, greedy_, fp32_logits_, base_logits_;
  std::map<std::tuple<std::string, int64_t, int64_t>, Tensor> fp32_streams_, base_streams_;
  std::map<std::tuple<std::string, std::string, int64_t>, LayerError> errors_;
  ModelStageOutput out_;
};

}  // namespace

Tensor model_stage_prompt(const spec::Architecture& a, const spec::Workload& w, const Placement& p, uint64_t seed) {
  const ModelFamily& family = model_family_of(a);
  return family.prompt != nullptr ? family.prompt(a, w, p, seed) : random_token_prompt(a, w, p, seed);
}

std::string model_stage_memory_refusal(int64_t need_bytes, int64_t device_bytes, const std::string& device,
                                       spec::ReferenceWeights reference) {
  if (device_bytes <= 0 || need_bytes <= device_bytes) return "";
  std::string hint = "use a layout with more tp or pp ranks, or a device with more memory";
  if (reference == spec::ReferenceWeights::kResident)
    hint = "stream the reference's weights (model_stage.reference: streamed or auto), " + hint;
  return fmt::format(
      "the model stage needs about {} a rank (docs/specs.md, \"Memory estimate\"; the fp32 reference "
      "{}) and {} has {}: {}",
      spec::bytes_human(need_bytes), reference == spec::ReferenceWeights::kStreamed ? "streamed" : "resident", device,
      spec::bytes_human(device_bytes), hint);
}

bool reference_needs_streaming(int64_t resident_bytes, int64_t device_bytes) {
  return device_bytes > 0 && static_cast<double>(resident_bytes) > 0.9 * static_cast<double>(device_bytes);
}

ModelStageOutput model_stage_run(const ModelStageConfig& config) { return ModelStage(config).run(); }

std::vector<InstanceRecord> model_stage_instances(const ModelStageConfig& config) {
  return ModelStage(config).instances();
}

}  // namespace fk::runner
