//! HBase's Thrift1 interface (`Hbase.thrift`, service `Hbase`): its structs, exceptions and
//! methods as Rust types, and the messages that carry them.
//!
//! The types follow the IDL HBase 2.x ships (`hbase-thrift/src/main/resources/org/apache/
//! hadoop/hbase/thrift/Hbase.thrift`), a superset of the one happybase 1.3.0 ships: field ids
//! and types are the IDL's, every field is an `Option` (absent on the wire is `None`; the
//! handler applies the IDL's defaults). A call is one [`Call`] variant holding its argument
//! struct; a reply is a result struct with the success value in field 0 and each declared
//! exception in its own field ([`encode_reply`], [`Outcome`], [`Failure`]).

use std::io::Read;

use super::codec::{
    DecodeError, EncodeError, MessageHeader, MessageType, Protocol, Reader, TType, ThriftMap, Wire,
    Writer, thrift_struct,
};

/// `Text` and `Bytes` in the IDL: binary.
pub type Bytes = Vec<u8>;
/// The `attributes` argument of most calls: `map<Text, Text>`.
pub type Attributes = ThriftMap<Bytes, Bytes>;

thrift_struct! {
    /// A cell value and the timestamp it was stored with.
    pub struct TCell {
        1 => value: Bytes,
        2 => timestamp: i64,
    }
}

thrift_struct! {
    /// A column family's settings (`HColumnDescriptor`).
    pub struct ColumnDescriptor {
        1 => name: Bytes,
        2 => max_versions: i32,
        3 => compression: String,
        4 => in_memory: bool,
        5 => bloom_filter_type: String,
        6 => bloom_filter_vector_size: i32,
        7 => bloom_filter_nb_hashes: i32,
        8 => block_cache_enabled: bool,
        9 => time_to_live: i32,
    }
}

thrift_struct! {
    /// A region of a table.
    pub struct TRegionInfo {
        1 => start_key: Bytes,
        2 => end_key: Bytes,
        3 => id: i64,
        4 => name: Bytes,
        5 => version: i8,
        6 => server_name: Bytes,
        7 => port: i32,
    }
}

thrift_struct! {
    /// A put (`isDelete` false) or delete of one column.
    pub struct Mutation {
        1 => is_delete: bool,
        2 => column: Bytes,
        3 => value: Bytes,
        4 => write_to_wal: bool,
    }
}

thrift_struct! {
    /// The mutations of one row.
    pub struct BatchMutation {
        1 => row: Bytes,
        2 => mutations: Vec<Mutation>,
    }
}

thrift_struct! {
    /// An increment of one counter (the IDL spells the amount `ammount`).
    pub struct TIncrement {
        1 => table: Bytes,
        2 => row: Bytes,
        3 => column: Bytes,
        4 => ammount: i64,
    }
}

thrift_struct! {
    /// A column name and its cell (the sorted form of a row's columns).
    pub struct TColumn {
        1 => column_name: Bytes,
        2 => cell: TCell,
    }
}

thrift_struct! {
    /// A row: its columns as a map (`columns`) or, for a scanner opened with
    /// `sortColumns`, as a sorted list (`sortedColumns`).
    pub struct TRowResult {
        1 => row: Bytes,
        2 => columns: ThriftMap<Bytes, TCell>,
        3 => sorted_columns: Vec<TColumn>,
    }
}

thrift_struct! {
    /// What `scannerOpenWithScan` scans.
    pub struct TScan {
        1 => start_row: Bytes,
        2 => stop_row: Bytes,
        3 => timestamp: i64,
        4 => columns: Vec<Bytes>,
        5 => caching: i32,
        6 => filter_string: Bytes,
        7 => batch_size: i32,
        8 => sort_columns: bool,
        9 => reversed: bool,
        10 => cache_blocks: bool,
    }
}

thrift_struct! {
    /// Values to append to columns of one row.
    pub struct TAppend {
        1 => table: Bytes,
        2 => row: Bytes,
        3 => columns: Vec<Bytes>,
        4 => values: Vec<Bytes>,
    }
}

thrift_struct! {
    /// HBase's general error (`canRetry` is in HBase 2's IDL, not in happybase's; clients
    /// that do not know it skip it).
    pub struct IOError {
        1 => message: String,
        2 => can_retry: bool,
    }
}

thrift_struct! {
    /// An argument was invalid.
    pub struct IllegalArgument {
        1 => message: String,
    }
}

thrift_struct! {
    /// `createTable` of a name already taken.
    pub struct AlreadyExists {
        1 => message: String,
    }
}

thrift_struct! {
    /// Thrift's own error, sent as an `Exception` message (unknown method, protocol error).
    pub struct TApplicationException {
        1 => message: String,
        2 => kind: i32,
    }
}

thrift_struct! {
    /// `grant` and `revoke`'s argument (HBase 2's IDL).
    pub struct TAccessControlEntity {
        1 => username: String,
        2 => scope: i32,
        4 => actions: String,
        5 => table_name: Bytes,
        6 => ns_name: String,
    }
}

/// `TApplicationException` kinds (Thrift's `TApplicationException.TExceptionType`).
pub mod application_error {
    /// The method does not exist.
    pub const UNKNOWN_METHOD: i32 = 1;
    /// The server failed while handling the call.
    pub const INTERNAL_ERROR: i32 = 6;
    /// The message could not be decoded.
    pub const PROTOCOL_ERROR: i32 = 7;
}

/// `TThriftServerType.ONE`: this is a Thrift1 server.
pub const THRIFT_SERVER_TYPE_ONE: i32 = 1;

/// The exceptions a method declares, in the result struct's fields 1, 2 and 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throws {
    /// `1: IOError io`.
    pub io: bool,
    /// `2: IllegalArgument ia`.
    pub illegal_argument: bool,
    /// `3: AlreadyExists exist`.
    pub already_exists: bool,
}

