//! 200 concurrent connections to `strata thrift`, a quarter of them dropped in the middle of
//! a call, leave no thread, scanner or file descriptor behind.
//!
//! This file holds one test so that nothing else in its process opens descriptors or starts
//! threads while it counts them (`/proc/self/fd`, `/proc/self/task`).

#![cfg(test)]

mod thrift_support;

use std::io::Write;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use strata::{FamilyDescriptor, TableDescriptor};
use strata_tools::thrift::codec::Protocol;
use strata_tools::thrift::hbase::*;
use thrift_support::*;

/// Connections open at once.
const CONNECTIONS: usize = 200;
/// How long the server may take to release everything once the clients are gone.
const SETTLE_LIMIT: Duration = Duration::from_secs(20);

fn count_entries(path: &str) -> usize {
    std::fs::read_dir(path).unwrap().count()
}

fn descriptors() -> usize {
    count_entries("/proc/self/fd")
}

fn threads() -> usize {
    count_entries("/proc/self/task")
}

/// What a client does once all are connected.
#[derive(Clone, Copy, Debug)]
enum Role {
    /// Writes, reads, leaves a scanner open and disconnects.
    Polite,
    /// Sends half a call and disconnects.
    DropsWhileSending,
    /// Opens a scanner, asks for every row and disconnects without reading the reply.
    DropsWhileReceiving,
}

#[test]
fn two_hundred_connections_a_quarter_dropped_mid_call_leave_nothing_behind() {
    let server = TestServer::start();
    server
        .db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    let table = server.db.table("t").unwrap();
    let rows: Vec<strata::Put> = (0..2000)
        .map(|index| strata::Put::new(format!("row{index:05}")).add("f", "q", [b'v'; 100]))
        .collect();
    table.put_many(&rows).unwrap();
    // Let the server's own threads and descriptors settle before counting.
    let mut warm_up = server.client();
    let _: Vec<Vec<u8>> = ok(&mut warm_up, Call::GetTableNames(GetTableNamesArgs {}));
    drop(warm_up);
    let settled = |server: &TestServer| {
        let deadline = Instant::now() + SETTLE_LIMIT;
        while server.handle.stats().open_connections > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    settled(&server);
    std::thread::sleep(Duration::from_millis(100));
    let (descriptors_before, threads_before) = (descriptors(), threads());

    let connected = Arc::new(Barrier::new(CONNECTIONS + 1));
    let go = Arc::new(Barrier::new(CONNECTIONS + 1));
    let clients: Vec<_> = (0..CONNECTIONS)
        .map(|index| {
            let role = match index % 8 {
                0 => Role::DropsWhileSending,
                4 => Role::DropsWhileReceiving,
                _ => Role::Polite,
            };
            let mut client = server.client();
            let (connected, go) = (connected.clone(), go.clone());
            std::thread::spawn(move || {
                // Every connection makes one call first, so that all are being served.
                let _: Vec<Vec<u8>> = ok(&mut client, Call::GetTableNames(GetTableNamesArgs {}));
                connected.wait();
                go.wait();
                match role {
                    Role::Polite => {
                        let row = format!("client{index}");
                        let _: () = ok(
                            &mut client,
                            Call::MutateRow(MutateRowArgs {
                                table_name: bytes("t"),
                                row: bytes(&row),
                                mutations: Some(vec![Mutation {
                                    is_delete: Some(false),
                                    column: bytes("f:q"),
                                    value: bytes("v"),
                                    write_to_wal: Some(true),
                                }]),
                                attributes: None,
                            }),
                        );
                        let rows: Vec<TRowResult> = ok(
                            &mut client,
                            Call::GetRow(GetRowArgs {
                                table_name: bytes("t"),
                                row: bytes(&row),
                                attributes: None,
                            }),
                        );
                        assert_eq!(rows.len(), 1);
                        let _: i32 = ok(
                            &mut client,
                            Call::ScannerOpenWithScan(ScannerOpenWithScanArgs {
                                table_name: bytes("t"),
                                scan: Some(TScan::default()),
                                attributes: None,
                            }),
                        );
                    }
                    Role::DropsWhileSending => {
                        let message = encode_call(
                            Protocol::Binary,
                            &Call::GetRow(GetRowArgs {
                                table_name: bytes("t"),
                                row: bytes("row00001"),
                                attributes: None,
                            }),
                            99,
                        )
                        .unwrap();
                        client
                            .stream()
                            .write_all(&message[..message.len() / 2])
                            .unwrap();
                    }
                    Role::DropsWhileReceiving => {
                        let id: i32 = ok(
                            &mut client,
                            Call::ScannerOpenWithScan(ScannerOpenWithScanArgs {
                                table_name: bytes("t"),
                                scan: Some(TScan::default()),
                                attributes: None,
                            }),
                        );
                        client
                            .send(&Call::ScannerGetList(ScannerGetListArgs {
                                id: Some(id),
                                nb_rows: Some(2000),
                            }))
                            .unwrap();
                    }
                }
                drop(client);
            })
        })
        .collect();
    connected.wait();
    let stats = server.handle.stats();
    assert_eq!(stats.open_connections, CONNECTIONS, "{stats:?}");
    // One thread per connection while they are open.
    assert!(threads() >= threads_before + CONNECTIONS);
    go.wait();
    for client in clients {
        client.join().unwrap();
    }

    let deadline = Instant::now() + SETTLE_LIMIT;
    let released = loop {
        let stats = server.handle.stats();
        let (descriptors_now, threads_now) = (descriptors(), threads());
        if stats.open_connections == 0
            && stats.open_scanners == 0
            && descriptors_now == descriptors_before
            && threads_now == threads_before
        {
            break true;
        }
        if Instant::now() > deadline {
            eprintln!(
                "still held: {stats:?}, descriptors {descriptors_now} (before {descriptors_before}), \
                 threads {threads_now} (before {threads_before})"
            );
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(released, "the server kept something");
    let stats = server.handle.stats();
    assert_eq!(stats.connections_accepted as usize, CONNECTIONS + 1);
    // The server still serves.
    let mut after = server.client();
    let names: Vec<Vec<u8>> = ok(&mut after, Call::GetTableNames(GetTableNamesArgs {}));
    assert_eq!(names, [b"t".to_vec()]);
    drop(after);
    server.stop();
}
