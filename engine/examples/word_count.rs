//! Scenario 1 of SCENARIOS.md: word counts of input tables written into the
//! four row layouts HBase users build, read back, and cleared.
//!
//! Run: `cargo run --release --example word_count [TEXT_DIR]`. The input is
//! every `.md` and `.rs` file under TEXT_DIR (default: this repository,
//! a few MB of real text), loaded into two input tables, one line per cell.
//!
//! | layout | row key | column | value |
//! |---|---|---|---|
//! | by table id | 4-byte big-endian table id + word | `CNT:` | count |
//! | by table name | table name + `' '` + word | `CNT:` | count |
//! | word rows | word | `CNT:<table name>` | count |
//! | table rows | table name | `CNT:<word>` | count |

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use strata::{
    Db, Delete, Durability, FamilyDescriptor, Get, Increment, Put, Result, Scan, Table,
    TableDescriptor,
};

/// The input tables and their ids in the "by table id" layout.
pub const INPUTS: [(&str, u32); 2] = [("books", 1), ("news", 2)];

/// The four output layouts.
pub const LAYOUTS: [&str; 4] = ["by_table_id", "by_table_name", "word_rows", "table_rows"];

fn table(db: &Db, name: &str, family: &str) -> Result<Table> {
    if db.table_exists(name) {
        db.drop_table(name)?;
    }
    db.create_table(
        TableDescriptor::new(name)
            .family(FamilyDescriptor::new(family))
            .durability(Durability::AsyncWal),
    )
}

/// Creates the input and output tables and loads `lines` into the inputs:
/// even lines into `books`, odd lines into `news`, one cell per line.
pub fn load(db: &Db, lines: &[String]) -> Result<()> {
    for (name, _) in INPUTS {
        table(db, name, "t")?;
    }
    for layout in LAYOUTS {
        table(db, layout, "CNT")?;
    }
    let inputs: Vec<Table> = INPUTS
        .iter()
        .map(|(name, _)| db.table(name))
        .collect::<Result<_>>()?;
    let mut puts: Vec<Vec<Put>> = vec![Vec::new(); inputs.len()];
    for (i, line) in lines.iter().enumerate() {
        // Arbitrary cells: ten lines per row, one qualifier per line.
        let row = format!("doc{:06}", i / 10);
        let target = i % inputs.len();
        puts[target].push(Put::new(row).add("t", format!("line{}", i % 10), line));
    }
    for (table, puts) in inputs.iter().zip(puts) {
        for chunk in puts.chunks(1000) {
            table.put_many(chunk)?;
        }
    }
    Ok(())
}

/// Counts the words (split on white space) of every cell of an input table.
pub fn count_words(db: &Db, input: &str) -> Result<BTreeMap<String, i64>> {
    let mut counts = BTreeMap::new();
    // The borrowing cursor: each row is lent, not copied.
    let mut cursor = db.table(input)?.scan_cursor(&Scan::new())?;
    while let Some(row) = cursor.next_row()? {
        for cell in row.cells() {
            for word in String::from_utf8_lossy(cell.value()).split_whitespace() {
                *counts.entry(word.to_owned()).or_insert(0) += 1;
            }
        }
    }
    Ok(counts)
}

fn by_table_id_key(table_id: u32, word: &str) -> Vec<u8> {
    let mut key = table_id.to_be_bytes().to_vec();
    key.extend_from_slice(word.as_bytes());
    key
}

/// Writes one input table's counts into all four layouts at `timestamp`.
pub fn write_counts(
    db: &Db,
    input: &str,
    counts: &BTreeMap<String, i64>,
    timestamp: i64,
) -> Result<()> {
    let table_id = INPUTS
        .iter()
        .find(|(n, _)| *n == input)
        .map_or(0, |(_, id)| *id);
    let [by_id, by_name, word_rows, table_rows] = LAYOUTS.map(|l| db.table(l));
    let (by_id, by_name, word_rows, table_rows) = (by_id?, by_name?, word_rows?, table_rows?);
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c = Vec::new();
    let mut d = Put::new(input).timestamp(timestamp);
    for (word, count) in counts {
        let value = count.to_be_bytes();
        a.push(Put::new(by_table_id_key(table_id, word)).add_at("CNT", "", timestamp, value));
        b.push(Put::new(format!("{input} {word}")).add_at("CNT", "", timestamp, value));
        c.push(Put::new(word).add_at("CNT", input, timestamp, value));
        d = d.add("CNT", word, value);
    }
    for (table, puts) in [(&by_id, a), (&by_name, b), (&word_rows, c)] {
        for chunk in puts.chunks(1000) {
            table.put_many(chunk)?;
        }
    }
    if !d.is_empty() {
        table_rows.put(&d)?;
    }
    Ok(())
}

/// The same counts, through atomic increments (as concurrent counting jobs would).
pub fn increment_counts(db: &Db, input: &str, counts: &BTreeMap<String, i64>) -> Result<()> {
    let word_rows = db.table("word_rows")?;
    for (word, count) in counts {
        word_rows.increment(&Increment::new(word).add("CNT", input, *count))?;
    }
    Ok(())
}

fn counter(value: &[u8]) -> i64 {
    value.try_into().map(i64::from_be_bytes).unwrap_or(0)
}