const IO: Throws = Throws {
    io: true,
    illegal_argument: false,
    already_exists: false,
};
const IO_IA: Throws = Throws {
    io: true,
    illegal_argument: true,
    already_exists: false,
};
const IO_IA_EXISTS: Throws = Throws {
    io: true,
    illegal_argument: true,
    already_exists: true,
};
const NONE: Throws = Throws {
    io: false,
    illegal_argument: false,
    already_exists: false,
};

/// Declares the service: one argument struct per method, the [`Call`] enum, and the name,
/// exceptions and encoding of each call.
macro_rules! hbase_service {
    (
        $(
            $(#[$meta:meta])*
            $method:literal => $variant:ident / $args:ident -> $ret:ty, $throws:ident {
                $( $id:literal => $field:ident : $ty:ty ),* $(,)?
            }
        )*
    ) => {
        $(
            thrift_struct! {
                #[doc = concat!("The arguments of `", $method, "`.")]
                pub struct $args {
                    $( $id => $field : $ty, )*
                }
            }
        )*

        /// One call of the `Hbase` service with its arguments.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Call {
            $(
                $(#[$meta])*
                $variant($args),
            )*
        }

        impl Call {
            /// The method's name on the wire.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Call::$variant(_) => $method, )*
                }
            }

            /// The exceptions the method declares.
            pub fn throws(&self) -> Throws {
                match self {
                    $( Call::$variant(_) => $throws, )*
                }
            }

            /// Writes the argument struct.
            pub fn write_args(&self, writer: &mut Writer) {
                match self {
                    $( Call::$variant(args) => args.write(writer), )*
                }
            }

            /// Reads the argument struct of method `name`; `None` for a name the service
            /// does not have (its arguments are not read).
            pub fn read_args<R: Read>(
                name: &str,
                reader: &mut Reader<R>,
            ) -> Result<Option<Call>, DecodeError> {
                Ok(Some(match name {
                    $( $method => Call::$variant($args::read(reader)?), )*
                    _ => return Ok(None),
                }))
            }
        }

        /// Every method of the service, with the type of its success value (for clients).
        pub mod methods {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[doc = concat!("`", $method, "`'s success value.")]
                #[allow(non_camel_case_types, dead_code)]
                pub type $variant = $ret;
            )*
            /// Every method name, in the IDL's order.
            pub const NAMES: &[&str] = &[ $( $method, )* ];
        }
    };
}

