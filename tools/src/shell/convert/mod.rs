//! From a parsed [`Call`] to a typed [`Command`]: each command's argument forms, checked the
//! way HBase's shell checks them (and a little more strictly where HBase silently ignores a
//! mistake; see the module documentation of [`shell`](crate::shell)).
//!
//! This file dispatches by command name and handles the small administrative commands;
//! [`schema`] converts `create` and `alter`, [`data`] the reads and writes.

mod data;
mod schema;

use data::{append, count, delete, delete_all, get, get_counter, incr, put, scan};
use schema::{alter, create};

use crate::shell::args::{Context, OptionPolicy};
use crate::shell::ast::{Call, Value, ValueKind};
use crate::shell::command::{Command, ListRegions, Maintenance, RegionColumn, Split, StatusFormat};
use crate::shell::error::{
    ArgumentErrorKind, ArgumentScope, Arity, NameError, NameErrorKind, ShellError, Warning,
};

/// A command and the warnings its arguments raised.
pub(crate) type Converted = (Command, Vec<Warning>);

/// Converts one parsed statement. `source` is the text it was parsed from (for positions).
pub(crate) fn convert(call: &Call, source: &str) -> Result<Converted, ShellError> {
    let Some(command) = canonical_name(&call.name) else {
        let kind = if HBASE_ONLY_COMMANDS.contains(&call.name.as_str()) {
            NameErrorKind::UnsupportedCommand
        } else if call.args.is_empty() && call.span == call.name_span {
            // A bare name may be a variable assigned by an earlier statement: the session
            // decides when it runs.
            return Ok((
                Command::Variable {
                    name: call.name.clone(),
                    span: call.name_span,
                },
                Vec::new(),
            ));
        } else {
            NameErrorKind::UndefinedCommand
        };
        return Err(NameError::new(&call.name, kind, call.name_span, source).into());
    };
    let mut context = Context::new(call, source, command);
    let parsed = match command {
        "create" => create(&mut context).map(Command::Create),
        "alter" => alter(&mut context).map(Command::Alter),
        "put" => put(&mut context).map(Command::Put),
        "get" => get(&mut context).map(Command::Get),
        "scan" => scan(&mut context).map(Command::Scan),
        "count" => count(&mut context).map(Command::Count),
        "delete" => delete(&mut context).map(Command::Delete),
        "deleteall" => delete_all(&mut context).map(Command::DeleteAll),
        "incr" => incr(&mut context).map(Command::Incr),
        "get_counter" => get_counter(&mut context).map(Command::GetCounter),
        "append" => append(&mut context).map(Command::Append),
        "flush" => maintenance(&mut context, false).map(Command::Flush),
        "compact" => maintenance(&mut context, true).map(Command::Compact),
        "major_compact" => maintenance(&mut context, true).map(Command::MajorCompact),
        "split" => split(&mut context).map(Command::Split),
        "list_regions" => list_regions(&mut context).map(Command::ListRegions),
        "merge_region" => merge_region(&mut context),
        "normalize" => context
            .arity(Arity::Exactly(0))
            .map(|()| Command::Normalize),
        "normalizer_switch" => normalizer_switch(&mut context),
        "normalizer_enabled" => context
            .arity(Arity::Exactly(0))
            .map(|()| Command::NormalizerEnabled),
        "list" => list(&mut context),
        "list_namespace" => list_namespace(&mut context),
        "create_namespace" => create_namespace(&mut context),
        "describe_namespace" | "drop_namespace" | "list_namespace_tables" => {
            single_namespace(&mut context)
        }
        "whoami" => context.arity(Arity::Exactly(0)).map(|()| Command::Whoami),
        "backup" => backup(&mut context),
        "snapshot"
        | "list_snapshots"
        | "list_table_snapshots"
        | "clone_snapshot"
        | "restore_snapshot"
        | "delete_snapshot" => snapshot_command(&mut context),
        "status" => status(&mut context),
        "help" => help(&mut context),
        "version" => context.arity(Arity::Exactly(0)).map(|()| Command::Version),
        "exit" => context.arity(Arity::Exactly(0)).map(|()| Command::Exit),
        _ => single_table(&mut context),
    }?;
    Ok((parsed, context.into_warnings()))
}

/// The canonical name of a shell command, resolving aliases.
fn canonical_name(name: &str) -> Option<&'static str> {
    let canonical = match name {
        "desc" => "describe",
        "quit" => "exit",
        _ => name,
    };
    COMMAND_NAMES
        .iter()
        .copied()
        .find(|known| *known == canonical)
}

