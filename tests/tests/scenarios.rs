// Compiled only as a test: the helpers below may unwrap freely.
#![cfg(test)]
//! The SCENARIOS.md examples, run at small sizes with their results checked.
//! Each example's functions are compiled in here straight from
//! `engine/examples/`, so the examples a user runs are the code under test.

#[path = "../../engine/examples/word_count.rs"]
mod word_count;

#[path = "../../engine/examples/blog.rs"]
mod blog;

#[path = "../../engine/examples/salted.rs"]
mod salted;

#[expect(
    dead_code,
    reason = "the tests query by record and key, not through the field names (FIELDS) that document \
              the key layout"
)]
#[path = "../../engine/examples/web_pages.rs"]
mod web_pages;

#[path = "../../engine/examples/row_keys.rs"]
mod row_keys;

use std::collections::BTreeMap;

use strata::Scan;
use strata::keys::Salter;
use strata_tests::TestDb;

fn counts(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(w, c)| (w.to_string(), *c)).collect()
}

fn lines(text: &[&str]) -> Vec<String> {
    text.iter().map(|l| l.to_string()).collect()
}

#[test]
fn scenario_1_word_count_four_layouts() {
    let mut t = TestDb::new(10_000);
    // Even lines go to `books`, odd lines to `news`.
    let text = lines(&[
        "the cat sat",
        "news of the day",
        "the  cat\tran away",
        "day after day",
    ]);
    word_count::load(&t.db, &text).unwrap();
    let books = word_count::count_words(&t.db, "books").unwrap();
    assert_eq!(
        books,
        counts(&[("the", 2), ("cat", 2), ("sat", 1), ("ran", 1), ("away", 1)])
    );
    let news = word_count::count_words(&t.db, "news").unwrap();
    assert_eq!(
        news,
        counts(&[("news", 1), ("of", 1), ("the", 1), ("day", 3), ("after", 1)])
    );

    word_count::write_counts(&t.db, "books", &books, 1_000).unwrap();
    word_count::write_counts(&t.db, "news", &news, 1_000).unwrap();
    for round in 0..2 {
        for layout in word_count::LAYOUTS {
            assert_eq!(
                word_count::read_back(&t.db, layout, "books").unwrap(),
                books,
                "{layout}"
            );
            assert_eq!(
                word_count::read_back(&t.db, layout, "news").unwrap(),
                news,
                "{layout}"
            );
        }
        if round == 0 {
            for layout in word_count::LAYOUTS {
                t.db.table(layout).unwrap().flush().unwrap();
            }
            t.reopen();
        }
    }

    // A new news job at 2000 and a clear stamped 1500 (taken before the job
    // started): whichever runs first, only the new counts remain.
    let new_news = counts(&[("day", 7), ("fresh", 1)]);
    word_count::write_counts(&t.db, "news", &new_news, 2_000).unwrap();
    word_count::clear(&t.db, "news", 1_500).unwrap();
    for layout in word_count::LAYOUTS {
        assert_eq!(
            word_count::read_back(&t.db, layout, "news").unwrap(),
            new_news,
            "{layout}"
        );
    }
    // The other order: clear first, then the job.
    word_count::clear(&t.db, "books", 1_500).unwrap();
    for layout in word_count::LAYOUTS {
        assert!(
            word_count::read_back(&t.db, layout, "books")
                .unwrap()
                .is_empty(),
            "{layout}"
        );
    }
    let new_books = counts(&[("cat", 9)]);
    word_count::write_counts(&t.db, "books", &new_books, 2_000).unwrap();
    for layout in word_count::LAYOUTS {
        assert_eq!(
            word_count::read_back(&t.db, layout, "books").unwrap(),
            new_books,
            "{layout}"
        );
    }
    // Clearing books left the news counts alone.
    assert_eq!(
        word_count::read_back(&t.db, "word_rows", "news").unwrap(),
        new_news
    );

    // Counting with atomic increments adds onto what is there.
    word_count::increment_counts(&t.db, "books", &counts(&[("cat", 1), ("dog", 2)])).unwrap();
    assert_eq!(
        word_count::read_back(&t.db, "word_rows", "books").unwrap(),
        counts(&[("cat", 10), ("dog", 2)])
    );
}

