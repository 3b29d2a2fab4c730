//! Scenario 2 of SCENARIOS.md: a blog service.
//!
//! Tall layout, table `articles`, family `d`, the whole serialized article
//! in `d:` under two row keys:
//!
//! * main row: `hash(userId) userId 0 (i64::MAX - postedAt) articleId`
//! * category index: `hash(userId) userId 1 categoryId (i64::MAX - postedAt) articleId`
//!
//! so a prefix scan lists a user's articles (or one category of them) newest
//! first, and the next page starts right after the last key of the previous
//! one. An article's main row and index row are written (and deleted)
//! together by one multi-row mutation (`Table::mutate_rows`, HBase's
//! `MultiRowMutationEndpoint`): a reader never finds an index row without
//! its article, even after a crash. Both rows start with the user's prefix,
//! so they sit in one region unless a split falls inside one user's rows;
//! that call is then refused whole (`Error::RowsSpanRegions`), as HBase
//! refuses it without a prefix-keeping split policy. Flat-wide layout, table `users`: one row per user, the article in
//! family `d` (qualifier = articleId) and its index entry in family `s`
//! (qualifier = category + reversed time + articleId), so posting, updating
//! or deleting an article with its index entry is one atomic row mutation.
//!
//! Run: `cargo run --release --example blog [USERS] [ARTICLES]` (default 10000 and 200000).

use strata::keys::{KeyBuilder, KeyParser, stable_hash};
use strata::{
    Db, Delete, Durability, FamilyDescriptor, Mutation, Put, Result, RowMutations, Scan, Table,
    TableDescriptor,
};

/// An article.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    pub id: u64,
    pub user_id: u64,
    pub user_name: String,
    pub title: String,
    pub content: String,
    pub category_id: u32,
    pub category_name: String,
    pub posted_at: i64,
    pub updated_at: i64,
}

const SEPARATOR: char = '\u{1f}';

impl Article {
    /// Fields joined by the unit separator (a stand-in for a real codec).
    pub fn encode(&self) -> Vec<u8> {
        [
            self.id.to_string(),
            self.user_id.to_string(),
            self.user_name.clone(),
            self.title.clone(),
            self.content.clone(),
            self.category_id.to_string(),
            self.category_name.clone(),
            self.posted_at.to_string(),
            self.updated_at.to_string(),
        ]
        .join(&SEPARATOR.to_string())
        .into_bytes()
    }

    /// Inverse of [`Article::encode`].
    pub fn decode(bytes: &[u8]) -> Option<Article> {
        let text = std::str::from_utf8(bytes).ok()?;
        let f: Vec<&str> = text.split(SEPARATOR).collect();
        let [
            id,
            user_id,
            user_name,
            title,
            content,
            category_id,
            category_name,
            posted_at,
            updated_at,
        ] = f.as_slice()
        else {
            return None;
        };
        Some(Article {
            id: id.parse().ok()?,
            user_id: user_id.parse().ok()?,
            user_name: (*user_name).to_owned(),
            title: (*title).to_owned(),
            content: (*content).to_owned(),
            category_id: category_id.parse().ok()?,
            category_name: (*category_name).to_owned(),
            posted_at: posted_at.parse().ok()?,
            updated_at: updated_at.parse().ok()?,
        })
    }
}

fn user_prefix(user_id: u64) -> KeyBuilder {
    KeyBuilder::new()
        .u32((stable_hash(&user_id.to_be_bytes()) >> 32) as u32)
        .u64(user_id)
}

/// Main row key.
pub fn main_key(a: &Article) -> Vec<u8> {
    user_prefix(a.user_id)
        .separator(0)
        .reversed_timestamp(a.posted_at)
        .u64(a.id)
        .build()
}

/// Category index row key.
pub fn category_key(a: &Article) -> Vec<u8> {
    user_prefix(a.user_id)
        .separator(1)
        .u32(a.category_id)
        .reversed_timestamp(a.posted_at)
        .u64(a.id)
        .build()
}

/// The tall table.
pub struct Blog {
    table: Table,
}

impl Blog {
    /// Creates (or reopens) the `articles` table.
    pub fn open(db: &Db) -> Result<Blog> {
        let table = match db.table("articles") {
            Ok(t) => t,
            Err(_) => db.create_table(
                TableDescriptor::new("articles")
                    .family(FamilyDescriptor::new("d"))
                    .durability(Durability::AsyncWal),
            )?,
        };
        Ok(Blog { table })
    }

    /// Writes an article's main row and index row, atomically.
    pub fn post(&self, a: &Article) -> Result<()> {
        self.table.mutate_rows(&[
            Mutation::Put(Put::new(main_key(a)).add("d", "", a.encode())),
            Mutation::Put(Put::new(category_key(a)).add("d", "", a.encode())),
        ])
    }

    /// Replaces an article (its keys are unchanged: posted-at and category stay).
    pub fn update(&self, a: &Article) -> Result<()> {
        self.post(a)
    }

    /// Deletes an article and its index row, atomically.
    pub fn delete(&self, a: &Article) -> Result<()> {
        self.table.mutate_rows(&[
            Mutation::Delete(Delete::new(main_key(a))),
            Mutation::Delete(Delete::new(category_key(a))),
        ])
    }

    fn page(
        &self,
        prefix: Vec<u8>,
        after: Option<&[u8]>,
        size: u64,
    ) -> Result<(Vec<Article>, Option<Vec<u8>>)> {
        let mut scan = Scan::new().prefix(&prefix).limit(size);
        if let Some(after) = after {
            scan = scan.start_with(after, false);
        }
        let mut articles = Vec::new();
        let mut last = None;
        for row in self.table.scan(&scan)? {
            let row = row?;
            if let Some(a) = row.value("d", "").and_then(Article::decode) {
                articles.push(a);
            }
            last = Some(row.row);
        }
        Ok((articles, last))
    }

