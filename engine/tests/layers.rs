//! The engine's layers point one way. This test reads `engine/src`, finds
//! every `crate::MODULE` path outside test code, and fails on an import of a
//! layer above the importing module's own, and on any import cycle between
//! the engine's top-level modules. The order is declared here and at the top
//! of `engine/src/lib.rs`; `docs/architecture.md` explains it.
//!
//! Two rules of the read path are checked the same way: `iter/` (the merge
//! and its block runs) never names `read/`, not even in its tests, and only
//! `hfile/` and `iter/` decode data blocks: the read path asks `iter/` for
//! rows and never walks a block itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, top first. A module may import its own layer and the layers
/// below it, never one above (the facades at the top may import anything).
/// Imports within one layer are allowed as long as they form no cycle.
const LAYERS: &[(&str, &[&str])] = &[
    ("facade", &["lib", "inspect", "internals", "fuzzing"]),
    ("db", &["db"]),
    ("table", &["table"]),
    ("operations", &["read", "write", "maintenance"]),
    ("regions", &["catalog", "compaction", "region"]),
    ("schema", &["schema"]),
    ("store", &["store"]),
    ("core", &["core"]),
    ("parts", &["iter", "memstore", "hfile"]),
    ("services", &["wal", "manifest", "mvcc", "io"]),
    (
        "foundation",
        &[
            "cell",
            "error",
            "codec",
            "clock",
            "options",
            "ops",
            "keys",
            "prefetch",
            "read_snapshot",
            "split_block",
            "watermark",
            "names",
            "gate",
            "file_meta",
            "metrics",
        ],
    ),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Rank of a module's layer (0 = top), or `None` for an undeclared module.
fn rank(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// Every `.rs` file under `dir`, with the top-level module it belongs to.
fn files(dir: &Path, top: Option<&str>, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            files(&path, Some(top.unwrap_or(&name)), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((top.unwrap_or(&name).to_owned(), path));
        }
    }
}

/// Test-only files: declared under `#[cfg(test)]` by their parent module.
fn test_only_files(all: &[(String, PathBuf)]) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for (_, path) in all {
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for pair in lines.windows(2) {
            if pair[0].trim() == "#[cfg(test)]"
                && let Some(name) = pair[1]
                    .trim()
                    .strip_prefix("mod ")
                    .and_then(|rest| rest.strip_suffix(';'))
            {
                let dir = if path.file_name().unwrap() == "mod.rs" || path.ends_with("lib.rs") {
                    path.parent().unwrap().to_path_buf()
                } else {
                    path.with_extension("")
                };
                out.insert(dir.join(format!("{name}.rs")));
            }
        }
    }
    out
}

/// The code of a file without comments and without its test module (by
/// convention the last item, `#[cfg(test)] mod tests {`).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a file's code names as `crate::NAME`, with the
/// first line that does.
fn imports(code: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in code.lines() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                out.entry(name).or_insert_with(|| line.trim().to_owned());
            }
            rest = after;
        }
    }
    out
}

#[test]
fn imports_follow_the_layers_and_form_no_cycle() {
    let mut all = Vec::new();
    files(&src(), None, &mut all);
    let tests = test_only_files(&all);
    let mut violations = Vec::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &all {
        if tests.contains(path) {
            continue;
        }
        let Some(own) = rank(module) else {
            violations.push(format!(
                "{}: module `{module}` is in no layer (declare it in tests/layers.rs and lib.rs)",
                path.display()
            ));
            continue;
        };
        for (imported, line) in imports(&code(path)) {
            if imported == *module {
                continue;
            }
            let Some(theirs) = rank(&imported) else {
                violations.push(format!(
                    "{}: imports `{imported}`, which is in no layer: {line}",
                    path.display()
                ));
                continue;
            };
            if own > 0 && theirs < own {
                violations.push(format!(
                    "{}: layer `{}` imports `{imported}` of the higher layer `{}`: {line}",
                    path.display(),
                    LAYERS[own].0,
                    LAYERS[theirs].0
                ));
            }
            if own > 0 {
                graph.entry(module.clone()).or_default().insert(imported);
            }
        }
    }
    for cycle in cycles(&graph) {
        violations.push(format!("import cycle: {}", cycle.join(" -> ")));
    }
    assert!(
        violations.is_empty(),
        "{} layering violation(s):\n{}",
        violations.len(),
        violations.join("\n")
    );
}