hbase_service! {
    /// Brings a table on-line.
    "enableTable" => EnableTable / EnableTableArgs -> (), IO { 1 => table_name: Bytes }
    /// Takes a table off-line.
    "disableTable" => DisableTable / DisableTableArgs -> (), IO { 1 => table_name: Bytes }
    /// Whether a table is on-line.
    "isTableEnabled" => IsTableEnabled / IsTableEnabledArgs -> bool, IO {
        1 => table_name: Bytes
    }
    /// Compacts a table or a region.
    "compact" => Compact / CompactArgs -> (), IO { 1 => table_name_or_region_name: Bytes }
    /// Major-compacts a table or a region.
    "majorCompact" => MajorCompact / MajorCompactArgs -> (), IO {
        1 => table_name_or_region_name: Bytes
    }
    /// The tables.
    "getTableNames" => GetTableNames / GetTableNamesArgs -> Vec<Bytes>, IO {}
    /// The tables and whether each is enabled.
    "getTableNamesWithIsTableEnabled" =>
        GetTableNamesWithIsTableEnabled / GetTableNamesWithIsTableEnabledArgs
        -> ThriftMap<Bytes, bool>, IO {}
    /// A table's families.
    "getColumnDescriptors" => GetColumnDescriptors / GetColumnDescriptorsArgs
        -> ThriftMap<Bytes, ColumnDescriptor>, IO { 1 => table_name: Bytes }
    /// A table's regions.
    "getTableRegions" => GetTableRegions / GetTableRegionsArgs -> Vec<TRegionInfo>, IO {
        1 => table_name: Bytes
    }
    /// Creates a table.
    "createTable" => CreateTable / CreateTableArgs -> (), IO_IA_EXISTS {
        1 => table_name: Bytes,
        2 => column_families: Vec<ColumnDescriptor>,
    }
    /// Deletes a (disabled) table.
    "deleteTable" => DeleteTable / DeleteTableArgs -> (), IO { 1 => table_name: Bytes }
    /// The newest cell of a column (or of each column of a family).
    "get" => Get / GetArgs -> Vec<TCell>, IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => column: Bytes,
        4 => attributes: Attributes,
    }
    /// Versions of a column.
    "getVer" => GetVer / GetVerArgs -> Vec<TCell>, IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => column: Bytes,
        4 => num_versions: i32,
        5 => attributes: Attributes,
    }
    /// Versions of a column older than a timestamp.
    "getVerTs" => GetVerTs / GetVerTsArgs -> Vec<TCell>, IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => column: Bytes,
        4 => timestamp: i64,
        5 => num_versions: i32,
        6 => attributes: Attributes,
    }
    /// A row.
    "getRow" => GetRow / GetRowArgs -> Vec<TRowResult>, IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => attributes: Attributes,
    }
    /// Columns of a row.
    "getRowWithColumns" => GetRowWithColumns / GetRowWithColumnsArgs -> Vec<TRowResult>, IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => columns: Vec<Bytes>,
        4 => attributes: Attributes,
    }
    /// A row as it was before a timestamp.
    "getRowTs" => GetRowTs / GetRowTsArgs -> Vec<TRowResult>, IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => timestamp: i64,
        4 => attributes: Attributes,
    }
    /// Columns of a row as they were before a timestamp.
    "getRowWithColumnsTs" => GetRowWithColumnsTs / GetRowWithColumnsTsArgs
        -> Vec<TRowResult>, IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => columns: Vec<Bytes>,
        4 => timestamp: i64,
        5 => attributes: Attributes,
    }
    /// Rows.
    "getRows" => GetRows / GetRowsArgs -> Vec<TRowResult>, IO {
        1 => table_name: Bytes,
        2 => rows: Vec<Bytes>,
        3 => attributes: Attributes,
    }
    /// Columns of rows.
    "getRowsWithColumns" => GetRowsWithColumns / GetRowsWithColumnsArgs -> Vec<TRowResult>, IO {
        1 => table_name: Bytes,
        2 => rows: Vec<Bytes>,
        3 => columns: Vec<Bytes>,
        4 => attributes: Attributes,
    }
    /// Rows as they were before a timestamp.
    "getRowsTs" => GetRowsTs / GetRowsTsArgs -> Vec<TRowResult>, IO {
        1 => table_name: Bytes,
        2 => rows: Vec<Bytes>,
        3 => timestamp: i64,
        4 => attributes: Attributes,
    }
    /// Columns of rows as they were before a timestamp.
    "getRowsWithColumnsTs" => GetRowsWithColumnsTs / GetRowsWithColumnsTsArgs
        -> Vec<TRowResult>, IO {
        1 => table_name: Bytes,
        2 => rows: Vec<Bytes>,
        3 => columns: Vec<Bytes>,
        4 => timestamp: i64,
        5 => attributes: Attributes,
    }
    /// Puts and deletes on one row.
    "mutateRow" => MutateRow / MutateRowArgs -> (), IO_IA {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => mutations: Vec<Mutation>,
        4 => attributes: Attributes,
    }
    /// Puts and deletes on one row at a timestamp.
    "mutateRowTs" => MutateRowTs / MutateRowTsArgs -> (), IO_IA {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => mutations: Vec<Mutation>,
        4 => timestamp: i64,
        5 => attributes: Attributes,
    }
    /// Puts and deletes on rows.
    "mutateRows" => MutateRows / MutateRowsArgs -> (), IO_IA {
        1 => table_name: Bytes,
        2 => row_batches: Vec<BatchMutation>,
        3 => attributes: Attributes,
    }
    /// Puts and deletes on rows at a timestamp.
    "mutateRowsTs" => MutateRowsTs / MutateRowsTsArgs -> (), IO_IA {
        1 => table_name: Bytes,
        2 => row_batches: Vec<BatchMutation>,
        3 => timestamp: i64,
        4 => attributes: Attributes,
    }
    /// Adds to a counter and returns its new value.
    "atomicIncrement" => AtomicIncrement / AtomicIncrementArgs -> i64, IO_IA {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => column: Bytes,
        4 => value: i64,
    }
    /// Deletes every version of a column (or of a family).
    "deleteAll" => DeleteAll / DeleteAllArgs -> (), IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => column: Bytes,
        4 => attributes: Attributes,
    }
    /// Deletes the versions of a column (or family) at or before a timestamp.
    "deleteAllTs" => DeleteAllTs / DeleteAllTsArgs -> (), IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => column: Bytes,
        4 => timestamp: i64,
        5 => attributes: Attributes,
    }
    /// Deletes a row.
    "deleteAllRow" => DeleteAllRow / DeleteAllRowArgs -> (), IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => attributes: Attributes,
    }
    /// Adds to a counter.
    "increment" => Increment / IncrementArgs -> (), IO { 1 => increment: TIncrement }
    /// Adds to counters.
    "incrementRows" => IncrementRows / IncrementRowsArgs -> (), IO {
        1 => increments: Vec<TIncrement>
    }
    /// Deletes the cells of a row at or before a timestamp.
    "deleteAllRowTs" => DeleteAllRowTs / DeleteAllRowTsArgs -> (), IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => timestamp: i64,
        4 => attributes: Attributes,
    }
    /// Opens a scanner described by a `TScan`.
    "scannerOpenWithScan" => ScannerOpenWithScan / ScannerOpenWithScanArgs -> i32, IO {
        1 => table_name: Bytes,
        2 => scan: TScan,
        3 => attributes: Attributes,
    }
    /// Opens a scanner from a row on.
    "scannerOpen" => ScannerOpen / ScannerOpenArgs -> i32, IO {
        1 => table_name: Bytes,
        2 => start_row: Bytes,
        3 => columns: Vec<Bytes>,
        4 => attributes: Attributes,
    }
    /// Opens a scanner over a row range.
    "scannerOpenWithStop" => ScannerOpenWithStop / ScannerOpenWithStopArgs -> i32, IO {
        1 => table_name: Bytes,
        2 => start_row: Bytes,
        3 => stop_row: Bytes,
        4 => columns: Vec<Bytes>,
        5 => attributes: Attributes,
    }
    /// Opens a scanner over the rows with a prefix.
    "scannerOpenWithPrefix" => ScannerOpenWithPrefix / ScannerOpenWithPrefixArgs -> i32, IO {
        1 => table_name: Bytes,
        2 => start_and_prefix: Bytes,
        3 => columns: Vec<Bytes>,
        4 => attributes: Attributes,
    }
    /// Opens a scanner from a row on, over cells older than a timestamp.
    "scannerOpenTs" => ScannerOpenTs / ScannerOpenTsArgs -> i32, IO {
        1 => table_name: Bytes,
        2 => start_row: Bytes,
        3 => columns: Vec<Bytes>,
        4 => timestamp: i64,
        5 => attributes: Attributes,
    }
    /// Opens a scanner over a row range, over cells older than a timestamp.
    "scannerOpenWithStopTs" => ScannerOpenWithStopTs / ScannerOpenWithStopTsArgs -> i32, IO {
        1 => table_name: Bytes,
        2 => start_row: Bytes,
        3 => stop_row: Bytes,
        4 => columns: Vec<Bytes>,
        5 => timestamp: i64,
        6 => attributes: Attributes,
    }
    /// The scanner's next row.
    "scannerGet" => ScannerGet / ScannerGetArgs -> Vec<TRowResult>, IO_IA { 1 => id: i32 }
    /// The scanner's next rows.
    "scannerGetList" => ScannerGetList / ScannerGetListArgs -> Vec<TRowResult>, IO_IA {
        1 => id: i32,
        2 => nb_rows: i32,
    }
    /// Closes a scanner.
    "scannerClose" => ScannerClose / ScannerCloseArgs -> (), IO_IA { 1 => id: i32 }
    /// The cells of a family in the row at or before a row key (HBase 0.9x).
    "getRowOrBefore" => GetRowOrBefore / GetRowOrBeforeArgs -> Vec<TCell>, IO {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => family: Bytes,
    }
    /// The region holding a row, looked up by its `hbase:meta` key.
    "getRegionInfo" => GetRegionInfo / GetRegionInfoArgs -> TRegionInfo, IO { 1 => row: Bytes }
    /// Appends to columns and returns their new cells.
    "append" => Append / AppendArgs -> Vec<TCell>, IO { 1 => append: TAppend }
    /// Puts if a column has a value (or has none).
    "checkAndPut" => CheckAndPut / CheckAndPutArgs -> bool, IO_IA {
        1 => table_name: Bytes,
        2 => row: Bytes,
        3 => column: Bytes,
        5 => value: Bytes,
        6 => mput: Mutation,
        7 => attributes: Attributes,
    }
    /// Which Thrift interface this server speaks (`ONE`).
    "getThriftServerType" => GetThriftServerType / GetThriftServerTypeArgs -> i32, NONE {}
    /// The cluster's id.
    "getClusterId" => GetClusterId / GetClusterIdArgs -> String, NONE {}
    /// Grants permissions (not served by strata).
    "grant" => Grant / GrantArgs -> bool, IO { 1 => info: TAccessControlEntity }
    /// Revokes permissions (not served by strata).
    "revoke" => Revoke / RevokeArgs -> bool, IO { 1 => info: TAccessControlEntity }
}

