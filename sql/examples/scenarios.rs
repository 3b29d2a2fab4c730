//! Scenarios 1, 2 and 4 of SCENARIOS.md in SQL: the data loaded by the engine's examples
//! (`engine/examples/word_count.rs`, `blog.rs`, `web_pages.rs`), then the scripts
//! `word_count.sql`, `blog.sql` and `web_pages.sql` of this directory run through strata-sql,
//! each statement's result printed. `sql/tests/sql/scenarios.rs` checks their answers against
//! the Rust versions.
//!
//! Run: `cargo run --release -p strata-sql --example scenarios [RECORDS]` (web-page records,
//! default 1,000,000).

#[allow(dead_code)]
#[path = "../../engine/examples/word_count.rs"]
mod word_count;

#[allow(dead_code)]
#[path = "../../engine/examples/blog.rs"]
mod blog;

#[allow(dead_code)]
#[path = "../../engine/examples/web_pages.rs"]
mod web_pages;

use std::error::Error;
use std::path::Path;

use strata::Db;
use strata_sql::SqlContext;
use strata_sql::datafusion::arrow::util::pretty::pretty_format_batches;

/// The scripts, by name.
pub const SCRIPTS: [(&str, &str); 3] = [
    ("word_count.sql", include_str!("word_count.sql")),
    ("blog.sql", include_str!("blog.sql")),
    ("web_pages.sql", include_str!("web_pages.sql")),
];

fn main() -> Result<(), Box<dyn Error>> {
    let records = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir()?;
    let db = Db::open_default(dir.path())?;
    let text = word_count::text_lines(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap_or(Path::new(".")),
    );
    word_count::load(&db, &text)?;
    let articles = blog::Blog::open(&db)?;
    for i in 0..200 {
        articles.post(&blog::article(i, 7))?;
    }
    web_pages::load(&db, records)?;
    let sql = SqlContext::new(db.clone())?;
    let runtime = tokio::runtime::Runtime::new()?;
    for (name, script) in SCRIPTS {
        println!("== {name}");
        let started = std::time::Instant::now();
        for result in runtime.block_on(sql.run_script(script))? {
            if result.iter().any(|b| b.num_columns() > 0) {
                println!("{}", pretty_format_batches(&result)?);
            }
        }
        println!("({:.2?})", started.elapsed());
    }
    db.close()?;
    Ok(())
}
