-- Scenario 4 of SCENARIOS.md in SQL: web-page records keyed by ten 4-byte big-endian fields,
-- loaded by `engine/examples/web_pages.rs`. Each predicate on a key field becomes a
-- RowMaskFilter run as a kernel over whole blocks; an equality on the leading field also
-- narrows the scan to that field's key range (see EXPLAIN).

CREATE EXTERNAL TABLE pages (
    md5url INT UNSIGNED NOT NULL, site INT UNSIGNED NOT NULL, status INT UNSIGNED NOT NULL,
    code INT UNSIGNED NOT NULL, sdate INT UNSIGNED NOT NULL, "type" INT UNSIGNED NOT NULL,
    free INT UNSIGNED NOT NULL, close INT UNSIGNED NOT NULL, queue INT UNSIGNED NOT NULL,
    scantype INT UNSIGNED NOT NULL, record INT UNSIGNED NOT NULL)
  STORED AS STRATA LOCATION 'pages'
  OPTIONS ('mapping' ':key#b,:key#b,:key#b,:key#b,:key#b,:key#b,:key#b,:key#b,:key#b,:key#b,d:#b');

SELECT count(*) FROM pages WHERE md5url = 42 AND sdate = 20150412;
SELECT count(*) FROM pages WHERE sdate = 20150407 AND code = 404;
SELECT count(*) FROM pages WHERE md5url = 42 AND sdate > 20150405 AND sdate < 20150420;
SELECT count(*) FROM pages WHERE status = 1 AND "type" = 3 AND free = 1;
SELECT code, count(*) AS pages FROM pages WHERE sdate = 20150407 GROUP BY code ORDER BY code;
