"""GRPO loss values against numbers worked out by hand (definitions: TRL v1.16.0 GRPOTrainer._compute_loss)."""

from __future__ import annotations

import math

import pytest
import torch

from edgegym.grpo import LossSettings, importance_weights, policy_loss
from edgegym.rollouts import Rollout, RolloutGroup, TaskRef, assign_advantages

# Two sequences; the second has one padded (masked) token.
LOGPS = torch.tensor([[math.log(0.5), math.log(0.25)], [math.log(0.8), 0.0]])
MASK = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
ADV = torch.tensor([1.0, -2.0])


def loss(settings, old=None, **kw):
    return policy_loss(LOGPS, LOGPS if old is None else old, ADV, MASK, settings, **kw)


def test_on_policy_values_per_loss_type():
    # ratio = 1 everywhere, so each token's loss is -A: tokens (-1, -1) and (2).
    grpo = loss(LossSettings(loss_type="grpo")).loss
    assert float(grpo) == pytest.approx(((-1 - 1) / 2 + 2 / 1) / 2)  # mean over sequences of per-sequence means = 0.5
    dr = loss(LossSettings(loss_type="dr_grpo", max_completion_length=4)).loss
    assert float(dr) == pytest.approx((-1 - 1 + 2) / (2 * 4))  # 0
    dapo = loss(LossSettings(loss_type="dapo")).loss
    assert float(dapo) == pytest.approx((-1 - 1 + 2) / 3)  # 0


def test_clipping_both_sides_and_delta():
    # old logps chosen so the ratios are 1.5 and 0.5 in sequence 0, 0.7 in sequence 1.
    old = LOGPS - torch.log(torch.tensor([[1.5, 0.5], [0.7, 1.0]]))
    s = LossSettings(loss_type="dapo", epsilon=0.2)
    out = loss(s, old=old)
    # seq 0, A=+1: r=1.5 -> min(1.5, 1.2) = 1.2 -> -1.2 ; r=0.5 -> min(0.5, 0.8) = 0.5 -> -0.5
    # seq 1, A=-2: r=0.7 -> min(-1.4, 0.8·-2 = -1.6) = -1.6 -> +1.6
    expected = (-1.2 - 0.5 + 1.6) / 3
    assert float(out.loss) == pytest.approx(expected, abs=1e-6)
    assert out.clip_fraction == pytest.approx(2 / 3)  # 1.5 (A>0, above 1.2) and 0.7 (A<0, below 0.8) are clipped
    # epsilon_high = 0.6 lets 1.5 through.
    out = loss(LossSettings(loss_type="dapo", epsilon=0.2, epsilon_high=0.6), old=old)
    assert float(out.loss) == pytest.approx((-1.5 - 0.5 + 1.6) / 3, abs=1e-6)
    # delta caps the unclipped ratio for negative advantages: r=3 with A=-2 gives min(-2·min(3, 1.5)=-3, -2·1.2=-2.4) = -3 -> +3.
    old2 = LOGPS - torch.log(torch.tensor([[1.0, 1.0], [3.0, 1.0]]))
    plain = loss(LossSettings(loss_type="dapo"), old=old2)
    capped = loss(LossSettings(loss_type="dapo", delta=1.5), old=old2)
    assert float(plain.loss) == pytest.approx((-1 - 1 + 6) / 3, abs=1e-6)
    assert float(capped.loss) == pytest.approx((-1 - 1 + 3) / 3, abs=1e-6)


def test_kl_term_and_accumulation():
    ref = LOGPS + torch.tensor([[0.1, -0.2], [0.3, 0.0]])
    s = LossSettings(loss_type="grpo", beta=0.5)
    out = loss(s, ref_logps=ref)
    k3 = lambda d: math.exp(d) - d - 1  # noqa: E731 - the k3 estimator exp(ref-logp) - (ref-logp) - 1
    seq0 = ((-1 + 0.5 * k3(0.1)) + (-1 + 0.5 * k3(-0.2))) / 2
    seq1 = 2 + 0.5 * k3(0.3)
    assert float(out.loss) == pytest.approx((seq0 + seq1) / 2, abs=1e-6)
    assert out.kl == pytest.approx((k3(0.1) + k3(-0.2) + k3(0.3)) / 3, abs=1e-6)
    # grpo / dr_grpo divide by the accumulation steps; dapo divides by the window's token count.
    assert float(loss(LossSettings(loss_type="grpo"), accumulation_steps=4).loss) == pytest.approx(0.5 / 4)
    assert float(loss(LossSettings(loss_type="dapo"), old=LOGPS - 0.1, tokens_in_window=6).loss) == pytest.approx(
        float(loss(LossSettings(loss_type="dapo"), old=LOGPS - 0.1).loss) * 3 / 6
    )


def test_importance_weights_modes():
    trainer = torch.tensor([[0.0, 0.0], [0.0, 0.0]])
    sampler = torch.tensor([[-0.5, -1.0], [0.2, float("nan")]])
    mask = torch.ones(2, 2)
    tok = importance_weights(trainer, sampler, mask, "token_truncate", cap=2.0)
    assert torch.allclose(tok, torch.tensor([[math.exp(0.5), 2.0], [math.exp(-0.2), 1.0]]))
    tok_mask = importance_weights(trainer, sampler, mask, "token_mask", cap=2.0)
    assert torch.allclose(tok_mask, torch.tensor([[math.exp(0.5), 0.0], [math.exp(-0.2), 1.0]]))
    seq = importance_weights(trainer, sampler, mask, "sequence_mask", cap=3.0)
    assert torch.allclose(seq, torch.tensor([[0.0], [math.exp(-0.2)]]))  # exp(1.5) = 4.48 > 3: sequence dropped
    seq_t = importance_weights(trainer, sampler, mask, "sequence_truncate", cap=3.0)
    assert torch.allclose(seq_t, torch.tensor([[3.0], [math.exp(-0.2)]]))
    # The weight multiplies the token losses.
    out = policy_loss(trainer, trainer, torch.tensor([1.0, 1.0]), mask, LossSettings(loss_type="dapo"), is_ratio=seq_t)
    assert float(out.loss) == pytest.approx(-(3.0 * 2 + math.exp(-0.2) * 2) / 4)


def test_gradient_matches_policy_gradient():
    # On policy (ratio 1) the dapo gradient w.r.t. each logp is -A / tokens.
    logps = LOGPS.clone().requires_grad_(True)
    policy_loss(logps, logps.detach(), ADV, MASK, LossSettings(loss_type="dapo")).loss.backward()
    assert torch.allclose(logps.grad, torch.tensor([[-1 / 3, -1 / 3], [2 / 3, 0.0]]))


def test_group_advantages_match_trl():
    def group(rewards):
        return RolloutGroup(TaskRef(0, 0), [Rollout(env_id="e", task=TaskRef(0, 0), reward=r) for r in rewards])

    g = group([1.0, 0.0, 0.0, 1.0])
    assign_advantages([g], "group")
    std = math.sqrt(sum((r - 0.5) ** 2 for r in [1, 0, 0, 1]) / 3)  # Bessel-corrected, as TRL's nanstd
    assert [r.advantage for r in g.rollouts] == pytest.approx([0.5 / (std + 1e-4), -0.5 / (std + 1e-4)] * 1 + [-0.5 / (std + 1e-4), 0.5 / (std + 1e-4)])
    g = group([2.0, 1.0, None])
    g.rollouts[2].error = "boom"
    assign_advantages([g], "none")
    assert [r.advantage for r in g.rollouts] == [0.5, -0.5, 0.0]  # the failed rollout is left out
