"""Notebook 08, deep stacks (A2, D1, X1, L1): the measurements against their formulas, and the
checks that they can fail."""

import copy
import math
from types import SimpleNamespace

import pytest
import torch

from lnpaper import stats
from lnpaper.chapters.ch08_deep_stacks import claims as depth_claims
from lnpaper.chapters.ch08_deep_stacks import claims_curse as curse_claims
from lnpaper.chapters.ch08_deep_stacks import runs as depth
from lnpaper.companion import verdicts
from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models.transformer import admin_profile, next_token_loss
from lnpaper.train import StackedModels

LANGUAGE = SyntheticLanguage()


def small(arm, seed=0, n_layers=4):
    return depth.build(arm, seed, n_layers, 16, 2, 8, LANGUAGE.vocab_size)


def tokens(n=4, length=8, seed=0):
    return LANGUAGE.sample(n, length, seed=seed)


@pytest.mark.parametrize("arm", ["post", "pre", "admin", "deepnorm", "mix", "layer_scaling"])
def test_stack_output_is_what_the_head_reads(arm):
    model, x = small(arm), tokens()
    out, streams = depth.stack_output(model, x)
    assert torch.allclose(model.head(out), model(x), atol=1e-6)
    assert len(streams) == model.n_layers + 1


def test_skipping_a_block_is_the_model_without_it():
    model, x = small("pre"), tokens()
    shorter = copy.deepcopy(model)
    del shorter.blocks[2]
    assert torch.allclose(
        depth.stack_output(model, x, skip=2)[0], depth.stack_output(shorter, x)[0]
    )
    assert not torch.allclose(
        depth.stack_output(model, x, skip=2)[0], depth.stack_output(model, x)[0]
    )


@pytest.mark.parametrize("arm", ["post", "pre", "mix", "admin", "deepnorm", "layer_scaling"])
def test_dependence_is_var_f_over_var_of_the_sum(arm):
    model, x = small(arm), tokens()
    if arm == "admin":
        admin_profile(model, tokens(seed=1))
    ratios = depth.sublayer_dependence(model, x)
    assert len(ratios) == 2 * model.n_layers and all(0 < r for r in ratios)
    # the first sublayer by hand
    block, x0 = model.blocks[0], model.embed(x)
    with torch.no_grad():
        if block.placement == "post":
            f = block.attn(x0)
            s = x0 * block.attn_omega if block.attn_omega is not None else block.residual_scale * x0
        else:
            f, s = block.attn(block.input_scale * block.attn_in_norm(x0)), x0
        assert ratios[0] == pytest.approx((f.var() / (s + f).var()).item(), rel=1e-5)


def test_dependence_is_zero_without_branches_and_admin_lowers_it():
    model, x = small("post", n_layers=6), tokens()
    with torch.no_grad():
        for block in model.blocks:
            for out in (block.attn.out, block.ffn.w2):
                out.weight.zero_()
    assert max(depth.sublayer_dependence(model, x)) == 0.0
    post, admin = small("post", n_layers=6), small("admin", n_layers=6)
    admin_profile(admin, tokens(seed=1))
    assert sum(depth.sublayer_dependence(admin, x)) < sum(depth.sublayer_dependence(post, x))


def test_output_changes_scale_with_the_perturbation_and_restore_the_weights():
    model, x = small("post"), tokens()
    before = model(x)
    zero = depth.output_changes(model, x, 0.0, [0, 1])
    assert zero == [0.0, 0.0]
    small_change = depth.output_changes(model, x, 1e-3, [0])[0]
    large_change = depth.output_changes(model, x, 1e-2, [0])[0]
    assert 0 < small_change < large_change
    assert large_change / small_change == pytest.approx(10, rel=0.2)  # linear for small sizes
    assert torch.equal(model(x), before)


def test_angular_distance():
    a = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    assert depth.angular_distance(a, 3 * a) == pytest.approx(0.0, abs=1e-3)
    assert depth.angular_distance(a, a.flip(-1)) == pytest.approx(0.5)
    assert depth.angular_distance(a, -a) == pytest.approx(1.0)


