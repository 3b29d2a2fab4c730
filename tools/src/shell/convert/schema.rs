//! `create` and `alter`: column family specifications, pre-splits and table options.

use super::policy;
use crate::conventions::{BLOOM_FILTER_NAMES, TTL_FOREVER_SECONDS, bloom_type};
use crate::shell::args::{Context, OptionPolicy, Options};
use crate::shell::ast::{Value, ValueKind};
use crate::shell::bytes::{to_bytes_binary, to_string_binary};
use crate::shell::command::{
    Alter, AlterChange, Compression, CreateTable, Durability, FamilySetting, FamilySpec,
    KeepDeletedCells, MAJOR_COMPACTION_JITTER_KEY, MAJOR_COMPACTION_KEY, MAX_PRESPLIT_REGIONS,
    PreSplit, SplitAlgorithm, TableOptionKey, TableOptions, Ttl,
};
use crate::shell::error::{ArgumentErrorKind, ArgumentScope, Arity, ShellError, Warning};

/// Column family attributes HBase knows that make no difference to strata's results.
const FAMILY_IGNORED: &[&str] = &[
    "DATA_BLOCK_ENCODING",
    "REPLICATION_SCOPE",
    "CACHE_DATA_ON_WRITE",
    "CACHE_INDEX_ON_WRITE",
    "CACHE_BLOOMS_ON_WRITE",
    "EVICT_BLOCKS_ON_CLOSE",
    "PREFETCH_BLOCKS_ON_OPEN",
    "COMPRESS_TAGS",
    "DFS_REPLICATION",
    "STORAGE_POLICY",
    "IN_MEMORY_COMPACTION",
    "COMPRESSION_COMPACT",
    "METADATA",
    "NEW_VERSION_BEHAVIOR",
];

/// Column family attributes that would change results in ways strata does not implement.
const FAMILY_UNSUPPORTED: &[&str] = &[
    "IS_MOB",
    "MOB_THRESHOLD",
    "MOB_COMPACT_PARTITION_POLICY",
    "ENCRYPTION",
    "ENCRYPTION_KEY",
];

/// Table attributes HBase knows that make no difference to strata's results.
const TABLE_IGNORED: &[&str] = &[
    "OWNER",
    "REGION_REPLICATION",
    "REGION_MEMSTORE_REPLICATION",
    "NORMALIZATION_ENABLED",
    "NORMALIZER_TARGET_REGION_COUNT",
    "NORMALIZER_TARGET_REGION_SIZE",
    "NORMALIZER_TARGET_REGION_SIZE_MB",
    "PRIORITY",
    "COMPACTION_ENABLED",
    "SPLIT_ENABLED",
    "MERGE_ENABLED",
    "FLUSH_POLICY",
    "REGION_SPLIT_POLICY",
    "CONFIGURATION",
    "METADATA",
    "REOPEN_REGIONS",
    "DEFERRED_LOG_FLUSH",
    "COPROCESSOR",
];

const TABLE_UNSUPPORTED: &[&str] = &["READONLY"];

pub(super) fn create(context: &mut Context<'_>) -> Result<CreateTable, ShellError> {
    context.arity(Arity::AtLeast(1))?;
    let table = context.table(context.arg(0))?;
    let mut families: Vec<FamilySpec> = Vec::new();
    let mut pre_split = PreSplit::None;
    let mut options = TableOptions::default();
    // HBase flattens the arguments and drops nils: `create 't', ['f1', 'f2']` works.
    let mut specs = Vec::new();
    flatten(context.args().get(1..).unwrap_or(&[]), &mut specs);
    for spec in specs {
        match &spec.kind {
            ValueKind::Str(_) | ValueKind::Const(_) => {
                let name = context.family_name(spec)?;
                add_family(context, &mut families, FamilySpec::named(&name));
            }
            ValueKind::Hash(_) => {
                let mut hash = context.options(spec)?;
                if hash.contains("NAME") {
                    let family = family_spec(context, &mut hash, spec)?;
                    add_family(context, &mut families, family);
                    continue;
                }
                if let Some(method) = hash.take("METHOD") {
                    let method_name = context.utf8(method, "METHOD")?;
                    if method_name != "table_att" {
                        return Err(context.error(
                            ArgumentErrorKind::UnknownMethod {
                                method: method_name,
                            },
                            method.span,
                        ));
                    }
                }
                if let Some(split) = pre_split_option(context, &mut hash)? {
                    if pre_split != PreSplit::None {
                        return Err(context.error(
                            ArgumentErrorKind::Conflict {
                                first: "SPLITS",
                                second: "NUMREGIONS",
                            },
                            spec.span,
                        ));
                    }
                    pre_split = split;
                }
                merge_table_options(&mut options, table_options(context, &mut hash)?);
                let table_policy = OptionPolicy {
                    ignored: TABLE_IGNORED,
                    unsupported: TABLE_UNSUPPORTED,
                    scope: ArgumentScope::CreateTable,
                };
                context.finish(hash, &table_policy)?;
            }
            other => {
                return Err(context.error(
                    ArgumentErrorKind::WrongType {
                        what: "column family specification".to_owned(),
                        expected: "a String or a Hash",
                        found: other.ruby_class(),
                        value: other.inspect(),
                    },
                    spec.span,
                ));
            }
        }
    }
    if families.is_empty() {
        return Err(context.error(ArgumentErrorKind::NoColumnFamily, context.call.span));
    }
    Ok(CreateTable {
        table,
        families,
        pre_split,
        options,
    })
}

