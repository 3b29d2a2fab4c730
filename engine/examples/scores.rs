//! Scenario 5 of SCENARIOS.md through the Rust API: the student-scores table
//! HBase users meet first, with multiple versions, time ranges and a delete
//! with a timestamp.
//!
//! Run: `cargo run --release --example scores [DIR]` (default: a temporary directory).

use strata::{Db, Delete, FamilyDescriptor, Get, Put, Result, RowResult, Scan, TableDescriptor};

/// Prints rows the way the HBase shell lays them out.
fn print_rows(rows: &[RowResult]) {
    println!("ROW                COLUMN+CELL");
    for row in rows {
        for cell in &row.cells {
            println!(
                " {:<17} column={}:{}, timestamp={}, value={}",
                String::from_utf8_lossy(&row.row),
                String::from_utf8_lossy(&cell.family),
                String::from_utf8_lossy(&cell.qualifier),
                cell.timestamp,
                String::from_utf8_lossy(&cell.value)
            );
        }
    }
    println!("{} row(s)\n", rows.len());
}

fn main() -> Result<()> {
    let temporary = tempfile::tempdir().map_err(|e| strata::Error::Io {
        context: "creating a temporary directory".into(),
        source: std::sync::Arc::new(e),
    })?;
    let dir = std::env::args().nth(1).map_or_else(
        || temporary.path().join("scores-db"),
        std::path::PathBuf::from,
    );
    let db = Db::open_default(&dir)?;
    if db.table_exists("scores") {
        db.drop_table("scores")?;
    }

    // create 'scores', 'grade', {NAME => 'course', VERSIONS => 3}
    let scores = db.create_table(
        TableDescriptor::new("scores")
            .family(FamilyDescriptor::new("grade"))
            .family(FamilyDescriptor::new("course").max_versions(3)),
    )?;
    println!("=> {:?}\n", db.list_tables());

    // put 'scores', 'Tom', 'grade:', '1' ...
    scores.put(&Put::new("Tom").add("grade", "", "1"))?;
    scores.put(&Put::new("Tom").add("course", "math", "87"))?;
    scores.put(&Put::new("Tom").add("course", "art", "97"))?;
    scores.put(&Put::new("Jerry").add("grade", "", "2"))?;
    scores.put(&Put::new("Jerry").add("course", "math", "100"))?;
    scores.put(&Put::new("Jerry").add("course", "art", "80"))?;

    println!("get 'scores', 'Tom'");
    print_rows(&[scores.get(&Get::new("Tom"))?]);

    println!("scan 'scores'");
    let all: Vec<RowResult> = scores.scan(&Scan::new())?.collect::<Result<_>>()?;
    print_rows(&all);

    println!("scan 'scores', {{COLUMNS => ['course:']}}");
    let courses: Vec<RowResult> = scores
        .scan(&Scan::new().family("course"))?
        .collect::<Result<_>>()?;
    print_rows(&courses);

    // Versions: Tom's math score is revised twice, at explicit timestamps.
    scores.put(&Put::new("Tom").add_at("course", "math", 1_000, "60"))?;
    scores.put(&Put::new("Tom").add_at("course", "math", 2_000, "75"))?;
    println!("get 'scores', 'Tom', {{COLUMN => 'course:math', VERSIONS => 3}}");
    print_rows(&[scores.get(&Get::new("Tom").column("course", "math").max_versions(3))?]);

    println!(
        "get 'scores', 'Tom', {{COLUMN => 'course:math', TIMERANGE => [0, 1500], VERSIONS => 3}}"
    );
    print_rows(&[scores.get(
        &Get::new("Tom")
            .column("course", "math")
            .time_range(0, 1_500)
            .max_versions(3),
    )?]);

    // A delete with a timestamp removes that version and everything older.
    println!("delete 'scores', 'Tom', 'course:math', 2000");
    scores.delete(&Delete::new("Tom").column_all_versions_up_to("course", "math", 2_000))?;
    print_rows(&[scores.get(&Get::new("Tom").column("course", "math").max_versions(3))?]);

    db.close()
}
