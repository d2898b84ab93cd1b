//! The dense layers' products over 8-bit weights: the same panels and tiles as the f32
//! ones in the parent module, each panel row widened to f32 as it is read and each column's
//! scale applied once at the end. A query reads every weight once, so a quarter of the bytes
//! is most of what it saves (docs/hooks.md, "8-bit weights, and a pause").

use super::{COLS, Dense, Isa, Panels, ROW_BLOCK, ROWS, madd};

/// A `k × n` right-hand side as 8-bit codes in the same panels as [`Panels`], with one
/// scale per column: `w ≈ code · scale`, the scale the column's largest magnitude / 127.
#[derive(Default)]
pub(super) struct Codes {
    data: Vec<i8>,
    /// Padded with zeros to whole panels.
    scale: Vec<f32>,
}

impl Dense {
    /// [`Dense::new`] with the weights kept as 8-bit codes and a scale per output: a
    /// quarter of the bytes a product reads, for a query, which reads every weight once
    /// (the outputs move by about 1/254 of each output's largest weight, in relative terms).
    pub fn new_int8(isa: Isa, w: &[f32], mut bias: Vec<f32>) -> Self {
        let n = bias.len();
        let k = w.len().checked_div(n).unwrap_or(0);
        assert_eq!(w.len(), n * k, "dense: weight shape");
        let padded = n.div_ceil(COLS) * COLS;
        let mut codes = Codes {
            data: vec![0; padded * k],
            scale: vec![0.0; padded],
        };
        for j in 0..n {
            let row = &w[j * k..(j + 1) * k];
            let max = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
            codes.scale[j] = scale;
            let (t, jj) = (j / COLS, j % COLS);
            for (kk, &v) in row.iter().enumerate() {
                // In range by the scale's choice; `as` saturates besides.
                codes.data[(t * k + kk) * COLS + jj] = (v / scale).round() as i8;
            }
        }
        bias.resize(padded, 0.0);
        Self {
            isa,
            w: Panels {
                data: Vec::new(),
                k,
                n,
            },
            codes: Some(codes),
            bias,
        }
    }
}

/// `y = x · (codes · scale) + bias`, `x` `rows × k` and `y` `rows × n` row-major: the
/// loops of [`product`] over 8-bit panels.
#[allow(clippy::too_many_arguments)]
pub(super) fn coded_product(
    isa: Isa,
    x: &[f32],
    rows: usize,
    k: usize,
    n: usize,
    codes: &Codes,
    bias: &[f32],
    y: &mut [f32],
) {
    if n == 0 || rows == 0 || k == 0 {
        for r in 0..rows {
            y[r * n..(r + 1) * n].copy_from_slice(&bias[..n]);
        }
        return;
    }
    let t = Coded {
        x,
        k,
        n,
        scale: &codes.scale,
        bias,
    };
    let mut block = 0;
    while block < rows {
        let end = (block + ROW_BLOCK).min(rows);
        for (p, panel) in codes.data.chunks_exact(k * COLS).enumerate() {
            let mut row = block;
            while row < end {
                let m = (end - row).min(ROWS);
                match m {
                    4 => coded_tile::<4>(isa, &t, panel, p * COLS, row, y),
                    3 => coded_tile::<3>(isa, &t, panel, p * COLS, row, y),
                    2 => coded_tile::<2>(isa, &t, panel, p * COLS, row, y),
                    _ => coded_tile::<1>(isa, &t, panel, p * COLS, row, y),
                }
                row += m;
            }
        }
        block = end;
    }
}

/// What every tile of a [`coded_product`] reads besides its panel.
struct Coded<'a> {
    x: &'a [f32],
    k: usize,
    n: usize,
    scale: &'a [f32],
    bias: &'a [f32],
}

