//! Calibration: a score made a probability by Platt scaling.
//!
//! The category model's probability ([`crate::knowledge::model`]) orders the categories
//! well but is not a frequency: of the inferred causes it gives 0.7, far fewer than 70 %
//! are right. Platt scaling fits `p = σ(a · logit(raw) + b)` (a logistic regression of
//! "right" on the raw probability's log-odds, `a ≥ 0`) on held-out outcomes: the
//! knock-out run's inferred causes (`crashdoc corpus run --knockout`, where the model
//! never saw the incident, its thread, nor the signatures that explain it).
//! `crashdoc corpus bless` writes the fit to `corpus/calibration.json`, tabulated at
//! [`GRID`] raw probabilities (dense near 0 and 1); the build freezes it into the model, and [`apply`] maps
//! each raw probability through it (linear between the tabulated points, flat beyond
//! them). A model without a fit (a knock-out fold's, retrained) says its raw probability.
//!
//! Why Platt, not isotonic regression: with a few hundred points, the isotonic step fit
//! follows the sample's noise. Measured cross-fitted over folds of threads on the
//! knock-out run's 306 inferred causes (expected calibration error, 3 / 5 / 10 folds):
//! isotonic 0.059 / 0.062 / 0.080, Platt 0.039 / 0.040 / 0.038 (raw 0.102). Two
//! parameters do not follow the noise, and `a ≥ 0` keeps the map monotone: a higher raw
//! probability never means a lower calibrated one. The fit is the maximum of the
//! likelihood with a small ridge toward the identity ([`RIDGE`]), found by Newton's
//! method with step halving (the problem is convex), so it is the same on every machine.
//!
//! The signature layers' scores are calibrated the same way, one fit per layer
//! ([`score_layer`]: a signature file or wrapper, a code table or structural fallback, the
//! fuzzy layer), so that every cause carries a probability of being right. A score is not
//! a frequency either, and what it is worth depends on whether the library knows the
//! failure: on the corpus, where a signature for the failure's class exists, scores of
//! 0.5–0.8 are right 94–100 % of the time; under knock-out, where it was left out and a
//! neighbour answers, the same scores are right 50–70 %. Of what a run reads, only the
//! category model's agreement with the cause's category separates the two, and only in
//! part (it is not used: on the corpus it would read a model trained on those very
//! incidents); the next user's log is either. So the fit pools both kinds of held-out
//! outcome: the corpus's unseen split (incidents whose lines no signature example holds:
//! the library knows the class, not the log) and the knock-out run (the library does not
//! know the class). `corpus run --knockout` measures the fit cross-fitted over folds of
//! threads, pooled and on each part.

use std::collections::{BTreeMap, BTreeSet};

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
    /// `(raw probability, calibrated probability)`, raw increasing.
    #[serde(default)]
    pub inferred: Vec<(f64, f64)>,
    /// Outcomes the signature layers' fits saw (top causes of the corpus's unseen split
    /// and of the knock-out run).
    #[serde(default)]
    pub score_points: usize,
    /// Per signature layer ([`score_layer`]): `(score, calibrated probability)`, score
    /// increasing.
    #[serde(default)]
    pub scores: BTreeMap<String, Vec<(f64, f64)>>,
}

/// The calibration a cause's score goes through, by the layer that found it (`layer` as a
/// cause reports it: none for a signature file): `signature` (a file, or a wrapper's
/// inner error), `table` (a code table's entry, a structural fallback), `fuzzy`. None
/// for an inferred cause: its probability has a calibration of its own.
pub fn score_layer(layer: Option<&str>) -> Option<&'static str> {
    match layer {
        None | Some("wrapper") => Some("signature"),
        Some("fuzzy") => Some("fuzzy"),
        Some("fallback") => Some("table"),
        Some(l) if l.starts_with("table:") => Some("table"),
        Some(_) => None,
    }
}

/// A cause's score as the share of such causes that were right on held-out logs,
/// through its layer's shipped fit (`layer` as the cause reports it; the build freezes
/// `corpus/calibration.json`'s `scores`); none for an inferred cause or a layer with no
/// fit. A few hundred held-out outcomes cannot tell 99 % from certain: 0.01 to 0.99.
pub fn shipped_probability(layer: Option<&str>, score: f64) -> Option<f64> {
    static SHIPPED: std::sync::OnceLock<BTreeMap<String, Vec<(f64, f64)>>> =
        std::sync::OnceLock::new();
    let maps = SHIPPED
        .get_or_init(|| super::frozen::thaw(super::embedded::FROZEN_SCORES).unwrap_or_default());
    let map = maps.get(score_layer(layer)?)?;
    (!map.is_empty()).then(|| apply(map, score).clamp(0.01, 0.99))
}

