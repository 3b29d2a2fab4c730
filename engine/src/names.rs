//! The names of everything strata keeps in a database directory, in one
//! place (`docs/format.md`, "Directory"):
//!
//! ```text
//! DIR/LOCK                            flock()ed while the database is open
//! DIR/CURRENT                         names the live manifest
//! DIR/MANIFEST-NNNNNN                 the catalog
//! DIR/wal/NNNNNNNNNNNN.wal            WAL segments
//! DIR/wal/NNNNNNNNNNNN.wal.creating   a segment being created
//! DIR/wal/damaged/                    what point-in-time recovery set aside
//! DIR/data/NNNNNNNNNNNN.hfile         HFiles
//! ```

/// The directory lock file.
pub(crate) const LOCK_FILE: &str = "LOCK";
/// The file naming the live manifest.
pub(crate) const CURRENT_FILE: &str = "CURRENT";
/// The WAL directory inside the database directory.
pub(crate) const WAL_DIR: &str = "wal";
/// The HFile directory inside the database directory.
pub(crate) const DATA_DIR: &str = "data";
/// Where point-in-time WAL recovery keeps copies of what it cuts or sets
/// aside, inside the WAL directory.
pub(crate) const DAMAGED_WAL_DIR: &str = "damaged";
/// Suffix of a WAL segment being created; it gets its final name once its
/// header is durable.
pub(crate) const CREATING_SUFFIX: &str = ".creating";
/// Suffix of HFiles.
pub(crate) const HFILE_SUFFIX: &str = ".hfile";
/// Suffix of WAL segments.
pub(crate) const SEGMENT_SUFFIX: &str = ".wal";

/// File name of HFile `id` inside the data directory.
pub(crate) fn hfile_name(id: u64) -> String {
    format!("{id:012}{HFILE_SUFFIX}")
}

/// Parses an HFile name back into its id.
pub(crate) fn parse_hfile_name(name: &str) -> Option<u64> {
    parse_twelve_digits(name.strip_suffix(HFILE_SUFFIX)?)
}

/// File name of WAL segment `id` inside the WAL directory.
pub(crate) fn segment_file_name(id: u64) -> String {
    format!("{id:012}{SEGMENT_SUFFIX}")
}

/// Parses a segment file name back into its id.
pub(crate) fn parse_segment_file_name(name: &str) -> Option<u64> {
    parse_twelve_digits(name.strip_suffix(SEGMENT_SUFFIX)?)
}

/// File name of manifest number `id`.
pub(crate) fn manifest_name(id: u64) -> String {
    format!("MANIFEST-{id:06}")
}

/// Parses a manifest file name back into its number.
pub(crate) fn parse_manifest_name(name: &str) -> Option<u64> {
    name.strip_prefix("MANIFEST-")?.parse().ok()
}

fn parse_twelve_digits(digits: &str) -> Option<u64> {
    if digits.len() != 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(hfile_name(42), "000000000042.hfile");
        assert_eq!(parse_hfile_name("000000000042.hfile"), Some(42));
        assert_eq!(parse_hfile_name("42.hfile"), None);
        assert_eq!(segment_file_name(42), "000000000042.wal");
        assert_eq!(parse_segment_file_name("000000000042.wal"), Some(42));
        assert_eq!(parse_segment_file_name("42.wal"), None);
        assert_eq!(parse_segment_file_name("000000000042.log"), None);
        assert_eq!(manifest_name(7), "MANIFEST-000007");
        assert_eq!(parse_manifest_name("MANIFEST-000007"), Some(7));
        assert_eq!(parse_manifest_name("CURRENT"), None);
    }
}
