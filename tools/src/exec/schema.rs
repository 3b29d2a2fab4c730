//! Between the shell's table and family specifications and the engine's descriptors: building
//! descriptors for `create` and `alter`, and printing them for `describe` as HBase 2.x does.

use std::time::Duration;

use strata::{
    DEFAULT_MAX_REGION_SIZE_BYTES, DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES, Durability, FamilyDescriptor,
    PreSplit, TableDescriptor,
};

use crate::shell::{self, FamilySpec, TableOptionKey, TableOptions, Ttl, descriptor_text};

/// The engine's default durability, which `DURABILITY => 'USE_DEFAULT'` selects.
const DEFAULT_DURABILITY: Durability = Durability::SyncWal;

/// A new family from its specification (engine defaults for what is not given).
pub fn family_descriptor(spec: &FamilySpec) -> FamilyDescriptor {
    apply_family_spec(FamilyDescriptor::new(spec.name.clone()), spec)
}

/// `family` with the attributes `spec` gives changed (the others kept), as `alter` does.
pub fn apply_family_spec(family: FamilyDescriptor, spec: &FamilySpec) -> FamilyDescriptor {
    let mut family = family;
    if let Some(versions) = spec.versions {
        family = family.max_versions(versions);
    }
    match spec.ttl {
        Some(Ttl::Forever) => family = family.no_ttl(),
        Some(Ttl::Seconds(seconds)) => {
            family = family.ttl(Duration::from_secs(u64::from(seconds)));
        }
        None => {}
    }
    if let Some(bloom) = spec.bloom_filter {
        family = family.bloom(bloom);
    }
    if let Some(bytes) = spec.block_size_bytes {
        family = family.block_size_bytes(bytes);
    }
    if let Some(compression) = spec.compression {
        let current = family.get_compression();
        family = family.compression(compression.compression(current));
    }
    if let Some(in_memory) = spec.in_memory {
        family = family.in_memory(in_memory);
    }
    if let Some(block_cache) = spec.block_cache {
        family = family.block_cache(block_cache);
    }
    if let Some(versions) = spec.min_versions {
        family = family.min_versions(versions);
    }
    if let Some(mode) = spec.keep_deleted_cells {
        family = family.keep_deleted_cells(mode);
    }
    if let Some(setting) = spec.major_compaction_period_ms {
        family = family.major_compaction_period(setting.family_value().map(Duration::from_millis));
    }
    if let Some(setting) = spec.major_compaction_jitter_millionths {
        let jitter = setting
            .family_value()
            .map(|millionths| f64::from(millionths) / 1e6);
        family = family.major_compaction_jitter(jitter);
    }
    family
}

/// The engine's durability for the shell's `DURABILITY`.
pub fn durability(durability: shell::Durability) -> Durability {
    match durability {
        shell::Durability::UseDefault => DEFAULT_DURABILITY,
        shell::Durability::SkipWal => Durability::SkipWal,
        shell::Durability::AsyncWal => Durability::AsyncWal,
        shell::Durability::SyncWal => Durability::SyncWal,
        shell::Durability::FsyncWal => Durability::FsyncWal,
    }
}

/// `descriptor` with the table options given set.
pub fn apply_table_options(descriptor: TableDescriptor, options: &TableOptions) -> TableDescriptor {
    let mut descriptor = descriptor;
    if let Some(bytes) = options.max_region_size_bytes {
        descriptor = descriptor.max_region_size_bytes(bytes);
    }
    if let Some(bytes) = options.memstore_flush_size_bytes {
        descriptor = descriptor.memstore_flush_size_bytes(bytes);
    }
    if let Some(choice) = options.durability {
        descriptor = descriptor.durability(durability(choice));
    }
    descriptor
}

/// `descriptor` with the given table options back at their defaults.
pub fn unset_table_options(
    descriptor: TableDescriptor,
    keys: &[TableOptionKey],
) -> TableDescriptor {
    let mut descriptor = descriptor;
    for key in keys {
        descriptor = match key {
            TableOptionKey::MaxFileSize => {
                descriptor.max_region_size_bytes(DEFAULT_MAX_REGION_SIZE_BYTES)
            }
            TableOptionKey::MemstoreFlushSize => {
                descriptor.memstore_flush_size_bytes(DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES)
            }
            TableOptionKey::Durability => descriptor.durability(DEFAULT_DURABILITY),
        };
    }
    descriptor
}