/// Arrays flattened, `nil`s dropped (Ruby's `args.flatten.compact`).
fn flatten<'a>(values: &'a [Value], out: &mut Vec<&'a Value>) {
    for value in values {
        match &value.kind {
            ValueKind::Array(items) => flatten(items, out),
            ValueKind::Nil => {}
            _ => out.push(value),
        }
    }
}

fn add_family(context: &mut Context<'_>, families: &mut Vec<FamilySpec>, family: FamilySpec) {
    if let Some(existing) = families
        .iter_mut()
        .find(|existing| existing.name == family.name)
    {
        context.warn(Warning::FamilyReplaced {
            family: family.name.clone(),
        });
        *existing = family;
    } else {
        families.push(family);
    }
}

/// A `{NAME => 'f', ...}` column family specification (the hash is consumed).
fn family_spec(
    context: &mut Context<'_>,
    hash: &mut Options<'_>,
    spec: &Value,
) -> Result<FamilySpec, ShellError> {
    let Some(name_value) = hash.take("NAME") else {
        return Err(context.error(
            ArgumentErrorKind::FamilyWithoutName {
                spec: spec.kind.inspect(),
            },
            spec.span,
        ));
    };
    let name = context.family_name(name_value)?;
    let mut family = FamilySpec::named(&name);
    if let Some(value) = hash.take("VERSIONS") {
        family.versions = Some(context.lenient_u32(value, "VERSIONS", 1)?);
    }
    if let Some(value) = hash.take("TTL") {
        family.ttl = Some(ttl(context, value)?);
    }
    if let Some(value) = hash.take("BLOOMFILTER") {
        let text = context.utf8(value, "BLOOMFILTER")?.to_ascii_uppercase();
        family.bloom_filter = Some(bloom_type(&text).ok_or_else(|| {
            context.error(
                ArgumentErrorKind::UnsupportedChoice {
                    what: "BloomFilter type",
                    value: text,
                    choices: BLOOM_FILTER_NAMES,
                },
                value.span,
            )
        })?);
    }
    if let Some(value) = hash.take("BLOCKSIZE") {
        let size = context.lenient_u64(value, "BLOCKSIZE")?;
        if !(MIN_BLOCK_SIZE_BYTES..=MAX_BLOCK_SIZE_BYTES).contains(&size) {
            return Err(context.error(
                ArgumentErrorKind::OutOfRange {
                    what: "BLOCKSIZE".to_owned(),
                    expected: "between 1024 (1K) and 16777216 (16MB) bytes",
                    value: size.to_string(),
                },
                value.span,
            ));
        }
        family.block_size_bytes = u32::try_from(size).ok();
    }
    if let Some(value) = hash.take("COMPRESSION") {
        let text = context.utf8(value, "COMPRESSION")?.to_ascii_uppercase();
        family.compression = Some(Compression::from_name(&text).ok_or_else(|| {
            context.error(
                ArgumentErrorKind::UnsupportedChoice {
                    what: "Compression",
                    value: text,
                    choices: Compression::NAMES,
                },
                value.span,
            )
        })?);
    }
    if let Some(value) = hash.take("IN_MEMORY") {
        family.in_memory = Some(context.lenient_bool(value, "IN_MEMORY")?);
    }
    if let Some(value) = hash.take("BLOCKCACHE") {
        family.block_cache = Some(context.lenient_bool(value, "BLOCKCACHE")?);
    }
    if let Some(value) = hash.take("MIN_VERSIONS") {
        // Above VERSIONS is refused by the engine, which sees both (alter may change one).
        family.min_versions = Some(context.lenient_u32(value, "MIN_VERSIONS", 0)?);
    }
    if let Some(value) = hash.take("KEEP_DELETED_CELLS") {
        family.keep_deleted_cells = Some(keep_deleted_cells(context, value)?);
    }
    if let Some(value) = hash.take("CONFIGURATION") {
        family_configuration(context, value, &mut family)?;
    }
    let family_policy = OptionPolicy {
        ignored: FAMILY_IGNORED,
        unsupported: FAMILY_UNSUPPORTED,
        scope: ArgumentScope::Family(name),
    };
    context.finish(std::mem::take(hash), &family_policy)?;
    Ok(family)
}