def test_depth_use_skip_loss_against_a_model_without_the_block():
    model, held = small("pre"), tokens(n=8, length=9)
    use = depth.depth_use(model, held)
    shorter = copy.deepcopy(model)
    del shorter.blocks[1]
    with torch.no_grad():
        expected = (next_token_loss(shorter, held) - next_token_loss(model, held)).item()
    assert use["skip_loss"][1] == pytest.approx(expected, abs=1e-5)
    assert len(use["variance"]) == len(use["angle"]) == model.n_layers


def test_block_grad_norms_match_each_models_own_gradient():
    models = [small("mix", seed=s) for s in (0, 1)]
    probe = tokens(n=4, length=9)
    stacked = StackedModels(models)
    norms = depth.block_grad_norms(stacked, probe, 4)
    for model, row in zip(models, norms, strict=True):
        next_token_loss(model, probe).backward()
        for block, value in zip(model.blocks, row, strict=True):
            own = math.sqrt(sum(p.grad.pow(2).sum().item() for p in block.parameters()))
            assert value == pytest.approx(own, rel=1e-4)


def test_experiments_refuse_unknown_arms():
    with pytest.raises(ValueError, match="arms"):
        depth.gradient_profile(arms=("post", "peri"))
    with pytest.raises(ValueError, match="arms"):
        depth.layer_scaling_study(arms=())
    with pytest.raises(ValueError, match="update_steps"):
        depth.deepnorm_study(update_steps=0)


@pytest.mark.slow
def test_deepnorm_study_logs_one_update_per_step(no_store):
    result = depth.deepnorm_study(arms=("post", "deepnorm"), n_layers=2, seeds=(0, 1), steps=3,
                                  update_steps=2, d_model=16)  # fmt: skip
    for arm in result.arms:
        assert [len(u) for u in result.model_update[arm]] == [2, 2]
        assert all(v > 0 for u in result.model_update[arm] for v in u)
    assert result.alpha == pytest.approx(4**0.25) and result.beta == pytest.approx(16**-0.25)


# ---- the checks can fail ---------------------------------------------------------------------


def x1_result(pre, post, mix, seeds=6, n_layers=8):
    """Per-block gradient norms exp(profile + noise) for every seed, the same at both times."""

    def runs(profile):
        return [[math.exp(v + 0.01 * ((s * 7 + k * 3) % 5)) for k, v in enumerate(profile)]
                for s in range(seeds)]  # fmt: skip

    profiles = {"pre": runs(pre), "post": runs(post), "mix": runs(mix)}
    return SimpleNamespace(n_layers=n_layers, n_post=n_layers // 4, lr=1e-3, steps=30,
                           seeds=list(range(seeds)), grad_norm_init=profiles,
                           grad_norm_trained=profiles)  # fmt: skip


def test_check_x1_holds_and_fails():
    down, up, flat = [-0.2 * k for k in range(8)], [0.2 * k for k in range(8)], [0.0] * 8
    assert depth_claims.check_x1(x1_result(down, up, flat)).verdict == verdicts.REPRODUCED
    assert depth_claims.check_x1(x1_result(up, down, [0.5 * k for k in range(8)])).verdict == (
        verdicts.NOT_REPRODUCED
    )


def d1_result(post_final, deep_final, post_update, deep_update):
    n = len(post_final)
    return SimpleNamespace(
        arms=["post", "deepnorm"], seeds=list(range(n)), n_layers=6, lr=3e-3, steps=200,
        update_steps=3, alpha=1.86, beta=0.38,
        final_loss={"post": post_final, "deepnorm": deep_final},
        model_update={"post": [[u, u, u] for u in post_update],
                      "deepnorm": [[u, u, u] for u in deep_update]},
    )  # fmt: skip


