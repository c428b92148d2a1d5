//! What the rest of a plan will take, from what its finished items took
//! (issue 46): the mean time and cost of the completed items times the
//! open ones, the item in progress counting what it has left of the mean.
//! Pure, and computed only when the engine's per-item figures arrive
//! (`PlanStats`), never per round or per frame. Invariant: no forecast
//! before an item is completed; an item in progress that has used more
//! than twice the mean is drifting.

use super::TodoStatus;
use super::ledger::ItemStats;

/// The rest of a plan, as its finished items say.
#[derive(Clone, Debug, PartialEq)]
pub struct Forecast {
    /// Wall time left, in milliseconds.
    pub time_ms: u64,
    /// Money left, in US dollars; none when no finished item's price is known.
    pub cost_usd: Option<f64>,
    /// The mean time of a finished item, in milliseconds.
    pub mean_ms: u64,
    /// The id of the item in progress when it has used more than twice
    /// the mean time.
    pub drifting: Option<String>,
}

impl Forecast {
    /// `≈ 14 min, ≈ $0.60 left`.
    pub fn describe(&self) -> String {
        let time = crate::units::duration(self.time_ms.div_ceil(1000));
        match self.cost_usd {
            Some(usd) => format!("≈ {time}, ≈ ${usd:.2} left"),
            None => format!("≈ {time} left"),
        }
    }
}

/// The forecast for the plan whose items' accounts are `stats` (removed
/// items left out); `None` until one item is completed.
pub fn forecast(stats: &[ItemStats]) -> Option<Forecast> {
    forecast_from(stats, None)
}

/// [`forecast`], with `prior_ms`, the mean time of an item in this
/// workspace's earlier sessions, standing for this session's own mean
/// until one of its items is completed (time only: no cost).
pub fn forecast_from(stats: &[ItemStats], prior_ms: Option<u64>) -> Option<Forecast> {
    let live = stats.iter().filter(|s| !s.removed);
    let done: Vec<&ItemStats> = live
        .clone()
        .filter(|s| s.status == Some(TodoStatus::Completed))
        .collect();
    let mean_ms = match done.len() {
        0 => prior_ms?,
        n => done.iter().map(|s| s.time_ms).sum::<u64>() / n as u64,
    };
    let priced: Vec<f64> = done.iter().filter_map(|s| s.cost_usd).collect();
    let mean_usd = (!priced.is_empty()).then(|| priced.iter().sum::<f64>() / priced.len() as f64);
    let (mut time_ms, mut cost_usd, mut drifting) = (0u64, 0.0f64, None);
    for item in live {
        match item.status {
            Some(TodoStatus::InProgress) => {
                time_ms += mean_ms.saturating_sub(item.time_ms);
                if let Some(mean) = mean_usd {
                    cost_usd += (mean - item.cost_usd.unwrap_or(0.0)).max(0.0);
                }
                if item.time_ms > mean_ms.saturating_mul(2) {
                    drifting = Some(item.id.clone());
                }
            }
            Some(TodoStatus::Pending) => {
                time_ms += mean_ms;
                cost_usd += mean_usd.unwrap_or(0.0);
            }
            _ => {}
        }
    }
    Some(Forecast {
        time_ms,
        cost_usd: mean_usd.map(|_| cost_usd),
        mean_ms,
        drifting,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn item(id: &str, status: TodoStatus, secs: u64, usd: Option<f64>) -> ItemStats {
        ItemStats {
            id: id.into(),
            content: format!("item {id}"),
            status: Some(status),
            time_ms: secs * 1000,
            cost_usd: usd,
            ..ItemStats::default()
        }
    }

    #[test]
    fn no_forecast_before_an_item_is_done() {
        use TodoStatus::*;
        assert_eq!(forecast(&[]), None);
        assert_eq!(
            forecast(&[item("1", InProgress, 30, None), item("2", Pending, 0, None)]),
            None
        );
    }

    #[test]
    fn the_mean_of_done_items_times_the_open_ones() {
        use TodoStatus::*;
        let stats = [
            item("1", Completed, 60, Some(0.10)),
            item("2", Completed, 120, Some(0.30)),
            item("3", InProgress, 30, Some(0.05)),
            item("4", Pending, 0, None),
            // Gone from the plan: counts for nothing.
            ItemStats {
                removed: true,
                ..item("5", Completed, 900, Some(9.0))
            },
        ];
        let f = forecast(&stats).unwrap();
        assert_eq!(f.mean_ms, 90_000);
        // Item 3 has 60 s of the mean left, item 4 the whole 90 s.
        assert_eq!(f.time_ms, 150_000);
        assert!((f.cost_usd.unwrap() - 0.35).abs() < 1e-9);
        assert_eq!(f.drifting, None);
        assert_eq!(f.describe(), "≈ 3 min, ≈ $0.35 left");
        // Without prices the time alone.
        let unpriced = [item("1", Completed, 60, None), item("2", Pending, 0, None)];
        assert_eq!(forecast(&unpriced).unwrap().describe(), "≈ 1 min left");
    }

    #[test]
    fn an_item_past_twice_the_mean_is_drifting() {
        use TodoStatus::*;
        let stats = [
            item("1", Completed, 60, None),
            item("2", InProgress, 121, None),
        ];
        let f = forecast(&stats).unwrap();
        assert_eq!(f.drifting.as_deref(), Some("2"));
        assert_eq!(f.time_ms, 0, "nothing is left of its mean");
    }

    /// Items of 60 s ±20%: after 2 of 6 done (and 20 s into the third),
    /// the forecast is within 2x of what the rest really took.
    #[test]
    fn a_regular_plan_is_forecast_within_twice_the_actual() {
        use TodoStatus::*;
        let real = [60u64, 72, 48, 66, 54, 60];
        let cost = |secs: u64| secs as f64 * 0.002;
        let mut stats = vec![
            item("1", Completed, real[0], Some(cost(real[0]))),
            item("2", Completed, real[1], Some(cost(real[1]))),
            item("3", InProgress, 20, Some(cost(20))),
        ];
        for (i, secs) in real.iter().enumerate().skip(3) {
            stats.push(item(&(i + 1).to_string(), Pending, *secs, None));
        }
        let f = forecast(&stats).unwrap();
        let actual_s: u64 = real[2] - 20 + real[3..].iter().sum::<u64>();
        let ratio = f.time_ms as f64 / (actual_s * 1000) as f64;
        assert!((0.5..=2.0).contains(&ratio), "time ratio {ratio}");
        let actual_usd = cost(actual_s);
        let ratio = f.cost_usd.unwrap() / actual_usd;
        assert!((0.5..=2.0).contains(&ratio), "cost ratio {ratio}");
    }

    #[test]
    fn earlier_sessions_stand_in_until_an_item_is_done() {
        let open = [
            item("1", TodoStatus::Pending, 0, None),
            item("2", TodoStatus::Pending, 0, None),
        ];
        assert!(forecast_from(&open, None).is_none());
        let prior = forecast_from(&open, Some(60_000)).unwrap();
        assert_eq!((prior.time_ms, prior.cost_usd), (120_000, None));
        // One of this session's own items done: its mean wins.
        let mixed = [
            item("1", TodoStatus::Completed, 30, None),
            item("2", TodoStatus::Pending, 0, None),
        ];
        assert_eq!(forecast_from(&mixed, Some(60_000)).unwrap().time_ms, 30_000);
    }
}
