"""Train a tiny model with Opacus in the shuffle model, and account for it.

Setting (client-side noise, shuffled check-in): every step, each of the n users checks in
with probability q, clips its gradient to norm C, adds Gaussian noise N(0, z²C²I) to it
*itself* (z the noise multiplier), and a shuffler hides who sent which report; the server
averages them. ``ShufflePrivacyEngine`` is Opacus' ``PrivacyEngine`` with exactly that step
(its optimizer adds the noise per example, not once to the sum) and with the
``ShuffleAccountant``, which reports the valid upper bound for
``Shuffle(Gaussian.from_noise_multiplier(z), n, sampling=CheckIn(q))`` (replace-one
neighbours), never an estimate.

A stock ``opacus.PrivacyEngine`` adds the noise once, centrally; the ShuffleAccountant
refuses to report a shuffle bound for it (docs/conventions.md).

Run (needs the extra 'opacus': torch + opacus):

    shuffledp example opacus_shuffle > opacus_shuffle.py && python opacus_shuffle.py
"""

import warnings

import torch
from torch.utils.data import DataLoader, TensorDataset

from shuffledp.opacus import ShufflePrivacyEngine

warnings.filterwarnings("ignore", message="Secure RNG")     # Opacus warns about it in demos
torch.manual_seed(0)

N_USERS, DIM, EPOCHS, BATCH = 2_000, 10, 3, 200
DELTA = 1e-5
x = torch.randn(N_USERS, DIM)
y = (x @ torch.randn(DIM) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=BATCH)     # check-in rate 0.1

model = torch.nn.Sequential(torch.nn.Linear(DIM, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

engine = ShufflePrivacyEngine()
model, optimizer, loader = engine.make_private(
    module=model, optimizer=optimizer, data_loader=loader,
    noise_multiplier=4.0, max_grad_norm=1.0)      # each user: N(0, (4 * 1.0)^2 I) on its own

for epoch in range(EPOCHS):
    for xb, yb in loader:
        if len(xb) == 0:
            continue
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    eps = engine.get_epsilon(delta=DELTA)
    r = engine.accountant.last_result
    print(f"epoch {epoch + 1}: steps={len(engine.accountant)} accuracy={acc:.3f} "
          f"epsilon={eps:.4g} at delta={DELTA:g}, replace-one ({r.kind} bound "
          f"'{r.entries[0].bound}', composition '{r.composition}')")