/// A family's `CONFIGURATION => {...}`: the two periodic major compaction keys strata acts on
/// (values as strings or numbers, as HBase's `Configuration` reads them; `nil` removes the
/// family's own value); any other key is reported as ignored.
fn family_configuration(
    context: &mut Context<'_>,
    value: &Value,
    family: &mut FamilySpec,
) -> Result<(), ShellError> {
    let mut configuration = context.options(value)?;
    if let Some(value) = configuration.take(MAJOR_COMPACTION_KEY) {
        family.major_compaction_period_ms = Some(match value.kind {
            ValueKind::Nil => FamilySetting::Database,
            _ => FamilySetting::Value(context.lenient_u64(value, MAJOR_COMPACTION_KEY)?),
        });
    }
    if let Some(value) = configuration.take(MAJOR_COMPACTION_JITTER_KEY) {
        family.major_compaction_jitter_millionths = Some(match value.kind {
            ValueKind::Nil => FamilySetting::Database,
            _ => FamilySetting::Value(jitter_millionths(context, value)?),
        });
    }
    let policy = OptionPolicy {
        ignored: &[],
        unsupported: &[],
        scope: ArgumentScope::Family(family.name.clone()),
    };
    context.finish(configuration, &policy)
}

/// A jitter from `0.5`, `'0.5'` or `1`, in millionths; outside 0.0..=1.0 is an error.
fn jitter_millionths(context: &Context<'_>, value: &Value) -> Result<u32, ShellError> {
    let number = match &value.kind {
        ValueKind::Float(number) => Some(*number),
        ValueKind::Int(number) => Some(*number as f64),
        ValueKind::Str(bytes) => std::str::from_utf8(bytes)
            .ok()
            .and_then(|text| text.trim().parse::<f64>().ok()),
        other => {
            return Err(context.wrong_type(value, MAJOR_COMPACTION_JITTER_KEY, "a Float", other));
        }
    };
    match number {
        Some(jitter) if (0.0..=1.0).contains(&jitter) => Ok((jitter * 1e6).round() as u32),
        _ => Err(context.error(
            ArgumentErrorKind::OutOfRange {
                what: MAJOR_COMPACTION_JITTER_KEY.to_owned(),
                expected: "a number between 0.0 and 1.0",
                value: value.kind.inspect(),
            },
            value.span,
        )),
    }
}

/// The names `KEEP_DELETED_CELLS` takes.
const KEEP_DELETED_CELLS_NAMES: &[&str] = &["FALSE", "TRUE", "TTL"];

/// `KEEP_DELETED_CELLS => 'TRUE' | 'FALSE' | 'TTL'` (any case) or `true`/`false`, as HBase's
/// `KeepDeletedCells.valueOf(value.to_s.upcase)` reads it.
fn keep_deleted_cells(
    context: &Context<'_>,
    value: &Value,
) -> Result<KeepDeletedCells, ShellError> {
    let text = match &value.kind {
        ValueKind::Bool(flag) => {
            return Ok(if *flag {
                KeepDeletedCells::True
            } else {
                KeepDeletedCells::False
            });
        }
        ValueKind::Str(_) | ValueKind::Const(_) => context
            .utf8(value, "KEEP_DELETED_CELLS")?
            .to_ascii_uppercase(),
        other => {
            return Err(context.wrong_type(
                value,
                "KEEP_DELETED_CELLS",
                "a String or true/false",
                other,
            ));
        }
    };
    KeepDeletedCells::from_name(&text).ok_or_else(|| {
        context.error(
            ArgumentErrorKind::UnsupportedChoice {
                what: "KEEP_DELETED_CELLS",
                value: text,
                choices: KEEP_DELETED_CELLS_NAMES,
            },
            value.span,
        )
    })
}

