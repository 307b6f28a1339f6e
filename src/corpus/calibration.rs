//! Reliability: is a cause's score a probability of being right?
//!
//! A cause's score says how sure crashdoc is; for it to mean anything to a person, the
//! causes scored around 0.8 should be right about 80 % of the time. The reliability
//! table bins the top causes by score (ten bins of 0.1) and shows, per bin, the mean
//! score (predicted) against the share that were right (observed); the expected
//! calibration error (ECE) is the mean gap, weighted by how many causes each bin holds.
//! `crashdoc corpus run` prints it for the corpus's top causes, `--knockout` for the
//! knocked-out incidents' top causes and for the inferred layer's probabilities.

use std::fmt::Write as _;

/// One bin of the table.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bin {
    pub from: f64,
    pub to: f64,
    pub count: usize,
    /// Mean score of the bin's causes.
    pub predicted: f64,
    /// Share of them that were right.
    pub observed: f64,
}

/// The reliability table of `(score, right)` pairs: the non-empty bins, and the ECE.
pub fn reliability(points: &[(f64, bool)]) -> (Vec<Bin>, f64) {
    const BINS: usize = 10;
    let mut bins: Vec<Bin> = (0..BINS)
        .map(|i| Bin {
            from: i as f64 / BINS as f64,
            to: (i + 1) as f64 / BINS as f64,
            ..Bin::default()
        })
        .collect();
    let mut right = [0usize; BINS];
    for &(p, ok) in points {
        let i = ((p.clamp(0.0, 1.0) * BINS as f64) as usize).min(BINS - 1);
        bins[i].count += 1;
        bins[i].predicted += p;
        right[i] += usize::from(ok);
    }
    let n = points.len().max(1) as f64;
    let mut ece = 0.0;
    for (b, r) in bins.iter_mut().zip(right) {
        if b.count > 0 {
            b.predicted /= b.count as f64;
            b.observed = r as f64 / b.count as f64;
            ece += b.count as f64 / n * (b.predicted - b.observed).abs();
        }
    }
    (bins.into_iter().filter(|b| b.count > 0).collect(), ece)
}

/// The table as text, under `title`; `column` names what was binned (`score` or
/// `probability`).
pub fn render(title: &str, column: &str, points: &[(f64, bool)]) -> String {
    let (bins, ece) = reliability(points);
    let mut s = String::new();
    let _ = writeln!(s, "{title}: {} causes, ECE {ece:.3}", points.len());
    let _ = writeln!(
        s,
        "  {:<11} {:>7} {:>10} {:>9}",
        column, "causes", "predicted", "observed"
    );
    for b in &bins {
        let _ = writeln!(
            s,
            "  {:.1}–{:.1}     {:>7} {:>10.2} {:>9.2}",
            b.from, b.to, b.count, b.predicted, b.observed
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calibrated_score_has_no_error_and_an_overconfident_one_has() {
        let mut pts = Vec::new();
        for i in 0..10 {
            pts.push((0.95, i < 9));
        }
        let (bins, ece) = reliability(&pts);
        assert_eq!(bins.len(), 1);
        assert!((bins[0].observed - 0.9).abs() < 1e-9);
        assert!((ece - 0.05).abs() < 1e-9);
        let exact: Vec<(f64, bool)> = (0..4).map(|i| (0.5, i % 2 == 0)).collect();
        assert!(reliability(&exact).1 < 1e-9);
        assert_eq!(reliability(&[]).1, 0.0);
    }
}