/// Every command the shell knows, by canonical name.
pub(crate) const COMMAND_NAMES: [&str; 49] = [
    "create",
    "list",
    "exists",
    "describe",
    "put",
    "get",
    "scan",
    "count",
    "delete",
    "deleteall",
    "incr",
    "get_counter",
    "append",
    "truncate",
    "truncate_preserve",
    "disable",
    "enable",
    "is_enabled",
    "is_disabled",
    "drop",
    "alter",
    "flush",
    "compact",
    "major_compact",
    "split",
    "list_regions",
    "merge_region",
    "normalize",
    "normalizer_switch",
    "normalizer_enabled",
    "get_splits",
    "get_table",
    "list_namespace",
    "create_namespace",
    "describe_namespace",
    "drop_namespace",
    "list_namespace_tables",
    "whoami",
    "snapshot",
    "list_snapshots",
    "list_table_snapshots",
    "clone_snapshot",
    "restore_snapshot",
    "delete_snapshot",
    "backup",
    "status",
    "version",
    "help",
    "exit",
];

/// HBase shell commands strata shell does not provide (cluster, security, replication,
/// the snapshot commands beyond the seven it has, namespace properties). Naming one gives a clearer error than "undefined
/// method".
const HBASE_ONLY_COMMANDS: &[&str] = &[
    "processlist",
    "table_help",
    "alter_async",
    "alter_status",
    "disable_all",
    "drop_all",
    "enable_all",
    "show_filters",
    "locate_region",
    "alter_namespace",
    "assign",
    "unassign",
    "move",
    "close_region",
    "balancer",
    "balance_switch",
    "balancer_enabled",
    "zk_dump",
    "wal_roll",
    "hlog_roll",
    "catalogjanitor_run",
    "catalogjanitor_switch",
    "catalogjanitor_enabled",
    "cleaner_chore_run",
    "cleaner_chore_switch",
    "cleaner_chore_enabled",
    "compact_rs",
    "compaction_state",
    "trace",
    "splitormerge_switch",
    "splitormerge_enabled",
    "add_peer",
    "remove_peer",
    "list_peers",
    "enable_peer",
    "disable_peer",
    "delete_all_snapshot",
    "delete_table_snapshots",
    "update_config",
    "update_all_config",
    "set_quota",
    "list_quotas",
    "grant",
    "revoke",
    "user_permission",
    "list_security_capabilities",
    "abort_procedure",
    "list_procedures",
    "add_labels",
    "list_labels",
    "set_auths",
    "get_auths",
    "clear_auths",
    "set_visibility",
    "list_rsgroups",
    "get_rsgroup",
    "add_rsgroup",
];

/// A policy for option keys outside create/alter schemas: unknown keys are reported with
/// the generic wording.
pub(super) fn policy(
    ignored: &'static [&'static str],
    unsupported: &'static [&'static str],
) -> OptionPolicy {
    OptionPolicy {
        ignored,
        unsupported,
        scope: ArgumentScope::Command,
    }
}

// ---------------------------------------------------------------------------------------
// Table administration.

fn single_table(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Exactly(1))?;
    let table = context.table(context.arg(0))?;
    Ok(match context.command {
        "exists" => Command::Exists { table },
        "describe" => Command::Describe { table },
        "truncate" => Command::Truncate { table },
        "truncate_preserve" => Command::TruncatePreserve { table },
        "disable" => Command::Disable { table },
        "enable" => Command::Enable { table },
        "is_enabled" => Command::IsEnabled { table },
        "is_disabled" => Command::IsDisabled { table },
        "get_splits" => Command::GetSplits { table },
        "get_table" => Command::GetTable { table },
        _ => Command::Drop { table },
    })
}

fn list(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Between(0, 1))?;
    let pattern = match context.args().first() {
        Some(value) => Some(context.utf8(value, "regular expression")?),
        None => None,
    };
    Ok(Command::List { pattern })
}

fn list_namespace(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Between(0, 1))?;
    let pattern = match context.args().first() {
        Some(value) => Some(context.utf8(value, "regular expression")?),
        None => None,
    };
    Ok(Command::ListNamespace { pattern })
}

/// `create_namespace 'ns' [, {'PROPERTY' => 'value'}]`: strata keeps no namespace
/// configuration, so properties are refused (an empty hash is accepted).
fn create_namespace(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Between(1, 2))?;
    let namespace = context.namespace(context.arg(0))?;
    match context.args().get(1) {
        None => {}
        Some(Value {
            kind: ValueKind::Hash(pairs),
            ..
        }) => {
            if let Some((key, _)) = pairs.first() {
                return Err(context.error(
                    ArgumentErrorKind::NamespaceProperty {
                        key: crate::shell::args::key_name(key),
                    },
                    key.span,
                ));
            }
        }
        Some(value) => {
            return Err(context.wrong_type(value, "namespace properties", "a Hash", &value.kind));
        }
    }
    Ok(Command::CreateNamespace { namespace })
}