/// HBase's block size limits (`HColumnDescriptor`'s sanity check).
const MIN_BLOCK_SIZE_BYTES: u64 = 1024;
const MAX_BLOCK_SIZE_BYTES: u64 = 16 * 1024 * 1024;

/// `TTL => seconds`, `'FOREVER'`, `'86400'` or `'1 DAY 2 HOURS'` (HBase's PrettyPrinter).
fn ttl(context: &Context<'_>, value: &Value) -> Result<Ttl, ShellError> {
    let seconds: i64 = match &value.kind {
        ValueKind::Int(seconds) => *seconds,
        ValueKind::Str(_) | ValueKind::Const(_) => {
            let text = context.utf8(value, "TTL")?;
            match parse_ttl(&text) {
                Some(TtlText::Forever) => return Ok(Ttl::Forever),
                Some(TtlText::Seconds(seconds)) => seconds,
                None => {
                    return Err(
                        context.error(ArgumentErrorKind::MalformedTtl { value: text }, value.span)
                    );
                }
            }
        }
        other => return Err(context.wrong_type(value, "TTL", "an Integer or a String", other)),
    };
    if seconds == i64::from(TTL_FOREVER_SECONDS) {
        return Ok(Ttl::Forever);
    }
    match u32::try_from(seconds) {
        Ok(seconds) if seconds > 0 && seconds < TTL_FOREVER_SECONDS as u32 => {
            Ok(Ttl::Seconds(seconds))
        }
        _ => Err(context.error(
            ArgumentErrorKind::OutOfRange {
                what: "TTL".to_owned(),
                expected: "a positive number of seconds below 2147483647, or FOREVER",
                value: seconds.to_string(),
            },
            value.span,
        )),
    }
}

enum TtlText {
    Forever,
    Seconds(i64),
}

/// HBase's human-readable intervals: `FOREVER`, `N`, or `[N SECONDS (] [N DAYS] [N HOURS]
/// [N MINUTES] [N SECONDS] [)]` (case-insensitive, singular or plural units). When the
/// leading `N SECONDS (` is given it must agree with the parts.
fn parse_ttl(text: &str) -> Option<TtlText> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("FOREVER") {
        return Some(TtlText::Forever);
    }
    if let Ok(seconds) = trimmed.parse::<i64>() {
        return Some(TtlText::Seconds(seconds));
    }
    let (declared, parts) = match trimmed.split_once('(') {
        Some((head, rest)) => {
            let inner = rest.trim_end().strip_suffix(')')?;
            (Some(single_unit(head, "SECOND")?), inner)
        }
        None => (None, trimmed),
    };
    let tokens: Vec<&str> = parts.split_whitespace().collect();
    if tokens.is_empty() || !tokens.len().is_multiple_of(2) {
        return None;
    }
    let mut total: i64 = 0;
    let mut last_rank = 0;
    for pair in tokens.chunks(2) {
        let (number, unit) = match pair {
            [number, unit] => (number.parse::<i64>().ok()?, unit.to_ascii_uppercase()),
            _ => return None,
        };
        let unit = unit.strip_suffix('S').unwrap_or(&unit).to_owned();
        let (rank, scale) = match unit.as_str() {
            "DAY" => (1, 86_400),
            "HOUR" => (2, 3_600),
            "MINUTE" => (3, 60),
            "SECOND" => (4, 1),
            _ => return None,
        };
        if rank <= last_rank {
            return None;
        }
        last_rank = rank;
        total = total.checked_add(number.checked_mul(scale)?)?;
    }
    if declared.is_some_and(|declared| declared != total) {
        return None;
    }
    Some(TtlText::Seconds(total))
}

/// `N UNIT` or `N UNITS` (case-insensitive) to N.
fn single_unit(text: &str, unit: &str) -> Option<i64> {
    let mut words = text.split_whitespace();
    let number = words.next()?.parse().ok()?;
    let word = words.next()?.to_ascii_uppercase();
    if words.next().is_some() || word.strip_suffix('S').unwrap_or(&word) != unit {
        return None;
    }
    Some(number)
}

