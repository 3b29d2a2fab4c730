//! Random predicates through the provider (pushed down or not) against the same rows
//! filtered in Rust with SQL's three-valued logic.

use std::collections::BTreeMap;

use crate::common::Fixture;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use strata::{FamilyDescriptor, PreSplit, Put, TableDescriptor};

/// One stored row: the key, and the optional `name` (text) and `n` (8-byte integer) cells.
#[derive(Debug, Clone)]
struct Row {
    name: Option<String>,
    n: Option<i64>,
}

const LETTERS: &str = "abcde";

fn word() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(LETTERS.chars().collect::<Vec<_>>()),
        1..4,
    )
    .prop_map(|c| c.into_iter().collect())
}

#[derive(Debug, Clone, PartialEq)]
enum Column {
    Id,
    Name,
    N,
}

#[derive(Debug, Clone)]
enum Pred {
    Compare(Column, &'static str, Literal),
    Like(Column, String),
    In(Column, Vec<Literal>),
    Between(Column, Literal, Literal),
    IsNull(Column),
    Not(Box<Pred>),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
}

#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Text(String),
    Int(i64),
}

fn column_literal() -> impl Strategy<Value = (Column, Literal)> {
    prop_oneof![
        word().prop_map(|w| (Column::Id, Literal::Text(w))),
        word().prop_map(|w| (Column::Name, Literal::Text(w))),
        (-3i64..4).prop_map(|v| (Column::N, Literal::Int(v))),
    ]
}

fn atom() -> impl Strategy<Value = Pred> {
    let ops = prop::sample::select(vec!["=", "!=", "<", "<=", ">", ">="]);
    prop_oneof![
        (column_literal(), ops).prop_map(|((c, l), op)| Pred::Compare(c, op, l)),
        (
            prop::sample::select(vec![Column::Id, Column::Name]),
            prop::collection::vec(
                prop::sample::select(LETTERS.chars().collect::<Vec<_>>()),
                0..3
            )
        )
            .prop_map(|(c, p)| Pred::Like(c, p.into_iter().collect())),
        prop::collection::vec(column_literal(), 1..4).prop_map(|items| {
            let column = items[0].0.clone();
            let same: Vec<Literal> = items
                .into_iter()
                .map(|(c, l)| match (&column, c, l) {
                    (Column::N, Column::N, l) => l,
                    (Column::N, _, _) => Literal::Int(1),
                    (_, Column::N, _) => Literal::Text("b".into()),
                    (_, _, l) => l,
                })
                .collect();
            Pred::In(column, same)
        }),
        (column_literal(), column_literal()).prop_map(|((c, a), (_, b))| match (&c, &a, &b) {
            (Column::N, Literal::Int(_), Literal::Int(_)) => Pred::Between(c, a, b),
            (Column::N, _, _) => Pred::Between(c, Literal::Int(0), Literal::Int(2)),
            (_, Literal::Text(_), Literal::Text(_)) => Pred::Between(c, a, b),
            _ => Pred::Between(c, Literal::Text("b".into()), Literal::Text("d".into())),
        }),
        prop::sample::select(vec![Column::Name, Column::N]).prop_map(Pred::IsNull),
    ]
}

fn predicate() -> impl Strategy<Value = Pred> {
    atom().prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Pred::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Pred::Or(Box::new(a), Box::new(b))),
            inner.prop_map(|a| Pred::Not(Box::new(a))),
        ]
    })
}

fn column_sql(c: &Column) -> &'static str {
    match c {
        Column::Id => "id",
        Column::Name => "name",
        Column::N => "n",
    }
}

fn literal_sql(l: &Literal) -> String {
    match l {
        Literal::Text(t) => format!("'{t}'"),
        Literal::Int(v) => v.to_string(),
    }
}

fn sql(p: &Pred) -> String {
    match p {
        Pred::Compare(c, op, l) => format!("{} {op} {}", column_sql(c), literal_sql(l)),
        Pred::Like(c, prefix) => format!("{} LIKE '{prefix}%'", column_sql(c)),
        Pred::In(c, ls) => format!(
            "{} IN ({})",
            column_sql(c),
            ls.iter().map(literal_sql).collect::<Vec<_>>().join(", ")
        ),
        Pred::Between(c, a, b) => format!(
            "{} BETWEEN {} AND {}",
            column_sql(c),
            literal_sql(a),
            literal_sql(b)
        ),
        Pred::IsNull(c) => format!("{} IS NULL", column_sql(c)),
        Pred::Not(a) => format!("NOT ({})", sql(a)),
        Pred::And(a, b) => format!("({}) AND ({})", sql(a), sql(b)),
        Pred::Or(a, b) => format!("({}) OR ({})", sql(a), sql(b)),
    }
}

#[derive(Debug, PartialEq, PartialOrd)]
enum Value<'a> {
    Text(&'a str),
    Int(i64),
}

