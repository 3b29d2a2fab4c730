//! `strata thrift` holds up: malformed, oversized, truncated and stalled messages close only
//! their own connection; scanners close with their connection and after their idle timeout;
//! limits on connections, scanners and replies; shutdown with clients connected.

#![cfg(test)]

mod thrift_support;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use strata::{FamilyDescriptor, TableDescriptor};
use strata_tools::thrift::ServerOptions;
use strata_tools::thrift::client::Client;
use strata_tools::thrift::codec::{MessageHeader, MessageType, Protocol, Reader, Writer};
use strata_tools::thrift::hbase::*;
use thrift_support::*;

/// Waits up to `limit` for `condition`, polling.
fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}

/// True when the server closed `stream` (end of stream or reset) within a few seconds.
fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut byte = [0u8; 1024];
    loop {
        match stream.read(&mut byte) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => {
                let closed = matches!(
                    error.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                );
                if !closed {
                    eprintln!("not closed: {error:?}");
                }
                return closed;
            }
        }
    }
}

fn raw(server: &TestServer) -> TcpStream {
    TcpStream::connect(server.address()).unwrap()
}

fn table(server: &TestServer) {
    server
        .db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
}

fn table_names(client: &mut Client) -> Vec<Vec<u8>> {
    ok(client, Call::GetTableNames(GetTableNamesArgs {}))
}

fn open_scanner(client: &mut Client) -> Response<i32> {
    client
        .call::<i32>(&Call::ScannerOpenWithScan(ScannerOpenWithScanArgs {
            table_name: bytes("t"),
            scan: Some(TScan::default()),
            attributes: None,
        }))
        .unwrap()
}

/// A getRow call whose row claims to be `claimed` bytes long (and is not sent).
fn call_with_long_row(claimed: i32) -> Vec<u8> {
    let mut writer = Writer::new(Protocol::Binary);
    writer.write_message_begin(&MessageHeader {
        name: "getRow".into(),
        kind: MessageType::Call,
        sequence_id: 5,
    });
    writer.write_struct_begin();
    writer.write_field_begin(strata_tools::thrift::codec::TType::Binary, 1);
    writer.write_binary(b"t");
    let mut bytes = writer.into_bytes().unwrap();
    bytes.extend_from_slice(&[11, 0, 2]);
    bytes.extend_from_slice(&claimed.to_be_bytes());
    bytes
}