impl Wire for () {
    const TYPE: TType = TType::Struct;
    const IS_VOID: bool = true;
    fn write(&self, _writer: &mut Writer) {}
    fn read<R: Read>(_reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        Ok(())
    }
}

/// A call's success value, as the server sends it in field 0 of the result struct.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A `void` method: the result struct is empty.
    Void,
    /// `bool`.
    Bool(bool),
    /// `i32` (a scanner id, a server type).
    I32(i32),
    /// `i64` (a counter).
    I64(i64),
    /// `string`.
    Text(String),
    /// `list<Text>`.
    Names(Vec<Bytes>),
    /// `map<Text, bool>`.
    EnabledFlags(ThriftMap<Bytes, bool>),
    /// `map<Text, ColumnDescriptor>`.
    Descriptors(ThriftMap<Bytes, ColumnDescriptor>),
    /// `list<TRegionInfo>`.
    Regions(Vec<TRegionInfo>),
    /// `TRegionInfo`.
    Region(TRegionInfo),
    /// `list<TCell>`.
    Cells(Vec<TCell>),
    /// `list<TRowResult>`.
    Rows(Vec<TRowResult>),
}

impl Outcome {
    fn write_field(&self, writer: &mut Writer) {
        fn field<T: Wire>(writer: &mut Writer, value: &T) {
            writer.write_field_begin(T::TYPE, 0);
            value.write(writer);
        }
        match self {
            Outcome::Void => {}
            Outcome::Bool(value) => field(writer, value),
            Outcome::I32(value) => field(writer, value),
            Outcome::I64(value) => field(writer, value),
            Outcome::Text(value) => field(writer, value),
            Outcome::Names(value) => field(writer, value),
            Outcome::EnabledFlags(value) => field(writer, value),
            Outcome::Descriptors(value) => field(writer, value),
            Outcome::Regions(value) => field(writer, value),
            Outcome::Region(value) => field(writer, value),
            Outcome::Cells(value) => field(writer, value),
            Outcome::Rows(value) => field(writer, value),
        }
    }
}

/// A declared exception of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// `IOError`.
    Io(String),
    /// `IllegalArgument`.
    IllegalArgument(String),
    /// `AlreadyExists`.
    AlreadyExists(String),
}

impl Failure {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Failure::Io(message)
            | Failure::IllegalArgument(message)
            | Failure::AlreadyExists(message) => message,
        }
    }

    /// This failure as a method that declares `throws` can send it: an exception the method
    /// does not declare becomes an `IOError` with the same message (every method of the
    /// service but `getThriftServerType` and `getClusterId` declares `IOError`).
    pub fn declared_by(self, throws: Throws) -> Failure {
        match self {
            Failure::IllegalArgument(message) if !throws.illegal_argument => Failure::Io(message),
            Failure::AlreadyExists(message) if !throws.already_exists => Failure::Io(message),
            other => other,
        }
    }
}

/// Writes a message header for a reply to `call`.
fn reply_header(name: &str, kind: MessageType, sequence_id: i32) -> MessageHeader {
    MessageHeader {
        name: name.to_owned(),
        kind,
        sequence_id,
    }
}

