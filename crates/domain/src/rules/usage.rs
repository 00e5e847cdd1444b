//! What a usage report costs and how much of it the agent pays (decision D-106): the
//! reported cost, else the operator's price table, else unknown; credits at the
//! organization's rate; drawn from the run's reservation first, then from what the
//! agent may still spend, never below zero.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::ValidationError;

/// Credits one US dollar of cost comes to when nothing else is configured.
pub const DEFAULT_CREDITS_PER_USD: i64 = 1_000;

/// The largest rate accepted (credits per US dollar).
pub const MAX_CREDITS_PER_USD: i64 = 1_000_000_000;

/// Millionths of a dollar in a dollar.
const MICRO: i128 = 1_000_000;

/// What one model costs, in US dollars per million tokens of each kind (the same
/// number as millionths of a dollar per token).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    /// Per million input tokens.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million cache-read tokens; the input price when not given.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Per million cache-write tokens; the input price when not given.
    #[serde(default)]
    pub cache_write: Option<f64>,
}

/// Tokens of one report, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input tokens.
    pub input: i64,
    /// Output tokens.
    pub output: i64,
    /// Cache-read tokens.
    pub cache_read: i64,
    /// Cache-write tokens.
    pub cache_write: i64,
}

impl Price {
    /// What `tokens` cost at this price, in millionths of a dollar, rounded to the
    /// nearest (halves up).
    ///
    /// ```
    /// use muster_domain::rules::usage::{Price, Tokens};
    /// let sonnet = Price { input: 3.0, output: 15.0, cache_read: Some(0.3), cache_write: None };
    /// let tokens = Tokens { input: 1_000, output: 200, cache_read: 10_000, cache_write: 0 };
    /// // 1,000 x 3 + 200 x 15 + 10,000 x 0.3 = 9,000 millionths of a dollar.
    /// assert_eq!(sonnet.cost_microusd(tokens), 9_000);
    /// ```
    pub fn cost_microusd(&self, tokens: Tokens) -> i64 {
        let read = self.cache_read.unwrap_or(self.input);
        let write = self.cache_write.unwrap_or(self.input);
        #[allow(clippy::cast_precision_loss)] // token counts far below 2^53
        let cost = tokens.input as f64 * self.input
            + tokens.output as f64 * self.output
            + tokens.cache_read as f64 * read
            + tokens.cache_write as f64 * write;
        // A finite, non-negative sum (the table refuses anything else); `as` saturates.
        #[allow(clippy::cast_possible_truncation)]
        let rounded = (cost + 0.5).floor() as i64;
        rounded.max(0)
    }

    fn check(&self, model: &str) -> Result<(), ValidationError> {
        let prices = [
            Some(self.input),
            Some(self.output),
            self.cache_read,
            self.cache_write,
        ];
        if prices
            .into_iter()
            .flatten()
            .all(|p| p.is_finite() && (0.0..=1_000_000.0).contains(&p))
        {
            Ok(())
        } else {
            Err(ValidationError::new(format!(
                "price table: the prices of {model:?} must be numbers from 0 to 1000000 \
                 (US dollars per million tokens)"
            )))
        }
    }
}

/// The operator's price table: per model, US dollars per million tokens.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    models: BTreeMap<String, Price>,
}

impl PriceTable {
    /// A table of these prices.
    pub fn new(models: impl IntoIterator<Item = (String, Price)>) -> Result<Self, ValidationError> {
        let models: BTreeMap<String, Price> = models.into_iter().collect();
        for (model, price) in &models {
            if model.trim().is_empty() {
                return Err(ValidationError::new("price table: a model name is empty"));
            }
            price.check(model)?;
        }
        Ok(Self { models })
    }

    /// Parses the table's file: a JSON object from model name to its prices,
    /// `{"claude-sonnet-4-5": {"input": 3, "output": 15, "cacheRead": 0.3,
    /// "cacheWrite": 3.75}}`.
    pub fn parse_json(text: &str) -> Result<Self, ValidationError> {
        let models: BTreeMap<String, Price> = serde_json::from_str(text)
            .map_err(|err| ValidationError::new(format!("price table: {err}")))?;
        Self::new(models)
    }

    /// Models priced.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// Whether no model is priced.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// The price of `model`: its own entry, else the longest entry its name starts
    /// with (so `claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`).
    pub fn price_of(&self, model: &str) -> Option<&Price> {
        if let Some(price) = self.models.get(model) {
            return Some(price);
        }
        self.models
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| price)
    }
}

