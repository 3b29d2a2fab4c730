//! Scenarios 1, 2 and 4 of SCENARIOS.md in SQL (`sql/examples/*.sql`), their answers
//! checked against the Rust versions in `engine/examples/`.

#[allow(dead_code)]
#[path = "../../../engine/examples/word_count.rs"]
mod word_count;

#[allow(dead_code)]
#[path = "../../../engine/examples/blog.rs"]
mod blog;

#[allow(dead_code)]
#[path = "../../../engine/examples/web_pages.rs"]
mod web_pages;

use std::collections::BTreeMap;

use crate::common::{Fixture, rows};

const WORD_COUNT: &str = include_str!("../../examples/word_count.sql");
const BLOG: &str = include_str!("../../examples/blog.sql");
const WEB_PAGES: &str = include_str!("../../examples/web_pages.sql");

fn script(f: &Fixture, text: &str) -> Vec<Vec<Vec<String>>> {
    f.runtime
        .block_on(f.sql.run_script(text))
        .unwrap()
        .iter()
        .map(|batches| rows(batches))
        .collect()
}

#[test]
fn scenario_1_word_count_in_sql_writes_back_the_rust_counts() {
    let f = Fixture::new(2);
    let text: Vec<String> = [
        "the cat sat",
        "news of the day",
        "the  cat\tran away",
        "day after day",
        "  the end ",
        "a tale of two cities",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect();
    word_count::load(&f.db, &text).unwrap();
    let expected = word_count::count_words(&f.db, "books").unwrap();
    let results = script(&f, WORD_COUNT);
    // The top-10 query: by count, then word.
    let mut top: Vec<(String, i64)> = expected.iter().map(|(w, n)| (w.clone(), *n)).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(10);
    let shown: Vec<(String, i64)> = results[3]
        .iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect();
    assert_eq!(shown, top);
    // Written back into two layouts, read back by the Rust example's own reader.
    assert_eq!(
        word_count::read_back(&f.db, "word_rows", "books").unwrap(),
        expected
    );
    assert_eq!(
        word_count::read_back(&f.db, "by_table_id", "books").unwrap(),
        expected
    );
    // And through SQL, by the key prefix.
    let read: BTreeMap<String, i64> = results[6]
        .iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect();
    assert_eq!(read, expected);
    let plan = f.explain("SELECT word, n FROM by_table_id WHERE table_id = 1");
    assert!(
        plan.contains("ranges=['\\x00\\x00\\x00\\x01', '\\x00\\x00\\x00\\x02')"),
        "{plan}"
    );
}

#[test]
fn scenario_2_blog_pages_in_sql_match_the_key_scans() {
    let f = Fixture::new(2);
    let tall = blog::Blog::open(&f.db).unwrap();
    let all: Vec<blog::Article> = (0..200).map(|i| blog::article(i, 7)).collect();
    for a in &all {
        tall.post(a).unwrap();
    }
    let user = 6;
    let results = script(&f, BLOG);
    let (page1, after) = tall.by_user(user, None, 4).unwrap();
    let (page2, _) = tall.by_user(user, after.as_deref(), 4).unwrap();
    let first: Vec<Vec<String>> = page1
        .iter()
        .map(|a| vec![a.id.to_string(), a.posted_at.to_string(), a.title.clone()])
        .collect();
    assert_eq!(results[2], first);
    let second: Vec<String> = page2.iter().map(|a| a.id.to_string()).collect();
    assert_eq!(
        results[3].iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
        second
    );
    let (in_category, _) = tall.by_category(user, 3, None, 1000).unwrap();
    assert!(!in_category.is_empty());
    assert_eq!(
        results[4],
        in_category
            .iter()
            .map(|a| vec![a.id.to_string(), a.category_name.clone()])
            .collect::<Vec<_>>()
    );
    // The three leading key parts make one short range, and the key order makes the sort
    // unnecessary.
    let plan = f.explain(
        "SELECT article_id FROM posts WHERE user_hash = strata_hash32(6) AND user_id = 6 \
         AND kind = 0 ORDER BY newest_first LIMIT 4",
    );
    assert!(
        plan.contains("ranges=[") && plan.contains("partitions=1"),
        "{plan}"
    );
    assert!(!plan.contains("SortExec: expr"), "{plan}");
}

#[test]
fn scenario_4_multi_condition_queries_in_sql() {
    let f = Fixture::new(2);
    let records = 20_000;
    web_pages::load(&f.db, records).unwrap();
    let mut all: Vec<[u32; 10]> = (0..records).map(web_pages::record).collect();
    all.sort_by_key(web_pages::key);
    all.dedup();
    let count = |predicate: &dyn Fn(&[u32; 10]) -> bool| {
        all.iter().filter(|r| predicate(r)).count().to_string()
    };
    let results = script(&f, WEB_PAGES);
    let expected = [
        count(&|r| r[0] == 42 && r[4] == 20150412),
        count(&|r| r[4] == 20150407 && r[3] == 404),
        count(&|r| r[0] == 42 && r[4] > 20150405 && r[4] < 20150420),
        count(&|r| r[2] == 1 && r[5] == 3 && r[6] == 1),
    ];
    for (i, expected) in expected.iter().enumerate() {
        assert_eq!(
            results[i + 1],
            vec![vec![expected.clone()]],
            "query {}",
            i + 1
        );
    }
    let mut by_code: BTreeMap<u32, usize> = BTreeMap::new();
    for r in all.iter().filter(|r| r[4] == 20150407) {
        *by_code.entry(r[3]).or_default() += 1;
    }
    let by_code: Vec<Vec<String>> = by_code
        .iter()
        .map(|(c, n)| vec![c.to_string(), n.to_string()])
        .collect();
    assert_eq!(results[5], by_code);
    // The rows themselves, not only their count.
    let got: Vec<Vec<String>> = f.rows(
        "SELECT md5url, sdate FROM pages WHERE md5url = 42 AND sdate > 20150405 AND sdate < 20150420 \
         ORDER BY md5url, site, status, code, sdate",
    );
    let want: Vec<Vec<String>> = all
        .iter()
        .filter(|r| r[0] == 42 && r[4] > 20150405 && r[4] < 20150420)
        .map(|r| vec![r[0].to_string(), r[4].to_string()])
        .collect();
    assert_eq!(got, want);
    let plan = f.explain("SELECT count(*) FROM pages WHERE sdate = 20150407 AND code = 404");
    assert!(
        plan.contains("RowMaskFilter(16") && plan.contains("RowMaskFilter(12"),
        "{plan}"
    );
}
