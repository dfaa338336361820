#!/usr/bin/python3
"""make accuracy: memopt's `framework: pytorch` activation estimate against
what PyTorch autograd really keeps.

For each case it builds one Megatron-style transformer layer in PyTorch (CPU,
fp32 or bf16; [s, b, h] layout; fused QKV; eager DotProductAttention with GQA
expanded by repeat_interleave; fused LayerNorm / RMSNorm that save fp32
statistics, as Apex / Transformer Engine do; fused SwiGLU; torch.native_dropout
with its bool mask), runs its forward under torch.autograd.graph.saved_tensors_hooks
and sums the unique storages saved for backward (parameters excluded).
Recompute is torch.utils.checkpoint around the selected module. It then runs
`memopt estimate --json` on the same layer and compares layers[0].activation_bytes.

Usage: /usr/bin/python3 tests/accuracy/accuracy.py [--memopt build/memopt] [--quick]
Exit 1 when a case is off by more than 1%.
"""
import argparse
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


# ---- fused ops (forward only: the harness measures what forward saves) ----

class FusedLayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        x32 = x.float()
        mu = x32.mean(-1, keepdim=True)
        rstd = torch.rsqrt(x32.var(-1, unbiased=False, keepdim=True) + 1e-5)
        ctx.save_for_backward(x, w, b, mu, rstd)
        return ((x32 - mu) * rstd * w.float() + b.float()).to(x.dtype)


class FusedRMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        x32 = x.float()
        rstd = torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-5)
        ctx.save_for_backward(x, w, rstd)
        return (x32 * rstd * w.float()).to(x.dtype)


class FusedSwiGLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        a, b = x.chunk(2, -1)
        return F.silu(a) * b


def param(*shape, dtype):
    return torch.nn.Parameter(torch.randn(*shape, dtype=torch.float32).mul_(0.02).to(dtype))


