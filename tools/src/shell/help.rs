//! Help texts: one per command, and the command groups `help` lists.

/// The command groups `help` lists, as HBase groups them: (group name, commands).
pub const COMMAND_GROUPS: [(&str, &[&str]); 6] = [
    ("general", &["exit", "help", "status", "version", "whoami"]),
    (
        "ddl",
        &[
            "alter",
            "create",
            "describe",
            "disable",
            "drop",
            "enable",
            "exists",
            "get_table",
            "is_disabled",
            "is_enabled",
            "list",
            "list_regions",
        ],
    ),
    (
        "namespace",
        &[
            "create_namespace",
            "describe_namespace",
            "drop_namespace",
            "list_namespace",
            "list_namespace_tables",
        ],
    ),
    (
        "dml",
        &[
            "append",
            "count",
            "delete",
            "deleteall",
            "get",
            "get_counter",
            "incr",
            "put",
            "scan",
            "truncate",
            "truncate_preserve",
        ],
    ),
    (
        "snapshots",
        &[
            "clone_snapshot",
            "delete_snapshot",
            "list_snapshots",
            "list_table_snapshots",
            "restore_snapshot",
            "snapshot",
        ],
    ),
    (
        "tools",
        &[
            "backup",
            "compact",
            "flush",
            "get_splits",
            "major_compact",
            "merge_region",
            "normalize",
            "normalizer_enabled",
            "normalizer_switch",
            "split",
        ],
    ),
];

