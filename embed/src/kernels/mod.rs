//! The arithmetic of the forward pass: matrix products against a packed right-hand side
//! (the dense layers' weights, packed once at load; each attention head's keys and values,
//! packed per sequence), softmax and GELU.
//!
//! A right-hand side is rearranged into panels of `COLS` columns, each panel `k × COLS`
//! contiguous, so a product streams through memory in order instead of striding across
//! rows (the hardware prefetcher does not follow strides past a page) and copies nothing
//! at call time: a query of ten tokens costs one pass over the weights and little more.
//! Tiles of up to `ROWS` rows × `COLS` columns are accumulated in registers over all of
//! `k`.
//!
//! [`coded`] holds the same products over 8-bit weights.
//!
//! Each kernel is compiled for the baseline and, on x86-64, for AVX2 with FMA, chosen once
//! per process by [`Isa::detect`]. (An AVX-512 build was measured: no faster for a query,
//! a fifth faster in bulk, and the compiler vectorised its wider tiles only for some
//! shapes; not worth a third copy.) Every output element is one multiply-add chain over
//! `k` in order, whatever the tile or the batch, so a text's vector does not depend on
//! what it was batched with. `exp` and `erf` are polynomial forms the compiler vectorises
//! (libm's are scalar calls, a quarter of a long text's time), within a few units in the
//! last place.

mod coded;

use coded::{Codes, coded_product};

/// The instruction set the kernels run with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// Whatever the target's baseline is (fused multiply-add only where the baseline has
    /// it, as aarch64's does).
    Portable,
    /// AVX2 with FMA (x86-64-v3).
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Isa {
    /// The best this CPU runs. The only way to get an `Isa` other than `Portable`, which
    /// is what makes the kernels' calls into target-feature code sound.
    pub fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return Isa::Avx2;
        }
        Isa::Portable
    }
}

/// Width of a panel: a tile of 4 rows × 16 columns is 8 AVX2 registers of accumulators.
const COLS: usize = 16;
/// Rows of a tile.
const ROWS: usize = 4;
/// Rows of a block: its activations stay in L2 while every panel passes over them.
const ROW_BLOCK: usize = 48;

/// Runs `$generic::<FMA>(args…)` with the instruction set's FMA choice, through its
/// target-feature copy on AVX2.
macro_rules! dispatch {
    ($isa:expr, $generic:ident, $avx2:ident, ($($arg:expr),*)) => {
        match $isa {
            Isa::Portable => $generic::<{ cfg!(target_arch = "aarch64") }>($($arg),*),
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: `Isa::Avx2` comes only from `Isa::detect` on a CPU with AVX2 and FMA.
            Isa::Avx2 => unsafe { $avx2($($arg),*) },
        }
    };
}

/// A `k × n` right-hand side in panels of `COLS` columns, each `k × COLS` row-major; the
/// last panel padded with zeros.
#[derive(Default)]
pub struct Panels {
    data: Vec<f32>,
    k: usize,
    n: usize,
}

impl Panels {
    /// Packs the `k × n` matrix whose column `j` is `col(j)` (`k` long), in place.
    fn pack_columns<'a>(&mut self, k: usize, n: usize, col: impl Fn(usize) -> &'a [f32]) {
        self.reset(k, n);
        for j in 0..n {
            let (t, jj) = (j / COLS, j % COLS);
            for (kk, &v) in col(j)[..k].iter().enumerate() {
                self.data[(t * k + kk) * COLS + jj] = v;
            }
        }
    }

    /// Packs the `k × n` matrix whose row `kk` is `row(kk)` (`n` long), in place.
    fn pack_rows<'a>(&mut self, k: usize, n: usize, row: impl Fn(usize) -> &'a [f32]) {
        self.reset(k, n);
        for kk in 0..k {
            for (t, part) in row(kk)[..n].chunks(COLS).enumerate() {
                let at = (t * k + kk) * COLS;
                self.data[at..at + part.len()].copy_from_slice(part);
            }
        }
    }

    fn reset(&mut self, k: usize, n: usize) {
        self.k = k;
        self.n = n;
        self.data.clear();
        self.data.resize(n.div_ceil(COLS) * k * COLS, 0.0);
    }
}