    /// One page of a user's articles, newest first; pass the returned key as
    /// `after` to get the next page.
    pub fn by_user(
        &self,
        user_id: u64,
        after: Option<&[u8]>,
        size: u64,
    ) -> Result<(Vec<Article>, Option<Vec<u8>>)> {
        self.page(user_prefix(user_id).separator(0).build(), after, size)
    }

    /// One page of a user's articles in one category, newest first.
    pub fn by_category(
        &self,
        user_id: u64,
        category_id: u32,
        after: Option<&[u8]>,
        size: u64,
    ) -> Result<(Vec<Article>, Option<Vec<u8>>)> {
        self.page(
            user_prefix(user_id).separator(1).u32(category_id).build(),
            after,
            size,
        )
    }
}

/// The flat-wide table: one row per user.
pub struct FlatBlog {
    table: Table,
}

fn index_qualifier(a: &Article) -> Vec<u8> {
    KeyBuilder::new()
        .u32(a.category_id)
        .reversed_timestamp(a.posted_at)
        .u64(a.id)
        .build()
}

impl FlatBlog {
    /// Creates (or reopens) the `users` table.
    pub fn open(db: &Db) -> Result<FlatBlog> {
        let table = match db.table("users") {
            Ok(t) => t,
            Err(_) => db.create_table(
                TableDescriptor::new("users")
                    .family(FamilyDescriptor::new("d"))
                    .family(FamilyDescriptor::new("s"))
                    .durability(Durability::AsyncWal),
            )?,
        };
        Ok(FlatBlog { table })
    }

    fn row(user_id: u64) -> Vec<u8> {
        user_prefix(user_id).build()
    }

    /// Posts or updates an article and its index entry in one atomic row mutation.
    pub fn post(&self, a: &Article) -> Result<()> {
        self.table.mutate_row(
            &RowMutations::new(Self::row(a.user_id)).put(
                Put::new(Self::row(a.user_id))
                    .add("d", a.id.to_be_bytes(), a.encode())
                    .add("s", index_qualifier(a), a.id.to_be_bytes()),
            ),
        )
    }

    /// Deletes an article and its index entry in one atomic row mutation.
    pub fn delete(&self, a: &Article) -> Result<()> {
        self.table.mutate_row(
            &RowMutations::new(Self::row(a.user_id)).delete(
                Delete::new(Self::row(a.user_id))
                    .column_all_versions("d", a.id.to_be_bytes())
                    .column_all_versions("s", index_qualifier(a)),
            ),
        )
    }

    /// A user's articles in one category, newest first (from the index columns).
    pub fn by_category(&self, user_id: u64, category_id: u32) -> Result<Vec<u64>> {
        let row = self
            .table
            .get(&strata::Get::new(Self::row(user_id)).family("s"))?;
        let mut ids = Vec::new();
        for cell in &row.cells {
            let mut p = KeyParser::new(&cell.qualifier);
            if p.u32() == Some(category_id)
                && let Some(id) = cell
                    .value
                    .as_slice()
                    .try_into()
                    .ok()
                    .map(u64::from_be_bytes)
            {
                ids.push(id);
            }
        }
        Ok(ids)
    }
}

/// A deterministic article `i` of `users` users.
pub fn article(i: u64, users: u64) -> Article {
    let user_id = i * 7919 % users;
    let category_id = (i % 5) as u32;
    Article {
        id: i,
        user_id,
        user_name: format!("user{user_id}"),
        title: format!("Title {i}"),
        content: format!("Content of article {i}. ").repeat(3),
        category_id,
        category_name: ["rust", "storage", "hbase", "io", "misc"][category_id as usize].to_owned(),
        posted_at: 1_700_000_000_000 + i as i64 * 1000,
        updated_at: 1_700_000_000_000 + i as i64 * 1000,
    }
}

#[cfg_attr(
    test,
    expect(
        dead_code,
        reason = "tests/tests/scenarios.rs compiles this file as a module and runs its functions, not main"
    )
)]
fn main() -> Result<()> {
    let arg = |n: usize, default: u64| {
        std::env::args()
            .nth(n)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (users, articles) = (arg(1, 10_000), arg(2, 200_000));
    let dir = tempfile::tempdir().map_err(|e| strata::Error::Io {
        context: "creating a temporary directory".into(),
        source: std::sync::Arc::new(e),
    })?;
    let db = Db::open_default(dir.path())?;
    let (blog, flat) = (Blog::open(&db)?, FlatBlog::open(&db)?);
    let started = std::time::Instant::now();
    for i in 0..articles {
        let a = article(i, users);
        blog.post(&a)?;
        flat.post(&a)?;
    }
    println!(
        "posted {articles} articles of {users} users in {:.2?} (both layouts)",
        started.elapsed()
    );
    let user = article(123, users).user_id;
    let (first, after) = blog.by_user(user, None, 5)?;
    let (second, _) = blog.by_user(user, after.as_deref(), 5)?;
    println!(
        "user {user}, newest first: page 1 {:?}, page 2 {:?}",
        first.iter().map(|a| a.id).collect::<Vec<_>>(),
        second.iter().map(|a| a.id).collect::<Vec<_>>()
    );
    let (in_category, _) = blog.by_category(user, 3, None, 5)?;
    println!(
        "user {user}, category 3: {:?}",
        in_category.iter().map(|a| a.id).collect::<Vec<_>>()
    );
    if let Some(a) = first.first() {
        blog.delete(a)?;
        flat.delete(a)?;
        println!(
            "deleted article {}; flat index now lists {:?}",
            a.id,
            flat.by_category(user, a.category_id)?
        );
    }
    db.close()
}