fn coded_tile<const R: usize>(
    isa: Isa,
    t: &Coded<'_>,
    panel: &[i8],
    col: usize,
    row: usize,
    y: &mut [f32],
) {
    match isa {
        Isa::Portable => coded_tile_portable::<R>(t, panel, col, row, y),
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        // SAFETY: `Isa::Avx2` comes only from `Isa::detect` on a CPU with AVX2 and FMA.
        Isa::Avx2 => unsafe { coded_tile_avx2::<R>(t, panel, col, row, y) },
    }
}

#[inline(never)]
fn coded_tile_portable<const R: usize>(
    t: &Coded<'_>,
    panel: &[i8],
    col: usize,
    row: usize,
    y: &mut [f32],
) {
    coded_tile_body::<R, { cfg!(target_arch = "aarch64") }>(t, panel, col, row, y);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline(never)]
fn coded_tile_avx2<const R: usize>(
    t: &Coded<'_>,
    panel: &[i8],
    col: usize,
    row: usize,
    y: &mut [f32],
) {
    coded_tile_body::<R, true>(t, panel, col, row, y);
}

/// [`tile_body`] over codes: each panel row widened to f32, the scale applied once at the
/// end (it is per column, so it factors out of the sum).
#[inline(always)]
fn coded_tile_body<const R: usize, const FMA: bool>(
    t: &Coded<'_>,
    panel: &[i8],
    col: usize,
    row: usize,
    y: &mut [f32],
) {
    const C: usize = COLS;
    let k = t.k;
    let mut acc = [[0.0f32; C]; R];
    let xs: [&[f32]; R] = std::array::from_fn(|r| &t.x[(row + r) * k..][..k]);
    for (kk, w) in panel.chunks_exact(C).enumerate() {
        let w: &[i8; C] = w.try_into().expect("panel rows are C wide");
        let w: [f32; C] = std::array::from_fn(|j| f32::from(w[j]));
        for r in 0..R {
            let xv = xs[r][kk];
            for j in 0..C {
                acc[r][j] = madd::<FMA>(xv, w[j], acc[r][j]);
            }
        }
    }
    let s: &[f32; C] = t.scale[col..col + C]
        .try_into()
        .expect("scales padded to whole panels");
    let b: &[f32; C] = t.bias[col..col + C]
        .try_into()
        .expect("bias padded to whole panels");
    let width = C.min(t.n - col);
    for (r, a) in acc.iter().enumerate() {
        let mut out = [0.0f32; C];
        for j in 0..C {
            out[j] = madd::<FMA>(a[j], s[j], b[j]);
        }
        let at = (row + r) * t.n + col;
        y[at..at + width].copy_from_slice(&out[..width]);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::isas;
    use super::*;

    #[test]
    fn int8_weights_stay_close_to_f32() {
        for isa in isas() {
            for (rows, inp, out) in [(5, 40, 70), (1, 384, 96), (17, 33, 64), (3, 7, 3)] {
                let x: Vec<f32> = (0..rows * inp).map(|i| (i as f32 * 0.37).sin()).collect();
                let w: Vec<f32> = (0..out * inp).map(|i| (i as f32 * 0.11).cos()).collect();
                let b: Vec<f32> = (0..out).map(|i| i as f32 * 0.5 - 1.0).collect();
                let mut exact = vec![0.0; rows * out];
                Dense::new(isa, &w, b.clone()).forward(&x, rows, &mut exact);
                let mut coded = vec![f32::NAN; rows * out];
                Dense::new_int8(isa, &w, b).forward(&x, rows, &mut coded);
                for (i, (c, e)) in coded.iter().zip(&exact).enumerate() {
                    // Each weight within 1/254 of its row's largest (1 here), so a sum of
                    // `inp` products of |x| ≤ 1 within inp/254.
                    assert!(
                        (c - e).abs() <= inp as f32 / 254.0,
                        "{isa:?} {rows}×{inp}×{out} at {i}: {c} vs {e}"
                    );
                }
            }
        }
    }
}