def test_check_d1_is_partly_at_best_and_can_fail():
    post, good = [2.76 + 0.01 * i for i in range(6)], [2.0 + 0.012 * i for i in range(6)]
    big, tiny = [1.0 + 0.1 * i for i in range(6)], [0.1 + 0.013 * i for i in range(6)]
    assert depth_claims.check_d1(d1_result(post, good, big, tiny)).verdict == verdicts.PARTLY
    assert (
        depth_claims.check_d1(d1_result(good, post, tiny, big)).verdict == verdicts.NOT_REPRODUCED
    )
    diverged = [None, *good[1:]]
    assert depth_claims.check_d1(d1_result(post, diverged, big, tiny)).verdict == (
        verdicts.NOT_REPRODUCED
    )


def d1b_results(alpha_update, beta_update, n=6):
    post = d1_result([2.76] * n, [2.0] * n, [1.0 + 0.1 * i for i in range(n)],
                     [0.1 + 0.013 * i for i in range(n)])  # fmt: skip
    halves = SimpleNamespace(
        arms=["pre", "deepnorm-alpha", "deepnorm-beta"], seeds=list(range(n)),
        final_loss={a: [2.1] * n for a in ("pre", "deepnorm-alpha", "deepnorm-beta")},
        model_update={"pre": [[0.2] * 3] * n,
                      "deepnorm-alpha": [[u] * 3 for u in alpha_update],
                      "deepnorm-beta": [[u] * 3 for u in beta_update]},
    )  # fmt: skip
    return post, halves


def test_check_d1b_grades_each_half_against_post_ln():
    small = [0.3 + 0.011 * i for i in range(6)]
    large = [1.5 + 0.12 * i for i in range(6)]
    assert depth_claims.check_d1b(*d1b_results(small, small)).verdict == verdicts.REPRODUCED
    assert depth_claims.check_d1b(*d1b_results(small, large)).verdict == verdicts.PARTLY
    assert depth_claims.check_d1b(*d1b_results(large, large)).verdict == verdicts.NOT_REPRODUCED
    full, halves = d1b_results(small, small)
    halves.final_loss["deepnorm-beta"] = [None] + [2.1] * 5
    assert depth_claims.check_d1b(full, halves).verdict == verdicts.INCONCLUSIVE


def test_profile_measures():
    flat = depth_claims.profile_measures([2.0] * 8, 8)
    assert flat == {"spread": 0.0, "tilt": 0.0}
    tilted = depth_claims.profile_measures([math.exp(k) for k in range(8)], 8)
    assert tilted["tilt"] == pytest.approx(6.0)  # mean of 6, 7 minus mean of 0, 1


def test_mechanism_only_never_claims_more_than_partly():
    assert depth_claims.mechanism_only([stats.HOLDS, stats.HOLDS]) == verdicts.PARTLY
    assert depth_claims.mechanism_only([stats.FAILS]) == verdicts.NOT_REPRODUCED
    assert depth_claims.mechanism_only([stats.HOLDS, stats.FAILS]) == verdicts.PARTLY


def l1_result(skip_pre, skip_scaled, angle_pre, angle_scaled, seeds=6):
    """A layer_scaling_study result: per arm and seed, per block, the skip-loss and angular distance
    given as one profile each, with a small seed-to-seed wobble."""
    from types import SimpleNamespace

    def arm(profile):
        return [
            [v * (1 + 0.02 * ((s + b) % 3)) for b, v in enumerate(profile)] for s in range(seeds)
        ]

    variance = {"pre": arm([1.0 + b for b in range(8)]), "layer_scaling": arm([1.0] * 8)}
    return SimpleNamespace(
        seeds=list(range(seeds)), arms=["pre", "layer_scaling"], n_layers=8, lr=3e-3, steps=100,
        final_loss={"pre": [2.0 + 0.01 * s for s in range(seeds)],
                    "layer_scaling": [1.95 + 0.01 * s for s in range(seeds)]},
        skip_loss_trained={"pre": arm(skip_pre), "layer_scaling": arm(skip_scaled)},
        angle_trained={"pre": arm(angle_pre), "layer_scaling": arm(angle_scaled)},
        variance_trained=variance,
    )  # fmt: skip