/// The help text of a command (its canonical name or an alias), `None` if there is no such
/// command.
pub fn help_text(command: &str) -> Option<&'static str> {
    let text = match command {
        "create" => CREATE,
        "list" => LIST,
        "exists" => "Does the named table exist?\n\n  strata> exists 't1'\n",
        "describe" | "desc" => {
            "Describe the named table: its state and its column families.\n\n  strata> describe 't1'\n  strata> desc 't1'\n"
        }
        "put" => PUT,
        "get" => GET,
        "scan" => SCAN,
        "count" => COUNT,
        "delete" => DELETE,
        "deleteall" => DELETEALL,
        "incr" => INCR,
        "get_counter" => {
            "Print the value of a counter cell (an 8-byte big-endian integer written by incr).\n\n  strata> get_counter 't1', 'r1', 'f1:hits'\n"
        }
        "append" => {
            "Append bytes to the value of a cell, atomically; prints the new value.\n\n  strata> append 't1', 'r1', 'f1:log', 'more'\n"
        }
        "truncate" => {
            "Disable, drop and recreate the table with the same schema and a single region.\n\n  strata> truncate 't1'\n"
        }
        "truncate_preserve" => {
            "Like truncate, but keep the region boundaries.\n\n  strata> truncate_preserve 't1'\n"
        }
        "disable" => {
            "Disable the named table; a disabled table can be dropped or altered.\n\n  strata> disable 't1'\n"
        }
        "enable" => "Enable the named table.\n\n  strata> enable 't1'\n",
        "is_enabled" => "Is the named table enabled?\n\n  strata> is_enabled 't1'\n",
        "is_disabled" => "Is the named table disabled?\n\n  strata> is_disabled 't1'\n",
        "drop" => "Drop the named table. It must be disabled first.\n\n  strata> drop 't1'\n",
        "alter" => ALTER,
        "flush" => {
            "Flush the memstores of every region of a table, or of one region, optionally of one family only.\n\n  strata> flush 't1'\n  strata> flush 't1', 'f1'\n  strata> flush 'REGION_NAME'\n"
        }
        "compact" => {
            "Request a compaction of a table, a region, or one family of either.\n\n  strata> compact 't1'\n  strata> compact 't1', 'f1'\n  strata> compact 'REGION_NAME'\n"
        }
        "major_compact" => {
            "Rewrite every file of a table, region or family into one, dropping deleted, surplus and expired cells.\n\n  strata> major_compact 't1'\n  strata> major_compact 't1', 'f1'\n"
        }
        "split" => {
            "Split every region of a table (at its middle key), or one region, or at a given key.\n\n  strata> split 't1'\n  strata> split 't1', 'row500'\n  strata> split 'REGION_NAME', 'row500'\n"
        }
        "list_regions" => {
            "List the regions of a table: name, start and end key, size, requests. Pick columns with an array.\n\n  strata> list_regions 't1'\n  strata> list_regions 't1', '', ['REGION_NAME', 'START_KEY', 'END_KEY']\n"
        }
        "status" => {
            "Show the state of the store: 'summary' (default), 'simple' or 'detailed'.\n\n  strata> status\n  strata> status 'detailed'\n"
        }
        "merge_region" => {
            "Merge adjacent regions into one holding the files of all (names or ids, as list_regions prints them). strata merges only adjacent regions; 'force' is accepted and changes nothing.\n\n  strata> merge_region 'ENCODED_REGIONNAME', 'ENCODED_REGIONNAME'\n  strata> merge_region 't1,a,12', 't1,m,13', true\n  strata> merge_region ['12', '13', '14']\n"
        }
        "snapshot" => {
            "Take a snapshot of a table under a name unique in the database. An enabled table is flushed first, unless SKIP_FLUSH is true (the snapshot then holds only what was already flushed); nothing is copied, and the files the snapshot names stay on disk until it is deleted.\n\n  strata> snapshot 'sourceTable', 'snapshotName'\n  strata> snapshot 'sourceTable', 'snapshotName', {SKIP_FLUSH => true}\n"
        }
        "list_snapshots" => {
            "List the snapshots (all, or those whose name matches the regular expression), with their table and creation time.\n\n  strata> list_snapshots\n  strata> list_snapshots 'abc.*'\n"
        }
        "list_table_snapshots" => {
            "List the snapshots of the tables whose name matches the first regular expression (and whose own name matches the second, when given), with their table and creation time.\n\n  strata> list_table_snapshots 'tableName'\n  strata> list_table_snapshots 'tableName.*', 'snapshotName.*'\n"
        }
        "clone_snapshot" => {
            "Create a new table from a snapshot: its schema, regions and cells, sharing its files. The new table is independent of the snapshot and of the table it was taken of.\n\n  strata> clone_snapshot 'snapshotName', 'tableName'\n  strata> clone_snapshot 'snapshotName', 'namespace:tableName'\n"
        }
        "restore_snapshot" => {
            "Restore a snapshot: the table it was taken of gets the snapshot's schema and cells back, and loses what was written since. The table must be disabled first (and stays disabled); a table dropped since is created again.\n\n  strata> disable 'tableName'\n  strata> restore_snapshot 'snapshotName'\n  strata> enable 'tableName'\n"
        }
        "delete_snapshot" => {
            "Delete a snapshot; its files are deleted once no table and no other snapshot uses them.\n\n  strata> delete_snapshot 'snapshotName'\n"
        }
        "backup" => {
            "Make a consistent copy of the whole database in a new directory while it keeps taking writes (strata's own command). The copy holds every write acknowledged before the command started; open it as a database to restore. Through `strata shell --connect` the directory is on the server's machine.\n\n  strata> backup '/backups/2026-11-27'\n"
        }
        "normalize" => {
            "Run the region normalizer over every table now: adjacent regions whose sizes add up to less than the table's average region size merge. Prints true.\n\n  strata> normalize\n"
        }
        "normalizer_switch" => {
            "Turn the region normalizer on or off (it then runs after flushes); prints the previous state.\n\n  strata> normalizer_switch true\n"
        }
        "normalizer_enabled" => {
            "Print whether the region normalizer is on.\n\n  strata> normalizer_enabled\n"
        }
        "version" => "Print the strata version.\n\n  strata> version\n",
        "whoami" => "Show the user running the shell, and its groups.\n\n  strata> whoami\n",
        "get_splits" => {
            "Print the number of regions of a table and its split keys (each region's start key but the first's).\n\n  strata> get_splits 't1'\n  strata> get_splits 'ns1:t1'\n  strata> t.get_splits\n"
        }
        "get_table" => GET_TABLE,
        "list_namespace" => {
            "List the namespaces, optionally only those whose name matches a regular expression.\n\n  strata> list_namespace\n  strata> list_namespace 'abc.*'\n"
        }
        "create_namespace" => {
            "Create a namespace; tables named 'ns1:t1' live in it. (strata keeps no namespace properties.)\n\n  strata> create_namespace 'ns1'\n"
        }
        "describe_namespace" => {
            "Describe the named namespace.\n\n  strata> describe_namespace 'ns1'\n"
        }
        "drop_namespace" => {
            "Drop the named namespace. The namespace must be empty.\n\n  strata> drop_namespace 'ns1'\n"
        }
        "list_namespace_tables" => {
            "List the tables of a namespace.\n\n  strata> list_namespace_tables 'ns1'\n  strata> list_namespace_tables 'default'\n"
        }
        "help" => {
            "Show the list of commands, the help of one command, or of a group (general, ddl, namespace, dml, snapshots, tools).\n\n  strata> help\n  strata> help 'get'\n  strata> help 'dml'\n"
        }
        "exit" | "quit" => "Leave the shell.\n\n  strata> exit\n",
        _ => return None,
    };
    Some(text)
}