/// The pre-split options of a `create` table-options hash (consumed), if any.
fn pre_split_option(
    context: &mut Context<'_>,
    hash: &mut Options<'_>,
) -> Result<Option<PreSplit>, ShellError> {
    let splits = hash.take_entry("SPLITS");
    let splits_file = hash.take_entry("SPLITS_FILE");
    let regions = hash.take_entry("NUMREGIONS");
    let algorithm = hash.take_entry("SPLITALGO");
    let salt = hash.take_entry("SALT_BUCKETS");
    let explicit = splits.or(splits_file);
    if let (Some(_), Some(_)) = (splits, splits_file) {
        return Err(context.error(
            ArgumentErrorKind::Conflict {
                first: "SPLITS",
                second: "SPLITS_FILE",
            },
            context.call.span,
        ));
    }
    let given: Vec<(&'static str, bool)> = vec![
        (
            if splits.is_some() {
                "SPLITS"
            } else {
                "SPLITS_FILE"
            },
            explicit.is_some(),
        ),
        ("NUMREGIONS", regions.is_some() || algorithm.is_some()),
        ("SALT_BUCKETS", salt.is_some()),
    ];
    let chosen: Vec<&'static str> = given
        .iter()
        .filter(|(_, set)| *set)
        .map(|(name, _)| *name)
        .collect();
    if let [first, second, ..] = chosen.as_slice() {
        return Err(context.error(
            ArgumentErrorKind::Conflict { first, second },
            context.call.span,
        ));
    }
    if let Some((_, value)) = splits {
        return split_keys(context, value).map(|keys| Some(PreSplit::Keys(keys)));
    }
    if let Some((_, value)) = splits_file {
        let path = context.utf8(value, "SPLITS_FILE")?;
        if path.is_empty() {
            return Err(context.error(
                ArgumentErrorKind::Empty {
                    what: "SPLITS_FILE",
                },
                value.span,
            ));
        }
        return Ok(Some(PreSplit::KeysFile(path)));
    }
    if regions.is_some() || algorithm.is_some() {
        let Some((_, regions)) = regions else {
            return Err(context.error(ArgumentErrorKind::MissingRegionCount, context.call.span));
        };
        let Some((_, algorithm)) = algorithm else {
            return Err(context.error(ArgumentErrorKind::MissingSplitAlgorithm, context.call.span));
        };
        let count = region_count(context, regions, "NUMREGIONS", 2)?;
        let name = context.utf8(algorithm, "SPLITALGO")?;
        let short = name.rsplit('.').next().unwrap_or(&name);
        let algorithm = match short {
            "HexStringSplit" => SplitAlgorithm::HexStringSplit,
            "DecimalStringSplit" => SplitAlgorithm::DecimalStringSplit,
            "UniformSplit" => SplitAlgorithm::UniformSplit,
            _ => {
                return Err(context.error(
                    ArgumentErrorKind::UnsupportedChoice {
                        what: "split algorithm",
                        value: name,
                        choices: &["HexStringSplit", "DecimalStringSplit", "UniformSplit"],
                    },
                    algorithm.span,
                ));
            }
        };
        return Ok(Some(PreSplit::Algorithm {
            algorithm,
            regions: count,
        }));
    }
    if let Some((_, value)) = salt {
        return region_count(context, value, "SALT_BUCKETS", 1)
            .map(|count| Some(PreSplit::SaltBuckets(count)));
    }
    Ok(None)
}

/// A region or bucket count between `min` and [`MAX_PRESPLIT_REGIONS`].
fn region_count(
    context: &Context<'_>,
    value: &Value,
    what: &'static str,
    min: u32,
) -> Result<u32, ShellError> {
    let count = context.lenient_u64(value, what)?;
    match u32::try_from(count) {
        Ok(count) if (min..=MAX_PRESPLIT_REGIONS).contains(&count) => Ok(count),
        _ => Err(context.error(
            ArgumentErrorKind::OutOfRange {
                what: what.to_owned(),
                expected: if min >= 2 {
                    "between 2 and 65536"
                } else {
                    "between 1 and 65536"
                },
                value: count.to_string(),
            },
            value.span,
        )),
    }
}

