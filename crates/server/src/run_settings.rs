//! What runs' usage costs (decision D-106): the operator's price table and the rate of
//! credits per US dollar, from flags or `MUSTER_*` variables.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use muster_domain::rules::usage::{DEFAULT_CREDITS_PER_USD, MAX_CREDITS_PER_USD, PriceTable};

/// The run settings of `muster serve`.
#[derive(Debug, Clone, Args)]
pub struct RunSettings {
    /// A JSON file of model prices in US dollars per million tokens, pricing the usage
    /// reports that carry no cost: `{"claude-sonnet-4-5": {"input": 3, "output": 15,
    /// "cacheRead": 0.3, "cacheWrite": 3.75}}`. A model matches its own entry, else the
    /// longest entry its name starts with. Without it, reports without a cost cost
    /// nothing known.
    #[arg(long, env = "MUSTER_PRICE_TABLE")]
    pub price_table: Option<PathBuf>,
    /// Credits one US dollar of usage comes to.
    #[arg(long, env = "MUSTER_CREDITS_PER_USD", default_value_t = DEFAULT_CREDITS_PER_USD,
          value_parser = clap::value_parser!(i64).range(1..=MAX_CREDITS_PER_USD))]
    pub credits_per_usd: i64,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            price_table: None,
            credits_per_usd: DEFAULT_CREDITS_PER_USD,
        }
    }
}

impl RunSettings {
    /// The price table: empty without a file.
    ///
    /// # Errors
    /// A file that cannot be read or is not a valid table, named in the message.
    pub fn prices(&self) -> anyhow::Result<PriceTable> {
        let Some(path) = &self.price_table else {
            return Ok(PriceTable::default());
        };
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "cannot read the price table {} (MUSTER_PRICE_TABLE)",
                path.display()
            )
        })?;
        PriceTable::parse_json(&text).map_err(|err| {
            anyhow::anyhow!(
                "invalid price table {} (MUSTER_PRICE_TABLE): {err}",
                path.display()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `text` under the temporary directory, removed when dropped.
    struct Table(PathBuf);

    impl Drop for Table {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn with_file(text: &str) -> (Table, RunSettings) {
        let path = std::env::temp_dir().join(format!(
            "muster-prices-{}-{:?}.json",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&path, text).unwrap();
        let settings = RunSettings {
            price_table: Some(path.clone()),
            ..RunSettings::default()
        };
        (Table(path), settings)
    }

    #[test]
    fn no_file_prices_nothing() {
        assert!(RunSettings::default().prices().unwrap().is_empty());
    }

    #[test]
    fn a_valid_file_is_read() {
        let (_dir, settings) = with_file(r#"{"m": {"input": 3, "output": 15}}"#);
        assert_eq!(settings.prices().unwrap().len(), 1);
    }

    #[test]
    fn a_bad_file_names_itself() {
        let (_dir, settings) = with_file("{not json");
        let err = settings.prices().unwrap_err().to_string();
        assert!(err.contains("muster-prices-"), "{err}");
        assert!(err.contains("invalid price table"), "{err}");
        let missing = RunSettings {
            price_table: Some(PathBuf::from("/nonexistent/prices.json")),
            ..RunSettings::default()
        };
        let err = format!("{:#}", missing.prices().unwrap_err());
        assert!(err.contains("/nonexistent/prices.json"), "{err}");
    }
}