/// The cost of a report: the reported one when given, else from the price table,
/// else unknown (`None`).
pub fn report_cost(
    reported: Option<i64>,
    table: &PriceTable,
    model: &str,
    tokens: Tokens,
) -> Option<i64> {
    reported.or_else(|| table.price_of(model).map(|p| p.cost_microusd(tokens)))
}

/// Credits that `cost_microusd` comes to at `credits_per_usd`, rounded up (a started
/// credit is owed).
///
/// ```
/// use muster_domain::rules::usage::credits_for;
/// assert_eq!(credits_for(1_000, 1_000), 1); // a tenth of a cent at 1,000 per dollar
/// assert_eq!(credits_for(1_001, 1_000), 2);
/// assert_eq!(credits_for(0, 1_000), 0);
/// ```
pub fn credits_for(cost_microusd: i64, credits_per_usd: i64) -> i64 {
    let product = i128::from(cost_microusd.max(0)) * i128::from(credits_per_usd.max(0));
    let credits = (product + MICRO - 1) / MICRO;
    i64::try_from(credits).unwrap_or(i64::MAX)
}

/// What a run owes after a new report: the credits its priced cost so far comes to,
/// less what it was already billed (charged or found unfunded). Billing the run's
/// running total (not each report rounded up) keeps many small reports from costing
/// more than one large one.
pub fn credits_due(cost_now: Option<i64>, billed_before: i64, credits_per_usd: i64) -> i64 {
    let Some(now) = cost_now else {
        return 0;
    };
    credits_for(now, credits_per_usd)
        .saturating_sub(billed_before)
        .max(0)
}

/// How a charge of credits is paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Charge {
    /// Credits taken from the agent (its balance, and its period budget).
    pub credits: i64,
    /// Of those, how many came out of the run's reservation.
    pub from_reservation: i64,
    /// Credits owed beyond what the agent could pay.
    pub unfunded: i64,
}

impl Charge {
    /// Whether the agent could not pay all of it.
    pub const fn exhausted(&self) -> bool {
        self.unfunded > 0
    }
}

/// Pays `due` from the run's `reserved` credits first, then from what the agent may
/// still `spendable` spend besides every reservation; the rest is unfunded.
///
/// ```
/// use muster_domain::rules::usage::charge;
/// let paid = charge(30, 10, 15);
/// assert_eq!((paid.credits, paid.from_reservation, paid.unfunded), (25, 10, 5));
/// ```
pub fn charge(due: i64, reserved: i64, spendable: i64) -> Charge {
    let due = due.max(0);
    let from_reservation = due.min(reserved.max(0));
    let from_free = (due - from_reservation).min(spendable.max(0));
    Charge {
        credits: from_reservation + from_free,
        from_reservation,
        unfunded: due - from_reservation - from_free,
    }
}

/// The largest token count of one kind in one report.
pub const MAX_TOKENS: i64 = 1_000_000_000_000;

/// The largest reported cost of one report: a million dollars.
pub const MAX_COST_MICROUSD: i64 = 1_000_000_000_000;

