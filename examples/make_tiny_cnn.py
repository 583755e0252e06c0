"""Writes examples/tiny_cnn.pt2 and examples/tiny_cnn.io.safetensors.

The model `make run` imports: a small image classifier (convolution, batch
norm in eval mode, ReLU, max pooling, a residual add, global average pooling
and a linear head) exported with torch.export with a dynamic batch size in
[1, 64] and decomposed to Core ATen, plus its example inputs and PyTorch's
own outputs for them, so that a checkout without ../shared still runs a real
exported model and checks it against PyTorch.

Run with PyTorch 2.9 or later (it was made with 2.11):
    python3 examples/make_tiny_cnn.py
"""
import os

import torch
from safetensors.torch import save_file


class TinyCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.block = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.head = torch.nn.Linear(8, 10)

    def forward(self, x):
        h = torch.relu(self.bn(self.stem(x)))
        h = torch.nn.functional.max_pool2d(h, 2)
        h = h + torch.relu(self.block(h))
        h = torch.nn.functional.adaptive_avg_pool2d(h, 1).flatten(1)
        return torch.log_softmax(self.head(h), dim=-1)


def main():
    torch.manual_seed(0)
    model = TinyCNN().eval()
    with torch.no_grad():  # give batch norm statistics that are not 0 and 1
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(3, 3, 16, 16)
    batch = torch.export.Dim("batch", min=1, max=64)
    ep = torch.export.export(model, (x,), dynamic_shapes=({0: batch},))
    ep = ep.run_decompositions()
    here = os.path.dirname(os.path.abspath(__file__))
    torch.export.save(ep, os.path.join(here, "tiny_cnn.pt2"))
    with torch.no_grad():
        y = model(x)
    save_file({"input0": x.contiguous(), "output0": y.contiguous()},
              os.path.join(here, "tiny_cnn.io.safetensors"))
    print("torch", torch.__version__, "wrote tiny_cnn.pt2 and tiny_cnn.io.safetensors")


if __name__ == "__main__":
    main()
