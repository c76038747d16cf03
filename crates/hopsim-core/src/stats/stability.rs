//! Stability categories of the VC-management paper, made precise. From the accepted load of
//! the measured bins (`run.temporal_bin` cycles each), smoothed over 5 bins:
//!
//! - `best` is the highest smoothed value and `low = 0.85 * best`; a *dip* is a maximal
//!   stretch of smoothed values below `low`;
//! - **category 1**: no dip: the accepted load stays within 15% of its best all along;
//! - **category 2**: dips, but the network recovers: the last fifth of the run averages at
//!   least `low` and at most a quarter of the run is spent in dips;
//! - **category 3**: anything else: an abrupt or progressive drop that does not recover, or
//!   oscillation that keeps the load low a large part of the time.
//!
//! Runs shorter than 10 bins are too short to judge and get category 0.

/// Category, drop from the best window (0..1), and number of dips.
pub fn classify(accepted: &[f64]) -> (u8, f64, u32) {
    const SMOOTH: usize = 5;
    if accepted.len() < 10 {
        return (0, 0.0, 0);
    }
    let smooth: Vec<f64> = accepted.windows(SMOOTH).map(|w| w.iter().sum::<f64>() / SMOOTH as f64).collect();
    let best = smooth.iter().cloned().fold(0.0, f64::max);
    if best <= 0.0 {
        return (3, 1.0, 1);
    }
    let worst = smooth.iter().cloned().fold(f64::INFINITY, f64::min);
    let low = 0.85 * best;
    let mut dips = 0;
    let mut below = 0usize;
    let mut inside = false;
    for &v in &smooth {
        if v < low {
            below += 1;
            if !inside {
                dips += 1;
            }
            inside = true;
        } else {
            inside = false;
        }
    }
    let drop = 1.0 - worst / best;
    if dips == 0 {
        return (1, drop, 0);
    }
    let tail = &accepted[accepted.len() - accepted.len().div_ceil(5)..];
    let tail_mean = tail.iter().sum::<f64>() / tail.len() as f64;
    let recovered = tail_mean >= low && below * 4 <= smooth.len();
    (if recovered { 2 } else { 3 }, drop, dips)
}

#[cfg(test)]
mod tests {
    use super::classify;

    fn series(f: impl Fn(usize) -> f64) -> Vec<f64> {
        (0..500).map(f).collect()
    }
    // A little deterministic noise, as real bins have.
    fn noise(i: usize) -> f64 {
        ((i * 7919) % 13) as f64 / 13.0 * 0.02 - 0.01
    }

    #[test]
    fn steady_load_is_category_1() {
        assert_eq!(classify(&series(|i| 0.45 + noise(i))).0, 1);
    }

    #[test]
    fn abrupt_drop_that_stays_is_category_3() {
        let (c, drop, dips) = classify(&series(|i| if i < 300 { 0.45 } else { 0.05 } + noise(i)));
        assert_eq!((c, dips), (3, 1));
        assert!(drop > 0.8);
    }

    #[test]
    fn progressive_decay_is_category_3() {
        assert_eq!(classify(&series(|i| 0.45 - 0.4 * i as f64 / 500.0 + noise(i))).0, 3);
    }

    #[test]
    fn fast_oscillation_between_high_and_low_is_category_3() {
        assert_eq!(classify(&series(|i| if (i / 20) % 2 == 0 { 0.45 } else { 0.15 } + noise(i))).0, 3);
    }

    #[test]
    fn drops_followed_by_recovery_are_category_2() {
        let dip = |i: usize| (100..130).contains(&i) || (320..345).contains(&i);
        let (c, _, dips) = classify(&series(|i| if dip(i) { 0.2 } else { 0.45 } + noise(i)));
        assert_eq!((c, dips), (2, 2));
    }

    #[test]
    fn short_runs_are_not_judged() {
        assert_eq!(classify(&[0.4; 9]).0, 0);
    }
}