class Layer:
    def __init__(self, c):
        self.c = c
        h, a, g, hn, f, dt = c["h"], c["a"], c["g"], c["hn"], c["f"], c["dtype"]
        self.params = []
        def p(*shape):
            t = param(*shape, dtype=dt)
            self.params.append(t)
            return t
        self.n1w, self.n1b = p(h), p(h)
        self.n2w, self.n2b = p(h), p(h)
        self.wqkv = p((a + 2 * g) * hn, h)
        self.wproj = p(h, a * hn)
        f1 = 2 * f if c["act"] == "swiglu" else f
        self.w1 = p(f1, h)
        self.w2 = p(h, f)

    def norm(self, x, w, b):
        if self.c["norm"] == "LayerNorm":
            return FusedLayerNorm.apply(x, w, b)
        return FusedRMSNorm.apply(x, w)

    def dropout(self, x, p):
        return torch.native_dropout(x, p, True)[0] if p > 0 else x

    def core_attention(self, q, k, v):
        c = self.c
        s, b, a, g, hn = c["s"], c["b"], c["a"], c["g"], c["hn"]
        if g < a:
            k = k.repeat_interleave(a // g, dim=2)
            v = v.repeat_interleave(a // g, dim=2)
        q2 = q.reshape(s, b * a, hn)
        k2 = k.reshape(s, b * a, hn)
        v2 = v.reshape(s, b * a, hn)
        buf = torch.empty(b * a, s, s, dtype=q.dtype)
        scores = torch.baddbmm(buf, q2.transpose(0, 1), k2.transpose(0, 1).transpose(1, 2),
                               beta=0.0, alpha=1.0 / math.sqrt(hn))
        probs = torch.softmax(scores.view(b, a, s, s), dim=-1)
        probs = self.dropout(probs, c["adrop"])
        ctx = torch.bmm(probs.view(b * a, s, s), v2.transpose(0, 1))
        return ctx.view(b, a, s, hn).permute(2, 0, 1, 3).contiguous().view(s, b, a * hn)

    def qkv(self, ln1):
        c = self.c
        s, b, a, g, hn = c["s"], c["b"], c["a"], c["g"], c["hn"]
        mixed = F.linear(ln1, self.wqkv).view(s, b, g, (a // g + 2) * hn)
        q, k, v = torch.split(mixed, [a // g * hn, hn, hn], dim=3)
        return q.reshape(s, b, a, hn), k, v

    def self_attention(self, ln1):
        q, k, v = self.qkv(ln1)
        if self.c["rc"] == "core_attention":
            ctx = checkpoint(self.core_attention, q, k, v)
        else:
            ctx = self.core_attention(q, k, v)
        return F.linear(ctx, self.wproj)

    def mlp(self, ln2):
        y = F.linear(ln2, self.w1)
        if self.c["act"] == "swiglu":
            y = FusedSwiGLU.apply(y)
        else:
            y = F.gelu(y)
        return F.linear(y, self.w2)

    def layer(self, x):
        c = self.c
        ln1 = self.norm(x, self.n1w, self.n1b)
        if c["rc"] == "self_attention":
            attn = checkpoint(self.self_attention, ln1)
        else:
            attn = self.self_attention(ln1)
        x2 = x + self.dropout(attn, c["hdrop"])
        ln2 = self.norm(x2, self.n2w, self.n2b)
        m = checkpoint(self.mlp, ln2) if c["rc"] == "mlp" else self.mlp(ln2)
        return x2 + self.dropout(m, c["hdrop"])

    def forward(self, x):
        if self.c["rc"] == "full":
            return checkpoint(self.layer, x)
        return self.layer(x)


def measure(c):
    torch.manual_seed(0)
    layer = Layer(c)
    x = torch.randn(c["s"], c["b"], c["h"], dtype=torch.float32).to(c["dtype"]).requires_grad_()
    params = {t.storage().data_ptr() for t in layer.params}
    seen = {}

    def pack(t):
        st = t.storage()
        if st.data_ptr() not in params:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = layer.forward(x)
    del y
    return sum(seen.values())


# ---- memopt ----------------------------------------------------------------

def model_yaml(c):
    return f"""model:
  num_layers: 1
  hidden_size: {c['h']}
  ffn_hidden_size: {c['f']}
  num_attention_heads: {c['a']}
  num_query_groups: {c['g']}
  kv_channels: {c['hn']}
  vocab_size: 1000
  seq_length: {c['s']}
  normalization: {c['norm']}
  hidden_act: {c['act']}
  attention: eager
  hidden_dropout: {c['hdrop']}
  attention_dropout: {c['adrop']}
training:
  micro_batch_size: {c['b']}
  micro_batch_num: 1
  compute_dtype: {'bfloat16' if c['dtype'] == torch.bfloat16 else 'float32'}
  params_dtype: {'bfloat16' if c['dtype'] == torch.bfloat16 else 'float32'}
  framework: pytorch
  transformer_impl: local
parallel:
  world_size: 1
  data_parallel: 1
"""


def config_yaml(c):
    if c["rc"] == "none":
        return "recompute:\n  mode: None\n"
    if c["rc"] == "full":
        return "recompute:\n  mode: full\n  full_recompute_layer: [0]\n"
    path = {"core_attention": "self_attention.core_attention"}.get(c["rc"], c["rc"])
    return f"recompute:\n  mode: select\n  select_module:\n    '{path}': [0]\n"


def estimate(memopt, c, tmp):
    mp, cp = os.path.join(tmp, "m.yaml"), os.path.join(tmp, "c.yaml")
    with open(mp, "w") as f:
        f.write(model_yaml(c))
    with open(cp, "w") as f:
        f.write(config_yaml(c))
    out = subprocess.run([memopt, "estimate", "--json", "--model", mp, cp],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"memopt failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)["layers"][0]["activation_bytes"]


SHAPES = {
    # name: s, b, h, a, g (GQA), hn, f
    "s256 b2 h256 a8": (256, 2, 256, 8, 2, 32, 1024),
    "odd s77 b3 h120 a6": (77, 3, 120, 6, 3, 20, 333),
}


def cases(quick):
    rcs = ["none", "core_attention", "self_attention", "mlp", "full"]
    for shape, (s, b, h, a, g, hn, f) in SHAPES.items():
        odd = shape.startswith("odd")
        for rc, dtype, act, norm, drop, gqa in itertools.product(
                rcs, [torch.float32, torch.bfloat16], ["gelu", "swiglu"],
                ["LayerNorm", "RMSNorm"], [0.0, 0.1], [False, True]):
            if (quick or odd) and (act, norm) not in (("gelu", "LayerNorm"), ("swiglu", "RMSNorm")):
                continue
            yield dict(shape=shape, s=s, b=b, h=h, a=a, g=g if gqa else a, hn=hn, f=f,
                       rc=rc, dtype=dtype, act=act, norm=norm, hdrop=drop, adrop=drop)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memopt", default="build/memopt")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tolerance", type=float, default=1.0, help="percent")
    args = ap.parse_args()
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    rows, worst, bad = [], 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for c in cases(args.quick):
            real = measure(c)
            est = estimate(args.memopt, c, tmp)
            err = (est - real) / real * 100.0
            worst = max(worst, abs(err))
            bad += abs(err) > args.tolerance
            rows.append((c, real, est, err))
    print(f"{'shape':20} {'recompute':15} {'dtype':8} {'act':6} {'norm':9} {'drop':4} "
          f"{'attn':4} {'torch B':>12} {'memopt B':>12} {'err %':>7}")
    for c, real, est, err in rows:
        print(f"{c['shape']:20} {c['rc']:15} {str(c['dtype'])[6:]:8} {c['act']:6} {c['norm']:9} "
              f"{c['hdrop']:<4} {'GQA' if c['g'] < c['a'] else 'MHA':4} {real:12d} {est:12d} {err:7.3f}")
    print(f"\n{len(rows)} cases, worst |error| {worst:.3f}%, {bad} over {args.tolerance}%")
    summary = {}
    for c, real, est, err in rows:
        key = (c["rc"], str(c["dtype"])[6:])
        n, w = summary.get(key, (0, 0.0))
        summary[key] = (n + 1, max(w, abs(err)))
    print("\n| recompute | dtype | cases | worst error |\n|---|---|---|---|")
    for (rc, dt), (n, w) in summary.items():
        print(f"| {rc} | {dt} | {n} | {w:.3f}% |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