/// `SPLITS => ['a', "\x01", ...]`: each key through `Bytes.toBytesBinary`, then sorted; empty
/// and duplicate keys are errors (as HBase's admin reports them).
fn split_keys(context: &Context<'_>, value: &Value) -> Result<Vec<Vec<u8>>, ShellError> {
    let ValueKind::Array(items) = &value.kind else {
        return Err(context.wrong_type(value, "SPLITS", "an Array of Strings", &value.kind));
    };
    if items.len() >= MAX_PRESPLIT_REGIONS as usize {
        return Err(context.error(
            ArgumentErrorKind::OutOfRange {
                what: "number of SPLITS".to_owned(),
                expected: "below 65536",
                value: items.len().to_string(),
            },
            value.span,
        ));
    }
    let mut keys = Vec::with_capacity(items.len());
    for item in items {
        let key = to_bytes_binary(&context.scalar_bytes(item, "split key")?);
        if key.is_empty() {
            return Err(context.error(ArgumentErrorKind::Empty { what: "split key" }, item.span));
        }
        keys.push(key);
    }
    keys.sort();
    if let Some(pair) = keys.windows(2).find(|pair| pair.first() == pair.get(1)) {
        let key = pair
            .first()
            .map(|key| to_string_binary(key))
            .unwrap_or_default();
        return Err(context.error(ArgumentErrorKind::DuplicateSplitKey { key }, value.span));
    }
    Ok(keys)
}

/// The table options of a hash (consumed): `MAX_FILESIZE`, `MEMSTORE_FLUSHSIZE`,
/// `DURABILITY`.
fn table_options(
    context: &Context<'_>,
    hash: &mut Options<'_>,
) -> Result<TableOptions, ShellError> {
    let mut options = TableOptions::default();
    if let Some(value) = hash.take("MAX_FILESIZE") {
        options.max_region_size_bytes = Some(context.positive_u64(value, "MAX_FILESIZE")?);
    }
    if let Some(value) = hash.take("MEMSTORE_FLUSHSIZE") {
        options.memstore_flush_size_bytes =
            Some(context.positive_u64(value, "MEMSTORE_FLUSHSIZE")?);
    }
    if let Some(value) = hash.take("DURABILITY") {
        let text = context.utf8(value, "DURABILITY")?.to_ascii_uppercase();
        options.durability = Some(match text.as_str() {
            "USE_DEFAULT" => Durability::UseDefault,
            "SKIP_WAL" => Durability::SkipWal,
            "ASYNC_WAL" => Durability::AsyncWal,
            "SYNC_WAL" => Durability::SyncWal,
            "FSYNC_WAL" => Durability::FsyncWal,
            _ => {
                return Err(context.error(
                    ArgumentErrorKind::UnsupportedChoice {
                        what: "DURABILITY",
                        value: text,
                        choices: &[
                            "USE_DEFAULT",
                            "SKIP_WAL",
                            "ASYNC_WAL",
                            "SYNC_WAL",
                            "FSYNC_WAL",
                        ],
                    },
                    value.span,
                ));
            }
        });
    }
    Ok(options)
}

fn merge_table_options(into: &mut TableOptions, from: TableOptions) {
    into.max_region_size_bytes = from.max_region_size_bytes.or(into.max_region_size_bytes);
    into.memstore_flush_size_bytes = from
        .memstore_flush_size_bytes
        .or(into.memstore_flush_size_bytes);
    into.durability = from.durability.or(into.durability);
}

pub(super) fn alter(context: &mut Context<'_>) -> Result<Alter, ShellError> {
    context.arity(Arity::AtLeast(1))?;
    let table = context.table(context.arg(0))?;
    let specs = context.args().get(1..).unwrap_or(&[]);
    if specs.is_empty() {
        return Err(context.error(ArgumentErrorKind::NothingToAlter, context.end_span()));
    }
    let mut changes = Vec::new();
    for spec in specs {
        match &spec.kind {
            ValueKind::Str(_) | ValueKind::Const(_) => {
                changes.push(AlterChange::Family(FamilySpec::named(
                    &context.family_name(spec)?,
                )));
            }
            ValueKind::Hash(_) => alter_hash(context, spec, &mut changes)?,
            other => {
                return Err(context.error(
                    ArgumentErrorKind::WrongType {
                        what: "alter specification".to_owned(),
                        expected: "a String or a Hash",
                        found: other.ruby_class(),
                        value: other.inspect(),
                    },
                    spec.span,
                ));
            }
        }
    }
    Ok(Alter { table, changes })
}

