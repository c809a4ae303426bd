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

/// The top-level modules `code` names through `crate::` (a path or a
/// `use crate::{..}` group), outside `#[cfg(test)]` items and comments.
fn used_modules(code: &str) -> Vec<String> {
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
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