/// A dense layer, `y = x · Wᵀ + b` with PyTorch's `W` (out × in), packed once.
pub struct Dense {
    isa: Isa,
    /// The weights in f32 panels, or only their shape when they are [`Dense::codes`].
    w: Panels,
    codes: Option<Codes>,
    /// The bias, padded with zeros to whole panels.
    bias: Vec<f32>,
}

impl Dense {
    /// Packs `w` (`bias.len()` rows of `in`, row-major).
    pub fn new(isa: Isa, w: &[f32], mut bias: Vec<f32>) -> Self {
        let n = bias.len();
        let k = w.len().checked_div(n).unwrap_or(0);
        assert_eq!(w.len(), n * k, "dense: weight shape");
        let mut panels = Panels::default();
        panels.pack_columns(k, n, |j| &w[j * k..(j + 1) * k]);
        bias.resize(n.div_ceil(COLS) * COLS, 0.0);
        Self {
            isa,
            w: panels,
            codes: None,
            bias,
        }
    }

    /// `y = x · Wᵀ + b` for `rows` rows: `x` is `rows × in`, `y` is `rows × out`, both
    /// row-major.
    pub fn forward(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        let (k, n) = (self.w.k, self.w.n);
        assert_eq!(x.len(), rows * k, "dense: input shape");
        assert_eq!(y.len(), rows * n, "dense: output shape");
        if let Some(codes) = &self.codes {
            return coded_product(self.isa, x, rows, k, n, codes, &self.bias, y);
        }
        let p = Product {
            isa: self.isa,
            x,
            xs: k,
            rows,
            b: &self.w,
            bias: &self.bias,
            ys: n,
        };
        product(&p, y);
    }
}

/// `y[r] = x[r] · B (+ bias)` for `r < rows`, the rows of `x` (`k` long) and of `y` (`n`
/// long) `xs` and `ys` apart.
struct Product<'a> {
    isa: Isa,
    x: &'a [f32],
    xs: usize,
    rows: usize,
    b: &'a Panels,
    /// Padded to whole panels (zeros for none: an `Option` here, or a bias that may be a
    /// local array, made the compiler keep the accumulators in memory).
    bias: &'a [f32],
    ys: usize,
}

#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA { a.mul_add(b, c) } else { a * b + c }
}

fn product(p: &Product<'_>, y: &mut [f32]) {
    let (k, n) = (p.b.k, p.b.n);
    if n == 0 || p.rows == 0 {
        return;
    }
    assert!(
        (p.rows - 1) * p.xs + k <= p.x.len(),
        "product: x out of bounds"
    );
    assert!(
        (p.rows - 1) * p.ys + n <= y.len(),
        "product: y out of bounds"
    );
    if k == 0 {
        for r in 0..p.rows {
            y[r * p.ys..r * p.ys + n].copy_from_slice(&p.bias[..n]);
        }
        return;
    }
    let mut block = 0;
    while block < p.rows {
        let end = (block + ROW_BLOCK).min(p.rows);
        for (t, panel) in p.b.data.chunks_exact(k * COLS).enumerate() {
            let mut row = block;
            while row < end {
                let m = (end - row).min(ROWS);
                match m {
                    4 => tile::<4>(p, panel, t * COLS, row, y),
                    3 => tile::<3>(p, panel, t * COLS, row, y),
                    2 => tile::<2>(p, panel, t * COLS, row, y),
                    _ => tile::<1>(p, panel, t * COLS, row, y),
                }
                row += m;
            }
        }
        block = end;
    }
}

/// Rows `row..row + R`, columns `col..col + COLS` of `y` (fewer at the right edge), with
/// the product's instruction set.
fn tile<const R: usize>(p: &Product<'_>, panel: &[f32], col: usize, row: usize, y: &mut [f32]) {
    match p.isa {
        Isa::Portable => tile_portable::<R>(p, panel, col, row, y),
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        // SAFETY: `Isa::Avx2` comes only from `Isa::detect` on a CPU with AVX2 and FMA.
        Isa::Avx2 => unsafe { tile_avx2::<R>(p, panel, col, row, y) },
    }
}