/// Checks a reported token count or cost: from 0 to `max`.
pub fn check_amount(field: &str, value: i64, max: i64) -> Result<(), ValidationError> {
    if (0..=max).contains(&value) {
        Ok(())
    } else {
        Err(ValidationError::new(format!(
            "{field} must be a whole number from 0 to {max}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> PriceTable {
        PriceTable::parse_json(
            r#"{"claude-sonnet-4-5": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
                "claude": {"input": 1, "output": 1},
                "gpt-5": {"input": 1.25, "output": 10}}"#,
        )
        .unwrap_or_default()
    }

    #[test]
    fn a_model_is_priced_by_its_own_entry_else_the_longest_prefix() {
        let table = table();
        assert_eq!(table.len(), 3);
        assert_eq!(table.price_of("gpt-5").map(|p| p.input), Some(1.25));
        let dated = table.price_of("claude-sonnet-4-5-20250929");
        assert_eq!(dated.map(|p| p.output), Some(15.0));
        assert_eq!(table.price_of("claude-haiku").map(|p| p.output), Some(1.0));
        assert_eq!(table.price_of("gemini-2.5-pro"), None);
        assert_eq!(
            table.price_of("gpt"),
            None,
            "a prefix of an entry is not priced"
        );
    }

    #[test]
    fn the_cost_is_the_reported_one_else_the_tables_else_unknown() {
        let table = table();
        let tokens = Tokens {
            input: 1_000_000,
            output: 100_000,
            cache_read: 2_000_000,
            cache_write: 10_000,
        };
        // 3.00 + 1.50 + 0.60 + 0.0375 dollars.
        let priced = report_cost(None, &table, "claude-sonnet-4-5", tokens);
        assert_eq!(priced, Some(5_137_500));
        assert_eq!(
            report_cost(Some(42), &table, "claude-sonnet-4-5", tokens),
            Some(42)
        );
        assert_eq!(report_cost(None, &table, "mystery", tokens), None);
        assert_eq!(report_cost(Some(0), &table, "mystery", tokens), Some(0));
    }

    #[test]
    fn cache_tokens_cost_the_input_price_when_the_table_names_none() {
        let price = Price {
            input: 2.0,
            output: 0.0,
            cache_read: None,
            cache_write: None,
        };
        let tokens = Tokens {
            cache_read: 5,
            cache_write: 7,
            ..Tokens::default()
        };
        assert_eq!(price.cost_microusd(tokens), 24);
    }

    #[test]
    fn fractions_of_a_millionth_round_to_the_nearest() {
        let price = Price {
            input: 0.25,
            output: 0.5,
            cache_read: None,
            cache_write: None,
        };
        let one = |input, output| Tokens {
            input,
            output,
            ..Tokens::default()
        };
        assert_eq!(price.cost_microusd(one(1, 0)), 0);
        assert_eq!(price.cost_microusd(one(2, 0)), 1, "a half rounds up");
        assert_eq!(price.cost_microusd(one(0, 3)), 2);
    }

    #[test]
    fn a_bad_table_is_refused_with_a_reason() {
        for (text, says) in [
            ("[]", "price table"),
            (r#"{"m": {"input": 1}}"#, "output"),
            (r#"{"m": {"input": -1, "output": 1}}"#, "\"m\""),
            (r#"{"m": {"input": 1, "output": 1, "extra": 1}}"#, "extra"),
            (r#"{" ": {"input": 1, "output": 1}}"#, "empty"),
            (r#"{"m": {"input": 1e300, "output": 1}}"#, "1000000"),
        ] {
            let err = PriceTable::parse_json(text).err().map(|e| e.to_string());
            assert!(
                err.as_deref().is_some_and(|e| e.contains(says)),
                "{text}: {err:?}"
            );
        }
        assert!(PriceTable::parse_json("{}").is_ok_and(|t| t.is_empty()));
        let one = PriceTable::parse_json(r#"{"m": {"input": 1, "output": 2}}"#).unwrap();
        assert!(!one.is_empty());
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn credits_are_the_cost_at_the_rate_rounded_up() {
        assert_eq!(credits_for(1_000_000, 1_000), 1_000);
        assert_eq!(credits_for(999, 1_000), 1);
        assert_eq!(credits_for(1, 1), 1);
        assert_eq!(credits_for(-5, 1_000), 0);
        assert_eq!(credits_for(i64::MAX, MAX_CREDITS_PER_USD), i64::MAX);
    }

    #[test]
    fn a_run_is_billed_on_its_running_total_not_report_by_report() {
        // Ten reports of 100 millionths each at 1,000 per dollar: one credit in all.
        let mut billed = 0;
        let mut cost = None;
        for _ in 0..10 {
            let now = Some(cost.unwrap_or(0) + 100);
            billed += credits_due(now, billed, 1_000);
            cost = now;
        }
        assert_eq!(billed, 1);
        // A run with nothing priced owes nothing.
        assert_eq!(credits_due(None, 0, 1_000), 0);
        // What was found unfunded counts as billed: it is not asked for again.
        assert_eq!(credits_due(Some(3_000), 3, 1_000), 0);
        assert_eq!(credits_due(Some(3_001), 3, 1_000), 1);
    }

    #[test]
    fn a_charge_draws_the_reservation_first_and_never_goes_below_zero() {
        assert_eq!(
            charge(8, 10, 0),
            Charge {
                credits: 8,
                from_reservation: 8,
                unfunded: 0
            }
        );
        let short = charge(30, 0, 12);
        assert_eq!((short.credits, short.unfunded), (12, 18));
        assert!(short.exhausted());
        assert_eq!(
            charge(5, 0, -3),
            Charge {
                credits: 0,
                from_reservation: 0,
                unfunded: 5
            }
        );
        assert_eq!(charge(-1, 4, 4), Charge::default());
        assert!(!charge(4, 4, 0).exhausted());
    }

    #[test]
    fn amounts_outside_their_range_are_refused() {
        assert!(check_amount("inputTokens", 0, MAX_TOKENS).is_ok());
        assert!(check_amount("inputTokens", MAX_TOKENS, MAX_TOKENS).is_ok());
        let err = check_amount("inputTokens", -1, MAX_TOKENS)
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("inputTokens")));
        assert!(check_amount("costMicrousd", MAX_COST_MICROUSD + 1, MAX_COST_MICROUSD).is_err());
    }
}