#[test]
fn scenario_2_blog_tall_and_flat() {
    let t = TestDb::new(10_000);
    let tall = blog::Blog::open(&t.db).unwrap();
    let flat = blog::FlatBlog::open(&t.db).unwrap();
    let users = 7;
    let all: Vec<blog::Article> = (0..200).map(|i| blog::article(i, users)).collect();
    for a in &all {
        tall.post(a).unwrap();
        flat.post(a).unwrap();
    }
    let user = all[10].user_id;
    let mut expected: Vec<&blog::Article> = all.iter().filter(|a| a.user_id == user).collect();
    expected.sort_by_key(|a| std::cmp::Reverse(a.posted_at));

    // Paging newest first: every page starts after the last row of the previous one.
    let mut seen = Vec::new();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let (page, next) = tall.by_user(user, after.as_deref(), 4).unwrap();
        assert!(page.len() <= 4);
        if page.is_empty() {
            break;
        }
        seen.extend(page);
        after = next;
    }
    assert_eq!(seen.iter().collect::<Vec<_>>(), expected);

    // One category, newest first, paged.
    let category = 3;
    let in_category: Vec<u64> = expected
        .iter()
        .filter(|a| a.category_id == category)
        .map(|a| a.id)
        .collect();
    let (first, after) = tall.by_category(user, category, None, 2).unwrap();
    let (rest, _) = tall
        .by_category(user, category, after.as_deref(), 100)
        .unwrap();
    let paged: Vec<u64> = first.iter().chain(&rest).map(|a| a.id).collect();
    assert_eq!(paged, in_category);
    assert_eq!(flat.by_category(user, category).unwrap(), in_category);

    // Update keeps keys; the new content is what reads return.
    let mut edited = expected[0].clone();
    edited.title = "Edited".into();
    edited.updated_at += 5;
    tall.update(&edited).unwrap();
    let (page, _) = tall.by_user(user, None, 1).unwrap();
    assert_eq!(page[0], edited);

    // Delete removes the main row and the index row (tall) and both columns
    // in one row mutation (flat).
    let victim = all
        .iter()
        .find(|a| a.user_id == user && a.category_id == category)
        .unwrap();
    tall.delete(victim).unwrap();
    flat.delete(victim).unwrap();
    let without: Vec<u64> = in_category
        .iter()
        .copied()
        .filter(|id| *id != victim.id)
        .collect();
    let (after_delete, _) = tall.by_category(user, category, None, 100).unwrap();
    assert_eq!(
        after_delete.iter().map(|a| a.id).collect::<Vec<_>>(),
        without
    );
    assert_eq!(flat.by_category(user, category).unwrap(), without);
    let (all_pages, _) = tall.by_user(user, None, 1000).unwrap();
    assert_eq!(all_pages.len(), expected.len() - 1);
}

#[test]
fn scenario_3_salted_pre_split() {
    let t = TestDb::new(10_000);
    let buckets = 16;
    let rows = 6_000;
    let salter = Salter::new(buckets);
    let table = salted::create(&t.db, buckets).unwrap();
    salted::load(&table, &salter, rows).unwrap();
    table.flush().unwrap();

    // One region per salt bucket, and the load spread over all of them.
    let regions = table.regions().unwrap();
    assert_eq!(regions.len(), buckets as usize);
    let per_region: Vec<u64> = regions
        .iter()
        .map(|r| {
            table
                .count(&Scan::new().start(&r.start_key).stop(&r.end_key))
                .unwrap()
        })
        .collect();
    let expected_each = rows / u64::from(buckets);
    for n in &per_region {
        assert!(
            *n > expected_each / 2 && *n < expected_each * 2,
            "uneven spread {per_region:?}"
        );
    }

    // A logical one-day range is one sub-range per bucket, read in parallel,
    // and returns exactly the logical keys of that day.
    let expected: Vec<String> = (0..rows)
        .map(|i| salted::logical_key(i, rows))
        .filter(|k| k.as_str() >= "2015-04-26" && k.as_str() < "2015-04-27")
        .collect();
    assert!(!expected.is_empty());
    let found = salted::read_range(&table, &salter, "2015-04-26", "2015-04-27", 4).unwrap();
    assert_eq!(found, expected);
}

