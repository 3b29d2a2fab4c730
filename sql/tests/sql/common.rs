//! What the SQL tests share: a fresh database with a SQL session, and results as rows of
//! text.
#![allow(dead_code)]

use strata::Db;
use strata_sql::SqlContext;
use strata_sql::datafusion::arrow::array::RecordBatch;
use strata_sql::datafusion::arrow::util::display::array_value_to_string;
use strata_sql::datafusion::prelude::SessionConfig;

/// A database in a temporary directory and a SQL session over it.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub db: Db,
    pub sql: SqlContext,
    pub runtime: tokio::runtime::Runtime,
}

impl Fixture {
    /// A fresh database; queries aim for `partitions` partitions.
    pub fn new(partitions: usize) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open_default(dir.path()).unwrap();
        let sql = SqlContext::with_config(
            db.clone(),
            SessionConfig::new().with_target_partitions(partitions),
        )
        .unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        Fixture {
            dir,
            db,
            sql,
            runtime,
        }
    }

    /// Runs a statement.
    pub fn run(&self, sql: &str) -> Result<Vec<RecordBatch>, String> {
        self.runtime
            .block_on(self.sql.run(sql))
            .map_err(|e| e.to_string())
    }

    /// Runs a query and returns its rows, each value as text (NULL as `NULL`).
    pub fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        let batches = self.run(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows(&batches)
    }

    /// The error of a statement that must fail.
    pub fn error(&self, sql: &str) -> String {
        match self.run(sql) {
            Ok(batches) => panic!("{sql} succeeded with {:?}", rows(&batches)),
            Err(e) => e,
        }
    }

    /// The plan EXPLAIN shows for a query, as one string.
    pub fn explain(&self, sql: &str) -> String {
        self.rows(&format!("EXPLAIN {sql}"))
            .into_iter()
            .map(|r| r.join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The rows of `batches`, each value as text.
pub fn rows(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for batch in batches {
        for row in 0..batch.num_rows() {
            out.push(
                batch
                    .columns()
                    .iter()
                    .map(|c| {
                        if c.is_null(row) {
                            "NULL".to_owned()
                        } else {
                            array_value_to_string(c, row).unwrap()
                        }
                    })
                    .collect(),
            );
        }
    }
    out
}

/// `rows` of string slices, for comparisons.
pub fn expect(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|v| (*v).to_owned()).collect())
        .collect()
}
