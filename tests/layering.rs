//! The crate's layering, as DESIGN.md declares it: a top-level module uses
//! only modules of lower layers. Reads every `crate::` path outside test
//! code and comments.
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Module -> layer (1 = lowest), from the list between DESIGN.md's markers.
fn declared_layers() -> BTreeMap<String, usize> {
    let design = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("DESIGN.md"))
        .expect("DESIGN.md is readable");
    let start = design
        .find("<!-- layers: start -->")
        .expect("layers start marker");
    let end = design
        .find("<!-- layers: end -->")
        .expect("layers end marker");
    let mut layers = BTreeMap::new();
    for line in design[start..end].lines().skip(1) {
        let Some((number, modules)) = line.split_once(". ") else {
            continue;
        };
        let layer: usize = number.trim().parse().expect("a numbered layer");
        for module in modules.split(',') {
            let name = module.trim().trim_matches('`').to_string();
            assert!(
                layers.insert(name.clone(), layer).is_none(),
                "{name} is listed twice"
            );
        }
    }
    layers
}

/// `code` without its comment lines and its `#[cfg(test)]` items: each
/// attribute up to the end of the item it marks, the first `;` or the
/// brace that closes its first `{` (braces balance in this crate's
/// strings and char literals, so counting them is enough).
fn without_tests(code: &str) -> String {
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut kept = String::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices() {
            match c {
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    kept.push_str(rest);
    kept
}

/// The top-level modules `code` names through `crate::` (a path or a
/// `use crate::{..}` group), outside `#[cfg(test)]` items and comments.
fn used_modules(code: &str) -> Vec<String> {
    let code = without_tests(code);
    let mut used = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c, d::{e, f}}`: the first name of each top-level item.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        used.push(ident(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            used.push(ident(rest));
        }
    }
    used
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_use_only_lower_layers() {
    let layers = declared_layers();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut seen = BTreeMap::new();
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let first = rel.iter().next().expect("a path").to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let Some(&layer) = layers.get(&module) else {
            panic!(
                "src/{} belongs to module `{module}`, which DESIGN.md's layers do not list",
                rel.display()
            );
        };
        seen.insert(module.clone(), ());
        let code = fs::read_to_string(&file).expect("a source file");
        for used in used_modules(&code) {
            if used == module {
                continue;
            }
            match layers.get(&used) {
                Some(&l) if l < layer => {}
                Some(&l) => wrong.push(format!(
                    "src/{} (layer {layer}) uses crate::{used} (layer {l})",
                    rel.display()
                )),
                None => wrong.push(format!(
                    "src/{} uses crate::{used}, which no layer lists",
                    rel.display()
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
    let unused: Vec<_> = layers.keys().filter(|m| !seen.contains_key(*m)).collect();
    assert!(
        unused.is_empty(),
        "DESIGN.md lists modules that do not exist: {unused:?}"
    );
}

#[test]
fn the_reader_finds_grouped_and_inline_paths() {
    let code = "use crate::{a::B, c, d::{e, f}};\nfn g() { crate::h::i(); }\n// crate::comment\n#[cfg(test)]\nuse crate::test_only;";
    assert_eq!(used_modules(code), ["a", "c", "d", "h"]);
}

#[test]
fn code_after_a_test_module_is_read() {
    let code = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::t;\n    fn f() { if x { crate::u::v(); } }\n}\nfn g() { crate::b::c(); }\n#[cfg(test)]\nfn h() { crate::w(); }\nuse crate::d;";
    assert_eq!(used_modules(code), ["a", "b", "d"]);
}

/// The first-column entries of DESIGN.md's module map (`error.rs`,
/// `data/`, `booster/fit.rs`, ...).
fn mapped_modules() -> Vec<String> {
    let design = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("DESIGN.md"))
        .expect("DESIGN.md is readable");
    let start = design.find("## Module map").expect("a module map");
    design[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(1))
        .map(|cell| cell.trim().trim_matches('`').to_string())
        .filter(|cell| cell.ends_with(".rs") || cell.ends_with('/'))
        .collect()
}

#[test]
fn the_module_map_lists_every_module_that_exists() {
    // Each top-level module is a row, or each file of its folder is
    // (`booster/` is mapped file by file); every row names a real path.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mapped = mapped_modules();
    let missing_paths: Vec<_> = mapped.iter().filter(|m| !src.join(m).exists()).collect();
    assert!(
        missing_paths.is_empty(),
        "DESIGN.md's module map names paths that do not exist: {missing_paths:?}"
    );
    let mut unmapped = Vec::new();
    for entry in fs::read_dir(&src).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .to_string();
        if name == "lib.rs" {
            continue;
        }
        if path.is_dir() {
            let folder = format!("{name}/");
            if mapped.contains(&folder) {
                continue;
            }
            let mut files = Vec::new();
            rust_files(&path, &mut files);
            for file in files {
                let rel = file.strip_prefix(&src).expect("under src");
                let rel = rel.to_string_lossy().to_string();
                if !rel.ends_with("/mod.rs") && !mapped.contains(&rel) {
                    unmapped.push(rel);
                }
            }
        } else if !mapped.contains(&name) {
            unmapped.push(name);
        }
    }
    assert!(
        unmapped.is_empty(),
        "DESIGN.md's module map does not list: {unmapped:?}"
    );
}
