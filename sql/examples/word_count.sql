-- Scenario 1 of SCENARIOS.md in SQL: count the words of an input table and write the counts
-- back into strata. The input `books` holds text in arbitrary cells (family t, a line per
-- cell); its cells view needs no declaration. Loaded by `engine/examples/word_count.rs`.

-- Two of the four output layouts as SQL tables: word rows (row = word, column CNT:books) and
-- rows keyed by a 4-byte big-endian table id followed by the word (column CNT:).
CREATE EXTERNAL TABLE word_rows_books (word VARCHAR NOT NULL, n BIGINT NOT NULL)
  STORED AS STRATA LOCATION 'word_rows' OPTIONS ('mapping' ':key,CNT:books#b');
CREATE EXTERNAL TABLE by_table_id (table_id INT UNSIGNED NOT NULL, word VARCHAR NOT NULL, n BIGINT NOT NULL)
  STORED AS STRATA LOCATION 'by_table_id' OPTIONS ('mapping' ':key#b,:key,CNT:#b');

-- Every cell split on white space (as Rust's split_whitespace), counted.
CREATE VIEW books_words AS
  SELECT word, count(*) AS n
  FROM (SELECT unnest(string_to_array(regexp_replace(CAST(value AS VARCHAR), '\s+', ' ', 'g'), ' ')) AS word
        FROM books)
  WHERE word <> ''
  GROUP BY word;

SELECT word, n FROM books_words ORDER BY n DESC, word LIMIT 10;

-- Written back: one put per word, committed in WAL groups.
INSERT INTO word_rows_books SELECT word, n FROM books_words;
INSERT INTO by_table_id SELECT 1, word, n FROM books_words;

-- Read back through the key: table id 1 is a key prefix (a range scan, see EXPLAIN).
SELECT word, n FROM by_table_id WHERE table_id = 1 ORDER BY word;
