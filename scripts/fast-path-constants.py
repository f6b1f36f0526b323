#!/usr/bin/env python3
"""Constants of the fast paths of `ascendcl::reference` (src/reference/simd/fast.rs for
AVX-512F, src/reference/simd/fast4.rs for AVX2).

Prints the degree-5 coefficients of exp on |r| <= ln2/32 (EXP_REDUCED_POLY, AVX-512) and
the degree-8 and degree-10 ones on |r| <= ln2/2 (EXP_POLY and DMISH_EXP_POLY, AVX2), their
relative errors once rounded to f64, and the relative error bounds of the fast products
over the lanes their coverage checks accept: `g·mish'(x)` and `mish(x)` on AVX-512 and on
AVX2 (DMISH_ERROR_BOUND and MISH_ERROR_BOUND in each file). Needs mpmath (1.3 was used):
`python3 -m pip install mpmath && python3 scripts/fast-path-constants.py` (a few seconds).

Each bound is a first-order propagation: the sensitivity of the product to a relative
error of `exp` (the reduction's, the polynomial's, the table's), plus the sensitivities
to the rounding of each arithmetic step, plus the reciprocal's (or the division's) and
the final products' errors, maximised over x in the covered range (for `mish'` densely
near the root window).
"""
import mpmath as mp

mp.mp.prec = 200
u = mp.mpf(2) ** -53


def poly_error(coefs, h, samples):
    """The largest relative error against exp of the polynomial `coefs` (highest degree
    first) over `samples` + 1 evenly spaced points of [-h, h]."""
    worst = mp.mpf(0)
    for i in range(samples + 1):
        r = -h + 2 * h * i / samples
        p = mp.mpf(0)
        for c in coefs:
            p = p * r + mp.mpf(c)
        worst = max(worst, abs(p / mp.exp(r) - 1))
    return worst


# exp on the reduced interval (with a little slack for the reduction's rounding)
h = mp.log(2) / 32 * (1 + mp.mpf(2) ** -20)
poly = mp.chebyfit(mp.exp, [-h, h], 6)  # 6 coefficients: degree 5, highest first
coefs = [float(c) for c in poly]
worst_poly = poly_error(coefs, h, 20000)
print("EXP_REDUCED_POLY (highest degree first):")
for c in coefs:
    print("   ", repr(c))
print("relative error with f64 coefficients:", mp.nstr(worst_poly, 5))

# the root of mish' (double-double R_HI + R_LO in kernel.rs)
root = mp.findroot(lambda x: mp.diff(lambda t: t * mp.tanh(mp.log1p(mp.exp(t))), x), -1.19)
ln2_lo = mp.mpf("2.319046813846299558e-17")  # ln 2 - LN2_HI, left out of the reduction


def product(x, steps, eta=0):
    """g·mish'(x)/g as fast_product computes it, each numerator step perturbed by `steps`."""
    e = mp.exp(x) * (1 + eta)
    w = (e + 1) * (1 + steps[0])
    d = (w * w + 1) * (1 + steps[1])
    s = (d + w) * (1 + steps[2])
    inner = (4 * x + s) * (1 + steps[3])
    q = (w * inner + 1) * (1 + steps[4])
    return e * q / (d * d)


def sensitivities(f, x, n):
    """The relative sensitivity of `f` (`product` or `mish_product`, of `n` steps) at x to
    its exp's error and to each step's."""
    y = f(x, [0] * n)
    tiny = mp.mpf(10) ** -40
    step_sens = []
    for i in range(n):
        steps = [0] * n
        steps[i] = tiny
        step_sens.append(abs((f(x, steps) - y) / (tiny * y)))
    exp_sens = abs((f(x, [0] * n, tiny) - y) / (tiny * y))
    return exp_sens, step_sens


def bound_at(x):
    exp_sens, step_sens = sensitivities(product, x, 5)
    k = abs(mp.nint(16 * x / mp.log(2))) / 16
    exp_error = worst_poly + 6 * u + k * ln2_lo + u * mp.log(2) / 32
    # numerator steps, then d², g·e, (g·e)·q and the reciprocal's ε³ + its two roundings
    arithmetic = sum(step_sens) * u + 4 * u + (mp.mpf(2) ** -42 + 2 * u)
    return exp_sens, sum(step_sens), exp_sens * exp_error + arithmetic


window = mp.mpf(1) / 1024 - mp.mpf("4e-8")  # FAST_ROOT_WINDOW less the f32 check's slack
xs = [root - window, root + window]
for i in range(1, 400):
    d = window * mp.mpf(1.02) ** i
    xs += [root - d, root + d]
