#!/usr/bin/env python3
"""tests/zoo/export_zoo.py: exports a zoo of small real models, as a new user
would, to check that Alloy runs what torch.export leaves at the ATen level.

    /work/venv/bin/python tests/zoo/export_zoo.py OUTDIR [NAME ...]
    sh tests/zoo/run_zoo.sh path/to/alloy OUTDIR

For each model NAME (random weights, seed 0, eval mode, small inputs) it
writes OUTDIR/NAME.aten.pt2 (torch.export.export, nothing decomposed: the
composite ops and in-place ops a model calls stay in the graph) and
OUTDIR/NAME.io.safetensors (input0.., and output0.. computed by PyTorch
eager in float32). Nothing here is in the golden corpus; the files are too
large for the repo and are remade by this script.
"""
import os
import sys
import warnings

warnings.filterwarnings("ignore")
import torch  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402


def tv(name, **kw):
    import torchvision
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


def tv_seg(name, **kw):
    import torchvision
    return lambda: getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, **kw)


def vit_tiny():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                             mlp_dim=64, num_classes=10)


def hf(cls_name, config_name, **cfg):
    def make():
        import transformers
        config = getattr(transformers, config_name)(**cfg)
        config.use_cache = False  # the outputs stay tensors, without a cache object
        config._attn_implementation = "sdpa" if cls_name not in ("T5Model", "WhisperModel", "GPTNeoModel") else "eager"
        return getattr(transformers, cls_name)(config)
    return make


def image(n=1, size=64):
    return lambda: (torch.randn(n, 3, size, size),)


def tokens(n=2, seq=16, vocab=1000):
    return lambda: (torch.randint(0, vocab, (n, seq)),)


def enc_dec(vocab=1000):
    return lambda: (torch.randint(0, vocab, (2, 12)), None, torch.randint(0, vocab, (2, 8)))