// Each tile kernel is compiled on its own, never inlined: inlined into a larger function
// (attention), the compiler kept some tiles' accumulators on the stack and ran them
// scalar, three times slower.
#[inline(never)]
fn tile_portable<const R: usize>(
    p: &Product<'_>,
    panel: &[f32],
    col: usize,
    row: usize,
    y: &mut [f32],
) {
    tile_body::<R, { cfg!(target_arch = "aarch64") }>(p, panel, col, row, y);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline(never)]
fn tile_avx2<const R: usize>(
    p: &Product<'_>,
    panel: &[f32],
    col: usize,
    row: usize,
    y: &mut [f32],
) {
    tile_body::<R, true>(p, panel, col, row, y);
}

/// Every index into the accumulators is a constant once unrolled, which is what lets the
/// compiler keep them in registers (a slice of them cut at a run-time width would not).
#[inline(always)]
fn tile_body<const R: usize, const FMA: bool>(
    p: &Product<'_>,
    panel: &[f32],
    col: usize,
    row: usize,
    y: &mut [f32],
) {
    const C: usize = COLS;
    let k = p.b.k;
    let mut acc = [[0.0f32; C]; R];
    let xs: [&[f32]; R] = std::array::from_fn(|r| &p.x[(row + r) * p.xs..][..k]);
    for (kk, w) in panel.chunks_exact(C).enumerate() {
        let w: &[f32; C] = w.try_into().expect("panel rows are C wide");
        for r in 0..R {
            let xv = xs[r][kk];
            for j in 0..C {
                acc[r][j] = madd::<FMA>(xv, w[j], acc[r][j]);
            }
        }
    }
    let b: &[f32; C] = p.bias[col..col + C]
        .try_into()
        .expect("bias padded to whole panels");
    let width = C.min(p.b.n - col);
    for (r, a) in acc.iter().enumerate() {
        let at = (row + r) * p.ys + col;
        if width == C {
            // Written in place: through a copy of a local array, this was a call to memmove
            // per row, a tenth of the time.
            let dst: &mut [f32; C] = (&mut y[at..at + C]).try_into().expect("C wide");
            for j in 0..C {
                dst[j] = a[j] + b[j];
            }
        } else {
            // Only the accumulators' copy is indexed at run time (see above).
            let mut out = [0.0f32; C];
            for j in 0..C {
                out[j] = a[j] + b[j];
            }
            y[at..at + width].copy_from_slice(&out[..width]);
        }
    }
}

/// What attention reuses from one sequence to the next.
#[derive(Default)]
pub struct Scratch {
    keys: Panels,
    values: Panels,
    scores: Vec<f32>,
    zeros: Vec<f32>,
}

/// Self-attention of one sequence: `qkv` holds its `len` rows of queries, keys and values
/// side by side (`3·hidden` wide), `ctx` receives its `len × hidden` context, every head.
pub fn attention(
    isa: Isa,
    qkv: &[f32],
    len: usize,
    heads: usize,
    scratch: &mut Scratch,
    ctx: &mut [f32],
) {
    if len == 0 {
        return;
    }
    let h = ctx.len() / len;
    assert_eq!(ctx.len(), len * h, "attention: ctx shape");
    assert_eq!(qkv.len(), len * 3 * h, "attention: qkv shape");
    assert!(heads > 0 && h.is_multiple_of(heads), "attention: heads");
    let h = ctx.len() / len;
    let d = h / heads;
    let scale = 1.0 / (d as f32).sqrt();
    let Scratch {
        keys,
        values,
        scores,
        zeros,
    } = scratch;
    scores.clear();
    scores.resize(len * len, 0.0);
    zeros.resize(len.max(d).div_ceil(COLS) * COLS, 0.0);
    for head in 0..heads {
        let at = |row: usize, which: usize| &qkv[row * 3 * h + which * h + head * d..][..d];
        // scores = q · kᵀ, then softmax(scores / √d) along each row.
        keys.pack_columns(d, len, |j| at(j, 1));
        let p = Product {
            isa,
            x: &qkv[head * d..],
            xs: 3 * h,
            rows: len,
            b: keys,
            bias: zeros,
            ys: len,
        };
        product(&p, scores);
        softmax_rows(isa, scores, len, scale);
        // ctx = scores · v, into this head's columns.
        values.pack_rows(len, d, |j| at(j, 2));
        let p = Product {
            isa,
            x: scores,
            xs: len,
            rows: len,
            b: values,
            bias: zeros,
            ys: h,
        };
        product(&p, &mut ctx[head * d..]);
    }
}