fn value<'a>(c: &Column, id: &'a str, row: &'a Row) -> Option<Value<'a>> {
    match c {
        Column::Id => Some(Value::Text(id)),
        Column::Name => row.name.as_deref().map(Value::Text),
        Column::N => row.n.map(Value::Int),
    }
}

fn literal_value(l: &Literal) -> Value<'_> {
    match l {
        Literal::Text(t) => Value::Text(t),
        Literal::Int(v) => Value::Int(*v),
    }
}

/// SQL's three-valued result: `None` is NULL.
fn eval(p: &Pred, id: &str, row: &Row) -> Option<bool> {
    match p {
        Pred::Compare(c, op, l) => {
            let v = value(c, id, row)?;
            let l = literal_value(l);
            Some(match *op {
                "=" => v == l,
                "!=" => v != l,
                "<" => v < l,
                "<=" => v <= l,
                ">" => v > l,
                _ => v >= l,
            })
        }
        Pred::Like(c, prefix) => match value(c, id, row)? {
            Value::Text(t) => Some(t.starts_with(prefix.as_str())),
            Value::Int(_) => None,
        },
        Pred::In(c, ls) => {
            let v = value(c, id, row)?;
            Some(ls.iter().any(|l| v == literal_value(l)))
        }
        Pred::Between(c, a, b) => {
            let v = value(c, id, row)?;
            Some(v >= literal_value(a) && v <= literal_value(b))
        }
        Pred::IsNull(c) => Some(value(c, id, row).is_none()),
        Pred::Not(a) => eval(a, id, row).map(|b| !b),
        Pred::And(a, b) => match (eval(a, id, row), eval(b, id, row)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        Pred::Or(a, b) => match (eval(a, id, row), eval(b, id, row)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
    }
}

/// Whether `p` has a conjunction of equality tests on one nullable column with no value in
/// common (`n IN (-1) AND n IN (3)`) under a negation, or its De Morgan dual, a disjunction of
/// negated ones (`NOT (n IN (-2)) OR NOT (n IN (3))`, which DataFusion folds to `true`).
///
/// DataFusion 55's expression simplifier folds such a conjunction to `false`, but where the
/// column is NULL the conjunction is NULL; under a NOT the difference shows (NOT NULL keeps no
/// row, NOT false keeps every row), so DataFusion returns rows SQL's three-valued logic does
/// not. Upstream fixed this in apache/datafusion#24258, after 55. Until strata's DataFusion
/// has the fix, the comparison leaves these predicates out, and
/// `negated_disjoint_in_lists_show_datafusion_55s_known_answer` pins what DataFusion returns,
/// so an upgrade that fixes it is noticed (docs/sql.md, "Known differences").
fn negates_disjoint_equalities(p: &Pred, negated: bool) -> bool {
    fn equalities<'a>(p: &'a Pred, out: &mut Vec<(&'a Column, Vec<&'a Literal>)>) {
        match p {
            Pred::And(a, b) => {
                equalities(a, out);
                equalities(b, out);
            }
            Pred::In(c, ls) => out.push((c, ls.iter().collect())),
            Pred::Compare(c, "=", l) => out.push((c, vec![l])),
            _ => {}
        }
    }
    /// The negated equality tests a disjunction is made of.
    fn negated_equalities<'a>(p: &'a Pred, out: &mut Vec<(&'a Column, Vec<&'a Literal>)>) {
        match p {
            Pred::Or(a, b) => {
                negated_equalities(a, out);
                negated_equalities(b, out);
            }
            Pred::Not(a) => match a.as_ref() {
                Pred::In(c, ls) => out.push((c, ls.iter().collect())),
                Pred::Compare(c, "=", l) => out.push((c, vec![l])),
                _ => {}
            },
            Pred::Compare(c, "!=", l) => out.push((c, vec![l])),
            _ => {}
        }
    }
    fn any_disjoint(tests: &[(&Column, Vec<&Literal>)]) -> bool {
        tests.iter().enumerate().any(|(i, (c, ls))| {
            **c != Column::Id
                && tests[i + 1..]
                    .iter()
                    .any(|(d, ms)| c == d && !ls.iter().any(|l| ms.contains(l)))
        })
    }
    match p {
        Pred::Not(a) => negates_disjoint_equalities(a, true),
        Pred::Or(a, b) => {
            let mut tests = Vec::new();
            negated_equalities(p, &mut tests);
            (!negated && any_disjoint(&tests))
                || negates_disjoint_equalities(a, negated)
                || negates_disjoint_equalities(b, negated)
        }
        Pred::And(a, b) => {
            let mut tests = Vec::new();
            equalities(p, &mut tests);
            (negated && any_disjoint(&tests))
                || negates_disjoint_equalities(a, negated)
                || negates_disjoint_equalities(b, negated)
        }
        _ => false,
    }
}

fn rows_strategy() -> impl Strategy<Value = BTreeMap<String, Row>> {
    prop::collection::btree_map(
        word(),
        (prop::option::of(word()), prop::option::of(-3i64..4))
            .prop_filter("a row has a cell", |(name, n)| {
                name.is_some() || n.is_some()
            })
            .prop_map(|(name, n)| Row { name, n }),
        1..40,
    )
}