/// Scenario 3 loaded by bulk load: the same rows as by puts, one file per
/// bucket's region and none split, every region within 10% of the mean, and
/// a logical day read in one call, in logical order, before and after the
/// table doubles.
#[test]
fn scenario_3_salted_bulk_load() {
    let t = TestDb::new(10_000);
    let buckets = 16;
    let rows = 32_000;
    let salter = Salter::new(buckets);
    let table = salted::create(&t.db, buckets).unwrap();
    let (files, report) =
        salted::bulk_load(&table, &salter, rows, 0, &t.dir.path().join("load")).unwrap();
    assert_eq!(files.files.len(), buckets as usize, "one file per region");
    assert_eq!(report.files_split, 0, "boundaries did not move");
    assert_eq!(report.regions, buckets as usize);
    assert_eq!(files.cells, rows);
    let (min, max, mean) = salted::spread(&table).unwrap();
    assert!(
        (min as f64) >= mean * 0.9 && (max as f64) <= mean * 1.1,
        "min {min}, max {max}, mean {mean}"
    );
    let expected: Vec<String> = (0..rows)
        .map(|i| salted::logical_key(i, rows))
        .filter(|k| k.as_str() >= "2015-04-26" && k.as_str() < "2015-04-27")
        .collect();
    assert!(!expected.is_empty());
    let found = salted::read_range(&table, &salter, "2015-04-26", "2015-04-27", 2).unwrap();
    assert_eq!(found, expected);
    // The same rows by puts read the same.
    let puts = salted::create_named(&t.db, "events_puts", buckets).unwrap();
    salted::load(&puts, &salter, rows).unwrap();
    assert_eq!(
        salted::read_range(&puts, &salter, "2015-04-26", "2015-04-27", 2).unwrap(),
        expected
    );
    // Thirty more days: the day reads the same rows.
    salted::bulk_load(
        &table,
        &salter,
        rows,
        salted::DAYS,
        &t.dir.path().join("load-2"),
    )
    .unwrap();
    assert_eq!(table.count(&Scan::new()).unwrap(), 2 * rows);
    assert_eq!(
        salted::read_range(&table, &salter, "2015-04-26", "2015-04-27", 2).unwrap(),
        expected
    );
    assert!(
        !salted::read_range(&table, &salter, "2015-06-01", "2015-06-02", 2)
            .unwrap()
            .is_empty(),
        "the added days are there"
    );
}

/// A predicate over a record's fields.
type FieldPredicate = Box<dyn Fn(&[u32; 10]) -> bool>;

#[test]
fn scenario_4_multi_condition_queries() {
    let t = TestDb::new(10_000);
    let records = 20_000;
    let table = web_pages::load(&t.db, records).unwrap();
    let all: Vec<[u32; 10]> = (0..records).map(web_pages::record).collect();
    let predicates: Vec<FieldPredicate> = vec![
        Box::new(|f| f[0] == 42 && f[4] == 20150412),
        Box::new(|f| f[4] == 20150407 && f[3] == 404),
        Box::new(|f| f[0] == 42 && f[4] > 20150405 && f[4] < 20150420),
        Box::new(|f| f[2] == 1 && f[5] == 3 && f[6] == 1),
    ];
    for ((name, filter), predicate) in web_pages::queries().into_iter().zip(predicates) {
        let mut expected: Vec<[u32; 10]> = all.iter().copied().filter(|f| predicate(f)).collect();
        expected.sort_by_key(web_pages::key);
        expected.dedup();
        // The queries over every key must find something at this size.
        assert!(name.starts_with("md5url") || !expected.is_empty(), "{name}");
        for vectorized in [true, false] {
            let scan = Scan::new()
                .filter_string(&filter)
                .unwrap()
                .vectorized(vectorized);
            let got: Vec<[u32; 10]> = table
                .scan(&scan)
                .unwrap()
                .map(|r| web_pages::fields(&r.unwrap().row).unwrap())
                .collect();
            assert_eq!(got, expected, "{name} (vectorized {vectorized})");
        }
    }
}

#[test]
fn scenario_6_row_key_helpers() {
    let t = TestDb::new(10_000);
    let table = row_keys::create(&t.db).unwrap();
    let start = 1_700_000_000_000;
    row_keys::load(&table, 20, 50, start).unwrap();
    table.flush().unwrap();

    // Newest first, through the reversed timestamp, for exactly one sensor.
    let latest = row_keys::latest(&table, 7, 3).unwrap();
    assert_eq!(
        latest,
        vec![
            (start + 49_000, 24),
            (start + 48_000, 23),
            (start + 47_000, 22)
        ]
    );
    let key = row_keys::reading_key(7, start + 5_000);
    assert_eq!(row_keys::parse_reading_key(&key), Some((7, start + 5_000)));
    assert_eq!(row_keys::parse_reading_key(&key[..key.len() - 1]), None);
    assert!(key.starts_with(&row_keys::sensor_prefix(7)));
    assert_eq!(row_keys::latest(&table, 7, 1000).unwrap().len(), 50);
    assert!(row_keys::latest(&table, 99, 10).unwrap().is_empty());

    // Signed values sort by bytes in numeric order.
    let mut values = [-5i64, 3, -1, 0, i64::MIN, i64::MAX];
    let mut encoded: Vec<[u8; 8]> = values.map(strata::keys::encode_i64).to_vec();
    encoded.sort();
    values.sort();
    assert_eq!(
        encoded
            .into_iter()
            .map(strata::keys::decode_i64)
            .collect::<Vec<_>>(),
        values
    );
}

/// Salted keys that sort with the logical key inside each bucket.
#[test]
fn salted_keys_round_trip() {
    let salter = Salter::new(1000);
    let key = salter.salt(b"2015-04-26|0000000001");
    assert_eq!(&key[3..4], b"|");
    assert_eq!(salter.unsalt(&key), Some(&b"2015-04-26|0000000001"[..]));
    assert_eq!(salter.split_keys().len(), 999);
}