/// A copy of `descriptor` with other families (same name, options and pre-split).
pub fn with_families(
    descriptor: &TableDescriptor,
    families: Vec<FamilyDescriptor>,
) -> TableDescriptor {
    let mut rebuilt = TableDescriptor::new(descriptor.name())
        .pre_split(descriptor.get_pre_split().clone())
        .max_region_size_bytes(descriptor.get_max_region_size_bytes())
        .memstore_flush_size_bytes(descriptor.get_memstore_flush_size_bytes())
        .durability(descriptor.get_durability())
        .max_value_bytes(descriptor.get_max_value_bytes());
    for family in families {
        rebuilt = rebuilt.family(family);
    }
    rebuilt
}

/// A copy of `descriptor` that `create` cuts into regions at `split_keys` (none: one region).
pub fn with_split_keys(descriptor: &TableDescriptor, split_keys: Vec<Vec<u8>>) -> TableDescriptor {
    let pre_split = if split_keys.is_empty() {
        PreSplit::None
    } else {
        PreSplit::Keys(split_keys)
    };
    with_families(descriptor, descriptor.families().to_vec()).pre_split(pre_split)
}

/// A family as `describe` prints it, in HBase 2.x's attribute order. Attributes strata does
/// not have print their fixed value (`DATA_BLOCK_ENCODING => 'NONE'`);
/// `NEW_VERSION_BEHAVIOR => 'true'` says how strata's deletes work. The family's own major
/// compaction settings follow as HBase prints a family's configuration:
/// `, CONFIGURATION => {'hbase.hregion.majorcompaction' => '0'}` before the closing brace.
pub fn family_text(family: &FamilyDescriptor) -> String {
    let attributes = family_attributes_text(family);
    let mut configuration = Vec::new();
    if let Some(period) = family.get_major_compaction_period() {
        configuration.push(format!(
            "'{}' => '{}'",
            shell::MAJOR_COMPACTION_KEY,
            period.as_millis()
        ));
    }
    if let Some(jitter) = family.get_major_compaction_jitter() {
        configuration.push(format!(
            "'{}' => '{jitter}'",
            shell::MAJOR_COMPACTION_JITTER_KEY
        ));
    }
    if configuration.is_empty() {
        return attributes;
    }
    let open = attributes.strip_suffix('}').unwrap_or(&attributes);
    format!(
        "{open}, CONFIGURATION => {{{}}}}}",
        configuration.join(", ")
    )
}

/// The attributes of [`family_text`] without the family's configuration.
fn family_attributes_text(family: &FamilyDescriptor) -> String {
    let ttl = match family.get_ttl() {
        None => Ttl::Forever,
        Some(ttl) => Ttl::Seconds(u32::try_from(ttl.as_secs()).unwrap_or(u32::MAX)),
    };
    let versions = family.get_max_versions().to_string();
    let min_versions = family.get_min_versions().to_string();
    let block_size = family.get_block_size_bytes().to_string();
    let ttl = shell::format_ttl(ttl);
    descriptor_text(&[
        ("NAME", family.name()),
        ("BLOOMFILTER", family.get_bloom().name()),
        ("IN_MEMORY", bool_text(family.is_in_memory())),
        ("VERSIONS", &versions),
        ("KEEP_DELETED_CELLS", family.get_keep_deleted_cells().name()),
        ("DATA_BLOCK_ENCODING", "NONE"),
        ("COMPRESSION", family.get_compression().name()),
        ("TTL", &ttl),
        ("MIN_VERSIONS", &min_versions),
        ("BLOCKCACHE", bool_text(family.is_block_cache_enabled())),
        ("BLOCKSIZE", &block_size),
        ("REPLICATION_SCOPE", "0"),
        ("NEW_VERSION_BEHAVIOR", "true"),
    ])
}

fn bool_text(value: bool) -> &'static str {
    if value { "true" } else { "false" }
}