const CREATE: &str = "\
Create a table: a name, one or more column families, and optional table options.
A family is a name or a hash with NAME and any of VERSIONS, TTL (seconds, 'FOREVER'
or '1 DAY 2 HOURS'), BLOOMFILTER (NONE, ROW, ROWCOL), BLOCKSIZE (bytes), COMPRESSION
(NONE, ZSTD, LZ4, SNAPPY, GZ), IN_MEMORY, BLOCKCACHE.

  strata> create 't1', 'f1', 'f2'
  strata> create 't1', {NAME => 'f1', VERSIONS => 3, TTL => 86400, BLOOMFILTER => 'ROWCOL'}
  strata> create 't1', {NAME => 'f1', COMPRESSION => 'ZSTD', BLOCKSIZE => 16384}, {NAME => 'f2'}

Pre-split the table with explicit keys, an algorithm, or salt buckets:

  strata> create 't1', 'f1', SPLITS => ['10', '20', '30']
  strata> create 't1', 'f1', SPLITS_FILE => 'splits.txt'
  strata> create 't1', 'f1', {NUMREGIONS => 16, SPLITALGO => 'HexStringSplit'}
  strata> create 't1', 'f1', SALT_BUCKETS => 100

Other table options: MAX_FILESIZE, MEMSTORE_FLUSHSIZE (bytes), DURABILITY (SKIP_WAL,
ASYNC_WAL, SYNC_WAL, FSYNC_WAL).
";

const LIST: &str = "\
List the tables, optionally only those whose name matches a regular expression. Tables
outside the default namespace show as 'ns:table'.

  strata> list
  strata> list 'abc.*'
  strata> list 'ns:.*'
";

const GET_TABLE: &str = "\
Get a reference to a table, to run commands on it without repeating its name:

  strata> t1 = get_table 't1'
  strata> t1 = get_table 'ns1:t1'
  strata> t1.put 'r1', 'f1:c1', 'value'
  strata> t1.scan {LIMIT => 10}

create returns a reference too: t1 = create 't1', 'f1'. References take put, get, scan,
count, delete, deleteall, incr, get_counter, append, get_splits, describe, disable, enable,
drop and flush.
";

const PUT: &str = "\
Write a cell: table, row, column ('family:qualifier'), value, and optionally a timestamp
in milliseconds (the current time by default).

  strata> put 't1', 'r1', 'f1:c1', 'value'
  strata> put 't1', 'r1', 'f1:c1', 'value', 1700000000000
  strata> put 't1', \"key\\x00\\x01\", 'f1:', \"\\xff\\x00\"
";