/// The per-layer fits of `points` (`(layer, score, right)`, `layer` as [`score_layer`]
/// names it): the map `corpus bless` writes.
pub fn fit_layers(points: &[(&'static str, f64, bool)]) -> BTreeMap<String, Vec<(f64, f64)>> {
    let mut by: BTreeMap<&str, Vec<(f64, bool)>> = BTreeMap::new();
    for &(layer, score, right) in points {
        by.entry(layer).or_default().push((score, right));
    }
    by.into_iter()
        .map(|(layer, pts)| (layer.to_string(), fit(&pts)))
        .collect()
}

/// [`cross_fitted`] per layer: each point through the fit of its own layer on the other
/// folds' points. The result is in the order of `points`.
pub fn cross_fitted_layers(
    points: &[(&'static str, f64, bool)],
    fold: &[usize],
    k: usize,
) -> Vec<(f64, bool)> {
    let mut out = vec![(0.0, false); points.len()];
    let layers: BTreeSet<&str> = points.iter().map(|p| p.0).collect();
    for layer in layers {
        let at: Vec<usize> = (0..points.len())
            .filter(|&i| points[i].0 == layer)
            .collect();
        let pts: Vec<(f64, bool)> = at.iter().map(|&i| (points[i].1, points[i].2)).collect();
        let folds: Vec<usize> = at.iter().map(|&i| fold[i]).collect();
        for (i, p) in at.into_iter().zip(cross_fitted(&pts, &folds, k)) {
            out[i] = p;
        }
    }
    out
}

/// Points the fit is tabulated at: raw 0 and 1, and between them every half unit of
/// log-odds from -7 to 7 (dense where the naive Bayes probabilities bunch, near 0 and 1,
/// so that the linear interpolation of [`apply`] follows the curve).
pub const GRID: usize = 31;
/// The ridge toward the identity map (`a = 1, b = 0`): keeps the fit finite when the
/// points are separable (all right above some raw probability).
pub const RIDGE: f64 = 1e-3;
/// A raw probability's log-odds are read within `[-LOGIT_MAX, LOGIT_MAX]` (raw 0 and 1
/// are finite).
const LOGIT_MAX: f64 = 9.0;

fn logit(p: f64) -> f64 {
    let p = p.clamp(0.0, 1.0);
    ((p + 1e-12) / (1.0 - p + 1e-12))
        .ln()
        .clamp(-LOGIT_MAX, LOGIT_MAX)
}

/// The logistic function, without overflow at either end.
fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// The penalized negative log-likelihood of `(a, b)` on `(log-odds, right)` points.
fn loss(a: f64, b: f64, xs: &[(f64, f64)]) -> f64 {
    let ridge = RIDGE / 2.0 * ((a - 1.0).powi(2) + b * b);
    xs.iter().fold(ridge, |t, (x, y)| {
        let z = a * x + b;
        // log(1 + e^z) - y·z, computed stably
        t + (-z.abs()).exp().ln_1p() + z.max(0.0) - y * z
    })
}

/// `(a, b)` of the Platt fit of `points` (`(raw, right)`), `a ≥ 0`.
fn platt(points: &[(f64, bool)]) -> (f64, f64) {
    let xs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, _)| x.is_finite())
        .map(|(x, ok)| (logit(*x), if *ok { 1.0 } else { 0.0 }))
        .collect();
    let (mut a, mut b) = (1.0, 0.0);
    for _ in 0..100 {
        let (mut ga, mut gb) = (RIDGE * (a - 1.0), RIDGE * b);
        let (mut haa, mut hab, mut hbb) = (RIDGE, 0.0, RIDGE);
        for (x, y) in &xs {
            let p = sigmoid(a * x + b);
            let w = p * (1.0 - p);
            ga += (p - y) * x;
            gb += p - y;
            haa += w * x * x;
            hab += w * x;
            hbb += w;
        }
        let det = haa * hbb - hab * hab;
        if det.abs() < 1e-12 {
            break;
        }
        let (da, db) = ((hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det);
        let current = loss(a, b, &xs);
        let mut t = 1.0;
        while t > 1e-6 && loss(a - t * da, b - t * db, &xs) > current {
            t /= 2.0;
        }
        a -= t * da;
        b -= t * db;
        if (t * da).abs() + (t * db).abs() < 1e-10 {
            break;
        }
    }
    if a >= 0.0 {
        return (a, b);
    }
    // the score says the opposite of being right: the best map that never decreases is
    // the share right, whatever the score
    let right = xs.iter().map(|(_, y)| y).sum::<f64>() / xs.len().max(1) as f64;
    (0.0, logit(right))
}

/// The Platt fit of `points` (`(raw score, right)`), tabulated at [`GRID`] raw
/// probabilities: `(raw, calibrated)`, raw increasing; empty when there are no points.
pub fn fit(points: &[(f64, bool)]) -> Vec<(f64, f64)> {
    if !points.iter().any(|(x, _)| x.is_finite()) {
        return Vec::new();
    }
    let (a, b) = platt(points);
    let mut map: Vec<(f64, f64)> = (0..GRID)
        .map(|i| {
            let raw = match i {
                0 => 0.0,
                i if i == GRID - 1 => 1.0,
                i => sigmoid(-7.0 + 0.5 * (i - 1) as f64),
            };
            (round(raw), round(sigmoid(a * logit(raw) + b)))
        })
        .collect();
    // three decimals make the points nearest 0 and 1 equal: kept once
    map.dedup_by(|x, y| x.0 == y.0);
    map
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

    /// `n` points at `raw`, `right` of them right.
    fn points(raw: f64, n: usize, right: usize) -> Vec<(f64, bool)> {
        (0..n).map(|i| (raw, i < right)).collect()
    }

    #[test]
    fn an_overconfident_score_is_mapped_to_the_share_right() {
        // 0.9 right 6 times in 10, 0.5 right 3 times in 10: two log-odds, two parameters,
        // so the fit goes through both shares
        let mut pts = points(0.9, 100, 60);
        pts.extend(points(0.5, 100, 30));
        let m = fit(&pts);
        assert!(m.len() > 20 && m.len() <= GRID);
        assert!(m.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        assert!((apply(&m, 0.9) - 0.6).abs() < 0.01, "{}", apply(&m, 0.9));
        assert!((apply(&m, 0.5) - 0.3).abs() < 0.01, "{}", apply(&m, 0.5));
        assert!(m.iter().all(|(_, p)| (0.0..=1.0).contains(p)));
        assert_eq!(apply(&[], 0.42), 0.42);
        assert!(fit(&[]).is_empty());
    }

    #[test]
    fn a_score_that_says_the_opposite_gives_a_flat_map() {
        // higher raw, fewer right: the map never decreases; it says the share right
        let mut pts = points(0.9, 10, 2);
        pts.extend(points(0.3, 10, 8));
        let m = fit(&pts);
        assert!(m.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!((apply(&m, 0.9) - 0.5).abs() < 0.01, "{}", apply(&m, 0.9));
        assert!((apply(&m, 0.1) - 0.5).abs() < 0.01);
    }

    #[test]
    fn separable_points_keep_a_finite_fit() {
        // every point right: the ridge keeps the fit finite, and near 1
        let m = fit(&points(0.7, 20, 20));
        assert!(m.iter().all(|(_, p)| p.is_finite()));
        assert!(apply(&m, 0.7) > 0.9);
    }

    #[test]
    fn each_signature_layer_has_its_own_fit() {
        assert_eq!(score_layer(None), Some("signature"));
        assert_eq!(score_layer(Some("wrapper")), Some("signature"));
        assert_eq!(score_layer(Some("table:errno")), Some("table"));
        assert_eq!(score_layer(Some("fallback")), Some("table"));
        assert_eq!(score_layer(Some("fuzzy")), Some("fuzzy"));
        assert_eq!(score_layer(Some("inferred")), None);
        // the same score, right 9 times in 10 in one layer and 3 in 10 in another
        let mut pts: Vec<(&'static str, f64, bool)> =
            (0..100).map(|i| ("signature", 0.6, i < 90)).collect();
        pts.extend((0..100).map(|i| ("fuzzy", 0.6, i < 30)));
        let fits = fit_layers(&pts);
        assert_eq!(fits.len(), 2);
        assert!((apply(&fits["signature"], 0.6) - 0.9).abs() < 0.02);
        assert!((apply(&fits["fuzzy"], 0.6) - 0.3).abs() < 0.02);
        // cross-fitted per layer, in the points' order: each mapped by its own layer
        let folds: Vec<usize> = (0..pts.len()).map(|i| i % 2).collect();
        let cross = cross_fitted_layers(&pts, &folds, 2);
        assert_eq!(cross.len(), pts.len());
        assert!(cross[..100].iter().all(|(p, _)| (p - 0.9).abs() < 0.05));
        assert!(cross[100..].iter().all(|(p, _)| (p - 0.3).abs() < 0.05));
        assert_eq!(cross[0].1, pts[0].2);
    }

    #[test]
    fn cross_fitting_never_sees_the_point_it_maps() {
        // two folds that disagree: each is mapped by the other's fit
        let pts = [(0.8, true), (0.8, true), (0.8, false), (0.8, false)];
        let folds = [0, 0, 1, 1];
        let out = cross_fitted(&pts, &folds, 2);
        assert!(out[0].0 < 0.1, "{}", out[0].0);
        assert!(out[2].0 > 0.9, "{}", out[2].0);
    }
}
