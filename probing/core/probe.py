"""The spatial probe and its training, following the authors' recipe.

Patch grids (H, W, D) are bilinearly resized to the N x N cell grid, then classified per cell: a 1x1 conv
D -> 512, BatchNorm, GELU, 1x1 conv 512 -> C (``conv``), or a single 1x1 conv D -> C (``linear``). The authors'
pooled probes read one vector per image instead (the features are then stored as a 1 x 1 grid): ``mean`` (the mean
of the patch tokens) or ``cls`` (the CLS token, or the first token where the read-out has none), L2-normalised, then
one linear layer D -> N*N*C. The defaults are the authors' settings: batches of 32 from the train split shuffled
afresh each epoch, AdamW (lr 5e-4, weight decay 1e-4), 5,000 steps with 5% linear warm-up from a learning rate of 0
at the first step (as their ``get_cosine_schedule_with_warmup``) then cosine decay, gradient clipping at 1.0,
validation every 500 steps,
early stopping on validation cell accuracy (patience 3); the test split is scored with the best weights. Our variants
are options: ``sampling="replacement"`` (independent random batches), other batch sizes, the ``linear`` head. Every
random choice comes from one seed; ``result.json`` records the whole ``TrainConfig`` that ran. The trained head is
kept as bytes (``save_head``; ``load_head`` reads it back after ``probing.core.heads`` has checked it), so its
predictions can be replayed on the checkpoint's features.
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from torch import nn
from torch.nn import functional as F
from tqdm.auto import tqdm

from g2m_base.errors import UsageError
from g2m_base.flags import check_int, check_number
from g2m_base.stats import bootstrap_mean, wilson
from probing.core.heads import HEAD_FORMAT, POOLED, PROBES, head_shapes, parse_head

#: How training batches are drawn: "epochs" (the authors': the train split shuffled afresh each epoch and walked in
#: batches, every image once per epoch) or "replacement" (each batch drawn at random, with replacement).
SAMPLINGS = ("epochs", "replacement")


#: The command-line option of each training setting, so a refusal names what the user typed.
_FLAGS = {"steps": "--steps", "batch_size": "--train-batch-size", "eval_every": "--eval-every",
          "patience": "--patience", "lr": "--lr", "hidden": "--hidden"}


@dataclass(frozen=True)
class TrainConfig:
    """The probe's training; the defaults are the authors' settings (batch 32, shuffled epochs)."""

    probe: str = "conv"
    steps: int = 5000
    batch_size: int = 32
    sampling: str = "epochs"
    lr: float = 5e-4
    weight_decay: float = 1e-4
    warmup_frac: float = 0.05
    grad_clip: float = 1.0
    eval_every: int = 500
    patience: int = 3
    hidden: int = 512
    seed: int = 0

    def __post_init__(self) -> None:
        if self.probe not in PROBES:
            raise UsageError(f"probe must be one of {PROBES}, got {self.probe!r}")
        if self.sampling not in SAMPLINGS:
            raise UsageError(f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}")
        for name, top in (("steps", 10**9), ("batch_size", 1 << 16), ("eval_every", 10**9), ("patience", 10**6),
                          ("hidden", 1 << 16)):
            check_int(_FLAGS.get(name, name), getattr(self, name), 1, top)
        check_int("--seed", self.seed, 0, 2**32 - 1)
        for name, low, high, low_open, high_open in (("lr", 0, 10, True, False), ("weight_decay", 0, 10, False, False),
                                                     ("warmup_frac", 0, 1, False, True),
                                                     ("grad_clip", 0, 1e6, True, False)):
            check_number(_FLAGS.get(name, name), getattr(self, name), low, high, low_open, high_open)

    def to_json(self) -> dict:
        return asdict(self)


class SpatialProbe(nn.Module):
    def __init__(self, dim: int, num_colors: int, grid_size: int, kind: str = "conv", hidden: int = 512) -> None:
        super().__init__()
        self.grid_size = grid_size
        self.pooled = kind in POOLED
        self.num_colors = num_colors
        if kind == "conv":
            self.head = nn.Sequential(nn.Conv2d(dim, hidden, 1), nn.BatchNorm2d(hidden), nn.GELU(),
                                      nn.Conv2d(hidden, num_colors, 1))
        elif self.pooled:
            self.head = nn.Linear(dim, grid_size * grid_size * num_colors)
        else:
            self.head = nn.Conv2d(dim, num_colors, 1)

    def forward(self, grids: torch.Tensor) -> torch.Tensor:
        """(B, H, W, D) patch grids -> (B, C, N, N) logits.

        A pooled probe takes (B, 1, 1, D): the vector is L2-normalised and mapped to N*N*C logits, cell-major (cell
        ``r * N + c``, then colour), the layout of the authors' ``logits.view(-1, num_cells, num_colors)``.

        Bilinear resizing and a 1x1 convolution are both linear and act on different axes (its weights sum to one,
        so the bias passes through too): they commute. When the patch grid is smaller than N x N we apply the first
        convolution before resizing, the same function for a fraction of the work.
        """
        n = self.grid_size
        if self.pooled:
            logits = self.head(F.normalize(grids.reshape(grids.shape[0], -1), p=2, dim=1))
            return logits.reshape(-1, n, n, self.num_colors).permute(0, 3, 1, 2)
        x = grids.permute(0, 3, 1, 2)
        first, rest = (self.head[0], self.head[1:]) if isinstance(self.head, nn.Sequential) else (self.head, None)
        n = self.grid_size
        if x.shape[2] * x.shape[3] < n * n:
            x = F.interpolate(first(x), size=(n, n), mode="bilinear", align_corners=False)
        else:
            x = first(F.interpolate(x, size=(n, n), mode="bilinear", align_corners=False))
        return x if rest is None else rest(x)


def save_head(model: SpatialProbe) -> bytes:
    """The trained head as a safetensors file (float32 weights, BatchNorm's int64 counter), so its predictions can be
    replayed from the checkpoint's features later; ``load_head`` reads it back."""
    state = {k: v.detach().to("cpu", torch.int64 if v.dtype == torch.int64 else torch.float32).contiguous()
             for k, v in model.state_dict().items()}
    return save_tensors(state, metadata={"format": HEAD_FORMAT})


def load_head(data: bytes, kind: str, dim: int, grid_size: int, num_colors: int, hidden: int) -> SpatialProbe:
    """The probe ``save_head`` wrote, in eval mode. The bytes are checked by ``parse_head`` (exact tensors, shapes,
    dtypes, finite weights) before safetensors reads them, so a hostile file is refused in one line, never loaded."""
    parse_head(data, head_shapes(kind, dim, grid_size, num_colors, hidden))
    model = SpatialProbe(dim, num_colors, grid_size, kind, hidden)
    model.load_state_dict(load_tensors(bytes(data)), strict=True)
    return model.eval()


def _schedule(step: int, cfg: TrainConfig) -> float:
    """The learning-rate factor of update ``step`` (0-based): 0 at the first update, rising linearly to 1 over the
    warm-up, then a half cosine to 0, as the authors' schedule (their first update also runs at a learning rate of
    0)."""
    warm = max(1, int(cfg.warmup_frac * cfg.steps))
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, cfg.steps - warm)))