/// The line after `Table t is ENABLED`: the name, and the table attributes that differ from
/// their defaults as HBase prints them (`t, {TABLE_ATTRIBUTES => {MAX_FILESIZE => '...'}}`).
pub fn table_text(descriptor: &TableDescriptor) -> String {
    let mut attributes = Vec::new();
    if descriptor.get_max_region_size_bytes() != DEFAULT_MAX_REGION_SIZE_BYTES {
        attributes.push(format!(
            "MAX_FILESIZE => '{}'",
            descriptor.get_max_region_size_bytes()
        ));
    }
    if descriptor.get_memstore_flush_size_bytes() != DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES {
        attributes.push(format!(
            "MEMSTORE_FLUSHSIZE => '{}'",
            descriptor.get_memstore_flush_size_bytes()
        ));
    }
    if descriptor.get_durability() != DEFAULT_DURABILITY {
        attributes.push(format!(
            "DURABILITY => '{}'",
            descriptor.get_durability().name()
        ));
    }
    if attributes.is_empty() {
        descriptor.name().to_owned()
    } else {
        format!(
            "{}, {{TABLE_ATTRIBUTES => {{{}}}}}",
            descriptor.name(),
            attributes.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conventions::ZSTD_LEVEL;
    use crate::shell::FamilySetting;
    use strata::Compression;

    #[test]
    fn family_specs_change_only_what_they_name() {
        let mut spec = FamilySpec::named("f");
        spec.versions = Some(3);
        spec.compression = Some(shell::Compression::Zstd);
        let family = family_descriptor(&spec);
        assert_eq!(family.get_max_versions(), 3);
        assert_eq!(
            family.get_compression(),
            Compression::Zstd { level: ZSTD_LEVEL }
        );
        let mut change = FamilySpec::named("f");
        change.ttl = Some(Ttl::Seconds(60));
        let changed = apply_family_spec(family, &change);
        assert_eq!(changed.get_max_versions(), 3);
        assert_eq!(changed.get_ttl(), Some(Duration::from_secs(60)));
    }

    #[test]
    fn describe_lines_follow_hbase() {
        let family = FamilyDescriptor::new("course");
        assert_eq!(
            family_text(&family),
            "{NAME => 'course', BLOOMFILTER => 'ROW', IN_MEMORY => 'false', VERSIONS => '1', \
             KEEP_DELETED_CELLS => 'FALSE', DATA_BLOCK_ENCODING => 'NONE', COMPRESSION => 'NONE', \
             TTL => 'FOREVER', MIN_VERSIONS => '0', BLOCKCACHE => 'true', BLOCKSIZE => '14336', \
             REPLICATION_SCOPE => '0', NEW_VERSION_BEHAVIOR => 'true'}"
        );
        let table = TableDescriptor::new("t").family(family);
        assert_eq!(table_text(&table), "t");
        let table = table
            .max_region_size_bytes(1 << 30)
            .durability(Durability::AsyncWal);
        assert_eq!(
            table_text(&table),
            "t, {TABLE_ATTRIBUTES => {MAX_FILESIZE => '1073741824', DURABILITY => 'ASYNC_WAL'}}"
        );
    }

    /// A family's own major compaction settings are set, kept across an `alter` that does not
    /// name them, removed by `nil`, and printed as HBase prints a family's configuration.
    #[test]
    fn family_configuration_is_applied_and_described() {
        let mut spec = FamilySpec::named("f");
        spec.major_compaction_period_ms = Some(FamilySetting::Value(86_400_000));
        spec.major_compaction_jitter_millionths = Some(FamilySetting::Value(250_000));
        let family = family_descriptor(&spec);
        assert_eq!(
            family.get_major_compaction_period(),
            Some(Duration::from_secs(86_400))
        );
        assert_eq!(family.get_major_compaction_jitter(), Some(0.25));
        assert!(family_text(&family).ends_with(
            "NEW_VERSION_BEHAVIOR => 'true', CONFIGURATION => \
             {'hbase.hregion.majorcompaction' => '86400000', \
             'hbase.hregion.majorcompaction.jitter' => '0.25'}}"
        ));
        let mut change = FamilySpec::named("f");
        change.versions = Some(2);
        let kept = apply_family_spec(family, &change);
        assert_eq!(kept.get_major_compaction_jitter(), Some(0.25));
        change.major_compaction_jitter_millionths = Some(FamilySetting::Database);
        let removed = apply_family_spec(kept, &change);
        assert_eq!(removed.get_major_compaction_jitter(), None);
        assert!(
            family_text(&removed)
                .ends_with("CONFIGURATION => {'hbase.hregion.majorcompaction' => '86400000'}}")
        );
    }
}