def test_l1_is_the_curse_and_l1b_the_fix_each_graded_on_its_own():
    cursed = [0.3, 0.2, 0.1, 0.08, 0.02, 0.01, 0.01, 0.005]
    restored = [0.3, 0.2, 0.1, 0.08, 0.06, 0.05, 0.05, 0.04]
    weaker = [0.3, 0.2, 0.1, 0.08, 0.01, 0.005, 0.005, 0.002]
    angle = [0.3, 0.2, 0.1, 0.05, 0.04, 0.03, 0.02, 0.02]
    wider = [0.3, 0.2, 0.1, 0.05, 0.08, 0.07, 0.06, 0.06]
    narrower = [0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.01, 0.01]
    even = [0.3, 0.2, 0.15, 0.12, 0.12, 0.11, 0.1, 0.1]
    fixed = l1_result(cursed, restored, angle, wider)
    curse, own = l1_result(cursed, cursed, angle, angle), control_result(even)
    assert curse_claims.check_l1(fixed).verdict == verdicts.PARTLY  # no control arm: at most partly
    assert curse_claims.check_l1b(fixed, curse, own).verdict == verdicts.REPRODUCED
    worse = l1_result(cursed, weaker, angle, narrower)
    assert curse_claims.check_l1b(worse, curse, own).verdict == verdicts.NOT_REPRODUCED
    flat = [0.05] * 8
    assert (
        curse_claims.check_l1(l1_result(flat[::-1], flat, angle, wider)).verdict != verdicts.PARTLY
    )


def test_a_cure_is_graded_on_its_own_tests_with_its_premise_shown_beside():
    """L1b's verdict comes from the fix's own two tests, whether or not L1d tells Pre-LN's curse
    from Peri-LN's (a control whose stream grows too cannot gate it); the premise's interval is
    shown beside, and decides nothing."""
    cursed = [0.3, 0.2, 0.1, 0.08, 0.02, 0.01, 0.01, 0.005]
    restored = [0.3, 0.2, 0.1, 0.08, 0.06, 0.05, 0.05, 0.04]
    weaker = [0.3, 0.2, 0.1, 0.08, 0.01, 0.005, 0.005, 0.002]
    angle = [0.3, 0.2, 0.1, 0.05, 0.04, 0.03, 0.02, 0.02]
    wider = [0.3, 0.2, 0.1, 0.05, 0.06, 0.05, 0.04, 0.04]
    narrower = [0.3, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.01]
    curse, alike = l1_result(cursed, cursed, angle, angle), control_result(cursed)
    for scaled, turned, verdict in ((restored, wider, verdicts.REPRODUCED),
                                    (weaker, narrower, verdicts.NOT_REPRODUCED)):  # fmt: skip
        found = curse_claims.check_l1b(l1_result(cursed, scaled, angle, turned), curse, alike)
        assert found.verdict == verdict, found.ours
        assert "Shown: the premise, Pre-LN's own curse" in found.ours


def control_result(skip_peri, seeds=6):
    """A curse_control result: the Peri-LN arm alone, with l1_result's wobble, and a shift of the
    deeper half that differs from seed to seed and averages 0."""
    from types import SimpleNamespace

    shift = [0.004, -0.003, 0.002, -0.004, 0.003, -0.002][:seeds]
    skip = [[v * (1 + 0.02 * ((s + b) % 3)) + (shift[s] if b >= 4 else 0.0)
             for b, v in enumerate(skip_peri)] for s in range(seeds)]  # fmt: skip
    return SimpleNamespace(
        seeds=list(range(seeds)), arms=["peri"], n_layers=8, lr=3e-3, steps=100,
        final_loss={"peri": [2.0 + 0.01 * s for s in range(seeds)]},
        skip_loss_trained={"peri": skip},
        variance_trained={"peri": [[1.0 + 0.5 * b for b in range(8)] for _ in range(seeds)]},
    )  # fmt: skip