/// The words of `input` with their counts, read from `layout`.
pub fn read_back(db: &Db, layout: &str, input: &str) -> Result<BTreeMap<String, i64>> {
    let table_id = INPUTS
        .iter()
        .find(|(n, _)| *n == input)
        .map_or(0, |(_, id)| *id);
    let table = db.table(layout)?;
    let mut words = BTreeMap::new();
    match layout {
        "by_table_id" => {
            for row in table.scan(&Scan::new().prefix(table_id.to_be_bytes()))? {
                let row = row?;
                let word =
                    String::from_utf8_lossy(row.row.get(4..).unwrap_or_default()).into_owned();
                words.insert(word, row.value("CNT", "").map_or(0, counter));
            }
        }
        "by_table_name" => {
            let prefix = format!("{input} ");
            for row in table.scan(&Scan::new().prefix(&prefix))? {
                let row = row?;
                let word = String::from_utf8_lossy(row.row.get(prefix.len()..).unwrap_or_default())
                    .into_owned();
                words.insert(word, row.value("CNT", "").map_or(0, counter));
            }
        }
        "word_rows" => {
            for row in table.scan(&Scan::new().column("CNT", input))? {
                let row = row?;
                words.insert(
                    String::from_utf8_lossy(&row.row).into_owned(),
                    row.value("CNT", input).map_or(0, counter),
                );
            }
        }
        _ => {
            for cell in table.get(&Get::new(input))?.cells {
                words.insert(
                    String::from_utf8_lossy(&cell.qualifier).into_owned(),
                    counter(&cell.value),
                );
            }
        }
    }
    Ok(words)
}

/// Clears one input table's counts from every layout inside the engine,
/// with markers at `timestamp`: by prefix (`delete_where`), by column
/// (`delete_where` on the column), by row (one delete).
pub fn clear(db: &Db, input: &str, timestamp: i64) -> Result<()> {
    let table_id = INPUTS
        .iter()
        .find(|(n, _)| *n == input)
        .map_or(0, |(_, id)| *id);
    db.table("by_table_id")?
        .delete_where(&Scan::new().prefix(table_id.to_be_bytes()), Some(timestamp))?;
    db.table("by_table_name")?
        .delete_where(&Scan::new().prefix(format!("{input} ")), Some(timestamp))?;
    db.table("word_rows")?
        .delete_where(&Scan::new().column("CNT", input), Some(timestamp))?;
    db.table("table_rows")?
        .delete(&Delete::new(input).family_up_to("CNT", timestamp))?;
    Ok(())
}

/// Every line of the `.md` and `.rs` files under `dir`.
pub fn text_lines(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() && !name.starts_with('.') && name != "target" {
                pending.push(path);
            } else if name.ends_with(".md") || name.ends_with(".rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| text.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

#[cfg_attr(
    test,
    expect(
        dead_code,
        reason = "tests/tests/scenarios.rs compiles this file as a module and runs its functions, not main"
    )
)]
fn main() -> Result<()> {
    let text_dir = std::env::args().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
        PathBuf::from,
    );
    let lines = text_lines(&text_dir);
    let bytes: usize = lines.iter().map(String::len).sum();
    let dir = tempfile::tempdir().map_err(|e| strata::Error::Io {
        context: "creating a temporary directory".into(),
        source: std::sync::Arc::new(e),
    })?;
    let db = Db::open_default(dir.path())?;
    load(&db, &lines)?;
    println!(
        "loaded {} lines ({:.1} MB) into {:?}",
        lines.len(),
        bytes as f64 / 1e6,
        INPUTS.map(|(n, _)| n)
    );
    let job_started = 1_000;
    for (input, _) in INPUTS {
        let started = std::time::Instant::now();
        let counts = count_words(&db, input)?;
        write_counts(&db, input, &counts, job_started)?;
        let top = counts
            .iter()
            .max_by_key(|(_, c)| **c)
            .map(|(w, c)| format!("{w:?} x{c}"))
            .unwrap_or_default();
        println!(
            "{input}: {} distinct words, most frequent {top}, counted in {:.2?}",
            counts.len(),
            started.elapsed()
        );
        for layout in LAYOUTS {
            let read = read_back(&db, layout, input)?;
            println!(
                "  {layout:<14} reads back {} words{}",
                read.len(),
                if read == counts { "" } else { " (MISMATCH)" }
            );
        }
    }
    // A clear with a timestamp taken before a new count job: whichever
    // runs first, only the new counts remain.
    let clear_at = 1_500;
    let new_job = 2_000;
    let news = count_words(&db, "news")?;
    write_counts(&db, "news", &news, new_job)?;
    clear(&db, "news", clear_at)?;
    println!(
        "news after a clear that ran after the new job: {} words",
        read_back(&db, "word_rows", "news")?.len()
    );
    clear(&db, "books", clear_at)?;
    println!(
        "books after a clear: {} words in every layout",
        read_back(&db, "by_table_id", "books")?.len()
    );
    increment_counts(&db, "books", &count_words(&db, "books")?)?;
    println!(
        "books counted again with increments: {} words",
        read_back(&db, "word_rows", "books")?.len()
    );
    db.close()
}
