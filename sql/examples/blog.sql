-- Scenario 2 of SCENARIOS.md in SQL: a blog's articles, loaded by `engine/examples/blog.rs`
-- into one table `articles` under two composite keys:
--   hash(user) | user | 0 | newest-first time | article            (the main rows)
--   hash(user) | user | 1 | category | newest-first time | article (the category index)
-- Each holds the whole article in d: (fields joined by the unit separator, chr(31)).

CREATE EXTERNAL TABLE posts (
    user_hash INT UNSIGNED NOT NULL, user_id BIGINT UNSIGNED NOT NULL, kind TINYINT UNSIGNED NOT NULL,
    newest_first BIGINT NOT NULL, article_id BIGINT UNSIGNED NOT NULL, article VARCHAR NOT NULL)
  STORED AS STRATA LOCATION 'articles'
  OPTIONS ('mapping' ':key#b,:key#b,:key#b,:key#o,:key#b,d:');
CREATE EXTERNAL TABLE posts_by_category (
    user_hash INT UNSIGNED NOT NULL, user_id BIGINT UNSIGNED NOT NULL, kind TINYINT UNSIGNED NOT NULL,
    category_id INT UNSIGNED NOT NULL, newest_first BIGINT NOT NULL, article_id BIGINT UNSIGNED NOT NULL,
    article VARCHAR NOT NULL)
  STORED AS STRATA LOCATION 'articles'
  OPTIONS ('mapping' ':key#b,:key#b,:key#b,:key#b,:key#o,:key#b,d:');

-- User 6's articles, newest first, four per page. strata_hash32(6) is the key's hash
-- prefix, so the three leading key parts are fixed: one short range scan, and the rows come
-- in key order (no sort).
SELECT article_id, 9223372036854775807 - newest_first AS posted_at, split_part(article, chr(31), 4) AS title
FROM posts
WHERE user_hash = strata_hash32(6) AND user_id = 6 AND kind = 0
ORDER BY newest_first
LIMIT 4;

-- The next page starts after the last article of the previous one (an application passes
-- the last newest_first it showed; here a subquery finds it).
SELECT article_id
FROM posts
WHERE user_hash = strata_hash32(6) AND user_id = 6 AND kind = 0
  AND newest_first > (SELECT max(newest_first) FROM (
        SELECT newest_first FROM posts
        WHERE user_hash = strata_hash32(6) AND user_id = 6 AND kind = 0
        ORDER BY newest_first LIMIT 4))
ORDER BY newest_first
LIMIT 4;

-- User 6's articles in category 3, newest first, from the index rows.
SELECT article_id, split_part(article, chr(31), 7) AS category
FROM posts_by_category
WHERE user_hash = strata_hash32(6) AND user_id = 6 AND kind = 1 AND category_id = 3
ORDER BY newest_first;