class FeatureSet:
    """Features and labels of one split; moved to the device whole when small, else read batch by batch."""

    def __init__(self, feats: np.ndarray, labels: np.ndarray, device: torch.device, preload_bytes: int = 2 << 30):
        self.n = len(feats)
        self.device = device
        self.preloaded = feats.nbytes <= preload_bytes
        self.feats = torch.from_numpy(np.array(feats, dtype=np.float32)).to(device) if self.preloaded else feats
        self.labels = torch.from_numpy(np.asarray(labels, dtype=np.int64)).to(device)

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.preloaded:
            return self.feats[idx], self.labels[idx]
        order = np.sort(idx.cpu().numpy())  # sorted reads are friendlier to a memory map
        x = torch.from_numpy(np.asarray(self.feats[order], dtype=np.float32)).to(self.device)
        return x, self.labels[torch.from_numpy(order).to(self.device)]


@torch.no_grad()
def predict(model: SpatialProbe, data: FeatureSet, batch_size: int = 256) -> torch.Tensor:
    model.eval()
    out = []
    for start in range(0, data.n, batch_size):
        x, _ = data.batch(torch.arange(start, min(data.n, start + batch_size)))
        out.append(model(x).argmax(1))
    return torch.cat(out)


def score(pred: torch.Tensor, labels: torch.Tensor, num_colors: int, intervals: bool = True) -> dict:
    """Cell accuracy and exact match with their 95% intervals (a seeded bootstrap over images; Wilson), the per-cell
    heatmap, per-colour accuracy and the confusion matrix."""
    correct = (pred == labels).float()
    conf = torch.bincount((labels * num_colors + pred).reshape(-1),
                          minlength=num_colors**2).reshape(num_colors, num_colors)
    per_color = [float(correct[labels == c].mean()) if (labels == c).any() else None for c in range(num_colors)]
    per_image = correct.flatten(1).mean(1).double().cpu().numpy()
    exact = int(correct.flatten(1).all(1).sum())
    return {
        "cell_accuracy": float(correct.mean()),
        "cell_accuracy_ci": list(bootstrap_mean(per_image)) if intervals else None,
        "exact_match": exact / len(per_image),
        "exact_match_ci": list(wilson(exact, len(per_image))) if intervals else None,
        "heatmap": correct.mean(0).cpu().numpy(),
        "per_colour_accuracy": per_color,
        "confusion": conf.cpu().numpy(),
    }


