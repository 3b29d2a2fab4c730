//! Command failures, worded as HBase's shell words them where it has a message of its own
//! (`Unknown table t!`, `Unknown column family! Valid column names: f:*`), and as the engine
//! words them otherwise.

use std::fmt;
use std::io;

use super::Executor;
use crate::shell::FormatError;

/// Why a command failed.
#[derive(Debug)]
pub enum CommandError {
    /// The command could not do what it was asked; the shell prints `ERROR: {message}`.
    Failed(String),
    /// Writing the command's output failed (a closed pipe, a full disk).
    Output(io::Error),
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Failed(message) => f.write_str(message),
            CommandError::Output(error) => write!(f, "writing output: {error}"),
        }
    }
}

impl std::error::Error for CommandError {}

impl From<io::Error> for CommandError {
    fn from(error: io::Error) -> CommandError {
        CommandError::Output(error)
    }
}

impl From<FormatError> for CommandError {
    fn from(error: FormatError) -> CommandError {
        CommandError::Failed(error.to_string())
    }
}

/// HBase's `TableName.isLegalNamespaceName` message for the first illegal character (its
/// byte as a Java `byte`, its index); `None` when every character is legal (an empty or too
/// long name, which the engine words).
fn illegal_namespace(name: &str) -> Option<String> {
    let (index, byte) = name
        .bytes()
        .enumerate()
        .find(|(_, byte)| !byte.is_ascii_alphanumeric() && *byte != b'_')?;
    Some(format!(
        "java.lang.IllegalArgumentException: Illegal character <{}> at {index}. Namespaces \
         can only contain 'alphanumeric characters': i.e. [a-zA-Z_0-9]: {name}",
        byte as i8
    ))
}

/// `message` as a failure.
pub(super) fn failed(message: impl Into<String>) -> CommandError {
    CommandError::Failed(message.into())
}

impl Executor {
    /// An engine error of a command on `table`, in HBase's words where HBase has them.
    pub(super) fn engine_error(&self, table: &str, error: strata::Error) -> CommandError {
        let message = match error {
            strata::Error::TableNotFound { table } => format!("Unknown table {table}!"),
            strata::Error::TableExists { table } => format!("Table already exists: {table}!"),
            strata::Error::TableDisabled { table } => {
                format!("org.apache.hadoop.hbase.TableNotEnabledException: {table} is disabled.")
            }
            strata::Error::UnknownFamily { .. } | strata::Error::FamilyDropped { .. } => {
                self.unknown_family(table)
            }
            strata::Error::NamespaceNotFound { namespace } => {
                format!("org.apache.hadoop.hbase.NamespaceNotFoundException: {namespace}")
            }
            strata::Error::NamespaceExists { namespace } => {
                format!("org.apache.hadoop.hbase.NamespaceExistException: {namespace}")
            }
            strata::Error::NamespaceNotEmpty { namespace, tables } => format!(
                "org.apache.hadoop.hbase.constraint.ConstraintException: Only empty namespaces \
                 can be removed. Namespace {namespace} has {tables} tables"
            ),
            strata::Error::ReservedNamespace {
                namespace,
                reason: "it cannot be removed",
            } => format!(
                "org.apache.hadoop.hbase.constraint.ConstraintException: Reserved namespace \
                 {namespace} cannot be removed."
            ),
            strata::Error::InvalidNamespaceName { name, reason } => illegal_namespace(&name)
                .unwrap_or_else(|| {
                    strata::Error::InvalidNamespaceName { name, reason }.to_string()
                }),
            strata::Error::SnapshotExists { name } => format!(
                "org.apache.hadoop.hbase.snapshot.SnapshotExistsException: Snapshot '{name}' \
                 already stored on the filesystem."
            ),
            strata::Error::SnapshotNotFound { name } => format!(
                "org.apache.hadoop.hbase.snapshot.SnapshotDoesNotExistException: Snapshot \
                 '{name}' doesn't exist on the filesystem"
            ),
            strata::Error::TableNotDisabled { table } => {
                format!("org.apache.hadoop.hbase.TableNotDisabledException: {table}")
            }
            strata::Error::NotACounter { len, .. } => {
                format!(
                    "org.apache.hadoop.hbase.DoNotRetryIOException: Field is not a long, it's {len} bytes wide"
                )
            }
            other => other.to_string(),
        };
        CommandError::Failed(message)
    }

    /// HBase's message for a family the table does not have, listing the ones it has.
    pub(super) fn unknown_family(&self, table: &str) -> String {
        let mut families: Vec<String> = self
            .db
            .describe_table(table)
            .map(|descriptor| {
                descriptor
                    .families()
                    .iter()
                    .map(|family| format!("{}:*", family.name()))
                    .collect()
            })
            .unwrap_or_default();
        families.sort();
        format!(
            "Unknown column family! Valid column names: {}",
            families.join(", ")
        )
    }
}
