//! Test helpers: in-memory tables, reference scans and compact result strings.
#![allow(
    dead_code,
    reason = "each test crate uses a different subset of the helpers"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers state expectations the way tests do"
)]

use std::ops::Bound;

use strata_filters::eval::OutputCell;
use strata_filters::reference::{scan_with_evaluator, scan_with_plan};
use strata_filters::{CellRef, Filter, Plan, ScanRange, parse};

/// An owned cell.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cell {
    pub row: Vec<u8>,
    pub family: Vec<u8>,
    pub qualifier: Vec<u8>,
    pub timestamp: i64,
    pub value: Vec<u8>,
}

impl Cell {
    pub fn as_ref(&self) -> CellRef<'_> {
        CellRef {
            row: &self.row,
            family: &self.family,
            qualifier: &self.qualifier,
            timestamp: self.timestamp,
            value: &self.value,
        }
    }
}

/// Rows of owned cells, each row in store order (family, qualifier ASC, timestamp DESC),
/// rows in key order.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// Builds a table from `(row, family, qualifier, timestamp, value)` tuples.
    pub fn new(cells: &[(&str, &str, &str, i64, &str)]) -> Table {
        Table::from_cells(
            cells
                .iter()
                .map(|(row, family, qualifier, timestamp, value)| Cell {
                    row: row.as_bytes().to_vec(),
                    family: family.as_bytes().to_vec(),
                    qualifier: qualifier.as_bytes().to_vec(),
                    timestamp: *timestamp,
                    value: value.as_bytes().to_vec(),
                })
                .collect(),
        )
    }

    /// Groups and sorts arbitrary cells (duplicate coordinates keep the first).
    pub fn from_cells(mut cells: Vec<Cell>) -> Table {
        cells.sort_by(|a, b| {
            (
                &a.row,
                &a.family,
                &a.qualifier,
                std::cmp::Reverse(a.timestamp),
            )
                .cmp(&(
                    &b.row,
                    &b.family,
                    &b.qualifier,
                    std::cmp::Reverse(b.timestamp),
                ))
        });
        cells.dedup_by(|a, b| {
            (&a.row, &a.family, &a.qualifier, a.timestamp)
                == (&b.row, &b.family, &b.qualifier, b.timestamp)
        });
        let mut rows: Vec<Vec<Cell>> = Vec::new();
        for cell in cells {
            match rows.last_mut() {
                Some(row) if row[0].row == cell.row => row.push(cell),
                _ => rows.push(vec![cell]),
            }
        }
        Table { rows }
    }

    /// Rows as borrowed cells, in scan order.
    pub fn refs(&self, reversed: bool) -> Vec<Vec<CellRef<'_>>> {
        let mut rows: Vec<Vec<CellRef<'_>>> = self
            .rows
            .iter()
            .map(|row| row.iter().map(Cell::as_ref).collect())
            .collect();
        if reversed {
            rows.reverse();
        }
        rows
    }
}

fn show_bytes(bytes: &[u8]) -> String {
    strata_filters::escape::to_string_binary(bytes)
}

/// `row f:q@ts=value ...`
pub fn show_row(row: &[u8], cells: &[OutputCell<'_>]) -> String {
    let mut text = show_bytes(row);
    for cell in cells {
        text.push_str(&format!(
            " {}:{}@{}={}",
            show_bytes(cell.family),
            show_bytes(cell.qualifier),
            cell.timestamp,
            show_bytes(&cell.value)
        ));
    }
    text
}

/// Runs a filter over a table with the reference evaluator, checks the planned scan agrees,
/// and returns the rows as strings.
pub fn run(
    filter: Option<&Filter>,
    table: &Table,
    scan: &ScanRange,
    max_versions: u32,
) -> Vec<String> {
    let rows = table.refs(scan.reversed);
    let reference = scan_with_evaluator(filter, &rows, scan, max_versions).expect("valid filter");
    let plan = Plan::compile(filter, scan).expect("plan compiles");
    let planned = scan_with_plan(&plan, filter, &rows, scan, max_versions).expect("valid filter");
    assert_eq!(
        planned, reference,
        "plan disagrees with the evaluator for {filter:?}\nplan: {plan:?}"
    );
    reference
        .iter()
        .map(|(row, cells)| show_row(row, cells))
        .collect()
}

/// Parses and runs a filter string over a forward scan of every row.
pub fn scan(filter: &str, table: &Table, max_versions: u32) -> Vec<String> {
    let filter = parse(filter).unwrap_or_else(|error| panic!("{error}"));
    run(Some(&filter), table, &ScanRange::all(), max_versions)
}

/// Same over a reversed scan.
pub fn scan_reversed(filter: &str, table: &Table, max_versions: u32) -> Vec<String> {
    let filter = parse(filter).unwrap_or_else(|error| panic!("{error}"));
    run(
        Some(&filter),
        table,
        &ScanRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
            reversed: true,
        },
        max_versions,
    )
}

/// Compares result lines with expected lines.
pub fn expect(actual: Vec<String>, expected: &[&str]) {
    let expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    assert_eq!(actual, expected);
}
