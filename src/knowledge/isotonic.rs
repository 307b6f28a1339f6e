//! Calibration: a score made a probability by isotonic regression.
//!
//! The category model's probability ([`crate::knowledge::model`]) orders the categories
//! well but is not a frequency: of the inferred causes it gives 0.7, far fewer than 70 %
//! are right. Isotonic regression (pool adjacent violators) fits the monotone map from the
//! raw probability to the share that was right, on held-out outcomes: the knock-out run's
//! inferred top causes (`crashdoc corpus run --knockout`, where the model never saw the
//! incident, its thread, nor the signatures that explain it). `crashdoc corpus bless`
//! writes the fit to `corpus/calibration.json`; the build freezes it into the model, and
//! [`apply`] maps each raw probability through it (linear between the fitted points, flat
//! beyond them). A model without a fit (a knock-out fold's, retrained) says its raw
//! probability.
//!
//! Why isotonic, not Platt: a few hundred points, and the raw probabilities are bunched
//! at both ends (naive Bayes); a monotone step fit makes no assumption of a sigmoid's
//! shape. Why monotone at all: a higher raw probability must never mean a lower one.

use serde::{Deserialize, Serialize};

/// The file `corpus bless` writes: the fitted map of the inferred layer, and what it was
/// fitted on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CalibrationFile {
    /// What this is, for a person opening the file.
    #[serde(default)]
    pub about: String,
    /// Outcomes the fit saw (knock-out incidents whose top cause was inferred).
    #[serde(default)]
    pub points: usize,
    /// `(raw probability, share right)`, raw increasing.
    #[serde(default)]
    pub inferred: Vec<(f64, f64)>,
}

/// The monotone fit of `points` (`(raw score, right)`): one `(mean raw, share right)` per
/// block of pooled points, raw increasing; empty when there are no points.
pub fn fit(points: &[(f64, bool)]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, _)| x.is_finite())
        .map(|(x, ok)| (*x, if *ok { 1.0 } else { 0.0 }))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    // blocks: (sum of raw, sum of right, count)
    let mut blocks: Vec<(f64, f64, f64)> = Vec::new();
    for (x, y) in sorted {
        blocks.push((x, y, 1.0));
        while blocks.len() >= 2 {
            let (b, a) = (blocks[blocks.len() - 1], blocks[blocks.len() - 2]);
            if a.1 / a.2 < b.1 / b.2 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (a.0 + b.0, a.1 + b.1, a.2 + b.2);
        }
    }
    blocks
        .into_iter()
        .map(|(sx, sy, n)| (round(sx / n), round(sy / n)))
        .collect()
}

/// Three decimals: the file stays readable and the fit the same across platforms.
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// `raw` through `map`: linear between the fitted points, flat before the first and after
/// the last; `raw` itself when there is no map.
pub fn apply(map: &[(f64, f64)], raw: f64) -> f64 {
    let (Some(first), Some(last)) = (map.first(), map.last()) else {
        return raw;
    };
    if raw <= first.0 {
        return first.1;
    }
    if raw >= last.0 {
        return last.1;
    }
    for w in map.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if raw <= x1 {
            let t = if x1 > x0 { (raw - x0) / (x1 - x0) } else { 1.0 };
            return y0 + t * (y1 - y0);
        }
    }
    last.1
}

/// Cross-fitted calibrated values of `points`: each point through a map fitted on the
/// points of the other `k` folds (`fold` names each point's), so that the error measured
/// is the one a new log meets, not the fit's own.
pub fn cross_fitted(points: &[(f64, bool)], fold: &[usize], k: usize) -> Vec<(f64, bool)> {
    (0..points.len())
        .map(|i| {
            let rest: Vec<(f64, bool)> = points
                .iter()
                .zip(fold)
                .filter(|(_, f)| **f % k != fold[i] % k)
                .map(|(p, _)| *p)
                .collect();
            (apply(&fit(&rest), points[i].0), points[i].1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_is_monotone_and_pools_violators() {
        // the first 0.9 is wrong after two right 0.5s: they pool (2 of 3 right)
        let pts = [
            (0.1, false),
            (0.2, false),
            (0.5, true),
            (0.5, true),
            (0.9, false),
            (0.9, true),
        ];
        let m = fit(&pts);
        assert!(m.windows(2).all(|w| w[0].1 <= w[1].1 && w[0].0 < w[1].0));
        assert_eq!(m.first(), Some(&(0.15, 0.0)));
        assert_eq!(m.get(1), Some(&(0.633, 0.667)));
        assert_eq!(m.last(), Some(&(0.9, 1.0)));
        assert!((apply(&m, 0.05) - 0.0).abs() < 1e-9);
        assert!((apply(&m, 0.99) - 1.0).abs() < 1e-9);
        assert!(apply(&m, 0.4) > 0.0 && apply(&m, 0.4) < 0.667);
        assert_eq!(apply(&[], 0.42), 0.42);
        assert!(fit(&[]).is_empty());
    }

    #[test]
    fn cross_fitting_never_sees_the_point_it_maps() {
        // two folds that disagree: each is mapped by the other's fit
        let pts = [(0.8, true), (0.8, true), (0.8, false), (0.8, false)];
        let folds = [0, 0, 1, 1];
        let out = cross_fitted(&pts, &folds, 2);
        assert_eq!(out[0].0, 0.0);
        assert_eq!(out[2].0, 1.0);
    }
}