def test_l1d_asks_whether_pre_ln_s_deep_blocks_matter_less_than_peri_ln_s():
    cursed = [0.3, 0.2, 0.1, 0.08, 0.02, 0.01, 0.01, 0.005]
    even = [0.3, 0.2, 0.15, 0.12, 0.12, 0.11, 0.1, 0.1]
    angle = [0.3, 0.2, 0.1, 0.05, 0.04, 0.03, 0.02, 0.02]
    pre = l1_result(cursed, cursed, angle, angle)
    found = curse_claims.check_l1d(pre, control_result(even))
    assert found.verdict == verdicts.PARTLY, found.ours  # the mechanism only: at most partly
    assert "Peri-LN gap" in found.ours and "last stream variance" in found.ours
    assert curse_claims.check_l1d(pre, control_result(cursed)).verdict == verdicts.INCONCLUSIVE
    reversed_curse = l1_result(even, even, angle, angle)
    assert curse_claims.check_l1d(reversed_curse, control_result(cursed)).verdict == (
        verdicts.NOT_REPRODUCED
    )


LEVELS = {"uniform": 2.77, "unigram": 2.75, "bigram": 2.34, "floor": 0.94}


def trained_result(finals: dict, n_layers=12, lr=3e-3, steps=100):
    """A deepnorm_study result with the given held-out losses per arm (12 seeds, 8-19)."""
    return SimpleNamespace(arms=list(finals), seeds=list(range(8, 20)), n_layers=n_layers, lr=lr,
                           steps=steps, final_loss=finals, levels=LEVELS)  # fmt: skip


def spread(base, n=12):
    return [base + 0.01 * ((3 * i) % 5) for i in range(n)]


@pytest.mark.parametrize(
    "post, admin, expected",
    [
        (spread(2.76), spread(2.1), verdicts.REPRODUCED),  # Post-LN stalls, Admin trains, lower
        (spread(2.76), spread(2.745), verdicts.NOT_REPRODUCED),  # Admin stalls with it
        (
            spread(2.76),
            [*spread(2.1, 9), 2.5, 2.6, 2.7],
            verdicts.PARTLY,
        ),  # 9 of 12: rate undecided
        (spread(2.1), spread(2.0), verdicts.NOT_EXERCISED),  # Post-LN trains: nothing to rescue
    ],
)
def test_check_a2b_needs_post_ln_to_fail_and_admin_to_train(post, admin, expected):
    result = trained_result({"post": post, "admin": admin, "pre": spread(2.2)})
    finding = depth_claims.check_a2b(result)
    assert finding.verdict == expected, finding.ours
    assert "seeds 8-19" in finding.ours


@pytest.mark.parametrize(
    "mix, expected",
    [
        (spread(2.0), verdicts.REPRODUCED),  # below both beyond the margin
        (spread(2.195), verdicts.PARTLY),  # level with Pre-LN, below Post-LN
        (spread(2.5), verdicts.NOT_REPRODUCED),  # above Pre-LN and Post-LN
    ],
)
def test_check_x1b_grades_mix_ln_against_both(mix, expected):
    result = trained_result({"post": spread(2.4), "pre": spread(2.2), "mix": mix}, n_layers=8,
                            lr=1e-3, steps=200)  # fmt: skip
    assert depth_claims.check_x1b(result).verdict == expected


def test_l1e_grades_the_loss_at_both_lengths():
    """L1e holds where the scaled models end lower after 100 and after 300 steps, is partly where
    only one does, and fails where neither does."""
    profile = [0.3, 0.2, 0.1, 0.08, 0.02, 0.01, 0.01, 0.005]

    def study(shift, steps):
        result = l1_result(profile, profile, profile, profile)
        result.steps = steps
        result.final_loss["layer_scaling"] = [v + shift for v in result.final_loss["pre"]]
        result.final_loss["layer_scaling"][0] += 0.01  # a paired difference with some spread
        return result

    cases = ((-0.1, -0.1, verdicts.REPRODUCED), (-0.1, 0.1, verdicts.SOME_PARTS),
             (0.1, 0.1, verdicts.NOT_REPRODUCED))  # fmt: skip
    for short, long, verdict in cases:
        found = curse_claims.check_l1e(study(short, 100), study(long, 300))
        assert found.verdict == verdict, found.ours
        assert "300 steps" in found.ours
