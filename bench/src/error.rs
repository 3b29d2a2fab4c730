//! The harness's error type: one variant per source of failure.

use std::fmt;

/// Everything that can stop a benchmark run.
#[derive(Debug)]
pub enum BenchError {
    /// strata returned an error.
    Strata(strata::Error),
    /// RocksDB returned an error.
    #[cfg(feature = "peers")]
    RocksDb(rocksdb::Error),
    /// fjall returned an error.
    #[cfg(feature = "peers")]
    Fjall(fjall::Error),
    /// A file-system operation of the harness itself failed.
    Io {
        /// What the harness was doing.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Writing or parsing JSON failed.
    Json(serde_json::Error),
    /// The command line asked for something that cannot run.
    Usage(String),
    /// A run in a child process (`--isolate`) failed or returned no
    /// result.
    Child(String),
    /// An engine gave an answer the workload knows to be wrong (for example
    /// a scan that returned fewer entries than were loaded).
    Check(String),
}

impl BenchError {
    /// Wraps an I/O error with what the harness was doing.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> BenchError {
        BenchError::Io {
            context: context.into(),
            source,
        }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Strata(e) => write!(f, "strata: {e}"),
            #[cfg(feature = "peers")]
            BenchError::RocksDb(e) => write!(f, "rocksdb: {e}"),
            #[cfg(feature = "peers")]
            BenchError::Fjall(e) => write!(f, "fjall: {e}"),
            BenchError::Io { context, source } => write!(f, "{context}: {source}"),
            BenchError::Json(e) => write!(f, "json: {e}"),
            BenchError::Usage(message) => write!(f, "{message}"),
            BenchError::Child(message) => write!(f, "{message}"),
            BenchError::Check(message) => write!(f, "sanity check failed: {message}"),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<strata::Error> for BenchError {
    fn from(e: strata::Error) -> Self {
        BenchError::Strata(e)
    }
}

#[cfg(feature = "peers")]
impl From<rocksdb::Error> for BenchError {
    fn from(e: rocksdb::Error) -> Self {
        BenchError::RocksDb(e)
    }
}

#[cfg(feature = "peers")]
impl From<fjall::Error> for BenchError {
    fn from(e: fjall::Error) -> Self {
        BenchError::Fjall(e)
    }
}

impl From<serde_json::Error> for BenchError {
    fn from(e: serde_json::Error) -> Self {
        BenchError::Json(e)
    }
}

/// Result of harness operations.
pub type Result<T> = std::result::Result<T, BenchError>;