fn alter_hash(
    context: &mut Context<'_>,
    spec: &Value,
    changes: &mut Vec<AlterChange>,
) -> Result<(), ShellError> {
    let mut hash = context.options(spec)?;
    let command_policy = policy(TABLE_IGNORED, TABLE_UNSUPPORTED);
    if let Some(name) = hash.take("delete") {
        changes.push(AlterChange::DeleteFamily(context.family_name(name)?));
        return context.finish(hash, &command_policy);
    }
    let method = match hash.take("METHOD") {
        Some(value) => Some((context.utf8(value, "METHOD")?, value.span)),
        None => None,
    };
    match method {
        None if hash.contains("NAME") => {
            let family = family_spec(context, &mut hash, spec)?;
            changes.push(AlterChange::Family(family));
            Ok(())
        }
        Some((method, method_span)) if method != "table_att" => {
            let name = hash.take("NAME");
            match method.as_str() {
                "delete" => {
                    let Some(name) = name else {
                        return Err(context
                            .error(ArgumentErrorKind::MethodWithoutName { method }, method_span));
                    };
                    changes.push(AlterChange::DeleteFamily(context.family_name(name)?));
                }
                "table_att_unset" => {
                    let Some(name) = name else {
                        return Err(context
                            .error(ArgumentErrorKind::MethodWithoutName { method }, method_span));
                    };
                    changes.push(AlterChange::UnsetOptions(option_keys(context, name)?));
                }
                "table_conf_unset" | "table_remove_coprocessor" => {
                    context.warn(Warning::IgnoredArgument {
                        key: format!("METHOD => '{method}'"),
                    });
                    hash.take("CLASSNAME");
                }
                _ => {
                    return Err(
                        context.error(ArgumentErrorKind::UnknownMethod { method }, method_span)
                    );
                }
            }
            context.finish(hash, &command_policy)
        }
        _ => {
            let options = table_options(context, &mut hash)?;
            if !options.is_empty() {
                changes.push(AlterChange::SetOptions(options));
            }
            // Coprocessor attributes (`coprocessor$1`...) have no meaning in strata.
            for key in hash.remaining_keys() {
                if key.to_ascii_lowercase().contains("coprocessor") {
                    hash.take(&key);
                    context.warn(Warning::IgnoredArgument { key });
                }
            }
            context.finish(hash, &command_policy)
        }
    }
}

/// The `NAME` of `table_att_unset`: one option name or an array of them.
fn option_keys(context: &Context<'_>, value: &Value) -> Result<Vec<TableOptionKey>, ShellError> {
    let items: Vec<&Value> = match &value.kind {
        ValueKind::Array(items) => items.iter().collect(),
        _ => vec![value],
    };
    items
        .into_iter()
        .map(|item| {
            let name = context.utf8(item, "table attribute")?;
            match name.as_str() {
                "MAX_FILESIZE" => Ok(TableOptionKey::MaxFileSize),
                "MEMSTORE_FLUSHSIZE" => Ok(TableOptionKey::MemstoreFlushSize),
                "DURABILITY" => Ok(TableOptionKey::Durability),
                _ => Err(context.error(
                    ArgumentErrorKind::UnsupportedChoice {
                        what: "table attribute",
                        value: name,
                        choices: &["MAX_FILESIZE", "MEMSTORE_FLUSHSIZE", "DURABILITY"],
                    },
                    item.span,
                )),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(text: &str) -> Option<i64> {
        match parse_ttl(text) {
            Some(TtlText::Seconds(seconds)) => Some(seconds),
            _ => None,
        }
    }

    #[test]
    fn ttl_strings_follow_hbase_pretty_printer() {
        assert!(matches!(parse_ttl("forever"), Some(TtlText::Forever)));
        assert_eq!(seconds("86400"), Some(86_400));
        assert_eq!(seconds("1 DAY"), Some(86_400));
        assert_eq!(seconds("2 days 3 hours 1 minute 5 seconds"), Some(183_665));
        assert_eq!(seconds("90000 SECONDS (1 DAY 1 HOUR)"), Some(90_000));
        assert_eq!(seconds("90001 SECONDS (1 DAY 1 HOUR)"), None);
        assert_eq!(seconds("1 HOUR 1 DAY"), None);
        assert_eq!(seconds("a week"), None);
        assert_eq!(seconds("5 FORTNIGHTS"), None);
    }
}