fn single_namespace(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Exactly(1))?;
    let namespace = context.namespace(context.arg(0))?;
    Ok(match context.command {
        "describe_namespace" => Command::DescribeNamespace { namespace },
        "drop_namespace" => Command::DropNamespace { namespace },
        _ => Command::ListNamespaceTables { namespace },
    })
}

/// The snapshot commands: `snapshot 't', 'name'[, {SKIP_FLUSH => true}]`, `list_snapshots ['regex']`,
/// `list_table_snapshots 'tableRegex'[, 'snapshotRegex']`, `clone_snapshot 'name', 't'`, `restore_snapshot 'name'`, `delete_snapshot 'name'`.
fn snapshot_command(context: &mut Context<'_>) -> Result<Command, ShellError> {
    let name_at = |context: &Context<'_>, index| context.utf8(context.arg(index), "snapshot name");
    Ok(match context.command {
        "snapshot" => {
            context.arity(Arity::Between(2, 3))?;
            let table = context.table(context.arg(0))?;
            let name = name_at(context, 1)?;
            let mut skip_flush = false;
            if let Some(value) = context.args().get(2) {
                if !matches!(value.kind, ValueKind::Hash(_)) {
                    return Err(context.wrong_type(
                        value,
                        "snapshot options",
                        "a Hash",
                        &value.kind,
                    ));
                }
                let mut hash = context.options(value)?;
                if let Some(flag) = hash.take("SKIP_FLUSH") {
                    skip_flush = context.lenient_bool(flag, "SKIP_FLUSH")?;
                }
                // A snapshot's TTL needs the snapshot cleaner HBase runs; strata keeps
                // snapshots until they are deleted.
                context.finish(hash, &policy(&[], &["TTL"]))?;
            }
            Command::Snapshot {
                table,
                name,
                skip_flush,
            }
        }
        "list_snapshots" => {
            context.arity(Arity::Between(0, 1))?;
            let pattern = match context.args().first() {
                Some(value) => Some(context.utf8(value, "regular expression")?),
                None => None,
            };
            Command::ListSnapshots { pattern }
        }
        "list_table_snapshots" => {
            context.arity(Arity::Between(1, 2))?;
            let table_pattern = context.utf8(context.arg(0), "regular expression")?;
            let pattern = match context.args().get(1) {
                Some(value) => Some(context.utf8(value, "regular expression")?),
                None => None,
            };
            Command::ListTableSnapshots {
                table_pattern,
                pattern,
            }
        }
        "clone_snapshot" => {
            context.arity(Arity::Exactly(2))?;
            Command::CloneSnapshot {
                name: name_at(context, 0)?,
                table: context.table(context.arg(1))?,
            }
        }
        "restore_snapshot" => {
            context.arity(Arity::Exactly(1))?;
            Command::RestoreSnapshot {
                name: name_at(context, 0)?,
            }
        }
        _ => {
            context.arity(Arity::Exactly(1))?;
            Command::DeleteSnapshot {
                name: name_at(context, 0)?,
            }
        }
    })
}

/// `backup 'DIR'`: the directory, as given.
fn backup(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Exactly(1))?;
    let dir = context.utf8(context.arg(0), "backup directory")?;
    Ok(Command::Backup { dir })
}

fn help(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Between(0, 1))?;
    let topic = match context.args().first() {
        Some(value) => Some(context.utf8(value, "help topic")?),
        None => None,
    };
    Ok(Command::Help { topic })
}

fn status(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Between(0, 2))?;
    let format = match context.args().first() {
        None => StatusFormat::Summary,
        Some(value) => match context.utf8(value, "status format")?.as_str() {
            "summary" => StatusFormat::Summary,
            "simple" => StatusFormat::Simple,
            "detailed" => StatusFormat::Detailed,
            other => {
                return Err(context.error(
                    ArgumentErrorKind::UnsupportedChoice {
                        what: "status format",
                        value: other.to_owned(),
                        choices: &["summary", "simple", "detailed"],
                    },
                    value.span,
                ));
            }
        },
    };
    Ok(Command::Status { format })
}

fn maintenance(context: &mut Context<'_>, takes_type: bool) -> Result<Maintenance, ShellError> {
    context.arity(if takes_type {
        Arity::Between(1, 3)
    } else {
        Arity::Between(1, 2)
    })?;
    let target = context.table_or_region(context.arg(0))?;
    let family = match context.args().get(1) {
        Some(Value {
            kind: ValueKind::Nil,
            ..
        })
        | None => None,
        Some(value) => Some(context.family_name(value)?),
    };
    if let Some(kind) = context.args().get(2) {
        let text = context.utf8(kind, "compaction type")?;
        if text != "NORMAL" {
            return Err(context.error(
                ArgumentErrorKind::UnsupportedChoice {
                    what: "compaction type",
                    value: text,
                    choices: &["NORMAL"],
                },
                kind.span,
            ));
        }
    }
    Ok(Maintenance { target, family })
}