#[test]
fn malformed_messages_close_only_their_own_connection() {
    let server = TestServer::start_with(ServerOptions {
        max_message_bytes: 1024 * 1024,
        ..ServerOptions::default()
    });
    table(&server);
    let mut good = server.client();
    assert_eq!(table_names(&mut good), [b"t".to_vec()]);

    // Not Thrift at all.
    let mut http = raw(&server);
    http.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert!(closed_by_server(&mut http));

    // A string over the limit: refused before it is read, with a reply saying why (the
    // header could be read), then the connection is closed.
    let mut long = raw(&server);
    long.write_all(&call_with_long_row(1 << 30)).unwrap();
    let mut reader = Reader::new(&mut long, Protocol::Binary, 1 << 20);
    let (header, response) = read_response::<Vec<TRowResult>, _>(&mut reader).unwrap();
    assert_eq!(header.sequence_id, 5);
    match response {
        Response::Application(exception) => {
            assert_eq!(exception.kind, Some(application_error::PROTOCOL_ERROR));
            let message = exception.message.unwrap();
            assert!(message.contains("over the limit"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(closed_by_server(&mut long));

    // A frame over the limit.
    let mut frame = raw(&server);
    frame.write_all(&(100i32 << 20).to_be_bytes()).unwrap();
    frame.write_all(&[0x80, 0x01, 0, 1]).unwrap();
    assert!(closed_by_server(&mut frame));

    // A negative frame length.
    let mut negative = raw(&server);
    negative.write_all(&[0xff, 0xff, 0xff, 0xf0, 0x80]).unwrap();
    assert!(closed_by_server(&mut negative));

    // A truncated message: the client stops writing halfway.
    let mut truncated = raw(&server);
    let message = encode_call(
        Protocol::Binary,
        &Call::GetTableNames(GetTableNamesArgs {}),
        1,
    )
    .unwrap();
    truncated.write_all(&message[..message.len() / 2]).unwrap();
    truncated.shutdown(Shutdown::Write).unwrap();
    assert!(closed_by_server(&mut truncated));

    // An unknown type code inside the arguments.
    let mut bad_type = raw(&server);
    let mut bytes = call_with_long_row(1);
    bytes.extend_from_slice(&[b'r', 9, 0, 3, 0]);
    bad_type.write_all(&bytes).unwrap();
    let mut reader = Reader::new(&mut bad_type, Protocol::Binary, 1 << 20);
    let (_, response) = read_response::<Vec<TRowResult>, _>(&mut reader).unwrap();
    assert!(matches!(response, Response::Application(_)), "{response:?}");
    assert!(closed_by_server(&mut bad_type));

    // The well-behaved client never noticed.
    assert_eq!(table_names(&mut good), [b"t".to_vec()]);
    let stats = server.handle.stats();
    assert_eq!(stats.malformed_messages, 6, "{stats:?}");
    assert!(eventually(Duration::from_secs(5), || server
        .handle
        .stats()
        .open_connections
        == 1));
    drop(good);
    server.stop();
}

#[test]
fn a_message_that_stalls_halfway_closes_its_connection() {
    let server = TestServer::start_with(ServerOptions {
        message_stall_timeout: Duration::from_millis(300),
        ..ServerOptions::default()
    });
    let message = encode_call(
        Protocol::Binary,
        &Call::GetTableNames(GetTableNamesArgs {}),
        1,
    )
    .unwrap();
    let mut stalled = raw(&server);
    stalled.write_all(&message[..6]).unwrap();
    let started = Instant::now();
    assert!(closed_by_server(&mut stalled));
    assert!(started.elapsed() < Duration::from_secs(3));
    // A connection idle between messages is not a stall.
    let mut idle = server.client();
    std::thread::sleep(Duration::from_millis(700));
    assert!(table_names(&mut idle).is_empty());
    drop(idle);
    server.stop();
}

#[test]
fn scanners_expire_after_their_idle_timeout() {
    let server = TestServer::start_with(ServerOptions {
        scanner_idle_timeout: Duration::from_millis(200),
        ..ServerOptions::default()
    });
    table(&server);
    let mut client = server.client();
    let Response::Success(id) = open_scanner(&mut client) else {
        panic!("no scanner");
    };
    assert_eq!(server.handle.stats().open_scanners, 1);
    // Expired by the connection's own housekeeping, without any call.
    assert!(eventually(Duration::from_secs(5), || server
        .handle
        .stats()
        .open_scanners
        == 0));
    assert_eq!(server.handle.stats().scanners_expired, 1);
    let expired = illegal_argument(fails::<Vec<TRowResult>>(
        &mut client,
        Call::ScannerGetList(ScannerGetListArgs {
            id: Some(id),
            nb_rows: Some(1),
        }),
    ));
    assert!(expired.contains("without use"), "{expired}");
    drop(client);
    server.stop();
}

#[test]
fn scanners_close_with_their_connection_and_are_bounded() {
    let server = TestServer::start_with(ServerOptions {
        max_scanners_per_connection: 3,
        ..ServerOptions::default()
    });
    table(&server);
    let mut client = server.client();
    for _ in 0..3 {
        assert!(matches!(open_scanner(&mut client), Response::Success(_)));
    }
    let too_many = io_error(open_scanner(&mut client));
    assert!(too_many.contains("scanners open"), "{too_many}");
    let mut other = server.client();
    assert!(matches!(open_scanner(&mut other), Response::Success(_)));
    assert_eq!(server.handle.stats().open_scanners, 4);
    drop(client);
    assert!(eventually(Duration::from_secs(5), || server
        .handle
        .stats()
        .open_scanners
        == 1));
    drop(other);
    assert!(eventually(Duration::from_secs(5), || {
        let stats = server.handle.stats();
        stats.open_scanners == 0 && stats.open_connections == 0
    }));
    server.stop();
}

#[test]
fn connections_beyond_the_limit_are_closed_at_once() {
    let server = TestServer::start_with(ServerOptions {
        max_connections: 2,
        ..ServerOptions::default()
    });
    let mut first = server.client();
    let mut second = server.client();
    assert!(table_names(&mut first).is_empty());
    assert!(table_names(&mut second).is_empty());
    let mut third = raw(&server);
    assert!(closed_by_server(&mut third));
    assert_eq!(server.handle.stats().connections_refused, 1);
    assert!(
        server
            .log
            .lock()
            .unwrap()
            .iter()
            .any(|line| line.contains("refused"))
    );
    drop(first);
    assert!(eventually(Duration::from_secs(5), || server
        .handle
        .stats()
        .open_connections
        == 1));
    let mut fourth = server.client();
    assert!(table_names(&mut fourth).is_empty());
    drop((second, fourth));
    server.stop();
}

#[test]
fn replies_over_the_message_limit_become_errors_and_scans_page_by_bytes() {
    let server = TestServer::start_with(ServerOptions {
        max_message_bytes: 64 * 1024,
        ..ServerOptions::default()
    });
    table(&server);
    let table = server.db.table("t").unwrap();
    let big = vec![b'x'; 40 * 1024];
    table
        .put(
            &strata::Put::new("big")
                .add("f", "a", &big)
                .add("f", "b", &big),
        )
        .unwrap();
    for index in 0..4 {
        table
            .put(&strata::Put::new(format!("row{index}")).add("f", "a", &big[..20 * 1024]))
            .unwrap();
    }
    let mut client = server.client();
    let too_large = io_error(fails::<Vec<TRowResult>>(
        &mut client,
        Call::GetRow(GetRowArgs {
            table_name: bytes("t"),
            row: bytes("big"),
            attributes: None,
        }),
    ));
    assert!(too_large.contains("over the limit"), "{too_large}");
    // A scanner hands out rows up to half the limit per call (always at least one).
    let id: i32 = ok(
        &mut client,
        Call::ScannerOpenWithScan(ScannerOpenWithScanArgs {
            table_name: bytes("t"),
            scan: Some(TScan {
                start_row: bytes("row"),
                ..TScan::default()
            }),
            attributes: None,
        }),
    );
    let mut batches = Vec::new();
    loop {
        let rows: Vec<TRowResult> = ok(
            &mut client,
            Call::ScannerGetList(ScannerGetListArgs {
                id: Some(id),
                nb_rows: Some(100),
            }),
        );
        if rows.is_empty() {
            break;
        }
        batches.push(rows.len());
    }
    assert_eq!(batches.iter().sum::<usize>(), 4);
    assert!(batches.len() >= 2, "{batches:?}");
    // The connection is still good.
    assert_eq!(table_names(&mut client), [b"t".to_vec()]);
    server.stop();
}

#[test]
fn shutdown_disconnects_clients_and_returns() {
    let server = TestServer::start();
    table(&server);
    let mut idle = server.client();
    assert!(!table_names(&mut idle).is_empty());
    let mut scanning = server.client();
    assert!(matches!(open_scanner(&mut scanning), Response::Success(_)));
    let mut halfway = raw(&server);
    let message = encode_call(
        Protocol::Binary,
        &Call::GetTableNames(GetTableNamesArgs {}),
        1,
    )
    .unwrap();
    halfway.write_all(&message[..5]).unwrap();
    assert!(eventually(Duration::from_secs(5), || server
        .handle
        .stats()
        .open_connections
        == 3));
    let handle = server.handle.clone();
    let started = Instant::now();
    server.stop();
    assert!(started.elapsed() < Duration::from_secs(5));
    let stats = handle.stats();
    assert_eq!(stats.open_connections, 0);
    assert_eq!(stats.open_scanners, 0);
    assert!(closed_by_server(&mut halfway));
    assert!(
        idle.call::<Vec<Vec<u8>>>(&Call::GetTableNames(GetTableNamesArgs {}))
            .is_err()
    );
}

/// Starts `strata thrift` on a free port; returns the child and its address.
fn start_binary(data: &std::path::Path) -> (std::process::Child, std::net::SocketAddr) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["thrift", "--port", "0", "--data"])
        .arg(data)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(stderr).lines();
    let first = lines.next().unwrap().unwrap();
    let address = first
        .split(" on ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in lines {
            eprintln!("server: {}", line.unwrap_or_default());
        }
    });
    (child, address)
}