def _batches(n: int, cfg: TrainConfig, gen: torch.Generator):
    """Indices of each training batch, forever: shuffled epochs (a new permutation each epoch; a last partial batch
    is kept) or independent draws with replacement."""
    size = min(cfg.batch_size, n)
    while True:
        if cfg.sampling == "replacement":
            yield torch.randint(0, n, (size,), generator=gen)
            continue
        order = torch.randperm(n, generator=gen)
        yield from torch.split(order, size)


def train_probe(train: FeatureSet, val: FeatureSet, dim: int, num_colors: int, grid_size: int, cfg: TrainConfig,
                progress: bool = True) -> tuple[SpatialProbe, dict]:
    """Train with early stopping; returns the best model (by validation cell accuracy) and the history."""
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    model = SpatialProbe(dim, num_colors, grid_size, cfg.probe, cfg.hidden).to(train.device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _schedule(s, cfg))
    best = {"step": 0, "val_cell_accuracy": -1.0}
    best_state, history, bad = copy.deepcopy(model.state_dict()), [], 0
    bar = tqdm(range(cfg.steps), desc="probe", unit="step", disable=not progress)
    batches = _batches(train.n, cfg, gen)
    for step in bar:
        model.train()
        x, y = train.batch(next(batches))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        sched.step()
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            acc = score(predict(model, val), val.labels, num_colors, intervals=False)["cell_accuracy"]
            history.append({"step": step + 1, "loss": loss.item(), "val_cell_accuracy": acc})
            bar.set_postfix(val=f"{acc:.3f}")
            if acc > best["val_cell_accuracy"]:
                best, best_state, bad = {"step": step + 1,
                                         "val_cell_accuracy": acc}, copy.deepcopy(model.state_dict()), 0
            else:
                bad += 1
                if bad >= cfg.patience:
                    break
    bar.close()
    model.load_state_dict(best_state)
    return model, {"best": best, "history": history, "stopped_at": history[-1]["step"] if history else 0}