const GET: &str = "\
Read one row: table, row, and optionally columns or a hash of COLUMN(S), TIMESTAMP,
TIMERANGE => [min, max), VERSIONS, FILTER, FORMATTER, MAXLENGTH.

  strata> get 't1', 'r1'
  strata> get 't1', 'r1', 'f1:c1', 'f2'
  strata> get 't1', 'r1', ['f1:c1', 'f2']
  strata> get 't1', 'r1', {COLUMN => 'f1:c1', VERSIONS => 3}
  strata> get 't1', 'r1', {TIMERANGE => [1700000000000, 1800000000000], VERSIONS => 5}
  strata> get 't1', 'r1', {FILTER => \"ValueFilter(=, 'binary:abc')\"}

Values print with Bytes.toStringBinary; add a formatter to a column to decode them:

  strata> get 't1', 'r1', {COLUMN => ['f1:hits:toLong', 'f1:name:toString']}
";

const SCAN: &str = "\
Read rows in key order: table, and optionally a hash of COLUMNS, STARTROW, STOPROW,
ROWPREFIXFILTER, LIMIT, FILTER, VERSIONS, TIMESTAMP, TIMERANGE, REVERSED, RAW, BATCH,
FORMATTER, MAXLENGTH. A family name alone ('f1' or 'f1:') selects the whole family.

  strata> scan 't1'
  strata> scan 't1', {COLUMNS => ['f1:c1', 'f2'], LIMIT => 10, STARTROW => 'xyz'}
  strata> scan 't1', {ROWPREFIXFILTER => 'row2', FILTER => \"PrefixFilter('row2') AND KeyOnlyFilter()\"}
  strata> scan 't1', {REVERSED => true}
  strata> scan 't1', {RAW => true, VERSIONS => 10}
";

const COUNT: &str = "\
Count the rows of a table, printing progress every INTERVAL rows (1000 by default). Scan
options (STARTROW, STOPROW, ROWPREFIXFILTER, FILTER, COLUMNS...) narrow what is counted.

  strata> count 't1'
  strata> count 't1', INTERVAL => 100000
  strata> count 't1', {ROWPREFIXFILTER => '2015-04'}
";

const DELETE: &str = "\
Delete one version of a cell: the latest, or the one at the given timestamp. With a family
instead of a column, delete the version at the timestamp in every column of the family.

  strata> delete 't1', 'r1', 'f1:c1'
  strata> delete 't1', 'r1', 'f1:c1', 1700000000000
";

const DELETEALL: &str = "\
Delete all versions of a row, or of one family or column of it, up to a timestamp (now by
default). With {ROWPREFIXFILTER => 'p'}, do it for every row with that prefix, inside the
engine.

  strata> deleteall 't1', 'r1'
  strata> deleteall 't1', 'r1', 'f1:c1'
  strata> deleteall 't1', 'r1', 'f1:c1', 1700000000000
  strata> deleteall 't1', {ROWPREFIXFILTER => 'prefix'}
  strata> deleteall 't1', {ROWPREFIXFILTER => 'prefix'}, 'f1', 1700000000000
";

const INCR: &str = "\
Add to a counter cell (an 8-byte big-endian integer), atomically; 1 by default. Prints the
new value.

  strata> incr 't1', 'r1', 'f1:hits'
  strata> incr 't1', 'r1', 'f1:hits', 10
  strata> incr 't1', 'r1', 'f1:hits', -1
";

const ALTER: &str = "\
Change a table: add or modify column families, delete families, set table options.

  strata> alter 't1', NAME => 'f1', VERSIONS => 5
  strata> alter 't1', 'f2', {NAME => 'f3', TTL => '7 DAYS'}
  strata> alter 't1', 'delete' => 'f1'
  strata> alter 't1', {NAME => 'f1', METHOD => 'delete'}
  strata> alter 't1', MAX_FILESIZE => '134217728'
  strata> alter 't1', METHOD => 'table_att_unset', NAME => 'MAX_FILESIZE'
";

/// The overview `help` prints without arguments.
pub fn help_overview() -> String {
    let mut out = String::from(
        "strata shell: HBase shell commands over a strata store.\n\
         Type 'help \"COMMAND\"' (e.g. 'help \"get\"') for help on a command, or\n\
         'help \"GROUP\"' (e.g. 'help \"dml\"') for a group.\n\nCOMMAND GROUPS:\n",
    );
    for (group, commands) in COMMAND_GROUPS {
        out.push_str(&format!(
            "  Group name: {group}\n  Commands: {}\n\n",
            commands.join(", ")
        ));
    }
    out.push_str(
        "SHELL USAGE:\n\
         Quote all names, such as table and column names. Commas delimit command parameters.\n\
         Options are hashes: {'key1' => 'value1', KEY2 => 2}; keys are usually constants such\n\
         as NAME, VERSIONS, COMPRESSION, which need no quotes.\n\n\
         Binary keys and values are written in double quotes with hex escapes:\n\n  \
         strata> get 't1', \"key\\x03\\x3f\\xcd\"\n  \
         strata> put 't1', \"test\\xef\\xff\", 'f1:', \"\\x01\\x33\\x40\"\n",
    );
    out
}

/// The help of every command of `group`, or `None` if there is no such group.
pub fn group_help(group: &str) -> Option<String> {
    let (_, commands) = COMMAND_GROUPS.iter().find(|(name, _)| *name == group)?;
    let mut out = String::new();
    for command in *commands {
        out.push_str(&format!(
            "Command: {command}\n{}\n",
            help_text(command).unwrap_or("")
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::convert::COMMAND_NAMES;

    #[test]
    fn every_command_has_help_and_a_group() {
        for command in COMMAND_NAMES {
            assert!(help_text(command).is_some(), "{command} has no help");
            assert!(
                COMMAND_GROUPS
                    .iter()
                    .any(|(_, commands)| commands.contains(&command)),
                "{command} is in no group"
            );
        }
        assert_eq!(help_text("desc"), help_text("describe"));
        assert_eq!(help_text("nope"), None);
    }

    #[test]
    fn overview_and_groups() {
        assert!(help_overview().contains("Group name: dml"));
        let dml = group_help("dml").unwrap_or_default();
        assert!(dml.starts_with("Command: append\n"));
        assert!(dml.contains("Command: scan\n"));
        assert_eq!(group_help("nope"), None);
    }
}
