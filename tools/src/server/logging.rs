//! The server's log: a `tracing` subscriber that writes events to standard error (never
//! standard output, which carries the bound-address line), as text or JSON lines, filtered by
//! `--log-level` or `RUST_LOG` (`info` when neither is given), and feeds the status page's
//! [`RecentEvents`] with every event at INFO or above whatever that filter says.

use std::sync::Arc;

use tracing_subscriber::filter::{EnvFilter, LevelFilter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, Registry};

use super::events::RecentEvents;

/// The filter used when neither `--log-level` nor `RUST_LOG` says otherwise.
pub const DEFAULT_LOG_FILTER: &str = "info";

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// One human-readable line per event.
    #[default]
    Text,
    /// One JSON object per line (for log collectors).
    Json,
}

/// Why the log could not be set up.
#[derive(Debug)]
pub enum LogError {
    /// The filter does not parse.
    Filter {
        /// The filter as given.
        filter: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A global subscriber was installed already.
    AlreadyInstalled(String),
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogError::Filter { filter, reason } => write!(
                f,
                "invalid log filter {filter:?}: {reason} (give a level such as info, or \
                 RUST_LOG-style directives such as warn,strata::server=debug)"
            ),
            LogError::AlreadyInstalled(reason) => write!(f, "installing the log: {reason}"),
        }
    }
}

impl std::error::Error for LogError {}

/// The filter: `level` when given, else `RUST_LOG` when set, else [`DEFAULT_LOG_FILTER`].
pub fn log_filter(level: Option<&str>) -> Result<EnvFilter, LogError> {
    let from_environment = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let directives = level
        .map(str::to_owned)
        .or(from_environment)
        .unwrap_or_else(|| DEFAULT_LOG_FILTER.to_owned());
    EnvFilter::builder()
        .parse(&directives)
        .map_err(|error| LogError::Filter {
            filter: directives,
            reason: error.to_string(),
        })
}

/// The layers of the server's subscriber: the log on standard error, and the ring.
fn layers(
    format: LogFormat,
    filter: EnvFilter,
    events: &Arc<RecentEvents>,
) -> Vec<Box<dyn Layer<Registry> + Send + Sync>> {
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let log = match format {
        LogFormat::Text => log.with_filter(filter).boxed(),
        LogFormat::Json => log.json().with_filter(filter).boxed(),
    };
    let ring = events.layer().with_filter(LevelFilter::INFO).boxed();
    vec![log, ring]
}

/// Installs the server's subscriber for the whole process.
pub fn install(
    format: LogFormat,
    level: Option<&str>,
    events: &Arc<RecentEvents>,
) -> Result<(), LogError> {
    let filter = log_filter(level)?;
    tracing_subscriber::registry()
        .with(layers(format, filter, events))
        .try_init()
        .map_err(|error| LogError::AlreadyInstalled(error.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_or_say_what_is_wrong() {
        assert!(log_filter(Some("debug")).is_ok());
        assert!(log_filter(Some("warn,strata::server=debug")).is_ok());
        let error = log_filter(Some("strata=loud")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("invalid log filter \"strata=loud\""),
            "{error}"
        );
    }

    #[test]
    fn the_ring_gets_info_events_even_when_the_log_filter_is_quieter() {
        let events = RecentEvents::new(10);
        let subscriber = tracing_subscriber::registry().with(layers(
            LogFormat::Json,
            log_filter(Some("error")).unwrap(),
            &events,
        ));
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(target: "test", "kept for the page");
            tracing::debug!(target: "test", "dropped everywhere");
        });
        let texts: Vec<String> = events.newest_first().into_iter().map(|e| e.text).collect();
        assert_eq!(texts, ["kept for the page"]);
    }
}
