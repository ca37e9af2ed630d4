"""Train a tiny model with Opacus and account for it in the shuffle model.

Setting (per-user-noise shuffled check-in training): every step, each of the n users
checks in with probability q, clips its gradient to norm C, adds Gaussian noise of
standard deviation z·C itself, and a shuffler hides who sent which report. Opacus adds
the noise centrally in this simulation; what we replace is the *accountant*:
``ShuffleAccountant(n_users)`` reports the valid shuffle-model upper bound for
``Shuffle(Gaussian(z / 2), n, sampling=CheckIn(q))`` per step (replacement: two clipped
gradients are at most 2C apart), never an estimate.

Run (needs the extra 'opacus': torch + opacus):

    shuffledp example opacus_shuffle > opacus_shuffle.py && python opacus_shuffle.py
"""

import warnings

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

from shuffledp.opacus import ShuffleAccountant

warnings.filterwarnings("ignore")          # Opacus warns about secure RNG in demos
torch.manual_seed(0)

N_USERS, DIM, EPOCHS, BATCH = 2_000, 10, 3, 200
DELTA = 1e-5
x = torch.randn(N_USERS, DIM)
y = (x @ torch.randn(DIM) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=BATCH)

model = torch.nn.Sequential(torch.nn.Linear(DIM, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

engine = PrivacyEngine()
engine.accountant = ShuffleAccountant(n_users=N_USERS)          # before make_private
model, optimizer, loader = engine.make_private(
    module=model, optimizer=optimizer, data_loader=loader,
    noise_multiplier=4.0, max_grad_norm=1.0, poisson_sampling=True)

for epoch in range(EPOCHS):
    for xb, yb in loader:
        if len(xb) == 0:
            continue
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    eps = engine.accountant.get_epsilon(delta=DELTA)
    r = engine.accountant.last_result
    print(f"epoch {epoch + 1}: steps={len(engine.accountant)} accuracy={acc:.3f} "
          f"epsilon={eps:.4g} at delta={DELTA:g} ({r.kind} bound '{r.entries[0].bound}', "
          f"composition '{r.composition}')")