fn split(context: &mut Context<'_>) -> Result<Split, ShellError> {
    context.arity(Arity::Between(1, 2))?;
    let target = context.table_or_region(context.arg(0))?;
    let split_key = match context.args().get(1) {
        Some(Value {
            kind: ValueKind::Nil,
            ..
        })
        | None => None,
        Some(value) => {
            let key = context.scalar_bytes(value, "split point")?;
            if key.is_empty() {
                return Err(context.error(
                    ArgumentErrorKind::Empty {
                        what: "split point",
                    },
                    value.span,
                ));
            }
            Some(key)
        }
    };
    Ok(Split { target, split_key })
}

/// `merge_region 'A', 'B' [, force]` (HBase 1.x/2.x) or `merge_region ['A', 'B', ...]`
/// (HBase 2.3+). strata merges only adjacent regions, so `force` changes nothing.
fn merge_region(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Between(1, 3))?;
    let first = context.arg(0);
    let regions = if let ValueKind::Array(items) = &first.kind {
        context.arity(Arity::Exactly(1))?;
        items
            .iter()
            .map(|item| context.table_or_region(item))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        context.arity(Arity::Between(2, 3))?;
        if let Some(force) = context.args().get(2) {
            context.lenient_bool(force, "force")?;
        }
        vec![
            context.table_or_region(first)?,
            context.table_or_region(context.arg(1))?,
        ]
    };
    if regions.len() < 2 {
        return Err(context.error(
            ArgumentErrorKind::Empty {
                what: "second region to merge",
            },
            first.span,
        ));
    }
    Ok(Command::MergeRegion { regions })
}

/// `normalizer_switch true|false`.
fn normalizer_switch(context: &mut Context<'_>) -> Result<Command, ShellError> {
    context.arity(Arity::Exactly(1))?;
    let on = context.lenient_bool(context.arg(0), "switch")?;
    Ok(Command::NormalizerSwitch { on })
}

fn list_regions(context: &mut Context<'_>) -> Result<ListRegions, ShellError> {
    context.arity(Arity::Between(1, 3))?;
    let table = context.table(context.arg(0))?;
    // strata runs on one node: filtering by server or locality selects every region.
    match context.args().get(1).map(|value| &value.kind) {
        None | Some(ValueKind::Nil) => {}
        Some(ValueKind::Str(bytes)) if bytes.is_empty() => {}
        Some(ValueKind::Hash(pairs)) if pairs.is_empty() => {}
        Some(ValueKind::Str(_) | ValueKind::Const(_)) => {
            context.warn(Warning::IgnoredArgument {
                key: "SERVER_NAME".to_owned(),
            });
        }
        Some(ValueKind::Hash(pairs)) => {
            for (key, _) in pairs {
                let key = crate::shell::args::key_name(key);
                context.warn(Warning::IgnoredArgument { key });
            }
        }
        Some(other) => {
            let value = context.arg(1);
            return Err(context.wrong_type(
                value,
                "list_regions options",
                "a String or a Hash",
                other,
            ));
        }
    }
    let columns = match context.args().get(2) {
        None
        | Some(Value {
            kind: ValueKind::Nil,
            ..
        }) => RegionColumn::ALL.to_vec(),
        Some(
            value @ Value {
                kind: ValueKind::Array(items),
                ..
            },
        ) => {
            let mut columns = Vec::new();
            for item in items {
                let name = context.utf8(item, "list_regions column")?;
                let column = RegionColumn::ALL
                    .into_iter()
                    .find(|column| column.name().eq_ignore_ascii_case(&name))
                    .ok_or_else(|| {
                        context.error(
                            ArgumentErrorKind::UnknownRegionColumn { column: name },
                            item.span,
                        )
                    })?;
                if !columns.contains(&column) {
                    columns.push(column);
                }
            }
            if columns.is_empty() {
                return Err(context.error(
                    ArgumentErrorKind::Empty {
                        what: "list_regions columns",
                    },
                    value.span,
                ));
            }
            columns
        }
        Some(other) => {
            return Err(context.wrong_type(
                other,
                "list_regions columns",
                "an Array of Strings",
                &other.kind,
            ));
        }
    };
    Ok(ListRegions { table, columns })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_name_is_canonical() {
        for name in COMMAND_NAMES {
            assert_eq!(canonical_name(name), Some(name));
        }
        assert_eq!(canonical_name("desc"), Some("describe"));
        assert_eq!(canonical_name("quit"), Some("exit"));
        assert_eq!(canonical_name("processlist"), None);
        assert_eq!(canonical_name("no_such_command"), None);
    }
}