/// Encodes the reply to method `name` (sequence id `sequence_id`): the success value, or a
/// failure placed in the field of its exception (converted to an `IOError` when `throws`
/// does not declare it). A method that declares no exception at all (`getThriftServerType`,
/// `getClusterId`) cannot fail in this server, so a failure for it is sent as a
/// `TApplicationException` of kind `INTERNAL_ERROR`.
pub fn encode_reply(
    protocol: Protocol,
    name: &str,
    sequence_id: i32,
    throws: Throws,
    result: &Result<Outcome, Failure>,
) -> Result<Vec<u8>, EncodeError> {
    let failure = match result {
        Err(failure) => Some(failure.clone().declared_by(throws)),
        Ok(_) => None,
    };
    if let (Some(failure), false) = (&failure, throws.io) {
        return encode_application_exception(
            protocol,
            name,
            sequence_id,
            application_error::INTERNAL_ERROR,
            failure.message(),
        );
    }
    let mut writer = Writer::new(protocol);
    writer.write_message_begin(&reply_header(name, MessageType::Reply, sequence_id));
    writer.write_struct_begin();
    match (result, failure) {
        (Ok(outcome), _) => outcome.write_field(&mut writer),
        (Err(_), Some(Failure::Io(message))) => {
            writer.write_field_begin(TType::Struct, 1);
            IOError {
                message: Some(message),
                can_retry: Some(false),
            }
            .write(&mut writer);
        }
        (Err(_), Some(Failure::IllegalArgument(message))) => {
            writer.write_field_begin(TType::Struct, 2);
            IllegalArgument {
                message: Some(message),
            }
            .write(&mut writer);
        }
        (Err(_), Some(Failure::AlreadyExists(message))) => {
            writer.write_field_begin(TType::Struct, 3);
            AlreadyExists {
                message: Some(message),
            }
            .write(&mut writer);
        }
        (Err(_), None) => {}
    }
    writer.write_field_stop();
    writer.write_struct_end();
    writer.into_bytes()
}

/// Encodes an `Exception` message carrying a `TApplicationException`.
pub fn encode_application_exception(
    protocol: Protocol,
    name: &str,
    sequence_id: i32,
    kind: i32,
    message: &str,
) -> Result<Vec<u8>, EncodeError> {
    let mut writer = Writer::new(protocol);
    writer.write_message_begin(&reply_header(name, MessageType::Exception, sequence_id));
    TApplicationException {
        message: Some(message.to_owned()),
        kind: Some(kind),
    }
    .write(&mut writer);
    writer.into_bytes()
}

/// Encodes a call message.
pub fn encode_call(
    protocol: Protocol,
    call: &Call,
    sequence_id: i32,
) -> Result<Vec<u8>, EncodeError> {
    let mut writer = Writer::new(protocol);
    writer.write_message_begin(&MessageHeader {
        name: call.name().to_owned(),
        kind: MessageType::Call,
        sequence_id,
    });
    call.write_args(&mut writer);
    writer.into_bytes()
}

/// A decoded incoming message.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A call of a method of the service.
    Call {
        /// The message header.
        header: MessageHeader,
        /// The call.
        call: Call,
    },
    /// A call of a method the service does not have (its arguments were skipped).
    UnknownMethod {
        /// The message header.
        header: MessageHeader,
    },
}

/// Reads one call message: its header and its arguments. A message that is not a call (or
/// oneway call) is [`DecodeError::Invalid`].
pub fn read_call<R: Read>(reader: &mut Reader<R>) -> Result<Incoming, DecodeError> {
    let header = reader.read_message_begin()?;
    read_call_after(reader, header)
}

/// [`read_call`] once the header was read.
pub fn read_call_after<R: Read>(
    reader: &mut Reader<R>,
    header: MessageHeader,
) -> Result<Incoming, DecodeError> {
    if !matches!(header.kind, MessageType::Call | MessageType::Oneway) {
        return Err(DecodeError::Invalid {
            reason: format!(
                "a server takes calls; {} sent a {:?} message",
                header.name, header.kind
            ),
        });
    }
    match Call::read_args(&header.name, reader)? {
        Some(call) => Ok(Incoming::Call { header, call }),
        None => {
            reader.skip(TType::Struct)?;
            Ok(Incoming::UnknownMethod { header })
        }
    }
}

/// What a client gets back for a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Response<T> {
    /// The success value (for a `void` method, `()`).
    Success(T),
    /// The method's `IOError`.
    Io(IOError),
    /// The method's `IllegalArgument`.
    IllegalArgument(IllegalArgument),
    /// The method's `AlreadyExists`.
    AlreadyExists(AlreadyExists),
    /// A `TApplicationException` message.
    Application(TApplicationException),
}