#[test]
fn random_predicates_agree_with_rust() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(48);
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    let f = Fixture::new(3);
    let tables = std::cell::Cell::new(0);
    runner
        .run(
            &(
                rows_strategy(),
                prop::collection::vec(predicate(), 8),
                any::<bool>(),
            ),
            |(rows, predicates, flush)| {
                tables.set(tables.get() + 1);
                let name = format!("items{}", tables.get());
                let table =
                    f.db.create_table(
                        TableDescriptor::new(&name)
                            .family(FamilyDescriptor::new("f"))
                            .pre_split(PreSplit::Keys(vec![
                                b"b".to_vec(),
                                b"cc".to_vec(),
                                b"d".to_vec(),
                            ])),
                    )
                    .unwrap();
                for (id, row) in &rows {
                    let mut put = Put::new(id);
                    if let Some(name) = &row.name {
                        put = put.add("f", "name", name);
                    }
                    if let Some(n) = row.n {
                        put = put.add("f", "n", n.to_be_bytes());
                    }
                    table.put(&put).unwrap();
                }
                if flush {
                    table.flush().unwrap();
                }
                f.run(&format!(
                    "CREATE EXTERNAL TABLE {name} (id VARCHAR NOT NULL, name VARCHAR, n BIGINT) \
                     STORED AS STRATA LOCATION '{name}' OPTIONS ('mapping' ':key,f:name,f:n#b')"
                ))
                .unwrap();
                for p in predicates
                    .iter()
                    .filter(|p| !negates_disjoint_equalities(p, false))
                {
                    let query = format!("SELECT id FROM {name} WHERE {} ORDER BY id", sql(p));
                    let got: Vec<String> =
                        f.rows(&query).into_iter().map(|r| r[0].clone()).collect();
                    let expected: Vec<String> = rows
                        .iter()
                        .filter(|(id, row)| eval(p, id, row) == Some(true))
                        .map(|(id, _)| id.clone())
                        .collect();
                    prop_assert_eq!(&got, &expected, "{}\n{}", query, f.explain(&query));
                    let count = f.rows(&format!("SELECT count(*) FROM {name} WHERE {}", sql(p)));
                    prop_assert_eq!(
                        count[0][0].clone(),
                        expected.len().to_string(),
                        "count of {}",
                        query
                    );
                }
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn negated_disjoint_in_lists_show_datafusion_55s_known_answer() {
    let f = Fixture::new(1);
    let table =
        f.db.create_table(TableDescriptor::new("items").family(FamilyDescriptor::new("f")))
            .unwrap();
    table.put(&Put::new("a").add("f", "name", "x")).unwrap();
    table
        .put(&Put::new("b").add("f", "n", 5i64.to_be_bytes()))
        .unwrap();
    f.run(
        "CREATE EXTERNAL TABLE items (id VARCHAR NOT NULL, name VARCHAR, n BIGINT) \
         STORED AS STRATA LOCATION 'items' OPTIONS ('mapping' ':key,f:name,f:n#b')",
    )
    .unwrap();
    let query = "SELECT id FROM items WHERE NOT ((n IN (-1)) AND (n IN (3))) ORDER BY id";
    let predicate = Pred::Not(Box::new(Pred::And(
        Box::new(Pred::In(Column::N, vec![Literal::Int(-1)])),
        Box::new(Pred::In(Column::N, vec![Literal::Int(3)])),
    )));
    assert!(negates_disjoint_equalities(&predicate, false));
    // The De Morgan dual (the case a CI run generated): `NOT (n IN (-2)) OR NOT (n IN (3, 1))`.
    let dual = Pred::Or(
        Box::new(Pred::Not(Box::new(Pred::In(
            Column::N,
            vec![Literal::Int(-2)],
        )))),
        Box::new(Pred::Not(Box::new(Pred::In(
            Column::N,
            vec![Literal::Int(3), Literal::Int(1)],
        )))),
    );
    assert!(negates_disjoint_equalities(&dual, false));
    let got: Vec<String> = f.rows(query).into_iter().map(|r| r[0].clone()).collect();
    // SQL's answer is ["b"]: for "a", n is NULL and NOT (NULL AND NULL) is NULL. DataFusion 55
    // answers ["a", "b"]. When this fails with ["b"], DataFusion has the fix: drop the
    // exclusion in `random_predicates_agree_with_rust` and this test.
    assert_eq!(got, ["a", "b"], "{}", f.explain(query));
    // The dual: SQL's answer is ["b"] again (NULL OR NULL is NULL for "a"); DataFusion 55 folds
    // the disjunction to `true` and answers ["a", "b"].
    let query = "SELECT id FROM items WHERE NOT (n IN (-2)) OR NOT (n IN (3, 1)) ORDER BY id";
    let got: Vec<String> = f.rows(query).into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(got, ["a", "b"], "{}", f.explain(query));
}
