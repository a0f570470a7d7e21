"""The image models of specs/campaigns/full-cuda-images.yaml in HF transformers on the GPU,
for the model stage's step times beside them: each model built from the shipped spec's
values with random weights, in the spec's dtype, on `batch` images of its size, timed as
a forward pass without gradients (CUDA events; 3 warm-up passes, the median of 20),
eager and with torch.compile. ConvNeXt V2 runs channels-last too (its fastest layout in
PyTorch). Usage: python3 bench/gpu/images_torch.py [batch]"""
import statistics
import sys

import torch
import transformers

BATCH = int(sys.argv[1]) if len(sys.argv) > 1 else 8

MODELS = {
    # name: (config, dtype, image size)
    "convnextv2-base": (lambda: transformers.ConvNextV2Config(depths=[3, 3, 27, 3], hidden_sizes=[128, 256, 512, 1024],
                                                              patch_size=4, image_size=384), torch.float32, 384),
    "dinov2-large": (lambda: transformers.Dinov2Config(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                                                       mlp_ratio=4, image_size=518, patch_size=14, layer_norm_eps=1e-6),
                     torch.bfloat16, 518),
    "siglip-so400m": (lambda: transformers.SiglipVisionConfig(hidden_size=1152, intermediate_size=4304,
                                                              num_hidden_layers=27, num_attention_heads=16,
                                                              image_size=384, patch_size=14, layer_norm_eps=1e-6,
                                                              vision_use_head=False), torch.bfloat16, 384),
}
CLASSES = {"convnextv2-base": "ConvNextV2Model", "dinov2-large": "Dinov2Model", "siglip-so400m": "SiglipVisionModel"}


def timed(fn, x):
    with torch.no_grad():
        for _ in range(3):
            fn(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn(x)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {torch.cuda.get_device_name()}")
    for name, (make, dtype, size) in MODELS.items():
        cfg = make()
        # The transformers take SDPA attention; a ConvNeXt has no attention to choose.
        if not name.startswith("convnext"):
            cfg._attn_implementation = "sdpa"
        model = getattr(transformers, CLASSES[name])(cfg).to("cuda", dtype).eval()
        x = torch.rand((BATCH, 3, size, size), device="cuda", dtype=dtype) * 2 - 1
        rows = {"eager": timed(model, x)}
        if name.startswith("convnext"):
            cl = model.to(memory_format=torch.channels_last)
            rows["eager channels_last"] = timed(cl, x.contiguous(memory_format=torch.channels_last))
        try:
            rows["torch.compile"] = timed(torch.compile(model), x)
        except Exception as e:  # noqa: BLE001 - a compile failure is a row, not the end
            rows["torch.compile"] = f"failed: {type(e).__name__}"
        for k, v in rows.items():
            print(f"{name} batch {BATCH} {str(dtype).split('.')[-1]} {k}: "
                  + (f"{v:.3f} ms" if isinstance(v, float) else v))
        del model
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