xs += [root - 150 + i * mp.mpf(300) / 3000 for i in range(3001)]  # FAST_FROM_ROOT_MAX
worst = max((bound_at(x) + (x,) for x in xs if abs(x - root) >= window), key=lambda t: t[2])
print("worst at x =", mp.nstr(worst[3], 12))
print("  sensitivity to exp's relative error:", mp.nstr(worst[0], 6))
print("  summed sensitivities to the numerator's roundings:", mp.nstr(worst[1], 6))
print("AVX-512 DMISH_ERROR_BOUND >=", mp.nstr(worst[2], 6), "= 2^" + mp.nstr(mp.log(worst[2], 2), 5))


# ---- mish(x) = x·n/(n + 2), n = e·(e + 2), on |x| < 150 (MISH_ABS_MAX)


def mish_product(x, steps, eta=0):
    """mish(x) as both fast paths compute it, each step perturbed by `steps`."""
    e = mp.exp(x) * (1 + eta)
    s = (e + 2) * (1 + steps[0])
    n = e * s * (1 + steps[1])
    num = x * n * (1 + steps[2])
    den = (n + 2) * (1 + steps[3])
    return num / den


def mish_bound_at(x, exp_error, division):
    exp_sens, step_sens = sensitivities(mish_product, x, 4)
    return exp_sens, sum(step_sens), exp_sens * exp_error(x) + sum(step_sens) * u + division


mish_xs = [mp.mpf(i) / 40 - 150 for i in range(12001) if i != 6000]
mish_xs += [mp.mpf(10) ** -k for k in range(1, 40)] + [-(mp.mpf(10) ** -k) for k in range(1, 40)]


def report(name, exp_error, division):
    worst = max((mish_bound_at(x, exp_error, division) + (x,) for x in mish_xs), key=lambda t: t[2])
    print(name, "worst at x =", mp.nstr(worst[3], 8))
    print("  sensitivity to exp's relative error:", mp.nstr(worst[0], 6))
    print("  summed sensitivities to the arithmetic's roundings:", mp.nstr(worst[1], 6))
    print("  MISH_ERROR_BOUND >=", mp.nstr(worst[2], 6), "= 2^" + mp.nstr(mp.log(worst[2], 2), 5))


# AVX-512: the table exp above; rcp14 and a Newton step for 3 vectors in 4 (2^-42 and the
# step's two roundings) and the final product.
report(
    "AVX-512 mish:",
    lambda x: worst_poly + 6 * u + abs(mp.nint(16 * x / mp.log(2))) / 16 * ln2_lo + u * mp.log(2) / 32,
    mp.mpf(2) ** -42 + 3 * u,
)

# AVX2: exp = 2^k·p(r), k = round(x/ln 2), r = x − k·LN2_HI (one rounding, |r| <= ln2/2),
# p of degree 8 for mish (EXP_POLY) and 10 for mish' (DMISH_EXP_POLY); a division.
h2 = mp.log(2) / 2 * (1 + mp.mpf(2) ** -20)


def avx2_poly(name, degree):
    coefs = [float(c) for c in mp.chebyfit(mp.exp, [-h2, h2], degree + 1)]
    worst = poly_error(coefs, h2, 40000)
    print(name, "(AVX2, highest degree first):")
    for c in coefs:
        print("   ", repr(c))
    print("relative error with f64 coefficients:", mp.nstr(worst, 5))
    return lambda x: worst + 4 * u + u * mp.log(2) / 2 + abs(mp.nint(x / mp.log(2))) * ln2_lo


report("AVX2 mish:", avx2_poly("EXP_POLY", 8), u)

# AVX2 mish': the AVX-512 formula with the degree-10 exp and a division for every vector.
avx2_exp = avx2_poly("DMISH_EXP_POLY", 10)


def avx2_dmish_bound_at(x):
    exp_sens, step_sens = sensitivities(product, x, 5)
    # numerator steps, then d², g·e, (g·e)·q and the division
    return exp_sens * avx2_exp(x) + sum(step_sens) * u + 4 * u


worst = max((avx2_dmish_bound_at(x), x) for x in xs if abs(x - root) >= window)
print("AVX2 mish': worst at x =", mp.nstr(worst[1], 12))
print("  DMISH_ERROR_BOUND >=", mp.nstr(worst[0], 6), "= 2^" + mp.nstr(mp.log(worst[0], 2), 5))