#[test]
fn the_binary_closes_its_database_on_sigterm_and_sigint() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("db");
        let (mut child, address) = start_binary(&data);
        let mut client = Client::connect(address, BUFFERED_BINARY, CALL_TIMEOUT).unwrap();
        let _: () = ok(
            &mut client,
            Call::CreateTable(CreateTableArgs {
                table_name: bytes("t"),
                column_families: Some(vec![ColumnDescriptor {
                    name: bytes("f:"),
                    ..ColumnDescriptor::default()
                }]),
            }),
        );
        let _: () = ok(
            &mut client,
            Call::MutateRow(MutateRowArgs {
                table_name: bytes("t"),
                row: bytes("r"),
                mutations: Some(vec![Mutation {
                    is_delete: Some(false),
                    column: bytes("f:q"),
                    value: bytes("v"),
                    write_to_wal: Some(true),
                }]),
                attributes: None,
            }),
        );
        // A client still connected does not keep the server from stopping.
        let pid = i32::try_from(child.id()).unwrap();
        // SAFETY: kill takes no pointer; `pid` is our own child, which has not been waited for.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "no exit after the signal"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{status:?}");
        drop(client);
        // The database was closed: it opens again, with the write (the async WAL was synced).
        let db = strata::Db::open_default(&data).unwrap();
        let row = db.table("t").unwrap().get(&strata::Get::new("r")).unwrap();
        assert_eq!(row.value("f", "q"), Some(&b"v"[..]));
        db.close().unwrap();
    }
}