/// Reads a reply message whose success value is a `T` (`()` for `void`).
pub fn read_response<T: Wire, R: Read>(
    reader: &mut Reader<R>,
) -> Result<(MessageHeader, Response<T>), DecodeError> {
    let header = reader.read_message_begin()?;
    match header.kind {
        MessageType::Exception => {
            let exception = TApplicationException::read(reader)?;
            return Ok((header, Response::Application(exception)));
        }
        MessageType::Reply => {}
        other => {
            return Err(DecodeError::Invalid {
                reason: format!("expected a reply, got a {other:?} message"),
            });
        }
    }
    let mut response = None;
    reader.read_struct_begin()?;
    while let Some((field_type, id)) = reader.read_field_begin()? {
        match (id, field_type) {
            (0, field_type) if field_type == T::TYPE && !T::IS_VOID => {
                response = Some(Response::Success(T::read(reader)?));
            }
            (1, TType::Struct) => response = Some(Response::Io(IOError::read(reader)?)),
            (2, TType::Struct) => {
                response = Some(Response::IllegalArgument(IllegalArgument::read(reader)?));
            }
            (3, TType::Struct) => {
                response = Some(Response::AlreadyExists(AlreadyExists::read(reader)?));
            }
            (_, field_type) => reader.skip(field_type)?,
        }
    }
    reader.read_struct_end();
    let response = match response {
        Some(response) => response,
        // A void method's result struct is empty.
        None if T::IS_VOID => Response::Success(T::read(reader)?),
        None => {
            return Err(DecodeError::Invalid {
                reason: format!("the reply to {} has no result", header.name),
            });
        }
    };
    Ok((header, response))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> Option<Bytes> {
        Some(value.as_bytes().to_vec())
    }

    fn attributes() -> Option<Attributes> {
        Some(ThriftMap(vec![(b"k".to_vec(), b"v".to_vec())]))
    }

    fn mutation(is_delete: bool) -> Mutation {
        Mutation {
            is_delete: Some(is_delete),
            column: text("cf:q"),
            value: (!is_delete).then(|| b"v".to_vec()),
            write_to_wal: Some(true),
        }
    }

    /// One call of every method, with every argument set.
    fn every_call() -> Vec<Call> {
        let t = || text("t");
        let r = || text("r");
        let columns = || Some(vec![b"cf".to_vec(), b"cf:q".to_vec(), b"cf:".to_vec()]);
        let rows = || Some(vec![b"a".to_vec(), b"b".to_vec()]);
        let batches = || {
            Some(vec![BatchMutation {
                row: r(),
                mutations: Some(vec![mutation(false), mutation(true)]),
            }])
        };
        let increment = || TIncrement {
            table: t(),
            row: r(),
            column: text("cf:n"),
            ammount: Some(-3),
        };
        let entity = || TAccessControlEntity {
            username: Some("u".into()),
            scope: Some(1),
            actions: Some("RW".into()),
            table_name: t(),
            ns_name: Some("ns".into()),
        };
        vec![
            Call::EnableTable(EnableTableArgs { table_name: t() }),
            Call::DisableTable(DisableTableArgs { table_name: t() }),
            Call::IsTableEnabled(IsTableEnabledArgs { table_name: t() }),
            Call::Compact(CompactArgs {
                table_name_or_region_name: t(),
            }),
            Call::MajorCompact(MajorCompactArgs {
                table_name_or_region_name: t(),
            }),
            Call::GetTableNames(GetTableNamesArgs {}),
            Call::GetTableNamesWithIsTableEnabled(GetTableNamesWithIsTableEnabledArgs {}),
            Call::GetColumnDescriptors(GetColumnDescriptorsArgs { table_name: t() }),
            Call::GetTableRegions(GetTableRegionsArgs { table_name: t() }),
            Call::CreateTable(CreateTableArgs {
                table_name: t(),
                column_families: Some(vec![ColumnDescriptor {
                    name: text("cf:"),
                    max_versions: Some(3),
                    compression: Some("NONE".into()),
                    in_memory: Some(false),
                    bloom_filter_type: Some("ROW".into()),
                    bloom_filter_vector_size: Some(0),
                    bloom_filter_nb_hashes: Some(0),
                    block_cache_enabled: Some(true),
                    time_to_live: Some(-1),
                }]),
            }),
            Call::DeleteTable(DeleteTableArgs { table_name: t() }),
            Call::Get(GetArgs {
                table_name: t(),
                row: r(),
                column: text("cf:q"),
                attributes: attributes(),
            }),
            Call::GetVer(GetVerArgs {
                table_name: t(),
                row: r(),
                column: text("cf:q"),
                num_versions: Some(3),
                attributes: attributes(),
            }),
            Call::GetVerTs(GetVerTsArgs {
                table_name: t(),
                row: r(),
                column: text("cf:q"),
                timestamp: Some(99),
                num_versions: Some(3),
                attributes: attributes(),
            }),
            Call::GetRow(GetRowArgs {
                table_name: t(),
                row: r(),
                attributes: attributes(),
            }),
            Call::GetRowWithColumns(GetRowWithColumnsArgs {
                table_name: t(),
                row: r(),
                columns: columns(),
                attributes: attributes(),
            }),
            Call::GetRowTs(GetRowTsArgs {
                table_name: t(),
                row: r(),
                timestamp: Some(5),
                attributes: attributes(),
            }),
            Call::GetRowWithColumnsTs(GetRowWithColumnsTsArgs {
                table_name: t(),
                row: r(),
                columns: columns(),
                timestamp: Some(5),
                attributes: attributes(),
            }),
            Call::GetRows(GetRowsArgs {
                table_name: t(),
                rows: rows(),
                attributes: attributes(),
            }),
            Call::GetRowsWithColumns(GetRowsWithColumnsArgs {
                table_name: t(),
                rows: rows(),
                columns: columns(),
                attributes: attributes(),
            }),
            Call::GetRowsTs(GetRowsTsArgs {
                table_name: t(),
                rows: rows(),
                timestamp: Some(7),
                attributes: attributes(),
            }),
            Call::GetRowsWithColumnsTs(GetRowsWithColumnsTsArgs {
                table_name: t(),
                rows: rows(),
                columns: columns(),
                timestamp: Some(7),
                attributes: attributes(),
            }),
            Call::MutateRow(MutateRowArgs {
                table_name: t(),
                row: r(),
                mutations: Some(vec![mutation(false)]),
                attributes: attributes(),
            }),
            Call::MutateRowTs(MutateRowTsArgs {
                table_name: t(),
                row: r(),
                mutations: Some(vec![mutation(true)]),
                timestamp: Some(1),
                attributes: attributes(),
            }),
            Call::MutateRows(MutateRowsArgs {
                table_name: t(),
                row_batches: batches(),
                attributes: attributes(),
            }),
            Call::MutateRowsTs(MutateRowsTsArgs {
                table_name: t(),
                row_batches: batches(),
                timestamp: Some(2),
                attributes: attributes(),
            }),
            Call::AtomicIncrement(AtomicIncrementArgs {
                table_name: t(),
                row: r(),
                column: text("cf:n"),
                value: Some(i64::MIN),
            }),
            Call::DeleteAll(DeleteAllArgs {
                table_name: t(),
                row: r(),
                column: text("cf"),
                attributes: attributes(),
            }),
            Call::DeleteAllTs(DeleteAllTsArgs {
                table_name: t(),
                row: r(),
                column: text("cf:q"),
                timestamp: Some(3),
                attributes: attributes(),
            }),
            Call::DeleteAllRow(DeleteAllRowArgs {
                table_name: t(),
                row: r(),
                attributes: attributes(),
            }),
            Call::Increment(IncrementArgs {
                increment: Some(increment()),
            }),
            Call::IncrementRows(IncrementRowsArgs {
                increments: Some(vec![increment(), increment()]),
            }),
            Call::DeleteAllRowTs(DeleteAllRowTsArgs {
                table_name: t(),
                row: r(),
                timestamp: Some(4),
                attributes: attributes(),
            }),
            Call::ScannerOpenWithScan(ScannerOpenWithScanArgs {
                table_name: t(),
                scan: Some(TScan {
                    start_row: text("a"),
                    stop_row: text("z"),
                    timestamp: Some(10),
                    columns: columns(),
                    caching: Some(100),
                    filter_string: text("PrefixFilter('a')"),
                    batch_size: Some(5),
                    sort_columns: Some(true),
                    reversed: Some(false),
                    cache_blocks: Some(true),
                }),
                attributes: attributes(),
            }),
            Call::ScannerOpen(ScannerOpenArgs {
                table_name: t(),
                start_row: text("a"),
                columns: columns(),
                attributes: attributes(),
            }),
            Call::ScannerOpenWithStop(ScannerOpenWithStopArgs {
                table_name: t(),
                start_row: text("a"),
                stop_row: text("b"),
                columns: columns(),
                attributes: attributes(),
            }),
            Call::ScannerOpenWithPrefix(ScannerOpenWithPrefixArgs {
                table_name: t(),
                start_and_prefix: text("a"),
                columns: columns(),
                attributes: attributes(),
            }),
            Call::ScannerOpenTs(ScannerOpenTsArgs {
                table_name: t(),
                start_row: text("a"),
                columns: columns(),
                timestamp: Some(8),
                attributes: attributes(),
            }),
            Call::ScannerOpenWithStopTs(ScannerOpenWithStopTsArgs {
                table_name: t(),
                start_row: text("a"),
                stop_row: text("b"),
                columns: columns(),
                timestamp: Some(8),
                attributes: attributes(),
            }),
            Call::ScannerGet(ScannerGetArgs { id: Some(3) }),
            Call::ScannerGetList(ScannerGetListArgs {
                id: Some(3),
                nb_rows: Some(10),
            }),
            Call::ScannerClose(ScannerCloseArgs { id: Some(3) }),
            Call::GetRowOrBefore(GetRowOrBeforeArgs {
                table_name: t(),
                row: r(),
                family: text("cf"),
            }),
            Call::GetRegionInfo(GetRegionInfoArgs {
                row: text("t,r,99999999999999"),
            }),
            Call::Append(AppendArgs {
                append: Some(TAppend {
                    table: t(),
                    row: r(),
                    columns: Some(vec![b"cf:q".to_vec()]),
                    values: Some(vec![b"x".to_vec()]),
                }),
            }),
            Call::CheckAndPut(CheckAndPutArgs {
                table_name: t(),
                row: r(),
                column: text("cf:q"),
                value: text("v"),
                mput: Some(mutation(false)),
                attributes: attributes(),
            }),
            Call::GetThriftServerType(GetThriftServerTypeArgs {}),
            Call::GetClusterId(GetClusterIdArgs {}),
            Call::Grant(GrantArgs {
                info: Some(entity()),
            }),
            Call::Revoke(RevokeArgs {
                info: Some(entity()),
            }),
        ]
    }

    #[test]
    fn every_call_round_trips_in_both_protocols() {
        let calls = every_call();
        assert_eq!(calls.len(), methods::NAMES.len(), "one call per method");
        for protocol in [Protocol::Binary, Protocol::Compact] {
            for (sequence_id, call) in calls.iter().enumerate() {
                let bytes = encode_call(protocol, call, sequence_id as i32).unwrap();
                let mut reader = Reader::new(&bytes[..], protocol, bytes.len() as u64);
                let Incoming::Call { header, call: read } = read_call(&mut reader).unwrap() else {
                    panic!("{} was not recognised", call.name());
                };
                assert_eq!(&read, call);
                assert_eq!(header.sequence_id, sequence_id as i32);
                assert_eq!(header.name, call.name());
                assert_eq!(reader.remaining_bytes(), 0, "{} left bytes", call.name());
                // Every truncation is an error, never a different call.
                for cut in 0..bytes.len() {
                    let mut reader = Reader::new(&bytes[..cut], protocol, cut as u64);
                    assert!(
                        read_call(&mut reader).is_err(),
                        "{} cut at {cut}",
                        call.name()
                    );
                }
            }
        }
    }

    #[test]
    fn calls_with_every_argument_absent_round_trip() {
        for call in every_call() {
            let bytes = encode_call(Protocol::Binary, &call, 1).unwrap();
            let mut reader = Reader::new(&bytes[..], Protocol::Binary, bytes.len() as u64);
            let header = reader.read_message_begin().unwrap();
            // Rebuild the same method with nothing set, from its name alone.
            let empty = {
                let mut writer = Writer::new(Protocol::Binary);
                writer.write_message_begin(&header);
                writer.write_struct_begin();
                writer.write_field_stop();
                writer.write_struct_end();
                writer.into_bytes().unwrap()
            };
            let mut reader = Reader::new(&empty[..], Protocol::Binary, empty.len() as u64);
            let Incoming::Call { call: read, .. } = read_call(&mut reader).unwrap() else {
                panic!("{} not recognised", header.name);
            };
            assert_eq!(read.name(), call.name());
        }
    }

    fn outcome_round_trip<T: Wire + PartialEq + Clone + std::fmt::Debug>(
        outcome: Outcome,
        expected: T,
    ) {
        for protocol in [Protocol::Binary, Protocol::Compact] {
            let bytes = encode_reply(protocol, "m", 9, IO_IA_EXISTS, &Ok(outcome.clone())).unwrap();
            let mut reader = Reader::new(&bytes[..], protocol, bytes.len() as u64);
            let (header, response) = read_response::<T, _>(&mut reader).unwrap();
            assert_eq!(header.sequence_id, 9);
            assert_eq!(header.kind, MessageType::Reply);
            assert_eq!(response, Response::Success(expected.clone()), "{outcome:?}");
            for cut in 0..bytes.len() {
                let mut reader = Reader::new(&bytes[..cut], protocol, cut as u64);
                assert!(
                    read_response::<T, _>(&mut reader).is_err(),
                    "{outcome:?} cut {cut}"
                );
            }
        }
    }

    #[test]
    fn every_reply_type_round_trips() {
        let cell = TCell {
            value: text("v"),
            timestamp: Some(12),
        };
        let row = TRowResult {
            row: text("r"),
            columns: Some(ThriftMap(vec![(b"cf:q".to_vec(), cell.clone())])),
            sorted_columns: None,
        };
        let sorted = TRowResult {
            row: text("r"),
            columns: None,
            sorted_columns: Some(vec![TColumn {
                column_name: text("cf:q"),
                cell: Some(cell.clone()),
            }]),
        };
        let region = TRegionInfo {
            start_key: text(""),
            end_key: text("m"),
            id: Some(4),
            name: text("t,,4"),
            version: Some(1),
            server_name: text("localhost"),
            port: Some(9090),
        };
        let descriptor = ColumnDescriptor {
            name: text("cf:"),
            max_versions: Some(1),
            compression: Some("ZSTD".into()),
            in_memory: Some(true),
            bloom_filter_type: Some("ROWCOL".into()),
            bloom_filter_vector_size: Some(0),
            bloom_filter_nb_hashes: Some(0),
            block_cache_enabled: Some(false),
            time_to_live: Some(i32::MAX),
        };
        outcome_round_trip(Outcome::Void, ());
        outcome_round_trip(Outcome::Bool(true), true);
        outcome_round_trip(Outcome::I32(-4), -4i32);
        outcome_round_trip(Outcome::I64(1 << 50), 1i64 << 50);
        outcome_round_trip(Outcome::Text("id".into()), String::from("id"));
        outcome_round_trip(
            Outcome::Names(vec![b"a".to_vec(), b"b".to_vec()]),
            vec![b"a".to_vec(), b"b".to_vec()],
        );
        let flags = ThriftMap(vec![(b"a".to_vec(), true), (b"b".to_vec(), false)]);
        outcome_round_trip(Outcome::EnabledFlags(flags.clone()), flags);
        let descriptors = ThriftMap(vec![(b"cf:".to_vec(), descriptor)]);
        outcome_round_trip(Outcome::Descriptors(descriptors.clone()), descriptors);
        outcome_round_trip(Outcome::Regions(vec![region.clone()]), vec![region.clone()]);
        outcome_round_trip(Outcome::Region(region.clone()), region);
        outcome_round_trip(Outcome::Cells(vec![cell.clone()]), vec![cell]);
        outcome_round_trip(
            Outcome::Rows(vec![row.clone(), sorted.clone()]),
            vec![row, sorted],
        );
        outcome_round_trip(Outcome::Rows(Vec::new()), Vec::<TRowResult>::new());
    }

    #[test]
    fn exceptions_go_in_their_declared_fields() {
        for protocol in [Protocol::Binary, Protocol::Compact] {
            let cases = [
                (Failure::Io("disk".into()), IO_IA_EXISTS, 1),
                (Failure::IllegalArgument("bad".into()), IO_IA_EXISTS, 2),
                (Failure::AlreadyExists("there".into()), IO_IA_EXISTS, 3),
                // Not declared: sent as an IOError with the same message.
                (Failure::IllegalArgument("bad".into()), IO, 1),
                (Failure::AlreadyExists("there".into()), IO_IA, 1),
            ];
            for (failure, throws, field) in cases {
                let bytes = encode_reply(protocol, "m", 1, throws, &Err(failure.clone())).unwrap();
                let mut reader = Reader::new(&bytes[..], protocol, bytes.len() as u64);
                let (_, response) = read_response::<(), _>(&mut reader).unwrap();
                let message = match (&response, field) {
                    (Response::Io(error), 1) => error.message.clone(),
                    (Response::IllegalArgument(error), 2) => error.message.clone(),
                    (Response::AlreadyExists(error), 3) => error.message.clone(),
                    other => panic!("{failure:?} came back as {other:?}"),
                };
                assert_eq!(message.as_deref(), Some(failure.message()));
            }
            // A method without exceptions gets a TApplicationException.
            let bytes = encode_reply(
                protocol,
                "getClusterId",
                1,
                NONE,
                &Err(Failure::Io("x".into())),
            )
            .unwrap();
            let mut reader = Reader::new(&bytes[..], protocol, bytes.len() as u64);
            let (header, response) = read_response::<String, _>(&mut reader).unwrap();
            assert_eq!(header.kind, MessageType::Exception);
            assert_eq!(
                response,
                Response::Application(TApplicationException {
                    message: Some("x".into()),
                    kind: Some(application_error::INTERNAL_ERROR)
                })
            );
        }
    }

    #[test]
    fn unknown_methods_are_recognised_and_their_arguments_skipped() {
        let mut writer = Writer::new(Protocol::Compact);
        writer.write_message_begin(&MessageHeader {
            name: "noSuchMethod".into(),
            kind: MessageType::Call,
            sequence_id: 3,
        });
        TScan {
            start_row: text("a"),
            ..TScan::default()
        }
        .write(&mut writer);
        let bytes = writer.into_bytes().unwrap();
        let mut reader = Reader::new(&bytes[..], Protocol::Compact, bytes.len() as u64);
        let incoming = read_call(&mut reader).unwrap();
        assert!(
            matches!(&incoming, Incoming::UnknownMethod { header } if header.name == "noSuchMethod")
        );
        assert_eq!(reader.remaining_bytes(), 0);
    }

    #[test]
    fn a_reply_sent_to_a_server_is_refused() {
        let bytes = encode_reply(Protocol::Binary, "getRow", 1, IO, &Ok(Outcome::Void)).unwrap();
        let mut reader = Reader::new(&bytes[..], Protocol::Binary, bytes.len() as u64);
        assert!(matches!(
            read_call(&mut reader),
            Err(DecodeError::Invalid { .. })
        ));
    }
}