# name: (model factory, input factory, kwargs names for the inputs or None)
ZOO = {
    "resnet18": (tv("resnet18"), image(), None),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), image(), None),
    "efficientnet_b0": (tv("efficientnet_b0"), image(), None),
    "shufflenet_v2_x0_5": (tv("shufflenet_v2_x0_5"), image(), None),
    "lraspp_mobilenet_v3_large": (tv_seg("lraspp_mobilenet_v3_large", num_classes=4), image(size=96), None),
    "fcn_resnet50": (tv_seg("fcn_resnet50", num_classes=4, aux_loss=False), image(size=64), None),
    "vit_tiny": (vit_tiny, image(size=32), None),
    "convnext_tiny": (tv("convnext_tiny"), image(), None),
    "swin_t": (tv("swin_t"), image(), None),
    "regnet_y_400mf": (tv("regnet_y_400mf"), image(), None),
    "mnasnet0_5": (tv("mnasnet0_5"), image(), None),
    "deeplabv3_mobilenet_v3_large": (tv_seg("deeplabv3_mobilenet_v3_large", num_classes=4, aux_loss=False),
                                     image(size=64), None),
    "r3d_18": (lambda: __import__("torchvision").models.video.r3d_18(weights=None),
               lambda: (torch.randn(1, 3, 4, 32, 32),), None),
    "distilbert_tiny": (hf("DistilBertModel", "DistilBertConfig", vocab_size=1000, dim=64, n_layers=2,
                           n_heads=2, hidden_dim=128, max_position_embeddings=64), tokens(), None),
    "roberta_tiny": (hf("RobertaModel", "RobertaConfig", vocab_size=1000, hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128, max_position_embeddings=66), tokens(), None),
    "qwen2_tiny": (hf("Qwen2Model", "Qwen2Config", vocab_size=1000, hidden_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, intermediate_size=128,
                      max_position_embeddings=64), tokens(), None),
    "bart_tiny": (hf("BartModel", "BartConfig", vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2,
                     encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=128,
                     decoder_ffn_dim=128, max_position_embeddings=64), tokens(), None),
    "albert_tiny": (hf("AlbertModel", "AlbertConfig", vocab_size=1000, embedding_size=32, hidden_size=64,
                       num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                       max_position_embeddings=64), tokens(), None),
    "gpt_neo_tiny": (hf("GPTNeoModel", "GPTNeoConfig", vocab_size=1000, hidden_size=64, num_layers=2,
                        num_heads=2, attention_types=[[["global", "local"], 1]], window_size=8,
                        max_position_embeddings=64), tokens(), None),
    "phi_tiny": (hf("PhiModel", "PhiConfig", vocab_size=1000, hidden_size=64, num_hidden_layers=2,
                    num_attention_heads=4, intermediate_size=128, max_position_embeddings=64), tokens(), None),
    "clip_vision_tiny": (hf("CLIPVisionModel", "CLIPVisionConfig", hidden_size=64, intermediate_size=128,
                            num_hidden_layers=2, num_attention_heads=2, image_size=32, patch_size=8),
                         image(size=32), None),
    "hubert_tiny": (hf("HubertModel", "HubertConfig", vocab_size=32, hidden_size=64, num_hidden_layers=2,
                       num_attention_heads=2, intermediate_size=128, conv_dim=(32, 32, 32),
                       conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
                       num_conv_pos_embedding_groups=4), lambda: (torch.randn(1, 1600),), None),
    "t5_tiny": (hf("T5Model", "T5Config", vocab_size=1000, d_model=64, d_kv=16, d_ff=128, num_layers=2,
                   num_heads=4, decoder_start_token_id=0),
                lambda: (torch.randint(0, 1000, (2, 12)),),
                {"decoder_input_ids": lambda: torch.randint(0, 1000, (2, 8))}),
    "whisper_tiny": (hf("WhisperModel", "WhisperConfig", vocab_size=1000, d_model=64, encoder_layers=2,
                        decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
                        encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=16,
                        max_source_positions=32, max_target_positions=32, pad_token_id=0,
                        bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
                        suppress_tokens=[], begin_suppress_tokens=[]),
                     lambda: (torch.randn(1, 16, 64),),
                     {"decoder_input_ids": lambda: torch.randint(0, 1000, (1, 6))}),
    "wav2vec2_tiny": (hf("Wav2Vec2Model", "Wav2Vec2Config", vocab_size=32, hidden_size=64, num_hidden_layers=2,
                         num_attention_heads=2, intermediate_size=128, conv_dim=(32, 32, 32),
                         conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
                         num_conv_pos_embedding_groups=4), lambda: (torch.randn(1, 1600),), None),
}


def save_io(path, inputs, outputs):
    from safetensors.torch import save_file
    d = {"input%d" % i: t.contiguous() for i, t in enumerate(inputs)}
    d.update({"output%d" % i: t.detach().contiguous() for i, t in enumerate(outputs)})
    save_file(d, path)


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or list(ZOO)
    os.makedirs(out, exist_ok=True)
    for name in names:
        make, inputs_of, kw_of = ZOO[name]
        torch.manual_seed(0)
        try:
            model = make().eval()
            args = inputs_of()
            kwargs = {k: f() for k, f in (kw_of or {}).items()}
            with torch.no_grad():
                ep = torch.export.export(model, args, kwargs)
                flat_in = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
                outs = [t for t in tree_flatten(ep.module()(*args, **kwargs))[0] if isinstance(t, torch.Tensor)]
            torch.export.save(ep, os.path.join(out, name + ".aten.pt2"))
            save_io(os.path.join(out, name + ".io.safetensors"), flat_in, outs)
            ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
            print("%-28s %5d nodes, %d ops: %s" % (name, len(ep.graph.nodes), len(ops), " ".join(ops)))
        except Exception as e:  # a model PyTorch itself cannot export is reported, not fatal
            print("%-28s export failed: %s" % (name, str(e).splitlines()[0][:200]))


if __name__ == "__main__":
    main()