/// One cycle per strongly connected component of more than one module.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = graph
        .keys()
        .chain(graph.values().flat_map(|v| v.iter()))
        .collect();
    let reaches = |from: &String, to: &String| -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(at) = stack.pop() {
            for next in graph.get(at).into_iter().flatten() {
                if next == to {
                    return true;
                }
                if seen.insert(next) {
                    stack.push(next);
                }
            }
        }
        false
    };
    let mut out = Vec::new();
    let mut placed = BTreeSet::new();
    for node in &nodes {
        if placed.contains(*node) {
            continue;
        }
        let component: Vec<String> = nodes
            .iter()
            .filter(|other| **other == *node || (reaches(node, other) && reaches(other, node)))
            .map(|s| (*s).clone())
            .collect();
        if component.len() > 1 {
            out.push(component.clone());
        }
        placed.extend(component);
    }
    out
}

#[test]
fn the_declared_order_is_the_one_lib_rs_states() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    for (layer, modules) in LAYERS {
        for module in *modules {
            if *module == "lib" {
                continue;
            }
            assert!(
                lib.contains(&format!("mod {module};")),
                "lib.rs declares no module `{module}` of layer `{layer}`"
            );
        }
    }
}

/// Code outside `hfile/` and `iter/` that names any of these reaches into a
/// data block: the block type and its module, the reader's calls that hand
/// out blocks, and the file cursor's call that lends its block.
const BLOCK_DECODING: &[&str] = &[
    "data_block",
    "DataBlock",
    "CachedBlock",
    "cached_block",
    "rest_of_row_in_block",
];

/// Files outside `hfile/` and `iter/` that still read data blocks, each
/// with the reason. The test fails when one of them no longer does, so the
/// list only shrinks.
const DECODES_BLOCKS_FOR_NOW: &[(&str, &str)] = &[(
    "maintenance/split.rs",
    "`middle_key` picks a split key from the row keys of the largest file's \
     middle block; it belongs in hfile/ as the file's middle key (HBase's \
     HFileReader.midKey), next to the block index it searches",
)];

#[test]
fn only_hfile_and_iter_decode_data_blocks() {
    let mut all = Vec::new();
    files(&src(), None, &mut all);
    let tests = test_only_files(&all);
    let mut violations = Vec::new();
    let mut exceptions_used = BTreeSet::new();
    for (module, path) in &all {
        let facade = rank(module) == Some(0);
        if tests.contains(path) || facade || module == "hfile" || module == "iter" {
            continue;
        }
        let relative = path
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let code = code(path);
        let Some((line, pattern)) = code.lines().find_map(|line| {
            BLOCK_DECODING
                .iter()
                .find(|pattern| line.contains(*pattern))
                .map(|pattern| (line.trim().to_owned(), *pattern))
        }) else {
            continue;
        };
        if DECODES_BLOCKS_FOR_NOW
            .iter()
            .any(|(file, _)| *file == relative)
        {
            exceptions_used.insert(relative);
            continue;
        }
        violations.push(format!(
            "{relative}: names `{pattern}` (only hfile/ and iter/ decode data blocks; \
             ask iter/ for rows): {line}"
        ));
    }
    for (file, reason) in DECODES_BLOCKS_FOR_NOW {
        if !exceptions_used.contains(*file) {
            violations.push(format!(
                "{file} no longer reads data blocks: remove it from DECODES_BLOCKS_FOR_NOW ({reason})"
            ));
        }
    }
    assert!(
        violations.is_empty(),
        "{} file(s) decode data blocks outside hfile/ and iter/:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

#[test]
fn iter_never_imports_read() {
    let mut all = Vec::new();
    files(&src(), None, &mut all);
    let mut violations = Vec::new();
    for (module, path) in &all {
        if module != "iter" {
            continue;
        }
        // Test code too: iter/'s tests read the merge on its own.
        let text = std::fs::read_to_string(path).unwrap();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or_default();
            if code.contains("crate::read") || code.contains("super::super::read") {
                violations.push(format!("{}: {}", path.display(), line.trim()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "iter/ names read/ (the merge and its runs sit below the read path):\n{}",
        violations.join("\n")
    );
}