/// softmax(row · scale) of each `len`-long row, in place (`scale` > 0).
fn softmax_rows(isa: Isa, rows: &mut [f32], len: usize, scale: f32) {
    dispatch!(isa, softmax_body, softmax_avx2, (rows, len, scale));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn softmax_avx2(rows: &mut [f32], len: usize, scale: f32) {
    softmax_body::<true>(rows, len, scale);
}

#[inline(always)]
fn softmax_body<const FMA: bool>(rows: &mut [f32], len: usize, scale: f32) {
    for row in rows.chunks_exact_mut(len) {
        softmax(row, scale);
    }
}

#[inline(always)]
fn softmax(row: &mut [f32], scale: f32) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for a in row.iter_mut() {
        *a = exp_nonpositive((*a - max) * scale);
    }
    let inv = 1.0 / sum(row);
    for a in row.iter_mut() {
        *a *= inv;
    }
}

/// The sum in 8 interleaved lanes (a vectorisable order).
#[inline(always)]
pub fn sum(xs: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let chunks = xs.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for l in 0..8 {
            lanes[l] += c[l];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The sum of squares in 8 interleaved lanes.
#[inline(always)]
pub fn sum_of_squares(xs: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let chunks = xs.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().map(|a| a * a).sum();
    for c in chunks {
        for l in 0..8 {
            lanes[l] += c[l] * c[l];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// GELU in place, exact form: `x·Φ(x) = x/2·(1 + erf(x/√2))`.
pub fn gelu(isa: Isa, xs: &mut [f32]) {
    dispatch!(isa, gelu_body, gelu_avx2, (xs));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn gelu_avx2(xs: &mut [f32]) {
    gelu_body::<true>(xs);
}

#[inline(always)]
fn gelu_body<const FMA: bool>(xs: &mut [f32]) {
    for a in xs {
        *a = 0.5 * *a * (1.0 + erf(*a * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// `e^x` for `x ≤ 0` (Cephes' expf: `x = n·ln 2 + r`, `e^r` by a degree-5 polynomial, `2^n`
/// into the exponent bits); below −87.3 it gives about 2⁻¹²⁶ rather than a subnormal.
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // Adding and subtracting 1.5·2²³ rounds to the nearest integer without a libm call.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.3, 0.0);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 0.5; // Cephes: 5.0000001201e-1, which is 0.5 in f32
    let e = p * (r * r) + r + 1.0;
    e * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// erf within 2·10⁻⁷ (libm's erff: 5·10⁻⁸): its Taylor series up to x¹³ below |x| = 0.5,
/// above it 1 − erfc with Numerical Recipes' Chebyshev fit of erfc (relative error under
/// 1.2·10⁻⁷). Both sides are computed and one is selected, which vectorises.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let x2 = x * x;
    let series = x
        * (std::f32::consts::FRAC_2_SQRT_PI
            + x2 * (-0.376_126_4
                + x2 * (0.112_837_92
                    + x2 * (-0.026_866_17
                        + x2 * (0.005_223_977 + x2 * (-0.000_854_832 + x2 * 0.000_120_553))))));
    let t = 1.0 / (1.0 + 0.5 * a);
    let p = -1.265_512_2
        + t * (1.000_023_7
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_204
                                + t * (1.488_515_9 + t * (-0.822_152_2 + t * 0.170_872_77))))))));
    let erfc = t * exp_nonpositive((p - a * a).min(0.0));
    if a < 0.5 {
        series
    } else {
        (1.0 - erfc).copysign(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn isas() -> Vec<Isa> {
        let mut v = vec![Isa::Portable];
        if Isa::detect() != Isa::Portable {
            v.push(Isa::detect());
        }
        v
    }

    #[test]
    fn dense_matches_a_naive_product() {
        // Whole and partial tiles of rows and columns, and row blocks.
        for isa in isas() {
            for (rows, inp, out) in [
                (5, 7, 3),
                (5, 40, 70),
                (1, 384, 96),
                (16, 33, 64),
                (17, 33, 70),
                (100, 9, 5),
            ] {
                let x: Vec<f32> = (0..rows * inp).map(|i| (i as f32 * 0.37).sin()).collect();
                let w: Vec<f32> = (0..out * inp).map(|i| (i as f32 * 0.11).cos()).collect();
                let b: Vec<f32> = (0..out).map(|i| i as f32 * 0.5 - 1.0).collect();
                let dense = Dense::new(isa, &w, b.clone());
                let mut y = vec![0.0; rows * out];
                dense.forward(&x, rows, &mut y);
                for r in 0..rows {
                    for o in 0..out {
                        let want: f32 = b[o]
                            + (0..inp)
                                .map(|i| x[r * inp + i] * w[o * inp + i])
                                .sum::<f32>();
                        let got = y[r * out + o];
                        assert!(
                            (got - want).abs() < 1e-4,
                            "{isa:?} {rows}×{inp}×{out} at ({r}, {o}): {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_row_does_not_depend_on_its_batch() {
        let (inp, out) = (48, 40);
        let x: Vec<f32> = (0..60 * inp).map(|i| (i as f32 * 0.13).sin()).collect();
        let w: Vec<f32> = (0..out * inp).map(|i| (i as f32 * 0.07).cos()).collect();
        for isa in isas() {
            let dense = Dense::new(isa, &w, vec![0.1; out]);
            let mut all = vec![0.0; 60 * out];
            dense.forward(&x, 60, &mut all);
            for r in [0, 7, 31, 59] {
                let mut one = vec![0.0; out];
                dense.forward(&x[r * inp..(r + 1) * inp], 1, &mut one);
                assert_eq!(one, all[r * out..(r + 1) * out], "{isa:?} row {r}");
            }
        }
    }

    #[test]
    fn attention_matches_a_naive_one() {
        for (len, heads, d) in [(5, 2, 4), (1, 3, 8), (37, 2, 20)] {
            let h = heads * d;
            let qkv: Vec<f32> = (0..len * 3 * h).map(|i| (i as f32 * 0.29).sin()).collect();
            for isa in isas() {
                let mut ctx = vec![0.0; len * h];
                attention(isa, &qkv, len, heads, &mut Scratch::default(), &mut ctx);
                for head in 0..heads {
                    for i in 0..len {
                        let at =
                            |r: usize, w: usize, c: usize| qkv[r * 3 * h + w * h + head * d + c];
                        let s: Vec<f64> = (0..len)
                            .map(|j| {
                                (0..d)
                                    .map(|c| f64::from(at(i, 0, c) * at(j, 1, c)))
                                    .sum::<f64>()
                                    / (d as f64).sqrt()
                            })
                            .collect();
                        let m = s.iter().copied().fold(f64::MIN, f64::max);
                        let e: Vec<f64> = s.iter().map(|v| (v - m).exp()).collect();
                        let z: f64 = e.iter().sum();
                        for c in 0..d {
                            let want: f64 =
                                (0..len).map(|j| e[j] / z * f64::from(at(j, 2, c))).sum();
                            let got = ctx[i * h + head * d + c];
                            assert!(
                                (f64::from(got) - want).abs() < 1e-5,
                                "{isa:?} {len}×{heads}×{d}: {got} vs {want}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn exp_and_erf_are_within_a_few_ulp() {
        let mut worst_exp = 0.0f64;
        for i in 0..=200_000 {
            let x = -87.0 * i as f32 / 200_000.0;
            let (got, want) = (f64::from(exp_nonpositive(x)), f64::from(x).exp());
            worst_exp = worst_exp.max((got - want).abs() / want);
        }
        assert!(worst_exp < 3e-7, "exp relative error {worst_exp}");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert!(exp_nonpositive(-1000.0) < 1e-37);
        let mut worst_erf = 0.0f64;
        for i in -100_000..=100_000 {
            let x = 6.0 * i as f32 / 100_000.0;
            let (got, want) = (f64::from(erf(x)), libm::erf(f64::from(x)));
            worst_erf = worst_erf.max((got - want).abs());
        }
        assert!(worst_erf < 2e-7, "erf absolute error {worst_erf}");
        assert!(erf(0.0).abs() < 1e-7);
        assert_eq!(erf(10.0), 1.0);
        assert_eq!(erf(-10.0), -1.0);
    }
}
